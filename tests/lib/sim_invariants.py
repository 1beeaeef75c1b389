"""sim_invariants - the issue's invariants, checked on the simulated grid
manager's job states and the emulator's counters after a run."""
import pathlib

from gridmanager_sim import COMPLETED


def check_invariants(gm, emulator, allowed_holds=()):
    """The issue's invariants: no unexpected client exit; every job
    completed with exit 0 and its expected outputs, or held for one of
    the allowed (user-caused) reasons; no batch or job twice on the
    server, no input uploaded twice."""
    assert gm.unexpected_exits == [], gm.unexpected_exits
    assert gm.gave_up is None, gm.gave_up
    for job in gm.jobs:
        if job.state == COMPLETED:
            assert job.exit_status == 0, job
            for path, want in job.expect.items():
                assert pathlib.Path(path).read_bytes() == want, (job, path)
        else:
            assert any(r in (job.hold_reason or "") for r in allowed_holds), \
                (job, job.hold_reason)
    c = emulator.counters()
    twice = {k: v for k, v in c["batches_by_name"].items() if v != 1}
    assert twice == {}, twice
    twice = {k: v for k, v in c["jobs_by_name"].items() if v != 1}
    assert twice == {}, twice
    twice = {k: v for k, v in c["uploads_by_name"].items() if v != 1}
    assert twice == {}, twice
    completed = {j.remote_name for j in gm.jobs if j.state == COMPLETED}
    assert completed <= set(c["jobs_by_name"]), completed - set(c["jobs_by_name"])
    return c
