"""Per-job isolation in the BLAH dialect (issue 39 item 3;
doc/blah-core.md, "Per-job isolation"): a job's own problem holds that
job alone, with its reason; the rest of its group goes on.

The real boinc_gahp over pipes, driven as the 25.0 grid manager drives it
(tests/lib/blah_client.py), against the real emulator on 127.0.0.1 with a
stock PHP's upload limits (upload_max_filesize = 2M: a 4 MB input is
refused by upload_files, as a real BOINC server refuses it), a real
SQLite journal, and SIGKILL at the crash points of the path that submits
the rest of a refused group as a new batch."""
import functools
import sqlite3
import time

import pytest

from blah_client import BIG_INPUT as BIG, cluster_ads, stage
from blah_client import submit_all_ok as submit_all


cluster = functools.partial(cluster_ads, prefix="home_bl_127.0.0.1_9618_schedd_9")


def wait_statuses(client, want, emu, timeout=90):
    """Poll each job (one request per job, as the grid manager does) until
    every job has its wanted status ({job: status}); the emulator's clock
    moves on between rounds."""
    deadline = time.monotonic() + timeout
    while True:
        got = {j: client.status(j) for j in want}
        if all(got[j][2] == s for j, s in want.items()):
            return got
        assert time.monotonic() < deadline, {j: s[2] for j, s in got.items()}
        emu.run(max_seconds=600)
        time.sleep(0.2)


def assert_held_for_size(got, job, iwd, k):
    rc, err, status, ad = got[job]
    reason = ad["HoldReason"]
    assert rc == 0 and status == 5
    # the file, its size and the limit's name; plain, one line, short
    assert str(iwd / ("in.%d" % k)) in reason, reason
    assert str(BIG) in reason and "upload_max_filesize" in reason, reason
    assert "\\" not in reason and "\n" not in reason and len(reason.encode()) <= 300


def assert_each_created_once(emu, jobs):
    counts = emu.counters()["jobs_by_name"]
    assert sorted(counts) == sorted(jobs), counts
    assert set(counts.values()) == {1}, counts
    # no input sent twice either (the refused one included)
    uploads = emu.counters()["uploads_by_name"]
    assert set(uploads.values()) == {1}, uploads


def assert_outputs(iwd, ks):
    for k in ks:
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k


def test_a_too_large_input_holds_its_job_alone(client, emu, iwd, journal):
    """The done-when scenario: a cluster of 10 with one 4 MB input: 9
    complete, 1 held naming the size."""
    jobs = submit_all(client, cluster(iwd, 10, big=(3,)))
    want = {j: 4 for j in jobs}
    want[jobs[3]] = 5
    got = wait_statuses(client, want, emu)
    assert_held_for_size(got, jobs[3], iwd, 3)
    for k, j in enumerate(jobs):
        if k != 3:
            assert got[j][3]["ExitCode"] == "0"
    assert_outputs(iwd, [k for k in range(10) if k != 3])
    assert not (iwd / "out.3").exists()
    # the refused batch (created, never submitted) and the one without the
    # job; the refused one, left empty, is retired
    batches = emu.state()["batches"]
    assert len(batches) == 2, batches
    assert emu.wait_until(lambda: sorted(b["state"] for b in emu.state()["batches"]) == [4, 4])
    assert_each_created_once(emu, [j for k, j in enumerate(jobs) if k != 3])
    assert emu.counters()["php_limits"]["over_upload_max_filesize"] >= 1
    # the audit view (doc/auditing.md) shows the hold and its reason
    db = sqlite3.connect(journal)
    held = db.execute("SELECT job_id, held_reason FROM audit_blah_jobs"
                      " WHERE held_at IS NOT NULL").fetchall()
    assert [h[0] for h in held] == [jobs[3]] and str(BIG) in held[0][1], held


def test_a_released_job_runs_once_its_input_fits(client, emu, iwd):
    """condor_release sends the job's ad again: it joins a new group and,
    its input now small enough, runs."""
    ads = cluster(iwd, 3, big=(1,))
    jobs = submit_all(client, ads)
    got = wait_statuses(client, {jobs[0]: 4, jobs[1]: 5, jobs[2]: 4}, emu)
    assert_held_for_size(got, jobs[1], iwd, 1)
    stage(iwd, "in.1", "job 1 input\n")                 # the user fixes it
    rc, err, again = client.submit(ads[1])              # condor_release
    assert rc == 0 and again != jobs[1], err
    done = wait_statuses(client, {again: 4}, emu)
    assert done[again][3]["ExitCode"] == "0"
    assert_outputs(iwd, [0, 1, 2])
    assert_each_created_once(emu, [jobs[0], jobs[2], again])
    # the held job still answers held with its reason
    assert client.status(jobs[1])[2] == 5


