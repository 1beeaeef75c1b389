"""The BLAH scheduler (doc/blah-core.md): BLAH_JOB_STATUS and
BLAH_JOB_CANCEL answer from the journal alone, whatever the network does,
and the network work (queries, aborts, fetches of finished jobs into Iwd)
is done once, in the background.  The real boinc_gahp over pipes, driven
as the 25.0 grid manager drives it, against the real emulator on
127.0.0.1 (manual clock), with the emulator's own fault injection for the
outages."""
import functools
import time

from blah_client import cluster_ads, parse_status_ad
from blah_client import submit_all_ok as submit_all


cluster = functools.partial(cluster_ads, prefix="home_bl_127.0.0.1_9618_schedd_7")


def statuses(client, jobs):
    """One round of the grid manager's probes, every request in flight at
    once: {job: (rc, err, status, ad)}."""
    rids = {j: client.start("BLAH_JOB_STATUS", j) for j in jobs}
    out = {}
    for j, rid in rids.items():
        rc, err, status, ad = client.wait(rid)
        out[j] = (int(rc), err, int(status), parse_status_ad(ad) if ad != "NULL" else None)
    return out


def wait_all(client, jobs, want, emu=None, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        got = statuses(client, jobs)
        if all(s[2] == want for s in got.values()):
            return got
        assert time.monotonic() < deadline, {j: s[:3] for j, s in got.items()}
        if emu is not None:
            emu.run(max_seconds=600)
        time.sleep(0.2)


def wait_batches(emu, n, timeout=60):
    deadline = time.monotonic() + timeout
    while len(emu.state()["batches"]) < n:
        assert time.monotonic() < deadline, "the batch did not reach the server"
        time.sleep(0.1)


def query_count(emu):
    """The project's query_batch2 requests so far, faulted ones included:
    one per scheduler pass that reached the query."""
    return emu.counters()["rpc"]["query_batch2"]


def test_two_hundred_concurrent_cancels_cost_a_few_abort_requests(make_client, emu, iwd):
    c = make_client(args=("--blah-batch-window", "0.3", "--blah-status-interval", "3600",
                          "--retry-budget", "5"))
    jobs = submit_all(c, cluster(iwd, 200))
    wait_batches(emu, 1)
    emu.advance(0)                              # every job sent: in progress
    rids = [c.start("BLAH_JOB_CANCEL", j) for j in jobs]
    for rid in rids:
        assert c.wait(rid) == ["0", "NULL"]
    # every job answers removed at once, from the journal
    got = statuses(c, jobs)
    assert all(s[:3] == (0, "NULL", 3) for s in got.values())
    # the aborts reach the server in the background
    ok = emu.wait_until(lambda: all(emu.job(j)["status"] == "ERROR" for j in jobs),
                        timeout=60, interval=0.5)
    assert ok, [j for j in jobs if emu.job(j)["status"] != "ERROR"]
    time.sleep(1)
    sent = emu.counters()["rpc"]["abort_jobs"]
    # one per scheduler pass that found aborts owed, not one per job
    assert 1 <= sent <= 5, sent


def test_status_never_fails_while_outputs_cannot_be_downloaded(make_client, emu, iwd):
    c = make_client()
    jobs = submit_all(c, cluster(iwd, 3))
    wait_batches(emu, 1)
    emu.fault("get_output.php", "http503", probability=1)
    emu.run(max_seconds=600)                    # every job DONE on the server
    # the scheduler sees DONE, its downloads fail: the jobs ran, so they
    # answer running, never an error (HTCondor 25.0 holds a job after
    # BATCH_GAHP_CHECK_STATUS_ATTEMPTS of those)
    def check_round():
        got = statuses(c, jobs)
        assert all(s[0] == 0 and s[2] in (1, 2) for s in got.values()), got
    deadline = time.monotonic() + 60
    while emu.counters()["rpc"]["get_output"] == 0:     # until it tried
        emu.run(max_seconds=600)        # (the batch may have been on its way)
        check_round()
        assert time.monotonic() < deadline
        time.sleep(0.3)
    deadline = time.monotonic() + 8                     # more than the retry budget
    while time.monotonic() < deadline:
        check_round()
        time.sleep(0.3)
    assert all(s[2] == 2 for s in statuses(c, jobs).values())
    emu.clear_faults()
    done = wait_all(c, jobs, 4, emu=emu)
    for k, j in enumerate(jobs):
        assert done[j][3]["ExitCode"] == "0"
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k


def test_an_outage_holds_nothing_and_the_jobs_go_on_after_it(make_client, emu, iwd):
    c = make_client()
    jobs = submit_all(c, cluster(iwd, 4))
    wait_batches(emu, 1)
    wait_all(c, jobs, 1)
    emu.fault("*", "http503", probability=1)    # the whole project down
    emu.run(max_seconds=600)                    # (the control API is never faulted)
    deadline = time.monotonic() + 12            # more than the retry budget (5 s)
    rounds = 0
    while time.monotonic() < deadline:
        got = statuses(c, jobs)
        assert all(s[0] == 0 and s[2] in (1, 2) for s in got.values()), got
        rounds += 1
        time.sleep(0.2)
    assert rounds >= 3
    emu.clear_faults()
    done = wait_all(c, jobs, 4, emu=emu)
    for k, j in enumerate(jobs):
        assert done[j][:3] == (0, "NULL", 4)
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k


def test_concurrent_statuses_of_a_finished_job_download_it_once(make_client, emu, iwd):
    c = make_client()
    # job A: finished with one status at a time, as the baseline
    a = submit_all(c, cluster(iwd, 1, prefix="home_bl_127.0.0.1_9618_schedd_8"))[0]
    wait_all(c, [a], 4, emu=emu)
    per_job = emu.counters()["rpc"]["get_output"]
    assert per_job >= 1
    # job B: the same shape, twenty statuses in flight at every round
    (iwd / "out.0").unlink()
    b = submit_all(c, cluster(iwd, 1, prefix="home_bl_127.0.0.1_9618_schedd_9"))[0]
    deadline = time.monotonic() + 60
    while True:
        emu.run(max_seconds=600)
        rids = [c.start("BLAH_JOB_STATUS", b) for _ in range(20)]
        got = [c.wait(r) for r in rids]
        assert all(g[0] == "0" for g in got), got
        if all(g[2] == "4" for g in got):
            break
        assert time.monotonic() < deadline, got[-1]
    assert emu.counters()["rpc"]["get_output"] == 2 * per_job
    assert (iwd / "out.0").read_text() == "JOB 0 INPUT\n"


def test_aborts_owed_are_sent_at_start_up_without_any_status(make_client, emu, iwd):
    c = make_client(args=("--blah-batch-window", "0.3", "--blah-status-interval", "3600",
                          "--retry-budget", "2"))
    jobs = submit_all(c, cluster(iwd, 3))
    wait_batches(emu, 1)
    emu.advance(0)
    emu.fault("abort_jobs", "http503", probability=1)
    for j in jobs[:2]:
        assert c.cancel(j) == (0, "NULL")
    # the scheduler tried (and failed): the aborts are still owed
    assert emu.wait_until(lambda: emu.counters()["rpc"]["abort_jobs"] >= 1, timeout=30)
    c.kill()
    emu.clear_faults()
    c2 = make_client(args=("--blah-batch-window", "0.3", "--blah-status-interval", "3600"))
    # no BLAH command at all: start-up alone sends them
    assert emu.wait_until(lambda: all(emu.job(j)["status"] == "ERROR" for j in jobs[:2]),
                          timeout=60, interval=0.5)
    assert emu.job(jobs[2])["status"] != "ERROR"
    assert c2.gahp.proc.poll() is None


def test_an_outage_longer_than_the_retry_budget_during_the_submit_holds_nothing(
        make_client, emu, iwd):
    """create_batch answers 503 for longer than the retry budget (5 s):
    the group's batch waits, its jobs answer idle, and the scheduler
    submits it again once the project answers; one batch, each job once."""
    c = make_client()
    emu.fault("create_batch", "http503", probability=1)
    jobs = submit_all(c, cluster(iwd, 3))
    deadline = time.monotonic() + 15            # three retry budgets
    while time.monotonic() < deadline:
        got = statuses(c, jobs)
        assert all(s[:3] == (0, "NULL", 1) for s in got.values()), got
        time.sleep(0.3)
    assert emu.counters()["rpc"]["create_batch"] >= 2
    assert len(emu.state()["batches"]) == 0
    emu.clear_faults()
    done = wait_all(c, jobs, 4, emu=emu)
    for k, j in enumerate(jobs):
        assert done[j][:3] == (0, "NULL", 4)
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k
    assert len(emu.state()["batches"]) == 1
    assert emu.counters()["jobs_by_name"] == {j: 1 for j in jobs}


def test_a_group_window_occupies_no_worker(make_client, emu, iwd):
    """With one worker and a 4 s window, the group's window is the
    timer's: a status asked during the window is answered while the group
    is still gathering (no batch on the server yet), not after it."""
    c = make_client(args=("--workers", "1", "--blah-batch-window", "4",
                          "--blah-status-interval", "0", "--retry-budget", "5"))
    jobs = submit_all(c, cluster(iwd, 2))
    got = statuses(c, jobs)
    assert all(s[:3] == (0, "NULL", 1) for s in got.values())
    assert len(emu.state()["batches"]) == 0     # answered inside the window
    # and the window still closes: one batch, both jobs complete
    done = wait_all(c, jobs, 4, emu=emu)
    assert all(s[:3] == (0, "NULL", 4) for s in done.values())
    assert len(emu.state()["batches"]) == 1


def test_statuses_asked_again_pace_the_passes_down_to_the_floor(make_client, emu, iwd):
    """The grid manager asking about a job again after g seconds brings the
    project's next pass to g after the last one (GRIDMANAGER_JOB_PROBE_INTERVAL
    sets the pace, as 9.0's own batch query does), never sooner than
    blah_status_min_interval; nobody asking, the interval (here an hour)
    rules."""
    c = make_client(args=("--blah-batch-window", "0.3", "--blah-status-interval", "3600",
                          "--blah-status-min-interval", "2", "--retry-budget", "5"))
    jobs = submit_all(c, cluster(iwd, 3))
    wait_batches(emu, 1)
    queries = functools.partial(query_count, emu)
    # the pass a submit kicks; then nobody asks: no pass in an hour
    assert emu.wait_until(lambda: queries() >= 1, timeout=30)
    emu.run(max_seconds=600)                    # every job DONE on the server
    q0 = queries()
    time.sleep(3)
    assert queries() == q0
    assert all(s[2] == 1 for s in statuses(c, jobs).values())  # the journal's old answer
    # asked every 0.2 s: the next pass comes at once, and delivers
    done = wait_all(c, jobs, 4, timeout=60)
    for k, j in enumerate(jobs):
        assert done[j][:3] == (0, "NULL", 4)
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k
    assert queries() > q0
    # two more jobs asked about every 0.2 s for 8 s: a pass every 2 s
    # (the floor), not one per status, not one an hour
    more = submit_all(c, cluster(iwd, 2, prefix="home_bl_127.0.0.1_9618_schedd_9"))
    wait_batches(emu, 2)
    q1 = queries()
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        statuses(c, more)
        time.sleep(0.2)
    passes = queries() - q1
    assert 2 <= passes <= 6, passes


def test_statuses_asked_again_keep_an_unreachable_projects_back_off(make_client, emu, iwd):
    c = make_client(args=("--blah-batch-window", "0.3", "--blah-status-interval", "3600",
                          "--blah-status-min-interval", "0.1", "--retry-budget", "1"))
    jobs = submit_all(c, cluster(iwd, 3))
    wait_batches(emu, 1)
    queries = functools.partial(query_count, emu)
    assert emu.wait_until(lambda: queries() >= 1, timeout=30)  # the submit's pass
    emu.fault("*", "http503", probability=1)    # the whole project down
    # a cancel kicks a pass, which fails: the back-off starts (an hour,
    # at most 300 s)
    assert c.wait(c.start("BLAH_JOB_CANCEL", jobs[2])) == ["0", "NULL"]
    assert emu.wait_until(lambda: queries() >= 2, timeout=30)
    time.sleep(2)                               # the failing pass's retries end
    q0 = queries()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        got = statuses(c, jobs[:2])
        assert all(s[0] == 0 and s[2] in (1, 2) for s in got.values()), got
        time.sleep(0.2)
    assert queries() == q0                      # asked 25 times each: not one more pass
