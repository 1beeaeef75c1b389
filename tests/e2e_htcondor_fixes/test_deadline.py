"""Issue 8 point 6 (the deadline part): a BOINC_SUBMIT that cannot finish
before the client's 300 s (GRIDMANAGER_GAHP_CALL_TIMEOUT) is answered with
an error result in time (--submit-deadline, default 270 s; shortened here,
with the emulator slowed by delay faults), goes on, and stays bound to its
batch name: a re-issue gets its outcome, nothing is created twice."""
import random
import time

import pytest

from htc import assert_once, make_jobs

# asserts a wall-clock bound (the answer within the deadline + 3 s)
pytestmark = pytest.mark.serial

DEADLINE = 3


def test_slow_submit_answers_in_time_and_a_reissue_binds(make_gm, emulator, inputs):
    batch = "condor#s#uppercase#200"
    jobs = make_jobs(inputs, batch)
    emulator.fault("submit_batch", "delay", count=1, delay_ms=8000)
    gm = make_gm(args=("--retry-budget", "5", "--submit-deadline", str(DEADLINE)))
    t = time.monotonic()
    res = gm.wait(gm.submit(batch, "uppercase", jobs, shuffle=random.Random(1)))
    took = time.monotonic() - t
    assert len(res) == 1 and res[0].startswith("submit still running"), res
    assert took < DEADLINE + 3, took
    # the grid manager re-issues (jobs in another order): bound to the running
    # submit, answered in time again, until it finished
    for attempt in range(10):
        res = gm.wait(gm.submit(batch, "uppercase", jobs, shuffle=random.Random(attempt)))
        if res == ["NULL"]:
            break
        assert res[0].startswith("submit still running"), res
    assert res == ["NULL"]
    assert_once(emulator, batch, jobs)


def test_slow_submit_killed_after_its_answer_resumes_once(make_gm, emulator, inputs):
    batch = "condor#s#uppercase#201"
    jobs = make_jobs(inputs, batch)
    emulator.fault("submit_batch", "delay", count=1, delay_ms=8000)
    gm = make_gm(args=("--retry-budget", "5", "--submit-deadline", str(DEADLINE)))
    res = gm.wait(gm.submit(batch, "uppercase", jobs))
    assert res[0].startswith("submit still running"), res
    gm.gahp.kill()                      # while submit_batch is on its way
    time.sleep(6)                       # the emulator finishes that request
    gm2 = make_gm(args=("--retry-budget", "5", "--submit-deadline", str(DEADLINE)))
    for attempt in range(10):
        res = gm2.wait(gm2.submit(batch, "uppercase", jobs, shuffle=random.Random(attempt)))
        if res == ["NULL"]:
            break
        assert res[0].startswith("submit still running"), res
    assert res == ["NULL"]
    assert_once(emulator, batch, jobs)
