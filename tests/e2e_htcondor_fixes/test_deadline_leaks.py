"""A BOINC_SUBMIT answered at its deadline goes on in a detached task;
under valgrind's leak checker, that task's memory is given back when it
ends (issue 42, sampled mutation: task_detach that forgot to mark the task
detached - the thread then never frees it - passed every net)."""
import time

import pytest

from valgrind_leaks import LEAKED, needs_valgrind, valgrind_wrapper
from htc import assert_once, make_jobs

pytestmark = pytest.mark.serial

@needs_valgrind
def test_a_submit_past_its_deadline_loses_no_memory(make_gm, emulator, inputs, tmp_path,
                                                    monkeypatch):
    log = valgrind_wrapper(tmp_path, monkeypatch)
    batch = "condor#s#uppercase#300"
    jobs = make_jobs(inputs, batch, n=2)
    emulator.fault("submit_batch", "delay", count=1, delay_ms=8000)
    gm = make_gm(args=("--retry-budget", "5", "--submit-deadline", "3"))
    res = gm.wait(gm.submit(batch, "uppercase", jobs), timeout=120)
    assert res[0].startswith("submit still running"), res
    # re-issued as the grid manager does until the detached run has finished
    for attempt in range(40):
        res = gm.wait(gm.submit(batch, "uppercase", jobs), timeout=120)
        if res == ["NULL"]:
            break
        assert res[0].startswith("submit still running"), res
        time.sleep(1)
    assert res == ["NULL"]
    time.sleep(2)                       # its task ends after its result
    rc = gm.gahp.quit(timeout=120)
    report = log.read_text() if log.exists() else ""
    assert rc == 0, "exit status %s (%d: valgrind found a leak):\n%s" % (rc, LEAKED, report)
    assert "definitely lost" not in report, report
    assert_once(emulator, batch, jobs)
