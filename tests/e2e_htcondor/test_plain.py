"""The simulated HTCondor grid manager's ordinary paths against the real
boinc_gahp and boinc_emu: handshake, ids, submit -> DONE -> fetch ->
retire, leases, aborts, two resources, CONDOR_VERSION."""
import pathlib

import pytest

from gridmanager_sim import COMPLETED, HELD, REMOVED, LEASE_DURATION
from sim_invariants import check_invariants


def test_plain_submit_done_fetch_retire(make_gm, add_jobs, emulator):
    gm = make_gm(seed=3)
    add_jobs(gm, 4)
    gm.run(max_processes=1)
    check_invariants(gm, emulator)
    assert len(gm.processes) == 1
    # the batch was retired by its last job, on the server too
    (batch,) = emulator.state()["batches"]
    assert gm.retired == [batch["name"]] and batch["retired"]
    assert batch["name"].startswith("condor#sim-schedd@127.0.0.1#uppercase#")


def test_ids_start_at_2_in_every_process(make_gm, add_jobs, emulator):
    """Ids restart at 2 in each grid-manager process; the GAHP accepts the
    same ids again from the new process."""
    gm = make_gm(seed=4)
    add_jobs(gm, 3)
    gm.stop_process_at_cycle = lambda n, cycle: n == 1 and cycle == 1
    gm.run(max_processes=3)
    check_invariants(gm, emulator)
    assert len(gm.processes) == 2
    assert [p.sent_ids[0] for p in gm.processes] == [2, 2]
    assert gm.processes[0].banner.startswith("$GahpVersion:")


def test_submit_lists_jobs_shuffled_with_the_first_jobs_trailing_fields(make_gm, add_jobs,
                                                                         emulator):
    """The simulator's submit line, checked on the wire: each process lists
    the same jobs in another order, job names go unescaped, and the six
    trailing fields are those of whichever job comes first."""
    gm = make_gm(seed=5)
    add_jobs(gm, 3, attrs={"rsc_fpops_est": "1e12"})
    add_jobs(gm, 3, attrs={"rsc_fpops_est": "3e12", "delay_bound": "7200"})
    gm.exit_before_submit = lambda n, name: n == 1    # process 1 dies before sending
    gm.run(max_processes=4)
    check_invariants(gm, emulator)
    assert len(gm.processes) == 2
    (line,) = [w[1] for w in gm.wire_log if w[1].startswith("BOINC_SUBMIT")]
    tokens = line.split(" ")
    assert tokens[4] == "6"
    sent = [t.rsplit("#", 1)[1] for t in tokens if t.startswith(tokens[2] + "#")]
    assert len(gm.submit_orders) == 2 and gm.submit_orders[1] == sent
    assert gm.submit_orders[0] != gm.submit_orders[1]
    first = tokens[5].rsplit("#", 1)[1]
    attrs = {"1": ["1e12", "NULL", "NULL", "NULL", "NULL", "NULL"],
             "2": ["3e12", "NULL", "NULL", "NULL", "7200", "NULL"]}[first.split(".")[0]]
    assert tokens[-6:] == attrs, (first, tokens[-6:])


def test_condor_version_two_tokens(make_gm, add_jobs, emulator):
    """CONDOR_VERSION must be answered with exactly two tokens, S <version>."""
    gm = make_gm()
    add_jobs(gm, 1)
    gm.run(max_processes=1)
    reply = gm.processes[0].condor_version_reply
    assert reply is not None, "CONDOR_VERSION not listed by COMMANDS"
    assert len(reply) == 2 and reply[0] == "S" and reply[1], reply
    check_invariants(gm, emulator)


def test_leases_renewed_every_two_hours(make_gm, add_jobs, emulator):
    gm = make_gm(seed=6)
    add_jobs(gm, 2)
    start = gm.now

    # keep the jobs unfinished for a few polls: nothing runs until advance(60)
    polls = []

    def slow_hook(proc):
        polls.append(gm.now)
        gm.now += 2 * 3600
        if len(polls) >= 3:
            emulator.advance(60)
    gm.poll_hook = slow_hook
    gm.run(max_processes=1)
    check_invariants(gm, emulator)
    batch = gm.submits[0][1]
    leases = [t for name, t in gm.leases if name == batch]
    assert len(leases) >= 2, gm.leases
    assert leases[0] == start + LEASE_DURATION
    assert all(b - a >= 2 * 3600 for a, b in zip(leases, leases[1:])), leases


