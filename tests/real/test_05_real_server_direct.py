"""build/boinc_gahp driven directly through its stdin/stdout protocol (the
way HTCondor speaks it) against the real BOINC 8.3 server: job arguments,
create_work's line limit, uploads (each file once), stock PHP limits.
What the server stored is read from its MariaDB (read-only)."""
import hashlib
import os
import subprocess
import time

import pytest

import realsys
from realsys import mysql, progress

# the shared test library, tests/lib (on the path through pytest.ini)
from gahp_client import REAL_CLOCK, Gahp
from submit_client import Client

BOINC_SRC = os.environ.get("BOINC_SRC", "/opt/boinc-src")
SETUP = realsys.RECIPES / "boinc_server.sh"
NULL6 = ["NULL"] * 6


@pytest.fixture
def gahp(real_project, tmp_path):
    started = []

    def make():
        # a real server: the server's pauses as designed, not the test clock
        g = Gahp(str(tmp_path / "journal.db"), env=REAL_CLOCK)
        started.append(g)
        return Client(g, real_project)
    yield make
    for g in started:
        g.kill()


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "inputs"
    d.mkdir()

    def make(name, content):
        p = d / name
        p.write_bytes(content)
        return str(p)
    return make


def uniq(tag):
    return "rsdirect-%s-%s" % (realsys.RUN_ID, tag)


