"""SIGKILL while several upload_files requests of one submit are in
flight (--upload-connections 3, issue 12): after a restart and the
client's re-issue, every input is on the server exactly once and the
batch has exactly its jobs."""
import signal

import pytest

CONC = ("--retry-budget", "5", "--upload-chunk-files", "2", "--upload-connections", "3")


def wait_killed(client, timeout=60):
    rc = client.gahp.proc.wait(timeout=timeout)
    assert rc == -signal.SIGKILL, "expected the crash point to SIGKILL, exit %r" % rc
    client.gahp.kill()


def assert_invariants(emulator, name, jobs):
    """The batch once with exactly its jobs; every input uploaded once."""
    c = emulator.counters()
    assert c["batches_by_name"].get(name) == 1, c["batches_by_name"]
    for job, _, _ in jobs:
        assert c["jobs_by_name"].get(job) == 1, (job, c["jobs_by_name"])
    assert all(v == 1 for v in c["uploads_by_name"].values()), c["uploads_by_name"]
    return c


def many_jobs(inputs, name, n):
    jobs = []
    for i in range(n):
        p = inputs("%s_%02d.txt" % (name, i), ("%s concurrent %d\n" % (name, i)).encode())
        jobs.append(("%s#%d" % (name, i), [], [(p, "in")]))
    return jobs


@pytest.mark.parametrize("point", ["submit.upload_sent:2", "submit.upload_sent:5",
                                   "submit.uploaded:3", "submit.limit_learned"])
def test_crash_during_concurrent_uploads_never_uploads_twice(point, make_client, emulator,
                                                              inputs):
    if point == "submit.limit_learned":
        emulator.set_limits(max_file_uploads=1)
    jobs = many_jobs(inputs, "cu", 17)
    crashing = make_client(args=CONC, env={"BOINC_GAHP_TEST_CRASH_AT": point})
    crashing.submit("cu", "uppercase", jobs)
    wait_killed(crashing)
    again = make_client(args=CONC)
    assert again.wait(again.submit("cu", "uppercase", jobs), timeout=120) == ["NULL"]
    c = assert_invariants(emulator, "cu", jobs)
    assert c["files_uploaded"] == 17
