"""BOINC_FETCH_OUTPUT against the real emulator: ALL and SOME with
renames, the zip rule, failed and aborted jobs, paths with spaces, and
faults on get_output that must never leave a file under its final name."""
import io
import os
import zipfile

import pytest

ZIP_CONFIG = """<emu_config>
  <app><name>zipout</name><output>out.zip</output></app>
</emu_config>
"""


def listing(d):
    """Every entry under d (relative paths), hidden temp files included."""
    out = []
    for root, dirs, files in os.walk(str(d)):
        for n in dirs + files:
            out.append(os.path.relpath(os.path.join(root, n), str(d)))
    return sorted(out)


def assert_success(toks, exit_status=0):
    assert len(toks) == 4, toks
    assert toks[0] == "NULL"
    assert int(toks[1]) == exit_status
    for t in toks[2:]:
        assert float(t) >= 0 and "e" not in t.lower(), t


def _twoinout(emu, job="t#1"):
    emu.submit(job.split("#")[0], "twoinout", [(job, [b"1 2 3\n", b"10 20\n"], None)])
    emu.run()


def test_fetch_all_places_every_output_and_appends_stderr(session, emu, iwd):
    _twoinout(emu)
    (iwd / "job.err").write_text("earlier text\n")
    toks = session.fetch("t#1", str(iwd), "job.err", "ALL")
    assert_success(toks)
    assert (iwd / "sum").read_text() == "36\n"
    assert "sum: 36" in (iwd / "log").read_text()
    err = (iwd / "job.err").read_text()
    assert err.startswith("earlier text\n") and "called boinc_finish(0)" in err
    assert listing(iwd) == ["job.err", "log", "sum"]


def test_fetch_all_with_rename_and_absolute_stderr(session, emu, iwd, tmp_path):
    _twoinout(emu)
    (iwd / "sub dir").mkdir()
    abs_err = tmp_path / "abs stderr.txt"
    toks = session.fetch("t#1", str(iwd), str(abs_err), "ALL",
                         [("sum", "sub dir/the sum.txt")])
    assert_success(toks)
    assert (iwd / "sub dir" / "the sum.txt").read_text() == "36\n"
    assert (iwd / "log").exists() and not (iwd / "sum").exists()
    assert "app started" in abs_err.read_text()


def test_fetch_some_only_named_outputs(session, emu, iwd, tmp_path):
    _twoinout(emu)
    dst = tmp_path / "elsewhere.log"
    toks = session.fetch("t#1", str(iwd), "err", "SOME", [("log", str(dst))])
    assert_success(toks)
    assert "sum: 36" in dst.read_text()
    assert listing(iwd) == ["err"]


def test_fetch_some_unknown_output_is_skipped(session, emu, iwd):
    # HTCondor adds specs for the job's stdout/stderr, which a BOINC app does
    # not produce (issue 8 point 7): skipped, the real outputs still arrive.
    _twoinout(emu)
    toks = session.fetch("t#1", str(iwd), "err", "SOME",
                         [("sum", "s"), ("nosuch", "n")])
    assert_success(toks)
    assert listing(iwd) == ["err", "s"]


def test_fetch_into_missing_directory_leaves_nothing(session, emu, iwd):
    _twoinout(emu)
    toks = session.fetch("t#1", str(iwd), "err", "ALL", [("log", "no such dir/log")])
    assert len(toks) == 1
    assert toks[0].startswith("saving output failed: cannot create temporary file for output")
    assert "no such dir/log" in toks[0]
    # The other output was downloaded to a temp file first, then dropped.
    assert listing(iwd) == []


def test_job_and_paths_with_spaces(session, emu, iwd):
    # a job name cannot hold white space on a real server (create_work's
    # job line), nor a backslash (its database): '#', '%', '+' and '&'
    # still need URL and XML escaping
    job = "batch_with_space#job%one+&two"
    emu.submit("batch with space", "uppercase", [(job, [b"mixed Case\n"], None)])
    emu.run()
    toks = session.fetch(job, str(iwd), "std err", "SOME", [("out", "up per")])
    assert_success(toks)
    assert (iwd / "up per").read_text() == "MIXED CASE\n"
    assert (iwd / "std err").exists()


def test_zip_output_is_unpacked(make_session, make_emu, iwd, tmp_path):
    emu = make_emu(ZIP_CONFIG)
    s = make_session(emu)
    emu.submit("z", "zipout", [("z#1", [b"Hello Zip\n"], None)])
    emu.run()
    toks = s.fetch("z#1", str(iwd), "err", "ALL", [("upper.txt", "UP.txt")])
    assert_success(toks)
    assert (iwd / "UP.txt").read_text() == "HELLO ZIP\n"
    assert (iwd / "lower.txt").read_text() == "hello zip\n"
    assert (iwd / "info.txt").read_text() == "input bytes: 10\n"
    # No archive, no private directory, no temp file left.
    assert listing(iwd) == ["UP.txt", "err", "info.txt", "lower.txt"]

    other = tmp_path / "other"
    other.mkdir()
    toks = s.fetch("z#1", str(other), "err", "SOME", [("lower.txt", "l")])
    assert_success(toks)
    assert listing(other) == ["err", "l"]
    toks = s.fetch("z#1", str(other), "err", "SOME", [("missing.txt", "m")])
    assert_success(toks)        # skipped: not a member (issue 8 point 7)
    assert listing(other) == ["err", "l"]


