"""`boinc_gahp journal status|backup|verify|prune` (issue 19): read-only
and safe beside a running server (status, backup, verify), the prune
taking the write lock.  The real binary, the emulator on 127.0.0.1, real
journal files."""
import os
import re
import sqlite3
import time

import pytest

from ops_helpers import run


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


def busy_server(make_client, tmp_path):
    """A server with a finished ping, a submitted batch and a delivered result."""
    c = make_client()
    assert c.call("BOINC_PING") == ["NULL"]
    src = tmp_path / "in.txt"
    src.write_text("hello\n")
    rid = c.submit("opsbatch", "uppercase", [("opsbatch#0", [], [(str(src), "in")])])
    assert c.wait(rid) == ["NULL"]
    return c


def test_status_while_a_server_runs_and_after(make_client, journal, home, tmp_path):
    c = busy_server(make_client, tmp_path)
    p = run(home, "--journal", journal, "journal", "status")
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert "server: running, pid %d" % c.gahp.proc.pid in out, out
    assert "state=submitted batches=1 names=opsbatch" in out
    assert "sessions (the last 5 runs):" in out and "exit=running or crashed" in out
    assert "journal size:" in out and "bytes=" in out
    assert c.emu.authenticator not in out            # never an authenticator
    log = (tmp_path / "journal.log").read_text()
    assert "BOINC_PING 1 finished: ok in" in log and "BOINC_SUBMIT 2 finished: ok" in log
    c.gahp.quit()
    c.gahp.wait()
    p = run(home, "--journal", journal, "journal", "status")
    assert p.returncode == 0
    assert "server: not running; session 1" in p.stdout.decode()


def submits_section(out):
    """The "submits in progress" part of a journal status report."""
    part = out.split("submits in progress", 1)[1]
    return part.split("\nlearned upload limits", 1)[0]


def test_status_shows_the_upload_progress_of_a_long_submit(make_client, journal, home, inputs):
    """A submit paused between two upload_files requests: status shows how
    many of its input files and bytes are on the server, of all."""
    c = make_client()
    n, size = 8, 1000
    c.emu.set_limits(max_file_uploads=2)          # 4 upload_files requests of 2 files
    # every request to job_file.php (query_files, upload_files) waits 2 s
    # before it is processed, so the submit stays between two uploads
    # while status is read; the loop below waits for that moment, it does
    # not time it
    c.emu.fault("job_file.php", "delay", probability=1, delay_ms=2000)
    jobs = [("up#%d" % i, [], [(inputs("in%d" % i, bytes([65 + i]) * size), "in")])
            for i in range(n)]
    rid = c.submit("upbatch", "uppercase", jobs)
    mid, limit = None, time.monotonic() + 120
    while mid is None and time.monotonic() < limit:
        p = run(home, "--journal", journal, "journal", "status")
        assert p.returncode == 0, p.stderr
        m = re.search(r"batch=upbatch state=\S+ jobs=%d upload=(\d+)/(\d+) files, "
                      r"(\d+)/(\d+) bytes" % n, submits_section(p.stdout.decode()))
        if m and 0 < int(m.group(1)) < n:
            mid = m
        time.sleep(0.2)
    assert mid is not None, "never seen between two uploads"
    done = int(mid.group(1))
    assert int(mid.group(2)) == n and int(mid.group(4)) == n * size
    assert int(mid.group(3)) == done * size
    c.emu.clear_faults()
    assert c.wait(rid) == ["NULL"]
    # submitted: no longer in progress
    out = run(home, "--journal", journal, "journal", "status").stdout.decode()
    assert "batch=upbatch" not in submits_section(out), out


def test_status_shows_in_flight_and_errors(journal, home, tmp_path):
    """A journal with an unanswered request and an error result, written
    as an earlier run would have left it (no server needed)."""
    p = run(home, "--journal", journal, stdin=b"QUIT\n")
    assert p.returncode == 0
    db = sqlite3.connect(journal)
    db.execute("INSERT INTO projects (url, authenticator, first_used_at) VALUES "
               "('http://127.0.0.1:1/p/', 'topsecret', 1)")
    db.execute("INSERT INTO requests (session_id, client_id, command, args, project_id, "
               "state, accepted_at) VALUES (1, 5, 'BOINC_SUBMIT', 'x', 1, 'accepted', 2)")
    db.execute("INSERT INTO requests (session_id, client_id, command, args, project_id, "
               "state, accepted_at, completed_at, result) VALUES "
               "(1, 6, 'BOINC_PING', '', 1, 'completed', 2, 3, 'ping\\ failed:\\ boom')")
    db.commit()
    db.close()
    out = run(home, "--journal", journal, "journal", "status").stdout.decode()
    assert "command=BOINC_SUBMIT requests=1" in out
    assert "command=BOINC_PING results=1" in out
    assert "project=http://127.0.0.1:1/p/" in out and "ping\\ failed:\\ boom" in out
    assert "topsecret" not in out


