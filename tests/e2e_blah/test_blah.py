"""The BLAH dialect (HTCondor 10.0-25.x, grid_resource = batch boinc;
issue 32) end to end: the real boinc_gahp over pipes, driven the way the
real 25.0 grid manager drives it (tests/lib/blah_client.py), against the
real emulator on 127.0.0.1 (manual clock: jobs run when a test says so).

Exactly once: one HTCondor job (one JobDirectory) is one BOINC job, and a
cluster that arrives together is one BOINC batch, whatever is repeated;
after BLAH_JOB_CANCEL the same JobDirectory gets a new BOINC job."""
import functools
import os
import re
import time

import pytest

from blah_client import FAST_ARGS as FAST, cluster_ads, stage, submit_ad, write_config
from blah_client import submit_each as submit_all
from ops_helpers import run


cluster = functools.partial(cluster_ads, prefix="home_bl_127.0.0.1_9618_schedd_1")


def wait_statuses(client, jobs, want, emu=None, timeout=60):
    """Poll every job (as the grid manager does, one request per job) until
    each has status want; the emulator's clock is moved on between rounds."""
    deadline = time.monotonic() + timeout
    while True:
        got = {j: client.status(j) for j in jobs}
        if all(s[2] == want for s in got.values()):
            return got
        assert time.monotonic() < deadline, {j: s[2] for j, s in got.items()}
        if emu is not None:
            emu.run(max_seconds=600)
        time.sleep(0.2)


def batch_count(emu):
    return len(emu.state()["batches"])


def wait_batches(emu, n, timeout=30):
    """Until the server has n batches (the group closes after its window)."""
    deadline = time.monotonic() + timeout
    while batch_count(emu) < n:
        assert time.monotonic() < deadline, "the batch did not reach the server"
        time.sleep(0.1)
    time.sleep(0.3)     # the submit's last steps (submit_batch) finish


# ---- start-up ----------------------------------------------------------------

def test_commands_list_both_dialects_and_ping_answers(client):
    for c in ("BLAH_JOB_SUBMIT", "BLAH_JOB_STATUS", "BLAH_JOB_CANCEL", "BLAH_PING",
              "BOINC_SUBMIT", "BOINC_SELECT_PROJECT"):
        assert c in client.commands
    # internal commands are never offered
    assert "BLAH_GROUP_SUBMIT" not in client.commands
    assert "BLAH_GROUP_LEAD" not in client.commands
    assert client.call("BLAH_PING", "boinc") == ["0", "NULL"]


def test_no_project_configured_fails_the_ping_with_the_fix(make_client, tmp_path):
    empty = tmp_path / "empty.conf"
    empty.write_text("")
    c = make_client(cfg=empty, start=False)
    c.gahp.command("COMMANDS")
    rc, err = c.call("BLAH_PING", "boinc")
    assert rc == "1" and "project_url" in err and "authenticator_file" in err


def test_internal_commands_are_not_accepted_from_the_client(client):
    assert client.gahp.command("BLAH_GROUP_SUBMIT 7 b uppercase 0 NULL NULL NULL NULL NULL NULL") == "E"
    assert client.gahp.command("BLAH_GROUP_LEAD 8 1") == "E"


# ---- a cluster: one batch, outputs in Iwd ----------------------------------------

def test_cluster_is_one_batch_and_outputs_land_in_iwd(client, emu, iwd):
    results = submit_all(client, cluster(iwd, 25))
    assert all(rc == 0 and err == "NULL" for rc, err, _ in results), results
    jobs = [job for _, _, job in results]
    assert len(set(jobs)) == 25
    # the jobs wait to be sent: idle
    wait_statuses(client, jobs, 1)
    wait_batches(emu, 1)
    wait_statuses(client, jobs, 1)
    assert batch_count(emu) == 1
    c = emu.counters()
    assert c["rpc"]["create_batch"] == 1 and c["rpc"]["submit_batch"] == 1
    assert sorted(c["jobs_by_name"]) == sorted(jobs)
    assert set(c["jobs_by_name"].values()) == {1}
    done = wait_statuses(client, jobs, 4, emu=emu)
    for k, job in enumerate(jobs):
        rc, err, status, ad = done[job]
        assert (rc, err, status) == (0, "NULL", 4)
        assert ad["BatchJobId"] == job and ad["JobStatus"] == "4" and ad["ExitCode"] == "0"
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k
        # the BOINC stderr of the job is its Err
        assert "stderr_txt" in (iwd / ("err.txt.%d" % k)).read_text()