def test_abort_of_a_removed_job(make_gm, add_jobs, emulator):
    gm = make_gm(seed=7)
    jobs = add_jobs(gm, 3)

    def hook(proc):
        if jobs[0].submitted and jobs[0].state not in (REMOVED, COMPLETED):
            gm.remove(jobs[0])
        else:
            emulator.advance(60)
    gm.poll_hook = hook
    gm.run(max_processes=1)
    assert gm.unexpected_exits == []
    assert jobs[0].state == REMOVED
    assert [j.state for j in jobs[1:]] == [COMPLETED, COMPLETED]
    aborts = [w for w in gm.wire_log if w[1].startswith("BOINC_ABORT_JOBS")]
    assert len(aborts) == 1 and aborts[0][1].endswith(jobs[0].remote_name)
    server = emulator.job(jobs[0].remote_name)
    assert server["error_mask"] != 0 or server["status"] != "DONE", server
    assert gm.retired == [jobs[0].batch_name]


def test_two_resources_select_project_and_ping_each(make_gm, add_jobs, emulator, tmp_path):
    other = tmp_path / "home" / ".boinc" / "other.auth"
    other.write_text(emulator.users()["other_user"] + " trailing words ignored\n")
    gm = make_gm(seed=8)
    add_jobs(gm, 2)
    add_jobs(gm, 2, res=(emulator.url, str(other)))
    gm.run(max_processes=1)
    check_invariants(gm, emulator)
    pings = [w for w in gm.wire_log if w[1].startswith("BOINC_PING")]
    assert len(pings) == 2
    # SELECT_PROJECT only when the resource changes, never twice in a row
    assert len({r for _, r in gm.selects}) == 2
    assert all(a != b for (_, a), (_, b) in zip(gm.selects, gm.selects[1:])), gm.selects
    assert len(emulator.state()["batches"]) == 2
    assert len({b["user_id"] for b in emulator.state()["batches"]}) == 2


def test_stdout_stderr_paths_with_all(make_gm, add_jobs, emulator):
    """ALL 0 with an error file: the app's stderr is appended to it."""
    gm = make_gm(seed=9)
    jobs = add_jobs(gm, 1, error=None)
    jobs[0].error = str(pathlib.Path(jobs[0].iwd) / "job.err")
    gm.run(max_processes=1)
    check_invariants(gm, emulator)
    assert pathlib.Path(jobs[0].error).stat().st_size > 0


def test_more_done_jobs_than_requests_in_flight(make_gm, add_jobs, emulator):
    """60 jobs finish together: the client keeps at most 50 fetches in
    flight and sends the rest as results come back."""
    gm = make_gm(seed=10)
    add_jobs(gm, 60)
    gm.run(max_processes=1)
    check_invariants(gm, emulator)
    assert gm.max_in_flight == 50


def test_user_hold_aborts_and_the_last_held_job_retires(make_gm, add_jobs, emulator):
    """condor_hold of every job of a running batch: one BOINC_ABORT_JOBS per
    job, the jobs held with their batch name cleared, and the last one to
    leave retires the batch (GM_CANCEL_COMMIT: a user-held job counts as
    done in its batch, as the real 9.0.19 client's JobDone() does)."""
    gm = make_gm(seed=12)
    jobs = add_jobs(gm, 2)

    def hook(proc):
        for job in jobs:
            if job.submitted and not job.terminal:
                gm.hold_by_user(job)
    gm.poll_hook = hook
    gm.run(max_processes=1)
    check_invariants(gm, emulator, allowed_holds=("via condor_hold",))
    assert [j.state for j in jobs] == [HELD, HELD]
    assert [j.batch_name for j in jobs] == [None, None]
    batch = gm.submits[0][1]
    aborts = sorted(w[1].split(" ", 2)[2] for w in gm.wire_log
                    if w[1].startswith("BOINC_ABORT_JOBS"))
    assert aborts == sorted("%s#%s" % (batch, j.id) for j in jobs)
    assert gm.retired == [batch]
    assert emulator.state()["batches"][0]["retired"]
