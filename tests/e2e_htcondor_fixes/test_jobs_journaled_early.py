"""Issue 22: a submit journals its job rows while the server works on its
submit_batch (the rows' transaction overlaps the request instead of
following its reply).  Until the batch is submitted those rows are
invisible: a status query in the meantime answers from the server, as it
did when the rows came after the reply, and a submit_batch the server
refused leaves no row behind."""
from htc import parse_groups
from journal_db import rows, value, wait_value


def jobs_of(inputs, batch, n):
    src = inputs("in_%s" % batch.rsplit("#", 1)[1], "input\n")
    return [("%s#7.%d" % (batch, i), [], [(src, "in")]) for i in range(n)]


def job_rows(journal, batch):
    return value(journal, "SELECT count(*) FROM jobs j JOIN batches b ON b.id = j.batch_id"
                          " WHERE b.name = ?", batch)


def test_rows_written_during_submit_batch_stay_unseen_until_submitted(make_gm, emulator,
                                                                      inputs, journal):
    gm = make_gm()
    batch = "condor#s#uppercase#700"
    emulator.fault("submit_batch", "delay", delay_ms=3000)
    rid = gm.submit(batch, "uppercase", jobs_of(inputs, batch, 9))
    # the rows are in while the request is still with the server
    wait_value(journal, "SELECT b.state FROM batches b WHERE b.name = ?", 6, batch)
    wait_value(journal, "SELECT count(*) FROM jobs j JOIN batches b ON b.id = j.batch_id"
                        " WHERE b.name = ?", 9, batch, timeout=2.5)
    assert value(journal, "SELECT state FROM batches WHERE name = ?", batch) == 6
    # a query meanwhile lists what the server has (no job yet), not the rows
    _, (group,) = parse_groups(gm.query("0", [batch]), 1)
    assert group == {}
    assert value(journal, "SELECT status_server_time FROM batches WHERE name = ?",
                 batch) is None
    assert gm.wait(rid) == ["NULL"]
    assert rows(journal, "SELECT state, job_lo IS NOT NULL FROM batches WHERE name = ?",
                batch) == [(7, 1)]
    assert job_rows(journal, batch) == 9
    _, (group,) = parse_groups(gm.query("0", [batch]), 1)
    assert len(group) == 9


def test_refused_submit_batch_leaves_no_job_rows(make_gm, emulator, inputs, journal):
    gm = make_gm()
    first, second = "condor#s#uppercase#710", "condor#s#uppercase#711"
    assert gm.wait(gm.submit(first, "uppercase", jobs_of(inputs, first, 9))) == ["NULL"]
    # the same job names again: the server's create_work refuses them all
    taken = jobs_of(inputs, first, 9)
    emulator.fault("submit_batch", "delay", delay_ms=3000)
    rid = gm.submit(second, "uppercase", taken)
    wait_value(journal, "SELECT count(*) FROM jobs j JOIN batches b ON b.id = j.batch_id"
                        " WHERE b.name = ?", 9, second, timeout=2.5)
    result = gm.wait(rid)
    assert result[0] != "NULL" and "create_work" in " ".join(result), result
    assert job_rows(journal, second) == 0
    assert value(journal, "SELECT state FROM batches WHERE name = ?", second) == 8
    assert job_rows(journal, first) == 9
    _, (group,) = parse_groups(gm.query("0", [first]), 1)
    assert len(group) == 9