def test_arguments_reach_the_job_exactly(client, emu, iwd):
    stage(iwd, "in", "x")
    ad = submit_ad(iwd, "home_bl_args.0_1", transfer_input="in", transfer_output="out",
                   arguments="one --two=2 'three'")
    rc, err, job = client.submit(ad)
    assert rc == 0, err
    wait_statuses(client, [job], 4, emu=emu)
    text = (iwd / "err.txt").read_text()
    assert "argument 1: [one]" in text
    assert "argument 2: [--two=2]" in text
    assert "argument 3: [three]" in text


def test_out_and_no_transfer_output_brings_every_output_to_iwd(client, emu, iwd):
    """Issue 42: the shape the real 25.0.13 grid manager sends for a job
    without transfer_output_files: Out (and Err) but no TransferOutput.
    Every output file of the BOINC job is in Iwd by the first status 4, and
    an output named like Out goes to Out."""
    stage(iwd, "in", "plain job\n")
    rc, err, job = client.submit(submit_ad(iwd, "home_bl_plain.0_1", transfer_input="in",
                                           out="_condor_stdout", err="_condor_stderr"))
    assert rc == 0, err
    wait_batches(emu, 1)
    done = wait_statuses(client, [job], 4, emu=emu)
    assert done[job][3]["ExitCode"] == "0"
    assert (iwd / "out").read_text() == "PLAIN JOB\n"
    assert "stderr_txt" in (iwd / "_condor_stderr").read_text()
    # Out names an output of the job: that output is Out
    stage(iwd, "in.2", "named out\n")
    rc, err, job2 = client.submit(submit_ad(iwd, "home_bl_plain.1_1", transfer_input="in.2",
                                            out="out", err="err.2"))
    assert rc == 0, err
    wait_statuses(client, [job2], 4, emu=emu)
    assert (iwd / "out").read_text() == "NAMED OUT\n"


def test_status_gives_the_jobs_own_exit_code_and_times(client, emu, iwd, journal):
    """Issue 42: ExitCode, RemoteWallClockTime and RemoteUserCpu of a
    completed job are the numbers its BOINC result reports (the emulator's
    --times: elapsed 125.4 s, CPU 37.6 s), at the first status 4 and at
    every later one (from the journal, where they are typed columns -
    migration 0020 - not text the status parses back: issue 39)."""
    import sqlite3
    stage(iwd, "in", "x\n")
    rc, err, job = client.submit(submit_ad(iwd, "home_bl_times.0_1", transfer_input="in",
                                           transfer_output="out",
                                           arguments="--times 125.4 37.6"))
    assert rc == 0, err
    done = wait_statuses(client, [job], 4, emu=emu)
    for ad in (done[job][3], client.status(job)[3]):
        assert (ad["ExitCode"], ad["RemoteWallClockTime"], ad["RemoteUserCpu"]) == \
            ("0", "125.400", "37.600"), ad
    assert "reported times: elapsed and cpu 125.4 37.6" in (iwd / "err.txt").read_text()
    db = sqlite3.connect(journal, timeout=30)
    try:
        row = db.execute("SELECT exit_code, wall_s, cpu_s, fetch_result FROM blah_jobs"
                         " WHERE gahp_id = ?", (job,)).fetchone()
    finally:
        db.close()
    assert row == (0, 125.4, 37.6, None), row


