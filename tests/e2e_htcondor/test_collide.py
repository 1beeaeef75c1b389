"""Never a silent overwrite (issue 40), HTCondor 9.0 dialect.  BOINC_SUBMIT
carries no outputs: the destinations arrive with BOINC_FETCH_OUTPUT, so the
fetch claims them (journal, before anything is written).  A job whose life
overlapped another job writing the same path (that job's outputs were
delivered after this job's batch was created) fails its fetch with the
other job and the path, and the grid manager holds it; jobs that run one
after another reuse the path, also across a SIGKILL of the GAHP."""
import pathlib
import signal

from gridmanager_sim import COMPLETED, HELD


def shared_remap(path):
    return lambda proc: [("out", str(path))]


def test_two_jobs_of_one_batch_naming_one_path_give_one_hold(make_gm, add_jobs, emulator,
                                                             tmp_path):
    shared = tmp_path / "shared.out"
    gm = make_gm(seed=40)
    jobs = add_jobs(gm, 2, transfer_output_files=shared_remap(shared), expect=lambda iwd: {})
    gm.run(max_processes=1)
    states = sorted(j.state for j in jobs)
    assert states == sorted([COMPLETED, HELD]), [(j.state, j.hold_reason) for j in jobs]
    (done,) = [j for j in jobs if j.state == COMPLETED]
    (held,) = [j for j in jobs if j.state == HELD]
    assert done.remote_name in held.hold_reason and str(shared) in held.hold_reason
    assert "\n" not in held.hold_reason
    # the file holds the completed job's output, whole
    text = (pathlib.Path(done.iwd) / "in").read_text()
    assert shared.read_text() == text.upper()


def test_two_outputs_of_one_job_naming_one_path_fail_its_fetch(make_gm, add_jobs, emulator,
                                                               tmp_path):
    gm = make_gm(seed=41)
    (job,) = add_jobs(gm, 1, transfer_output_files=lambda p: [("out", "x"), ("other", "x")],
                      expect=lambda iwd: {})
    gm.run(max_processes=1)
    assert job.state == HELD and "two outputs of this job" in job.hold_reason
    assert not (pathlib.Path(job.iwd) / "x").exists()


def test_jobs_that_run_one_after_another_reuse_the_path(make_gm, add_jobs, emulator, tmp_path):
    """The second job is queued after the first completed, and the GAHP is
    SIGKILLed in between: the released claim is read from the journal."""
    shared = tmp_path / "shared.out"
    gm = make_gm(seed=42)
    (first,) = add_jobs(gm, 1, transfer_output_files=shared_remap(shared),
                        expect=lambda iwd: {})
    later = []

    def hook(proc):
        emulator.advance(60)
        if first.state == COMPLETED and not later:
            later.extend(add_jobs(gm, 1, transfer_output_files=shared_remap(shared),
                                  expect=lambda iwd: {}))
            proc.wire.proc.send_signal(signal.SIGKILL)
            proc.wire.proc.wait()
    gm.poll_hook = hook
    gm.run(max_processes=4)
    assert first.state == COMPLETED
    (second,) = later
    assert second.state == COMPLETED, second.hold_reason
    assert len(gm.processes) >= 2
    assert shared.read_text() == (pathlib.Path(second.iwd) / "in").read_text().upper()
