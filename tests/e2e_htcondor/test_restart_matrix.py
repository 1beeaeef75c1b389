"""The restart matrix: the GAHP SIGKILLed at every submit step boundary
(BOINC_GAHP_TEST_CRASH_AT, doc/testing.md) and at random instants, the
simulated grid manager exiting at cycle boundaries and between saving a
batch name and sending BOINC_SUBMIT; each time the grid manager restarts
(fresh ids from 2, a fresh job order) and re-drives its jobs.  Invariants
(sim_invariants.check_invariants): every job completes with the right
output, nothing held, no batch or job twice, no unexpected client exit."""
import random
import time

import pytest

from gahp_client import REAL_CLOCK
from gridmanager_sim import ClientExit
from sim_invariants import check_invariants

SUBMIT_POINTS = [
    "submit.hashed", "submit.create_sent", "submit.created", "submit.query_sent",
    "submit.query_done", "submit.upload_sent", "submit.uploaded",
    "submit.submit_sent", "submit.submitted",
]
FETCH_POINTS = ["fetch.downloaded", "fetch.renamed"]


def two_clusters(gm, add_jobs):
    """Two clusters that share one batch, with different trailing fields,
    so the first job of a shuffled order decides what the submit carries."""
    add_jobs(gm, 3, attrs={"rsc_fpops_est": "1e12", "delay_bound": "3600"})
    add_jobs(gm, 2, attrs={"rsc_fpops_est": "5e12", "rsc_memory_bound": "1e9"})


def crash_once(gm, point):
    gm.env_for_process = lambda n: {"BOINC_GAHP_TEST_CRASH_AT": point} if n == 1 else {}


# The first process ends because its GAHP died at the crash point: the
# simulator notices it reading (EOF) or, when it was writing a command at
# that instant, writing (EPIPE); which comes first is a race.
GAHP_DIED = ("GAHP exited", "GAHP pipe closed")


@pytest.mark.parametrize("point", SUBMIT_POINTS)
def test_sigkill_at_submit_step(point, make_gm, add_jobs, emulator):
    """The restarted GAHP resumes the cut submit in the background; its
    submit_batch is slowed (1.5 s) so that the new grid manager's first
    query meets the batch missing or with 0 jobs and resubmits it, in
    another job order, while the resumed submit is still running."""
    gm = make_gm(seed=11)
    two_clusters(gm, add_jobs)

    def env(n):
        if n == 1:
            return {"BOINC_GAHP_TEST_CRASH_AT": point}
        if n == 2:
            emulator.fault("submit_batch", "delay", delay_ms=1500)
        return {}
    gm.env_for_process = env
    gm.run(max_processes=6)
    assert gm.exits[0][1].startswith(GAHP_DIED), gm.exits
    check_invariants(gm, emulator)


@pytest.mark.parametrize("point", FETCH_POINTS)
def test_sigkill_at_fetch_step(point, make_gm, add_jobs, emulator):
    gm = make_gm(seed=12)
    two_clusters(gm, add_jobs)
    crash_once(gm, point)
    gm.run(max_processes=6)
    assert gm.exits[0][1].startswith(GAHP_DIED), gm.exits
    check_invariants(gm, emulator)


def test_grid_manager_dies_before_sending_the_submit(make_gm, add_jobs, emulator):
    """The batch name is saved before BOINC_SUBMIT: the next process finds an
    unconfirmed batch, the server says `no batch named`, it resubmits."""
    gm = make_gm(seed=13)
    two_clusters(gm, add_jobs)
    gm.exit_before_submit = lambda n, name: n == 1
    gm.run(max_processes=4)
    check_invariants(gm, emulator)
    assert len(gm.submits) == 1 and gm.submits[0][0] == 2
    assert any("no batch named" in " ".join(r[2]) for r in gm.results_log)


@pytest.mark.parametrize("cycle", [0, 1])
def test_grid_manager_restarts_between_polls(cycle, make_gm, add_jobs, emulator):
    """The grid manager exits (the GAHP sees EOF) after `cycle` polls; its
    successor re-drives the jobs it finds in the queue."""
    gm = make_gm(seed=14 + cycle)
    two_clusters(gm, add_jobs)
    gm.stop_process_at_cycle = lambda n, c: n == 1 and c == cycle
    gm.run(max_processes=4)
    check_invariants(gm, emulator)
    assert len(gm.processes) == 2


def kill_at_random(gm, seed, numbers, max_requests=6, max_delay=0.05):
    """SIGKILL the GAHP of the processes numbered in `numbers` at a random
    instant while it works: a random delay (up to max_delay s) after it
    accepted a random one (1..max_requests) of the BOINC commands of that
    process.  Anchoring the instant to the traffic keeps the kills inside
    the busy part of runs that last well under a second.  The simulator
    itself waits out the delay (the GAHP works on what it accepted
    meanwhile) and then kills: with a timer, a fast GAHP let the grid
    manager finish the whole run first and nothing was killed at all."""
    rng = random.Random(seed)
    timers = []         # kept for the callers' clean-up; nothing runs late
    plan = {n: rng.randint(1, max_requests) for n in numbers}
    seen = {}

    def accepted(proc, command, rid):
        seen[proc.number] = seen.get(proc.number, 0) + 1
        if plan.get(proc.number) != seen[proc.number]:
            return
        time.sleep(rng.uniform(0.0, max_delay))
        if proc.wire.proc.poll() is None:
            proc.wire.proc.kill()
    gm.on_request_accepted = accepted
    return timers