def test_max_age_closes_a_group_that_keeps_growing(make_client, emu, iwd):
    """Issue 42: blah_batch_max_age bounds a group's wait whatever
    blah_batch_window is: with an hour's window and jobs joining one after
    the other (so the window never runs out), the batch reaches the server
    while jobs are still joining.  (A group closed at its last join plus
    max_age would close only after a pause of 3 s between two joins.)"""
    c = make_client(args=("--blah-batch-window", "3600", "--blah-batch-max-age", "3",
                          "--blah-status-interval", "0", "--retry-budget", "5"))
    stage(iwd, "in", "x\n")
    joined = 0
    while batch_count(emu) == 0:
        assert joined < 400, "no batch while jobs kept joining: max_age not applied"
        rc, err, _ = c.submit(submit_ad(iwd, "home_bl_age.%d_1" % joined,
                                        transfer_input="in", transfer_output="out",
                                        remaps="out = out.%d" % joined,
                                        out="out.txt.%d" % joined,
                                        err="err.txt.%d" % joined))
        assert rc == 0, err
        joined += 1
        time.sleep(0.05)


def test_a_repeated_submit_gets_the_same_job(client, emu, iwd):
    ads = cluster(iwd, 3)
    first = [job for _, _, job in submit_all(client, ads)]
    again = [job for _, _, job in submit_all(client, ads)]
    assert first == again
    wait_batches(emu, 1)
    wait_statuses(client, first, 1)
    assert set(emu.counters()["jobs_by_name"].values()) == {1}
    assert len(emu.counters()["jobs_by_name"]) == 3


def test_a_repeat_after_the_input_moved_gets_the_same_job(client, emu, iwd):
    """The JobDirectory look-up comes before every check: HTCondor repeats
    a submit whose id it never saw while the first BOINC job may run."""
    ad = cluster(iwd, 1)[0]
    rc, err, job = client.submit(ad)
    assert rc == 0, err
    wait_batches(emu, 1)
    (iwd / "in.0").rename(iwd / "moved.0")
    rc, err, again = client.submit(ad)
    assert (rc, err, again) == (0, "NULL", job)
    assert emu.counters()["jobs_by_name"] == {job: 1}


# ---- refusals: an error result, the job held with the reason -----------------------

@pytest.mark.parametrize("kw, words", [
    ({"queue": "no_such_app"}, ["no_such_app", "batch_queue"]),
    ({"queue": None}, ["batch_queue", "blah_default_app"]),
    ({"transfer_input": "missing.txt"}, ["missing.txt", "No such file"]),
    ({"transfer_input": "in.0,in.1"}, ["takes 1 input file", "gives 2"]),
    ({"transfer_input": "in.0", "arguments": "a 'b"}, ["arguments", "quote"]),
    ({"transfer_input": "in.0", "arguments": "''"}, ["argument"]),
    ({"transfer_input": "in.0", "arguments": "'two words'"}, ["white space"]),
    ({"transfer_input": "in.0", "extra": {"BatchProject": '"other"'}}, ["batch_project", "other"]),
])
def test_a_job_that_cannot_run_is_refused_with_the_fix(client, emu, iwd, kw, words):
    stage(iwd, "in.0", "a")
    stage(iwd, "in.1", "b")
    rc, err, job = client.submit(submit_ad(iwd, "home_bl_bad.0_1", **kw))
    assert rc == 1 and job == "NULL"
    for w in words:
        assert w in err, (w, err)
    assert "job job" not in err         # the job has no BOINC name yet (issue 41)
    assert batch_count(emu) == 0


def test_an_ad_that_is_not_a_classad_is_refused(client):
    rc, err, job = client.submit("[ Iwd = \"/tmp\"; JobDirectory = ")
    assert rc == 1 and "job ad" in err and job == "NULL"
    rc, err, job = client.submit('[ Iwd = "/tmp" ]')
    assert rc == 1 and "JobDirectory" in err


def test_unknown_job_status_is_an_error_with_five_tokens(client):
    rc, err, status, ad = client.status("bgahp_nothing-1")
    assert rc == 1 and "bgahp_nothing-1" in err and status == 0 and ad is None