def test_backup_while_a_server_runs_is_a_valid_journal(make_client, journal, home, tmp_path):
    c = busy_server(make_client, tmp_path)
    copy = tmp_path / "backup.db"
    p = run(home, "--journal", journal, "journal", "backup", str(copy))
    assert p.returncode == 0, p.stderr
    assert oct(os.stat(str(copy)).st_mode & 0o777) == "0o600"
    db = sqlite3.connect(str(copy))
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT name FROM batches").fetchall() == [("opsbatch",)]
    db.close()
    p = run(home, "--journal", str(copy), "journal", "verify")
    assert p.returncode == 0 and b"OK" in p.stdout
    # an existing file is never overwritten
    p = run(home, "--journal", journal, "journal", "backup", str(copy))
    assert p.returncode == 1 and b"File exists" in p.stderr
    # the server went on serving
    assert c.call("BOINC_PING") == ["NULL"]


def test_verify_finds_a_corrupted_copy(journal, home, tmp_path):
    assert run(home, "--journal", journal, stdin=b"QUIT\n").returncode == 0
    p = run(home, "--journal", journal, "journal", "verify")
    assert p.returncode == 0, p.stderr
    db = sqlite3.connect(journal)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")     # every page in the main file
    page = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    bad = tmp_path / "bad.db"
    data = bytearray(open(journal, "rb").read())
    assert len(data) > 3 * page
    for start in range(page, len(data), page):       # a bad b-tree page type on each page
        data[start] = 0x0E
    bad.write_bytes(bytes(data))
    p = run(home, "--journal", str(bad), "journal", "verify")
    assert p.returncode == 1, p.stdout
    assert b"problem:" in p.stdout and b"problem" in p.stderr


def test_prune_now(make_client, journal, home, tmp_path):
    c = make_client()
    assert c.call("BOINC_PING") == ["NULL"]
    c.gahp.command("RESULTS")                          # nothing pending; delivered already
    c.gahp.quit()
    c.gahp.wait()
    db = sqlite3.connect(journal)
    n = db.execute("SELECT count(*) FROM requests WHERE state = 'delivered'").fetchone()[0]
    db.execute("UPDATE requests SET accepted_at = 1, completed_at = 1, delivered_at = 1")
    db.commit()
    db.close()
    assert n >= 1
    p = run(home, "--journal", journal, "--retention-days", "1", "journal", "prune")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(b"pruned ") and not p.stdout.startswith(b"pruned 0 ")
    db = sqlite3.connect(journal)
    assert db.execute("SELECT count(*) FROM requests WHERE state = 'delivered'").fetchone()[0] == 0
    db.close()


def test_usage_and_missing_journal(home, tmp_path):
    p = run(home, "--journal", str(tmp_path / "none.db"), "journal", "status")
    assert p.returncode == 1 and b"No such file" in p.stderr
    assert not (tmp_path / "none.db").exists()
    p = run(home, "--journal", str(tmp_path / "none.db"), "journal", "frobnicate")
    assert p.returncode == 2 and b"usage" in p.stderr
    p = run(home, "journal")
    assert p.returncode == 2


def test_retired_and_expired_batches_show_as_such(make_client, journal, home, tmp_path):
    """Issue 28: a retired batch was listed under state=submitted."""
    c = busy_server(make_client, tmp_path)
    src = tmp_path / "in2.txt"
    src.write_text("again\n")
    assert c.wait(c.submit("oldbatch", "uppercase", [("oldbatch#0", [], [(str(src), "in")])])) \
        == ["NULL"]
    assert c.call("BOINC_RETIRE_BATCH", "opsbatch") == ["NULL"]
    assert c.call("BOINC_SET_LEASE", "oldbatch", 1000000000) == ["NULL"]   # in 2001
    out = run(home, "--journal", journal, "journal", "status").stdout.decode()
    assert "state=retired batches=1 names=opsbatch" in out, out
    assert "state=expired batches=1 names=oldbatch" in out, out
    assert "state=submitted" not in out
    c.gahp.quit()


def test_status_and_verify_refuse_a_newer_journal(home, tmp_path):
    j = tmp_path / "j.db"
    db = sqlite3.connect(str(j))
    db.execute("PRAGMA user_version=999")
    db.close()
    for sub in ("status", "verify"):
        p = run(home, "--journal", str(j), "journal", sub)
        assert p.returncode == 1, (sub, p.stdout, p.stderr)
        assert b"schema version 999, but this boinc_gahp knows schema versions up to" in p.stderr