def test_output_not_named_zip_is_saved_as_is(session, emu, iwd):
    # The default zipout app names its single output "out": no .zip, so
    # the archive is an ordinary file.
    emu.submit("z", "zipout", [("z#1", [b"abc"], None)])
    emu.run()
    assert_success(session.fetch("z#1", str(iwd), "err", "ALL"))
    with zipfile.ZipFile(io.BytesIO((iwd / "out").read_bytes())) as z:
        assert sorted(z.namelist()) == ["info.txt", "lower.txt", "upper.txt"]


def test_crashed_job_gives_exit_status_and_stderr(session, emu, iwd):
    # a server with query_completed_job fixed (the stock one dies here:
    # tests/e2e_realserver covers that path)
    emu.control("quirks", "POST", set="php-warnings")
    emu.submit("f", "failer", [("f#1", [b"x"], "--exit 3")])
    emu.run()
    toks = session.fetch("f#1", str(iwd), "f.err", "ALL")
    assert_success(toks, exit_status=3)
    assert "exiting with code 3" in (iwd / "f.err").read_text()
    # No output files for a failed job.
    assert listing(iwd) == ["f.err"]


def test_job_aborted_before_running(session, emu, iwd):
    # a server with query_completed_job fixed (the stock one dies here:
    # tests/e2e_realserver covers that path)
    emu.control("quirks", "POST", set="php-warnings")
    emu.submit("ab", "uppercase", [("ab#1", [b"x"], None)])
    assert session.call("BOINC_ABORT_JOBS", "ab#1") == ["NULL"]
    toks = session.fetch("ab#1", str(iwd), "err", "ALL")
    assert toks == ["job ab#1 failed: error mask 16 (cancelled), no instance reported"]
    assert listing(iwd) == []


def test_stock_server_broken_reply_for_failed_job(session, emu, iwd):
    emu.submit("ab", "uppercase", [("ab#1", [b"x"], None)])
    emu.control("quirks", "POST", set="qcj-stock")
    assert session.call("BOINC_ABORT_JOBS", "ab#1") == ["NULL"]
    toks = session.fetch("ab#1", str(iwd), "err", "ALL")
    assert len(toks) == 1
    assert toks[0].startswith("query_completed_job failed: bad reply"), toks
    assert listing(iwd) == []


def test_unfinished_and_unknown_jobs(session, emu, iwd):
    # a server with query_completed_job fixed (the stock one dies here:
    # tests/e2e_realserver covers that path)
    emu.control("quirks", "POST", set="php-warnings")
    emu.submit("u", "uppercase", [("u#1", [b"x"], None)])
    assert session.fetch("u#1", str(iwd), "err", "ALL") == ["job u#1 is not finished"]
    toks = session.fetch("nosuchjob", str(iwd), "err", "ALL")
    assert len(toks) == 1
    assert toks[0].startswith("query_completed_job failed: server error: "), toks
    assert listing(iwd) == []


@pytest.mark.parametrize("kind", ["html_error", "drop", "truncate"])
def test_get_output_fault_leaves_no_file_and_retry_succeeds(make_session, emu, iwd, kind):
    s = make_session(emu, args=("--retry-budget", "1"))
    _twoinout(emu)
    emu.fault("get_output.php", kind, count=1000)
    toks = s.fetch("t#1", str(iwd), "err", "ALL")
    assert len(toks) == 1, toks
    assert toks[0].startswith("get_output of sum (file 0) failed"), toks
    assert listing(iwd) == []
    emu.control("clear_faults", "POST")
    assert_success(s.fetch("t#1", str(iwd), "err", "ALL"))
    assert (iwd / "sum").read_text() == "36\n"
    assert listing(iwd) == ["err", "log", "sum"]


def test_single_transient_get_output_fault_is_retried(make_session, emu, iwd):
    s = make_session(emu, args=("--retry-budget", "10"))
    _twoinout(emu)
    emu.fault("get_output.php", "drop", count=1)
    assert_success(s.fetch("t#1", str(iwd), "err", "ALL"))
    assert (iwd / "sum").read_text() == "36\n"


def test_output_never_replaces_a_fifo_or_device_node(session, emu, iwd):
    """An output whose destination exists as a FIFO is an error result and
    the FIFO stays: rename() would swap the node itself (run as root onto
    /dev/null it replaced the device)."""
    import stat
    _twoinout(emu)
    os.mkfifo(str(iwd / "sum"))
    toks = session.fetch("t#1", str(iwd), "err", "ALL")
    assert toks[0].startswith("saving output failed"), toks
    assert "not a regular file" in " ".join(toks), toks
    assert stat.S_ISFIFO(os.lstat(str(iwd / "sum")).st_mode)
    assert not [n for n in listing(iwd) if "boinc_gahp" in n], listing(iwd)


def test_concurrent_fetches_into_one_directory_all_arrive(session, emu, iwd):
    """Many fetches of different jobs running at once into one directory:
    the leftover clean-up at the start of each fetch must never take
    another running fetch's temp file (file times are coarser than the
    clock: a temp made just after the first fetch began can look older)."""
    from cmds_helpers import split_tokens
    names = ["cf#%04d" % i for i in range(300)]
    emu.submit("cf", "uppercase", [(n, [b"x %d\n" % i], None) for i, n in enumerate(names)])
    emu.run(3600)
    rids = [session.start("BOINC_FETCH_OUTPUT", n, str(iwd), "err_%d" % i, "SOME", 1,
                          "out", "out_%d" % i) for i, n in enumerate(names)]
    got = {}
    while len(got) < len(rids):
        for line in session.gahp.wait_results(1, timeout=300):
            toks = split_tokens(line)
            got[int(toks[0])] = toks[1:]
    bad = [r for r in got.values() if r[0] != "NULL"]
    assert not bad, bad[:3]
    for i in (0, 7, 299):
        assert (iwd / ("out_%d" % i)).read_text() == "X %d\n" % i
