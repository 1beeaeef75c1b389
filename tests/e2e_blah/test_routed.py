"""Vanilla jobs routed to BOINC by HTCondor 25.0's condor_job_router
(issue 40): the BLAH ads as the grid manager builds them for a routed job
(blah_client.routed_submit_ad: V1 Args, Cmd the user's script, JobUniverse
= 5, the remaps only as remote_TransferOutputRemaps, which the schedd
transform of examples/condor_config.d-boinc-job-router keeps), each job's
outputs where its submit file says; two routed jobs naming one output path
give one refusal and no overwrite."""
import time

import pytest

from blah_client import routed_submit_ad, stage
from blah_client import submit_each as submit_all


def wait_statuses(client, jobs, want, emu=None, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        got = {j: client.status(j) for j in jobs}
        if all(s[2] == want for s in got.values()):
            return got
        assert time.monotonic() < deadline, {j: s[2] for j, s in got.items()}
        if emu is not None:
            emu.run(max_seconds=600)
        time.sleep(0.2)


def routed_cluster(iwd, n, cluster=16, remaps=True, **kw):
    """The issue's submit file, queue n, as routed: arguments = in.$(Process),
    transfer_output_files = out, transfer_output_remaps = "out = out.$(Process)",
    output = stdout.$(Process), error = err.$(Process)."""
    stage(iwd, "uppercase.sh", "#!/bin/sh\ntr a-z A-Z < \"$1\" > out\n")
    ads = []
    for k in range(n):
        stage(iwd, "in.%d" % k, "job %d input\n" % k)
        ads.append(routed_submit_ad(
            iwd, "home_bl_127.0.0.1_29625_htc25_vm_%d.%d_1795849921" % (cluster, k),
            "uppercase.sh", arguments="in.%d" % k, transfer_input="in.%d" % k,
            transfer_output="out", remaps=("out = out.%d" % k) if remaps else None,
            output="stdout.%d" % k, error="err.%d" % k, **kw))
    return ads


def test_the_routed_ad_has_the_routers_shape(iwd):
    (ad,) = routed_cluster(iwd, 1)
    assert 'Args = "in.0"' in ad and "Arguments" not in ad
    assert 'Cmd = "%s"' % (iwd / "uppercase.sh") in ad
    assert "JobUniverse = 5" in ad and 'Queue = "uppercase"' in ad
    assert 'TransferOutputRemaps = "out = out.0"' in ad
    (bare,) = routed_cluster(iwd, 1, keep_remaps=False)
    assert "TransferOutputRemaps" not in bare


def test_ten_routed_jobs_each_get_their_own_outputs(client, emu, iwd):
    results = submit_all(client, routed_cluster(iwd, 10))
    assert all(rc == 0 for rc, _, _ in results), results
    jobs = [job for _, _, job in results]
    done = wait_statuses(client, jobs, 4, emu=emu)
    for k, job in enumerate(jobs):
        assert done[job][3]["ExitCode"] == "0"
        assert (iwd / ("out.%d" % k)).read_text() == "JOB %d INPUT\n" % k
        # the V1 argument reached the job; its BOINC stderr is its Err
        assert "argument 1: [in.%d]" % k in (iwd / ("err.%d" % k)).read_text()
    assert not (iwd / "out").exists()
    assert len(emu.counters()["jobs_by_name"]) == 10


def test_the_app_can_come_from_the_job(client, emu, iwd):
    (ad,) = routed_cluster(iwd, 1, route_queue="no_such_app", boinc_app="uppercase")
    rc, err, job = client.submit(ad)
    assert rc == 0, err
    wait_statuses(client, [job], 4, emu=emu)
    assert (iwd / "out.0").read_text() == "JOB 0 INPUT\n"


@pytest.mark.parametrize("keep_remaps", [True, False])
def test_two_routed_jobs_naming_one_output_path_give_one_refusal(client, emu, iwd,
                                                                  keep_remaps):
    """keep_remaps False: the route without the schedd transform, as the
    issue ran it (every job writes Iwd/out); True: two jobs whose remaps
    name one file."""
    ads = routed_cluster(iwd, 2, keep_remaps=keep_remaps)
    if keep_remaps:
        ads = [a.replace('"out = out.1"', '"out = out.0"') for a in ads]
    results = submit_all(client, ads)
    ok = [r for r in results if r[0] == 0]
    bad = [r for r in results if r[0] != 0]
    assert len(ok) == 1 and len(bad) == 1, results
    first = ok[0][2]
    path = iwd / ("out.0" if keep_remaps else "out")
    assert first in bad[0][1] and str(path) in bad[0][1], bad
    wait_statuses(client, [first], 4, emu=emu)
    k = int(ads.index(next(a for a, r in zip(ads, results) if r[0] == 0)))
    assert path.read_text() == "JOB %d INPUT\n" % k
    assert list(emu.counters()["jobs_by_name"]) == [first]
