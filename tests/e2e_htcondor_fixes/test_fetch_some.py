"""Issue 8 point 7: FETCH_OUTPUT SOME as the grid manager sends it, with
(basename(Out), Out) and (basename(Err), Err) for the job's stdout and
stderr (names a BOINC app does not produce; "null /dev/null" when the
error file is unset): those specs are skipped with a log line, and the
outputs that exist still have to arrive intact."""
import os


def submitted_job(gm, emulator, inputs, batch, content=b"hello some\n"):
    p = inputs("in_%s.txt" % batch.replace("#", "_"), content)
    job = "%s#12.0" % batch
    assert gm.wait(gm.submit(batch, "uppercase", [(job, [], [(p, "in")])])) == ["NULL"]
    emulator.run(7200)
    return job


def fetch(gm, job, iwd, specs):
    toks = [job, str(iwd), "/dev/null", "SOME", len(specs)]
    for src, dst in specs:
        toks += [src, dst]
    return gm.call("BOINC_FETCH_OUTPUT", *toks)


def test_stdout_stderr_and_dev_null_specs_are_skipped(make_gm, emulator, inputs, tmp_path,
                                                      journal):
    gm = make_gm()
    job = submitted_job(gm, emulator, inputs, "condor#s#uppercase#1")
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    res = fetch(gm, job, iwd, [("out", str(iwd / "result.txt")),
                               ("job.out", str(iwd / "job.out")),
                               ("null", "/dev/null")])
    assert res[0] == "NULL" and len(res) == 4, res
    assert (iwd / "result.txt").read_bytes() == b"HELLO SOME\n"
    assert sorted(os.listdir(iwd)) == ["result.txt"]
    log = gm.gahp.stderr_text()
    assert "spec for job.out skipped" in log
    assert "spec null -> /dev/null skipped" in log


def test_dev_null_destination_of_a_real_output_is_not_downloaded(make_gm, emulator,
                                                                 inputs, tmp_path):
    gm = make_gm()
    job = submitted_job(gm, emulator, inputs, "condor#s#uppercase#2")
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    before = emulator.counters()["http_requests"]
    res = fetch(gm, job, iwd, [("out", "/dev/null")])
    assert res[0] == "NULL", res
    assert os.listdir(iwd) == []
    # query_completed_job and get_templates, but no get_output
    assert emulator.counters()["http_requests"] - before == 2


def test_existing_output_must_still_arrive(make_gm, emulator, inputs, tmp_path):
    gm = make_gm()
    job = submitted_job(gm, emulator, inputs, "condor#s#uppercase#3")
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    emulator.fault("get_output.php", "drop", count=10)
    res = fetch(gm, job, iwd, [("out", str(iwd / "result.txt")),
                               ("job.err", str(iwd / "job.err"))])
    assert res[0] != "NULL", res
    assert os.listdir(iwd) == []
    emulator.clear_faults()
    res = fetch(gm, job, iwd, [("out", str(iwd / "result.txt")),
                               ("job.err", str(iwd / "job.err"))])
    assert res[0] == "NULL", res
    assert (iwd / "result.txt").read_bytes() == b"HELLO SOME\n"