# ---- cancel, hold and release ----------------------------------------------------------

def test_cancel_aborts_and_a_release_makes_a_new_boinc_job(client, emu, iwd):
    ad = cluster(iwd, 1)[0]
    rc, _, job = client.submit(ad)
    wait_batches(emu, 1)
    emu.advance(0)                          # sent to a host: in progress
    wait_statuses(client, [job], 2)
    assert client.cancel(job) == (0, "NULL")
    assert client.cancel(job) == (0, "NULL")        # idempotent
    # the scheduler sends the abort in the background, once
    assert emu.wait_until(lambda: emu.counters()["rpc"]["abort_jobs"] >= 1)
    time.sleep(0.5)
    assert emu.counters()["rpc"]["abort_jobs"] == 1
    assert client.status(job)[2] == 3
    # condor_release: the same ad, byte for byte
    rc, _, job2 = client.submit(ad)
    assert rc == 0 and job2 != job
    done = wait_statuses(client, [job2], 4, emu=emu)
    assert done[job2][3]["ExitCode"] == "0"
    assert (iwd / "out.0").read_text() == "JOB 0 INPUT\n"
    assert emu.job_state(job)["status"] == "ERROR"      # aborted on the server


def test_cancel_before_the_batch_closes_leaves_the_job_out(make_client, emu, iwd):
    c = make_client(args=("--blah-batch-window", "2", "--blah-status-interval", "0"))
    results = submit_all(c, cluster(iwd, 3))
    jobs = [j for _, _, j in results]
    assert c.cancel(jobs[1]) == (0, "NULL")
    wait_statuses(c, [jobs[0], jobs[2]], 1)
    deadline = time.monotonic() + 20
    while batch_count(emu) == 0:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    wait_statuses(c, [jobs[0], jobs[2]], 4, emu=emu)
    assert sorted(emu.counters()["jobs_by_name"]) == sorted([jobs[0], jobs[2]])
    assert emu.counters()["rpc"]["abort_jobs"] == 0


@pytest.mark.parametrize("server", ["stock", "fixed_qcj"])
def test_a_failed_boinc_job_is_held_with_a_reason(client, emu, iwd, server):
    """Its exit code in ExitCode and the hold reason, plain; its stderr in
    Err where the server gives it (a stock 8.3 server's
    query_completed_job dies for a job without a canonical result: the exit
    code then comes from query_batch, and no stderr)."""
    ad = cluster(iwd, 1)[0]
    if server == "fixed_qcj":
        emu.set_quirks("php-warnings,sql-backslash")
    emu.default_behaviour("crash")
    rc, _, job = client.submit(ad)
    wait_batches(emu, 1)
    got = wait_statuses(client, [job], 5, emu=emu)
    rc, err, status, sad = got[job]
    reason = sad["HoldReason"]
    # plain, one line, with the job and its exit code
    assert rc == 0 and "failed on the project with exit code 1" in reason and job in reason
    assert "\\" not in reason and "\n" not in reason and len(reason) <= 300
    assert sad["ExitCode"] == "1"
    if server == "fixed_qcj":
        # the app's stderr is in the job's Err before the hold
        assert "simulated crash" in (iwd / "err.txt.0").read_text()


# ---- status at scale -------------------------------------------------------------------

def test_a_poll_round_asks_the_server_once(make_client, emu, iwd):
    c = make_client(args=("--blah-batch-window", "0.3", "--blah-status-interval", "3600"))
    jobs = [j for _, _, j in submit_all(c, cluster(iwd, 200))]
    wait_batches(emu, 1)
    # the interval's first refresh (it renews the new batch's lease): once
    # the journal has the batch as submitted, a status makes it
    deadline = time.monotonic() + 60
    while emu.counters()["rpc"]["set_expire_time"] == 0:
        assert time.monotonic() < deadline, "no refresh"
        c.status(jobs[0])
        time.sleep(0.1)
    before = emu.counters()["rpc"]
    for _ in range(3):                      # three rounds within one interval
        for j in jobs:
            assert c.status(j)[0] == 0
    after = emu.counters()["rpc"]
    asked = sum(after.values()) - sum(before.values())
    assert asked <= 2, {k: after[k] - before[k] for k in after if after[k] != before[k]}