def test_an_input_gone_before_the_group_closes_holds_its_job_alone(make_client, emu, iwd):
    """Checked before any RPC: the job is held, the group is submitted
    without it, in one batch."""
    c = make_client(args=("--blah-batch-window", "2", "--blah-status-interval", "0",
                          "--retry-budget", "5"))
    jobs = submit_all(c, cluster(iwd, 3))
    (iwd / "in.1").unlink()                             # before the window ends
    got = wait_statuses(c, {jobs[0]: 4, jobs[1]: 5, jobs[2]: 4}, emu)
    reason = got[jobs[1]][3]["HoldReason"]
    assert str(iwd / "in.1") in reason and "No such file" in reason, reason
    assert len(reason.encode()) <= 300
    assert_outputs(iwd, [0, 2])
    assert len(emu.state()["batches"]) == 1
    assert_each_created_once(emu, [jobs[0], jobs[2]])


def test_a_transient_failure_holds_nothing(make_client, emu, iwd):
    """The project not answering is no job's problem: nobody is held, and
    the big job's refusal still holds it alone once the project is back."""
    c = make_client()
    emu.fault("upload_files", "http500", count=2)
    jobs = submit_all(c, cluster(iwd, 4, big=(2,)))
    got = wait_statuses(c, {jobs[0]: 4, jobs[1]: 4, jobs[2]: 5, jobs[3]: 4}, emu)
    assert_held_for_size(got, jobs[2], iwd, 2)
    assert_each_created_once(emu, [jobs[0], jobs[1], jobs[3]])


@pytest.mark.parametrize("point", ["blah.group_submitted", "blah.split",
                                   "submit.create_sent:2", "submit.submit_sent"])
def test_sigkill_while_the_rest_is_submitted_again(make_client, emu, iwd, point):
    """SIGKILL after the refused batch's submit ended, after the split was
    journaled, while the new batch is created, while it is submitted; a
    restart ends the work: the big job held, every other job created once
    and completed, two batches."""
    ads = cluster(iwd, 4, big=(1,))
    c = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": point})
    jobs = submit_all(c, ads)
    c.gahp.proc.wait(timeout=90)                        # the crash point ends it
    assert c.gahp.proc.returncode == -9
    c2 = make_client()
    want = {j: 4 for j in jobs}
    want[jobs[1]] = 5
    got = wait_statuses(c2, want, emu)
    assert_held_for_size(got, jobs[1], iwd, 1)
    assert_outputs(iwd, [0, 2, 3])
    assert len(emu.state()["batches"]) == 2
    assert_each_created_once(emu, [jobs[0], jobs[2], jobs[3]])


def test_an_input_gone_while_the_batch_is_submitted_holds_its_job_alone(make_client, emu, iwd):
    """The GAHP dies after announcing create_batch; meanwhile one job's input
    is removed.  The restarted submit cannot read it when it uploads: that
    job is held naming the file, the others are submitted as a new batch."""
    ads = cluster(iwd, 3)
    c = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": "submit.create_sent"})
    jobs = submit_all(c, ads)
    c.gahp.proc.wait(timeout=90)
    assert c.gahp.proc.returncode == -9
    (iwd / "in.1").unlink()
    c2 = make_client()
    got = wait_statuses(c2, {jobs[0]: 4, jobs[1]: 5, jobs[2]: 4}, emu)
    reason = got[jobs[1]][3]["HoldReason"]
    assert str(iwd / "in.1") in reason and "No such file" in reason, reason
    assert len(reason.encode()) <= 300
    assert_outputs(iwd, [0, 2])
    assert_each_created_once(emu, [jobs[0], jobs[2]])


def test_a_known_limit_refuses_the_too_large_input_before_any_rpc(make_client, emu, iwd,
                                                                  tmp_path):
    """With the project's limit configured (blah_max_input_bytes), the job
    with the 4 MB input is refused at its submit, naming its size and the
    limit (HTCondor holds it at once); the others go as one batch, and the
    server never sees the big file."""
    from blah_client import write_config
    cfg = write_config(tmp_path / "limit.conf", emu, extra="blah_max_input_bytes = 2097152\n")
    c = make_client(cfg=cfg)
    ads = cluster(iwd, 4, big=(2,))
    rids = [c.start("BLAH_JOB_SUBMIT", ad) for ad in ads]
    results = [c.wait(rid) for rid in rids]
    rc, err, job = results[2]
    assert int(rc) == 1 and job == "NULL", results[2]
    assert str(iwd / "in.2") in err and str(BIG) in err and "2097152" in err, err
    jobs = [r[2] for k, r in enumerate(results) if k != 2]
    assert all(int(r[0]) == 0 for k, r in enumerate(results) if k != 2), results
    wait_statuses(c, {j: 4 for j in jobs}, emu)
    assert_outputs(iwd, [0, 1, 3])
    assert len(emu.state()["batches"]) == 1
    assert_each_created_once(emu, jobs)
    assert emu.counters()["php_limits"]["over_upload_max_filesize"] == 0
