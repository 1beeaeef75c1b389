"""What start-up says about the BLAH work an earlier run left (issue 42,
sampled mutation: negated tests of how many open batches were closed
and of how many requests recovery saw passed every net, the log lines
gone and wrong ones at every clean start).  The real boinc_gahp over pipes, driven as the 25.0 grid manager
drives it, against the real emulator on 127.0.0.1."""
import functools
import time

from blah_client import cluster_ads


cluster = functools.partial(cluster_ads, prefix="home_bl_127.0.0.1_9618_schedd_42")


def test_start_up_logs_the_open_batches_it_closed(make_client, emu, iwd):
    c = make_client(args=("--blah-batch-window", "30", "--blah-status-interval", "0"))
    rids = [c.start("BLAH_JOB_SUBMIT", ad) for ad in cluster(iwd, 2)]
    jobs = [c.wait(r)[2] for r in rids]
    first = c.gahp.stderr_text()
    # a start with no earlier work says nothing of it: no BLAH batch
    # closed, no request resumed, kept or closed (a sampled mutant of
    # recovery.c:194 logged "recovery: 0 ..." at every clean start)
    assert "BLAH batch" not in first, first[-3000:]
    assert "recovery:" not in first, first[-3000:]
    c.kill()                            # the group is still open
    c2 = make_client()                  # start-up closes it and submits it
    c2.gahp.wait_stderr("recovery: 1 BLAH batch closed and submitted")
    deadline = time.monotonic() + 60
    while len(emu.state()["batches"]) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert len(jobs) == 2
    c2.stop()
    # and the next start, with nothing left open, says nothing either
    c3 = make_client()
    c3.stop()
    log = c3.gahp.stderr_text()
    assert log.count("BLAH batch") == 1, log[-3000:]