# ---- crashes: SIGKILL, restart, the grid manager's re-submits ----------------------------

def restart(make_client, old, args=FAST):
    old.kill()
    return make_client(args=args)


@pytest.mark.parametrize("point", ["blah.joined:2", "blah.closed", "submit.create_sent",
                                   "submit.upload_sent", "submit.submit_sent",
                                   "blah.group_submitted"])
def test_sigkill_during_submit_gives_each_job_once(make_client, emu, iwd, point):
    ads = cluster(iwd, 4)
    c = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": point}, start=True)
    for ad in ads:
        try:
            c.start("BLAH_JOB_SUBMIT", ad)
        except AssertionError:
            break                           # the GAHP died under this one
    c.gahp.proc.wait(timeout=60)            # the crash point ends it
    assert c.gahp.proc.returncode == -9
    # a new grid manager, a new GAHP: every submit whose id was never seen
    # comes again, byte for byte
    c2 = make_client()
    jobs = [j for _, _, j in submit_all(c2, ads)]
    assert len(set(jobs)) == 4
    wait_statuses(c2, jobs, 4, emu=emu)
    counts = emu.counters()["jobs_by_name"]
    assert sorted(counts) == sorted(jobs) and set(counts.values()) == {1}
    assert batch_count(emu) <= 2
    for k in range(4):
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k


def test_sigkill_while_the_batch_is_open_closes_it_at_start_up(make_client, emu, iwd):
    c = make_client(args=("--blah-batch-window", "30", "--blah-status-interval", "0"))
    jobs = [j for _, _, j in submit_all(c, cluster(iwd, 5))]
    assert batch_count(emu) == 0            # still gathering
    c.kill()
    c2 = make_client()
    # start-up closes and submits it, before any re-submit
    wait_statuses(c2, jobs, 4, emu=emu)
    assert batch_count(emu) == 1
    assert set(emu.counters()["jobs_by_name"].values()) == {1}


def test_sigkill_while_fetching_delivers_the_outputs_once(make_client, emu, iwd):
    c = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": "blah.fetched"})
    jobs = [j for _, _, j in submit_all(c, cluster(iwd, 2))]
    wait_batches(emu, 1)
    emu.run(max_seconds=600)
    # the scheduler fetches on its own (statuses do no network work), so
    # the crash may come before, between or after these statuses
    for j in jobs:
        if c.gahp.proc.poll() is None:
            c.gahp.command("BLAH_JOB_STATUS %d %s" % (900 + jobs.index(j), j))
    assert c.gahp.proc.wait(timeout=60) != 0
    assert "test crash point blah.fetched reached" in c.gahp.stderr_text()
    c2 = make_client()
    done = wait_statuses(c2, jobs, 4, emu=emu)
    for k, j in enumerate(jobs):
        assert done[j][3]["ExitCode"] == "0"
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k
    # no temp file of the interrupted fetch is left in Iwd
    assert not [n for n in os.listdir(iwd) if n.startswith(".") or "tmp" in n]


def test_the_journal_shows_each_blah_job(client, emu, iwd, journal):
    import sqlite3
    jobs = [j for _, _, j in submit_all(client, cluster(iwd, 3))]
    wait_statuses(client, jobs, 4, emu=emu)
    db = sqlite3.connect(journal)
    rows = db.execute("SELECT job_id, group_state, boinc_status, fetched_at IS NOT NULL"
                      " FROM audit_blah_jobs ORDER BY job_id").fetchall()
    assert [r[0] for r in rows] == sorted(jobs)
    assert all(r[1] == "closed" and r[2] == "DONE" and r[3] == 1 for r in rows)


