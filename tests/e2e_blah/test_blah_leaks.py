"""A BLAH session under valgrind's leak checker (issue 42, sampled
mutation): the real boinc_gahp over pipes, driven as the 25.0 grid manager
drives it, against the real emulator on 127.0.0.1, run by valgrind
--leak-check=full.  Mutants that drop a free() (the session's BLAH state,
a request's argument text, ...) change nothing any other test sees: the
memory is lost, not misused.  valgrind exits with its own status (99) when
a block is definitely lost, and the server's clean exit must be 0."""
from blah_client import FAST_ARGS as FAST, submit_ad
from valgrind_leaks import LEAKED, needs_valgrind, valgrind_wrapper

pytestmark = needs_valgrind


def test_a_blah_session_loses_no_memory(make_client, emu, iwd, tmp_path, monkeypatch):
    log = valgrind_wrapper(tmp_path, monkeypatch)
    c = make_client(args=FAST)
    ads = []
    for k in range(2):
        (iwd / ("in.%d" % k)).write_text("job %d\n" % k)
        ads.append(submit_ad(iwd, "home_bl_vg.%d_1" % k, transfer_input="in.%d" % k,
                             transfer_output="out", remaps="out = out.%d" % k,
                             out="out.txt.%d" % k, err="err.txt.%d" % k,
                             arguments="one --two=2"))
    rids = [c.start("BLAH_JOB_SUBMIT", ad) for ad in ads]
    jobs = []
    for rid in rids:
        rc, err, job = c.wait(rid, timeout=120)
        assert rc == "0", err
        jobs.append(job)
    # until both are done: submitted in one batch, run, outputs in Iwd
    import time
    deadline = time.monotonic() + 180
    while True:
        st = [c.status(j, timeout=120) for j in jobs]
        if all(s[2] == 4 for s in st):
            break
        assert time.monotonic() < deadline, st
        emu.run(max_seconds=600)
        time.sleep(0.5)
    assert (iwd / "out.0").read_text() == "JOB 0\n"
    assert c.call("BLAH_PING", "boinc", timeout=60) == ["0", "NULL"]
    rc = c.gahp.quit(timeout=120)
    report = log.read_text() if log.exists() else ""
    assert rc == 0, "exit status %s (%d: valgrind found a leak):\n%s" % (rc, LEAKED, report)
    assert "definitely lost" not in report, report


def test_a_failed_abort_loses_no_memory(make_client, emu, iwd, tmp_path, monkeypatch):
    """BLAH_JOB_CANCEL while the project refuses abort_jobs: the
    scheduler's failed attempt (logged with the server's message) and the
    one that works after the outage, under valgrind."""
    log = valgrind_wrapper(tmp_path, monkeypatch)
    c = make_client(args=("--blah-batch-window", "0.3", "--blah-status-interval", "0",
                          "--retry-budget", "1"))
    (iwd / "in").write_text("x\n")
    rc, err, job = c.submit(submit_ad(iwd, "home_bl_vg_abort.0_1", transfer_input="in",
                                      transfer_output="out"), timeout=120)
    assert rc == 0, err
    assert emu.wait_until(lambda: len(emu.state()["batches"]) == 1, timeout=120)
    emu.advance(0)
    emu.fault("abort_jobs", "http503", probability=1)
    assert c.cancel(job) == (0, "NULL")
    c.gahp.wait_stderr("abort of 1 job failed", timeout=120)
    emu.clear_faults()
    assert emu.wait_until(lambda: emu.job(job)["status"] == "ERROR", timeout=120,
                          interval=0.5)
    rc = c.gahp.quit(timeout=120)
    report = log.read_text() if log.exists() else ""
    assert rc == 0, "exit status %s (%d: valgrind found a leak):\n%s" % (rc, LEAKED, report)
    assert "definitely lost" not in report, report
