"""The special cases of issue 8, each driven by the simulated grid manager:
a journal lock held by another process (during a submit, a command and
start-up), a submit slower than the client's call timeout, a "2GB"
trailing field, a TAB in an argument or a path, and FETCH_OUTPUT SOME
specs for the job's stdout/stderr."""
import pathlib
import subprocess
import sys
import time

import pytest

from gridmanager_sim import COMPLETED, HELD
from sim_invariants import check_invariants

LOCK_SECONDS = 12       # the auditor's write transaction of the issue

LOCK_HOLDER = r"""
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


@pytest.fixture
def journal_lock(tmp_path):
    """journal_lock(seconds): another process (as an auditor's `sqlite3`
    shell would) opens a write transaction on the journal and keeps it
    for `seconds`; returns once the lock is held."""
    procs = []

    def take(seconds=LOCK_SECONDS):
        p = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(tmp_path / "journal.db"),
                              str(seconds)], stdout=subprocess.PIPE)
        procs.append(p)
        assert p.stdout.readline().strip() == b"locked"
        return p
    yield take
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
        p.stdout.close()


def test_lock_held_during_a_submit(make_gm, add_jobs, emulator, journal_lock):
    gm = make_gm(seed=21)
    add_jobs(gm, 3)

    def at_cycle(n, cycle):
        if n == 1 and cycle == 0:
            journal_lock()              # the submit is sent while it is held
        return False
    gm.stop_process_at_cycle = at_cycle
    gm.run(max_processes=3)
    check_invariants(gm, emulator)
    assert len(gm.processes) == 1


def test_lock_held_during_commands(make_gm, add_jobs, emulator, journal_lock):
    gm = make_gm(seed=22)
    add_jobs(gm, 3)

    def at_cycle(n, cycle):
        if n == 1 and cycle == 1:
            journal_lock()              # queries, fetches and retire while held
        return False
    gm.stop_process_at_cycle = at_cycle
    gm.run(max_processes=3)
    check_invariants(gm, emulator)
    assert len(gm.processes) == 1


def test_lock_held_during_start_up(make_gm, add_jobs, emulator, journal_lock):
    """The client waits for the banner without a timeout: a GAHP that
    waits for the lock and then starts loses nothing."""
    gm = make_gm(seed=23)
    add_jobs(gm, 1)
    gm.run(max_processes=1)             # the journal exists now
    add_jobs(gm, 2)
    journal_lock()
    gm.run(max_processes=3)
    check_invariants(gm, emulator)
    assert len(gm.processes) == 2


@pytest.mark.serial     # a 3 s call timeout: every other command must beat it
def test_submit_slower_than_the_call_timeout(make_gm, add_jobs, emulator):
    """The client gives up on BOINC_SUBMIT after its call timeout (300 s,
    shortened here): it holds the jobs and clears their batch name; the
    user releases them and they complete in a new batch.  Nothing the
    abandoned submit leaves on the server may live forever."""
    gm = make_gm(seed=24, call_timeout=3.0)
    jobs = add_jobs(gm, 2)
    emulator.fault("submit_batch", "delay", delay_ms=6000)

    def hook(proc):
        for job in jobs:
            if job.state == HELD and "timed out" in (job.hold_reason or ""):
                gm.release(job)         # the user's condor_release
        emulator.advance(60)
    gm.poll_hook = hook
    gm.run(max_processes=2)
    assert [c for _, c in gm.timeouts] == ["BOINC_SUBMIT"], gm.timeouts
    check_invariants(gm, emulator)
    assert len(gm.submits) == 2 and gm.submits[0][1] != gm.submits[1][1]
    # let the abandoned submit finish on the server, then look for orphans
    end = time.monotonic() + 30
    while time.monotonic() < end and len(emulator.state()["batches"]) < 2:
        time.sleep(0.2)
    for b in emulator.state()["batches"]:
        assert b["retired"] or b["expire_time"] > 0, ("lives forever", b)


def test_non_numeric_trailing_field_holds_with_a_reason(make_gm, add_jobs, emulator):
    """`+rsc_memory_bound = "2GB"` reaches the GAHP as is.  It must not
    crash-loop the client: the jobs are held with a reason naming the
    field and the value, and nothing is created on the server."""
    gm = make_gm(seed=25)
    jobs = add_jobs(gm, 2, attrs={"rsc_memory_bound": "2GB"})
    gm.run(max_processes=3)
    assert gm.unexpected_exits == [], gm.unexpected_exits
    assert gm.gave_up is None, gm.gave_up
    for job in jobs:
        assert job.state == HELD, job
        assert "rsc_memory_bound" in job.hold_reason and "2GB" in job.hold_reason, job
    assert emulator.counters()["batches_by_name"] == {}


def test_tab_in_an_argument(make_gm, add_jobs, emulator):
    """The client sends TAB raw; the framing takes it as an ordinary byte,
    but a real server splits the command line on white space, so the
    argument rule refuses it (issue 9): the job is held with a reason
    naming the argument, the client never crash-loops, and nothing is
    created on the server."""
    gm = make_gm(seed=26)
    jobs = add_jobs(gm, 1, args=["tab\there"])
    gm.run(max_processes=3)
    assert gm.unexpected_exits == [], gm.unexpected_exits
    assert gm.gave_up is None, gm.gave_up
    assert jobs[0].state == HELD, jobs[0]
    assert "tab\there" in jobs[0].hold_reason and "white space" in jobs[0].hold_reason, jobs[0]
    assert emulator.counters()["batches_by_name"] == {}


def test_tab_in_a_path(make_gm, add_jobs, emulator, tmp_path):
    gm = make_gm(seed=27)
    add_jobs(gm, 2, iwd_root=tmp_path / "dir\twith tab")
    gm.run(max_processes=3)
    check_invariants(gm, emulator)


def test_some_with_output_set_and_error_unset(make_gm, add_jobs, emulator):
    """transfer_output_files = out (remapped), output set, error unset: the
    client adds (job.out, Out) and the pair `null /dev/null`."""
    gm = make_gm(seed=28)

    def expect(iwd):
        text = ("input of uppercase in %s\n" % pathlib.Path(iwd).name).upper().encode()
        return {str(pathlib.Path(iwd) / "result.txt"): text}
    jobs = add_jobs(gm, 2, transfer_output_files=[("out", "result.txt")], expect=expect)
    for job in jobs:
        job.output = str(pathlib.Path(job.iwd) / "job.out")
    gm.run(max_processes=3)
    fetches = [w[1] for w in gm.wire_log if w[1].startswith("BOINC_FETCH_OUTPUT")]
    assert fetches and all(" SOME 3 out result.txt job.out " in f and
                           f.endswith(" null /dev/null") for f in fetches), fetches
    check_invariants(gm, emulator)
    assert all(j.state == COMPLETED for j in jobs)


def test_some_with_output_and_error_files(make_gm, add_jobs, emulator):
    """output and error set: the client adds (job.out, Out) and
    (job.err, Err), names the app never writes; the app's stderr still
    reaches the error file through the stderr path."""
    gm = make_gm(seed=29)
    jobs = add_jobs(gm, 2, transfer_output_files=[("out", "out")])
    for job in jobs:
        job.output = str(pathlib.Path(job.iwd) / "job.out")
        job.error = str(pathlib.Path(job.iwd) / "job.err")
    gm.run(max_processes=3)
    check_invariants(gm, emulator)
    for job in jobs:
        assert pathlib.Path(job.error).stat().st_size > 0