def test_sigterm_stops_cleanly(client, journal):
    """HTCondor 10.0-25.x end the GAHP with SIGTERM: a clean stop, recorded
    as one in the journal."""
    import signal
    import sqlite3
    client.gahp.proc.send_signal(signal.SIGTERM)
    assert client.gahp.proc.wait(timeout=30) == 0
    row = sqlite3.connect(journal).execute(
        "SELECT clean_exit FROM sessions ORDER BY id DESC LIMIT 1").fetchone()
    assert row == (1,)
    assert "SIGTERM or SIGINT: shutting down" in client.gahp.stderr_text()


def test_batch_project_names_a_configured_project(make_client, emu, iwd, tmp_path):
    """batch_project = second sends the job to project_url.second; its
    status, outputs and cancel go to that project too; blah_project_name
    names the default one."""
    from cmds_helpers import Emu
    second = Emu(tmp_path / "emu2")
    try:
        auth2 = tmp_path / "second.auth"
        auth2.write_text(second.auth + "\n")
        os.chmod(auth2, 0o600)
        cfg = write_config(tmp_path / "multi.conf", emu,
                           "blah_project_name = main\nproject_url.second = %s\n"
                           "authenticator_file.second = %s\n" % (second.url, auth2))
        c = make_client(cfg=cfg)
        ads = cluster(iwd, 2)
        ad_main = ads[0].replace(" ]", '; BatchProject = "main" ]')
        ad_second = ads[1].replace(" ]", '; BatchProject = "second" ]')
        (rc1, _, j1), (rc2, _, j2) = submit_all(c, [ad_main, ad_second])
        assert rc1 == 0 and rc2 == 0
        wait_batches(emu, 1)
        wait_batches(second, 1)
        assert list(emu.counters()["jobs_by_name"]) == [j1]
        assert list(second.counters()["jobs_by_name"]) == [j2]
        second.run(max_seconds=600)
        done = wait_statuses(c, [j1, j2], 4, emu=emu)
        assert done[j2][3]["ExitCode"] == "0"
        assert (iwd / "out.1").read_text() == "JOB 1 INPUT\n"
    finally:
        second.stop()


def test_a_named_project_needs_its_authenticator(make_client, emu, tmp_path):
    cfg = write_config(tmp_path / "half.conf", emu, "project_url.second = %s\n" % emu.url)
    c = make_client(cfg=cfg, start=False)
    assert c.gahp.proc.wait(timeout=30) != 0
    assert "authenticator_file.second" in c.gahp.stderr_text()