def content(tag, i=0, size=0):
    b = ("%s input %d\n" % (uniq(tag), i)).encode()
    if size > len(b):
        b += hashlib.sha256(b).hexdigest().encode() * (size // 64 + 1)
        b = b[:size - 1] + b"\n"
    return b


def batch_rows(name):
    """[id, workunits, state] of the batches of that name (the workunits
    counted: a real server sets batch.njobs before create_work runs, so a
    batch whose create_work failed says njobs 1 and holds no job)."""
    return mysql("select b.id, (select count(*) from workunit w where w.batch = b.id), "
                 "b.state from batch b where b.name = '%s'" % name)


def wu_rows(batch_id):
    return mysql("select name, xml_doc from workunit where batch = %d" % batch_id)


def submit_one(c, batch, job, args, path, timeout=180):
    return c.wait(c.submit(batch, "uppercase", [(job, args, [(path, "in")])], NULL6),
                  timeout=timeout)


def retire(c, batch):
    c.call("BOINC_RETIRE_BATCH", batch, timeout=120)


def test_arguments_that_travel_verbatim_and_the_output(gahp, files, tmp_path):
    c = gahp()
    b = uniq("args")
    data = content("args")
    p = files("a.txt", data)
    args = ["a$b", "x`y", "--cpu_time", "1"]
    assert submit_one(c, b, b + "#0", args, p) == ["NULL"]
    rows = batch_rows(b)
    assert len(rows) == 1 and rows[0][1] == "1", rows
    wus = wu_rows(int(rows[0][0]))
    assert [w[0] for w in wus] == [b + "#0"]
    assert realsys.command_line_of(wus[0][1]) == " ".join(args)
    # the job runs on the real client; its output comes back
    end = time.monotonic() + 400
    while True:
        res = c.call("BOINC_QUERY_BATCHES", 0, 1, b, timeout=120)
        assert res[0] == "NULL", res
        if "DONE" in res or "ERROR" in res:
            break
        assert time.monotonic() < end, "job not done on the real server: %s" % res
        time.sleep(5)
    assert "DONE" in res, res
    out = tmp_path / "out"
    out.mkdir()
    res = c.call("BOINC_FETCH_OUTPUT", b + "#0", str(out), "err", "SOME", 1, "out", "o",
                 timeout=180)
    assert res[0] == "NULL", res
    assert (out / "o").read_bytes() == data.upper()
    retire(c, b)


@pytest.mark.parametrize("bad", ["white space", "", "'", '"'])
def test_arguments_a_server_cannot_carry_are_refused_before_anything_is_created(
        gahp, files, bad):
    c = gahp()
    b = uniq("bad%d" % ord(bad[0] if bad else "e"))
    p = files("a.txt", content(b))
    res = submit_one(c, b, b + "#0", [bad], p)
    assert len(res) == 1 and res[0] != "NULL" and "argument 1" in res[0], res
    assert batch_rows(b) == [], "batch created for a refused submit"


BACKSLASHES = ["c:\\new\\tmp", "a\\b", "end\\", "x\\\\y"]


@pytest.mark.parametrize("arg", BACKSLASHES)
def test_backslash_argument_refused_or_byte_exact(gahp, files, arg):
    """Defect 3: never silently altered."""
    c = gahp()
    b = uniq("bs%d" % BACKSLASHES.index(arg))
    p = files("a.txt", content(b))
    res = submit_one(c, b, b + "#0", [arg, "--cpu_time", "1"], p)
    rows = batch_rows(b)
    if res != ["NULL"]:
        progress("    %r refused: %s" % (arg, res[0][:160]))
        assert "\\" in res[0] or "backslash" in res[0].lower(), res
        assert rows == [], "a refused submit left a batch: %s" % rows
        return
    assert len(rows) == 1, rows
    wus = wu_rows(int(rows[0][0]))
    assert len(wus) == 1
    stored = realsys.command_line_of(wus[0][1])
    assert stored == arg + " --cpu_time 1", "sent %r, the server stored %r" % (arg, stored)
    retire(c, b)


def test_backslash_in_a_job_name_refused_or_byte_exact(gahp, files):
    c = gahp()
    b = uniq("bsname")
    name = b + "#a\\b"
    p = files("a.txt", content(b))
    res = submit_one(c, b, name, ["--cpu_time", "1"], p)
    rows = batch_rows(b)
    if res != ["NULL"]:
        assert "\\" in res[0] or "backslash" in res[0].lower(), res
        assert rows == [], "a refused submit left a batch: %s" % rows
        return
    assert len(rows) == 1
    assert [w[0] for w in wu_rows(int(rows[0][0]))] == [name]
    retire(c, b)


def line_bytes(job, args, phys):
    return len(" --wu_name ") + len(job) + len(' --command_line ""') + \
        len(" ".join(args)) + 1 + len(phys) + 1


def padded_args(job, phys, target):
    base = line_bytes(job, ["--cpu_time", "1", ""], phys)
    args = ["--cpu_time", "1", "p" * (target - base)]
    assert line_bytes(job, args, phys) == target
    return args


def test_create_work_line_limit(gahp, files):
    """Defect 4: 4,094 bytes (newline included) is the longest line the
    real create_work takes; 4,095 must be refused cleanly (no batch left
    empty) or fit."""
    c = gahp()
    for target in (4094, 4095):
        b = uniq("line%d" % target)
        data = content(b)
        p = files("l%d.txt" % target, data)
        phys = hashlib.md5(data).hexdigest() + ".txt"
        job = b + "#0"
        args = padded_args(job, phys, target)
        res = submit_one(c, b, job, args, p)
        rows = batch_rows(b)
        progress("    %d-byte line: %s" % (target, res[0][:200]))
        if target == 4094:
            assert res == ["NULL"], res
        if res == ["NULL"]:
            assert len(rows) == 1 and rows[0][1] == "1", rows
            wus = wu_rows(int(rows[0][0]))
            assert realsys.command_line_of(wus[0][1]) == " ".join(args)
            retire(c, b)
        else:
            assert "4094" in res[0].replace(",", "") or "bytes" in res[0], res
            assert rows == [] or all(r[1] != "0" for r in rows), \
                "a refused %d-byte job left an empty batch: %s" % (target, rows)
            # the same submit again: the same clean answer, not a stuck batch
            res2 = submit_one(c, b, job, args, p)
            assert res2 == res, (res, res2)


def test_too_many_words_refused(gahp, files):
    c = gahp()
    b = uniq("words")
    p = files("a.txt", content(b))
    res = submit_one(c, b, b + "#0", ["w%d" % i for i in range(100)], p)
    assert len(res) == 1 and "words" in res[0], res
    assert batch_rows(b) == []


def _jobs(prefix, paths):
    return [("%s#%d" % (prefix, i), ["--cpu_time", "1"], [(pth, "in")])
            for i, pth in enumerate(paths)]


def _check_files_once(names):
    q = ",".join("'%s'" % n for n in names)
    rows = mysql("select name, count(*) from job_file where name in (%s) group by name" % q)
    counts = {r[0]: int(r[1]) for r in rows}
    missing = [n for n in names if n not in counts]
    twice = {n: k for n, k in counts.items() if k != 1}
    assert not missing, "files not on the server: %s" % missing[:5]
    assert not twice, "files twice on the server: %s" % twice


def test_uploads_each_file_once_across_batches(gahp, files):
    c = gahp()
    b1, b2 = uniq("up1"), uniq("up2")
    data = [content("up", i, 200 * 1024) for i in range(25)]
    paths = [files("u%02d.dat" % i, d) for i, d in enumerate(data)]
    assert c.wait(c.submit(b1, "uppercase", _jobs(b1, paths), NULL6), 300) == ["NULL"]
    more = [content("up", 100 + i, 1000) for i in range(2)]
    paths2 = paths[:10] + [files("v%d.dat" % i, d) for i, d in enumerate(more)]
    assert c.wait(c.submit(b2, "uppercase", _jobs(b2, paths2), NULL6), 300) == ["NULL"]
    names = [hashlib.md5(d).hexdigest() + ".dat" for d in data + more]
    _check_files_once(names)
    for b, n in ((b1, 25), (b2, 12)):
        rows = batch_rows(b)
        assert len(rows) == 1 and int(rows[0][1]) == n, rows
        retire(c, b)


def _apache(env_extra):
    env = dict(os.environ, **env_extra)
    subprocess.run([str(SETUP), BOINC_SRC, "apache"], env=env, check=True, timeout=180,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_stock_php_limits(gahp, files):
    """Debian's stock PHP limits (20 files, 8M post, 2M per file): a batch
    of 30 inputs is uploaded within them, each file once; a 3 MB input is
    refused naming the limit."""
    if not SETUP.exists() or not os.path.isdir(BOINC_SRC):
        pytest.fail("needs %s and %s" % (SETUP, BOINC_SRC))
    _apache({"PHP_MAX_FILE_UPLOADS": "20", "PHP_POST_MAX": "8M", "PHP_UPLOAD_MAX": "2M"})
    progress("    Apache restarted with stock PHP limits")
    try:
        c = gahp()
        b = uniq("stock")
        data = [content("stock", i, 700 * 1024) for i in range(30)]
        paths = [files("s%02d.bin" % i, d) for i, d in enumerate(data)]
        assert c.wait(c.submit(b, "uppercase", _jobs(b, paths), NULL6), 400) == ["NULL"]
        _check_files_once([hashlib.md5(d).hexdigest() + ".bin" for d in data])
        retire(c, b)
        b2 = uniq("stockbig")
        big = content("stockbig", 0, 3 * 1024 * 1024)
        res = c.wait(c.submit(b2, "uppercase",
                              _jobs(b2, [files("big.bin", big)]), NULL6), 300)
        assert len(res) == 1 and "upload_max_filesize" in res[0], res
    finally:
        _apache({})
        progress("    Apache restarted with the raised PHP limits")
