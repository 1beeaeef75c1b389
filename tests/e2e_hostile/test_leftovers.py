"""Issue 10 #5: temp files and zip work directories of a FETCH_OUTPUT
interrupted by a crash are removed: at start-up for fetches the journal
knows were running, and by any later fetch of that job."""
import os
import signal
import time

from hostile_helpers import Client

A, B = b"A" * 1000, b"B" * 2000


def leftovers(*dirs):
    out = []
    for d in dirs:
        out += [n for n in os.listdir(str(d)) if ".boinc_gahp." in n]
    return sorted(out)


def plant_zip_dir(iwd, name=".boinc_gahp.zip.AbC123"):
    z = iwd / name
    (z / "members").mkdir(parents=True)
    (z / "members" / "m.txt").write_bytes(b"member")
    (z / ".out.zip.boinc_gahp.Qw3rt9").write_bytes(b"PK partial")
    return z


def test_crash_between_download_and_rename_then_restart(server, make_gahp, tmp_path):
    server.cfg.update(outputs=["a.txt", "b.txt"], download=[A, B])
    iwd, other = tmp_path / "iwd", tmp_path / "other"
    iwd.mkdir()
    other.mkdir()
    g = make_gahp(env={"BOINC_GAHP_TEST_CRASH_AT": "fetch.downloaded"})
    c = Client(g, server.url)
    c.start("BOINC_FETCH_OUTPUT", "j", str(iwd), "err", "ALL", 1, "b.txt", str(other / "b.out"))
    assert g.proc.wait(timeout=60) == -signal.SIGKILL
    g.kill()
    left = leftovers(iwd, other)
    assert len(left) == 2 and all(n.startswith((".a.txt.", ".b.out.")) for n in left), left
    zdir = plant_zip_dir(iwd)                   # as a crashed zip fetch leaves it

    g2 = make_gahp()                            # start-up alone cleans
    assert g2.banner is not None
    assert leftovers(iwd, other) == [] and not zdir.exists()
    assert sorted(os.listdir(str(iwd))) == [] and os.listdir(str(other)) == []
    c2 = Client(g2, server.url)
    assert c2.fetch("j", str(iwd), "err", "ALL", [("b.txt", str(other / "b.out"))])[0] == "NULL"
    assert (iwd / "a.txt").read_bytes() == A and (other / "b.out").read_bytes() == B
    assert leftovers(iwd, other) == []


def test_later_fetch_of_the_job_removes_leftovers(server, make_gahp, tmp_path):
    server.cfg.update(outputs=["a.txt", "b.txt"], download=[A, B])
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    stale = iwd / ".a.txt.boinc_gahp.Zx81Kq"
    stale.write_bytes(b"half")
    zdir = plant_zip_dir(iwd)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    link = iwd / ".b.txt.boinc_gahp.Lnk001"
    os.symlink(str(victim), str(link))          # never followed
    mine = iwd / ".profile.boinc_gahp"          # not our pattern: kept
    mine.write_bytes(b"user's")
    past = time.time() - 3600
    for p in (stale, zdir, zdir / "members"):
        os.utime(str(p), (past, past))
    g = make_gahp()
    c = Client(g, server.url)
    assert c.fetch("j", str(iwd), "err", "ALL")[0] == "NULL"
    assert not stale.exists() and not zdir.exists()
    assert victim.read_bytes() == b"precious" and os.path.islink(str(link))
    assert mine.read_bytes() == b"user's"
    assert (iwd / "a.txt").read_bytes() == A and (iwd / "b.txt").read_bytes() == B