@pytest.mark.parametrize("seed", list(range(1, 9)))
def test_sigkill_at_random_instants(seed, make_gm, add_jobs, emulator):
    gm = make_gm(seed=seed)
    two_clusters(gm, add_jobs)
    add_jobs(gm, 3, app="failer", upper=False)
    timers = kill_at_random(gm, seed, {1, 2, 3})
    try:
        gm.run(max_processes=10)
    finally:
        for t in timers:
            t.cancel()
    assert any(reason.startswith("GAHP") for _, reason, _ in gm.exits), gm.exits
    check_invariants(gm, emulator)


def test_many_jobs_across_restarts(make_gm, add_jobs, emulator):
    """24 jobs in three batches (three apps) submitted in the same poll; the
    GAHP dies after journaling the second submit, the next one at a random
    instant, then the grid manager restarts once more between polls.  Each
    restart finds several unconfirmed batches: the early-stopping reply
    loop resolves one per query and the 0-job rule resubmits the others.

    On the real clock (REAL_CLOCK): the GAHP is killed while a submit_batch
    slowed to 1 s may still be running on the server, and the next GAHP's
    settle pauses (1 s, then 2 s, by design) are what let it see that
    submit land; at 1/100 it concludes too early that the request was lost,
    sends submit_batch again and the server refuses it (job held)."""
    gm = make_gm(seed=404)
    for app, upper in (("uppercase", True), ("failer", False), ("quorum2", True)):
        add_jobs(gm, 4, app=app, upper=upper, attrs={"rsc_fpops_est": "1e12"})
        add_jobs(gm, 4, app=app, upper=upper, attrs={"rsc_fpops_est": "2e12",
                                                      "delay_bound": "7200"})
    def env(n):
        if n == 1:
            return dict(REAL_CLOCK, BOINC_GAHP_TEST_CRASH_AT="submit.submitted:2")
        if n == 2:      # the resumed submits run while the new process queries
            emulator.fault("submit_batch", "delay", count=3, delay_ms=1000)
        return dict(REAL_CLOCK)
    gm.env_for_process = env
    timers = kill_at_random(gm, 404, {2})
    gm.stop_process_at_cycle = lambda n, c: n == 3 and c == 1
    try:
        gm.run(max_processes=10)
    finally:
        for t in timers:
            t.cancel()
    check_invariants(gm, emulator)
    # the restarts really met unconfirmed batches and the early stop
    assert any("rest of the reply not read" in line for line in gm.log), gm.log[-20:]


def test_unconfirmed_batches_whose_jobs_finished_before_the_restart(make_gm, add_jobs,
                                                                     emulator):
    """Three batches submitted in one poll; the grid manager dies before it
    reads any submit result, and every job finishes on the server while no
    grid manager runs.  The next process finds three unconfirmed batches:
    each reply confirms one and drops the rest, and a batch confirmed by a
    partial query has its DONE statuses older than the remembered
    server_time.  Every job must still be reported DONE and fetched."""
    gm = make_gm(seed=505)
    for app, upper in (("uppercase", True), ("failer", False), ("quorum2", True)):
        add_jobs(gm, 3, app=app, upper=upper)
    submits = []

    def accepted(proc, command, rid):
        if proc.number != 1 or command != "BOINC_SUBMIT":
            return
        submits.append(rid)
        if len(submits) < 3:
            return
        end = time.monotonic() + 30
        while time.monotonic() < end and len(emulator.counters()["jobs_by_name"]) < 9:
            time.sleep(0.05)
        time.sleep(0.3)                 # let the GAHP journal its last result
        emulator.advance(120)           # every job finishes on the server
        raise ClientExit("grid manager killed before reading the results", expected=True)
    gm.on_request_accepted = accepted
    gm.run(max_processes=4)
    assert gm.exits[0][1].startswith("grid manager killed"), gm.exits
    assert sum("rest of the reply not read" in line for line in gm.log) >= 2, gm.log
    check_invariants(gm, emulator)


def test_same_second_changes_on_a_real_clock(tmp_path, add_jobs):
    """On the emulator's real clock, with polls a fraction of a second apart
    (the real client polls every 60 s; the real server's clock makes the
    same collision with seconds-apart events), a job that finishes in the
    same whole second as the previous partial query's server_time has a
    mod_time that is not greater than it: passed verbatim, it is never
    reported DONE and the job hangs."""
    import emu
    from gridmanager_sim import GridManager
    e = emu.Emulator(tmp_path / "emu_real", clock="real", hosts=2)
    e.start()
    try:
        auth = tmp_path / "home" / ".boinc" / "real.auth"
        auth.parent.mkdir(parents=True, exist_ok=True)
        auth.write_text(e.authenticator + "\n")
        gm = GridManager(tmp_path / "journal.db", tmp_path / "home", seed=606, max_cycles=80)
        gm.poll_hook = lambda proc: time.sleep(0.15)
        for _ in range(3):
            add_jobs(gm, 3, res=(e.url, str(auth)))
            # one more grid-manager process per round (the count is cumulative)
            gm.run(max_processes=len(gm.processes) + 1)
            if gm.gave_up:
                break
        assert any(q[1] != "0" for q in gm.queries), "no partial query was made"
        check_invariants(gm, e)
    finally:
        e.stop()