def test_finished_batches_are_retired_and_pruned(client, emu, iwd, journal, tmp_path):
    """The last job fetched retires its batch on the server; the retention
    prune then removes the BLAH rows, the batch and the group's request."""
    import sqlite3
    import subprocess
    from gahp_client import gahp_binary, gahp_env
    jobs = [j for _, _, j in submit_all(client, cluster(iwd, 2))]
    wait_statuses(client, jobs, 4, emu=emu)
    assert [b["retired"] for b in emu.state()["batches"]] == [1]
    client.stop()
    db = sqlite3.connect(journal)
    db.execute("UPDATE blah_jobs SET fetched_at = 1, submitted_at = 1")
    db.execute("UPDATE blah_groups SET opened_at = 1, closed_at = 1")
    db.execute("UPDATE batches SET updated_at = 1, created_at = 1")
    db.execute("UPDATE requests SET accepted_at = 1, completed_at = 1, delivered_at = 1"
               " WHERE state = 'delivered'")
    db.commit()
    db.close()
    p = subprocess.run([gahp_binary(), "--journal", journal, "--retention-days", "1",
                        "journal", "prune"], env=gahp_env(), capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    db = sqlite3.connect(journal)
    for table in ("blah_jobs", "blah_groups", "batches", "jobs"):
        assert db.execute("SELECT count(*) FROM %s" % table).fetchone()[0] == 0, table
    assert db.execute("SELECT count(*) FROM requests WHERE command = 'BLAH_GROUP_SUBMIT'"
                      ).fetchone()[0] == 0
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


# ---- what the log and journal status say (issue 41) ------------------------------

def test_a_start_up_group_submit_is_logged_as_itself_and_delivered(make_client, emu, iwd,
                                                                   journal, tmp_path):
    c = make_client(args=("--blah-batch-window", "30", "--blah-status-interval", "0"))
    jobs = [j for _, _, j in submit_all(c, cluster(iwd, 2))]
    c.kill()                            # the group is still open
    c2 = make_client()                  # start-up closes it and submits it
    wait_statuses(c2, jobs, 4, emu=emu)
    log = c2.gahp.stderr_text()
    assert re.search(r"BLAH_GROUP_SUBMIT \d+ finished: ok", log), log[-3000:]
    assert "BOINC_SUBMIT" not in log, log[-3000:]
    c2.stop()
    home = tmp_path / "home"
    home.mkdir()
    p = run(home, "--journal", journal, "journal", "status")
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    undelivered = out.split("results not yet delivered to the client:")[1].split("batches by")[0]
    assert "BLAH_GROUP_SUBMIT" not in undelivered, out


def test_a_refused_ad_is_logged_with_why(client, iwd):
    # refused when run (an input that is not there) and at accept time (an
    # ad that cannot be read): each log line says why, as the result does
    rid = client.start("BLAH_JOB_SUBMIT", submit_ad(iwd, "home_bl_bad.0_1",
                                                    transfer_input="missing.txt"))
    rc, err, job = client.wait(rid)
    assert rc == "1" and "missing.txt" in err
    rid2 = client.start("BLAH_JOB_SUBMIT", "[ Iwd = \"/tmp\"; JobDirectory = ")
    rc, err2, job = client.wait(rid2)
    assert rc == "1" and err2.startswith("the job ad cannot be read: ")
    log = client.gahp.stderr_text()
    assert "BLAH: job home_bl_bad.0_1 refused: input file %s/missing.txt" % iwd in log, log
    assert "BLAH_JOB_SUBMIT %d refused: %s" % (rid2, err2) in log, log
    assert "BLAH_JOB_SUBMIT %d finished: error" % rid2 in log, log


def test_a_group_the_server_refuses_is_held_with_its_plain_journaled_error(
        make_client, emu, iwd, journal):
    """The project could not be asked about the app when the job came
    (accepted: the group's submit checks it), then refuses it: the jobs
    are held with the submit's error as plain text, which the journal
    keeps plainly beside the 9.0 client's escaped token (batches.error_msg,
    migration 0019).  A row journaled before that migration (error_msg
    NULL) gets a plain reason of its own, never an un-escaped token."""
    import sqlite3
    c = make_client(args=("--blah-batch-window", "1", "--blah-status-interval", "0",
                          "--retry-budget", "1"))
    emu.fault("get_templates", "http503", probability=1)
    stage(iwd, "in.0", "a")
    rc, err, job = c.submit(submit_ad(iwd, "home_bl_refused.0_1", queue="no_such_app",
                                      transfer_input="in.0"))
    assert rc == 0, err
    emu.clear_faults()
    rc, err, status, sad = wait_statuses(c, [job], 5, emu=emu)[job]
    reason = sad["HoldReason"]
    assert "could not be submitted" in reason and "no_such_app" in reason, reason
    assert "\\" not in reason and "\n" not in reason and len(reason) <= 300
    db = sqlite3.connect(journal, timeout=30)
    error, plain = db.execute("SELECT error, error_msg FROM batches").fetchone()
    assert "\\ " in error and "\\" not in plain and "no_such_app" in plain
    assert reason.endswith(plain) or plain.startswith(reason.split("submitted: ", 1)[1][:40])
    # as an earlier boinc_gahp journaled it: the token alone
    with db:
        db.execute("UPDATE batches SET error_msg = NULL")
    db.close()
    rc, err, status, sad = c.status(job)
    reason = sad["HoldReason"]
    assert status == 5 and "earlier boinc_gahp" in reason and "\\" not in reason, reason
