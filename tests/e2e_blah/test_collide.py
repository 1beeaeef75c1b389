"""Never a silent overwrite (issue 40), BLAH dialect: no two live jobs
write one output path (absolute and normalised, after every remap; Out,
Err - the BOINC stderr - included).  The later job's BLAH_JOB_SUBMIT is an
error naming the other job and the path (the grid manager holds the job
with it), before anything is created on the server; a job that runs after
the first one ended (its outputs delivered, or cancelled) reuses the path.
The claims are journaled with the accepted job: a SIGKILL and a new GAHP
keep them."""
import time

from blah_client import stage, submit_ad


def batch_count(emu):
    return len(emu.state()["batches"])


def wait_batches(emu, n, timeout=30):
    deadline = time.monotonic() + timeout
    while batch_count(emu) < n:
        assert time.monotonic() < deadline, "the batch did not reach the server"
        time.sleep(0.1)
    time.sleep(0.3)


def wait_statuses(client, jobs, want, emu=None, timeout=60):
    """As test_blah.py: poll every job until each has status want."""
    deadline = time.monotonic() + timeout
    while True:
        got = {j: client.status(j) for j in jobs}
        if all(s[2] == want for s in got.values()):
            return got
        assert time.monotonic() < deadline, {j: s[2] for j, s in got.items()}
        if emu is not None:
            emu.run(max_seconds=600)
        time.sleep(0.2)


def job_ad(iwd, n, dst, **kw):
    stage(iwd, "in.%d" % n, "job %d input\n" % n)
    kw.setdefault("out", "stdout.%d" % n)
    kw.setdefault("err", "err.%d" % n)
    return submit_ad(iwd, "home_bl_127.0.0.1_9618_schedd_7.%d_1795751136" % n,
                     transfer_input="in.%d" % n, transfer_output="out",
                     remaps="out = %s" % dst, **kw)


def refused(result, other, path):
    rc, err, job = result
    assert rc == 1 and job == "NULL", result
    assert other in err and path in err, err
    assert "\n" not in err


def test_two_live_jobs_naming_one_output_path_give_one_refusal(client, emu, iwd):
    rc, err, first = client.submit(job_ad(iwd, 0, "shared.out"))
    assert rc == 0, err
    # the same path spelled another way: absolute, with . and //
    second = client.submit(job_ad(iwd, 1, "%s/./sub/..//shared.out" % iwd))
    refused(second, first, str(iwd / "shared.out"))
    done = wait_statuses(client, [first], 4, emu=emu)
    assert done[first][3]["ExitCode"] == "0"
    assert (iwd / "shared.out").read_text() == "JOB 0 INPUT\n"
    # the refused job never reached the server
    assert sorted(emu.counters()["jobs_by_name"]) == [first]


def test_out_and_err_are_claimed_too(client, emu, iwd):
    rc, err, first = client.submit(job_ad(iwd, 0, "a.out", out="same.log"))
    assert rc == 0, err
    refused(client.submit(job_ad(iwd, 1, "b.out", err="same.log")), first,
            str(iwd / "same.log"))
    refused(client.submit(job_ad(iwd, 2, "same.log")), first, str(iwd / "same.log"))
    wait_statuses(client, [first], 4, emu=emu)
    assert emu.counters()["jobs_by_name"] == {first: 1}


def test_two_outputs_of_one_job_naming_one_path_are_refused(client, emu, iwd):
    rc, err, job = client.submit(job_ad(iwd, 0, "stdout.0"))
    assert rc == 1 and job == "NULL"
    assert "two outputs of this job" in err and str(iwd / "stdout.0") in err, err
    assert batch_count(emu) == 0


def test_a_path_is_reused_once_the_first_job_completed(client, emu, iwd):
    rc, _, first = client.submit(job_ad(iwd, 0, "shared.out"))
    assert rc == 0
    wait_statuses(client, [first], 4, emu=emu)
    assert (iwd / "shared.out").read_text() == "JOB 0 INPUT\n"
    rc, err, second = client.submit(job_ad(iwd, 1, "shared.out"))
    assert rc == 0, err
    wait_statuses(client, [second], 4, emu=emu)
    assert (iwd / "shared.out").read_text() == "JOB 1 INPUT\n"


def test_a_path_is_reused_once_the_first_job_was_cancelled(client, emu, iwd):
    rc, _, first = client.submit(job_ad(iwd, 0, "shared.out"))
    assert rc == 0
    refused(client.submit(job_ad(iwd, 1, "shared.out")), first, str(iwd / "shared.out"))
    assert client.cancel(first) == (0, "NULL")
    rc, err, second = client.submit(job_ad(iwd, 1, "shared.out"))
    assert rc == 0, err
    wait_statuses(client, [second], 4, emu=emu)
    assert (iwd / "shared.out").read_text() == "JOB 1 INPUT\n"


def test_the_claims_survive_a_sigkill(make_client, emu, iwd):
    c = make_client()
    ad0 = job_ad(iwd, 0, "shared.out")
    rc, _, first = c.submit(ad0)
    assert rc == 0
    wait_batches(emu, 1)
    c.kill()
    c2 = make_client()
    # the new grid manager submits both again: the first is the same job,
    # the second is still refused
    assert c2.submit(ad0)[2] == first
    refused(c2.submit(job_ad(iwd, 1, "shared.out")), first, str(iwd / "shared.out"))
    wait_statuses(c2, [first], 4, emu=emu)
    c2.kill()
    # after the first completed, and another restart, the path is free
    c3 = make_client()
    rc, err, second = c3.submit(job_ad(iwd, 1, "shared.out"))
    assert rc == 0, err
    wait_statuses(c3, [second], 4, emu=emu)
    assert (iwd / "shared.out").read_text() == "JOB 1 INPUT\n"
    assert sorted(emu.counters()["jobs_by_name"]) == sorted([first, second])


def test_a_cluster_without_remaps_gives_one_job_and_refusals(client, emu, iwd):
    """The issue's 10 routed jobs as the router sent them (no remaps): the
    first one runs, the other nine are refused, nothing is overwritten."""
    results = []
    for n in range(10):
        stage(iwd, "in.%d" % n, "job %d input\n" % n)
        results.append(client.submit(submit_ad(
            iwd, "home_bl_127.0.0.1_9618_schedd_8.%d_1795751136" % n,
            transfer_input="in.%d" % n, transfer_output="out",
            out="stdout.%d" % n, err="err.%d" % n)))
    accepted = [r for r in results if r[0] == 0]
    assert len(accepted) == 1
    first = accepted[0][2]
    for r in results:
        if r[0] != 0:
            refused(r, first, str(iwd / "out"))
    wait_statuses(client, [first], 4, emu=emu)
    time.sleep(0.2)
    assert (iwd / "out").read_text() == "JOB 0 INPUT\n"
    assert emu.counters()["jobs_by_name"] == {first: 1}


def test_an_empty_remap_destination_is_refused_with_its_name(client, emu, iwd):
    rc, err, job = client.submit(job_ad(iwd, 0, ""))
    assert rc == 1 and job == "NULL"
    assert "output out" in err and "(empty)" in err, err
    assert batch_count(emu) == 0
