"""run?max_runs=N (tests/emu/backend.c): at most N app runs in one call,
the call ending once they are reported; the rest of the batch is left as
it was, and a later run without the bound finishes it."""
import pytest

import emu
from emu import xml_query_batch2


def statuses(e, batch):
    return dict(emu.job_statuses(e.rpc(xml_query_batch2(e.authenticator, [batch])).body))


def test_max_runs_finishes_the_first_n_jobs_only(e):
    inputs = [[b"job %d\n" % i] for i in range(10)]
    _, jobs = emu.submit(e, e.authenticator, "mr", "uppercase", inputs)
    r = e.run(max_runs=3)
    assert r["unfinished_jobs"] == 7
    st = statuses(e, "mr")
    assert [st[j] for j in jobs[:3]] == ["DONE"] * 3
    assert all(st[j] != "DONE" for j in jobs[3:]), st
    assert sum(len(e.job(j)["instances"]) for j in jobs[3:]) > 0   # sent, not run
    assert e.run(max_runs=0)["unfinished_jobs"] == 7     # nothing more runs
    assert e.run()["unfinished_jobs"] == 0
    assert set(statuses(e, "mr").values()) == {"DONE"}


def test_max_runs_must_be_a_count(e):
    for bad in ("-1", "x", "1.5"):
        with pytest.raises(emu.EmulatorError):
            e.control("run", "POST", max_runs=bad)
