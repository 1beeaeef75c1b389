"""Issue 18, defect 1: a status reply never hurts the real client.

HTCondor 9.0 applies each status line to whichever job has that
cluster.proc (the text after the last '#' of the job name), whatever batch
the line is in.  After condor_hold (one BOINC_ABORT_JOBS) and
condor_release, the released job joins a new batch under the same
cluster.proc; a later reply that listed the aborted copy as ERROR in its
old batch held the released job for good (the ERROR hold is sticky).  So:
a job named by BOINC_ABORT_JOBS is never listed again, and a partial
query lists only the jobs changed since the change number the client
brings back."""
from htc import parse_groups
from journal_db import rows, value


def proc_of(job):
    return job.rsplit("#", 1)[1]


def by_proc(groups):
    """What the real client applies: {cluster.proc: [statuses]}."""
    seen = {}
    for group in groups:
        for job, status in group.items():
            seen.setdefault(proc_of(job), []).append(status)
    return seen


def submit(gm, inputs, batch, procs):
    src = inputs("in_%s" % batch.rsplit("#", 1)[1], "input\n")
    jobs = [("%s#%s" % (batch, p), [], [(src, "in")]) for p in procs]
    assert gm.wait(gm.submit(batch, "uppercase", jobs)) == ["NULL"]
    return [j[0] for j in jobs]


def test_released_job_never_gets_its_aborted_copys_error(make_gm, emulator, inputs):
    gm = make_gm()
    old = "condor#s#uppercase#100"
    submit(gm, inputs, old, ["1.0", "1.1", "1.2"])
    t, (group,) = parse_groups(gm.query("0", [old]), 1)
    assert len(group) == 3
    # condor_hold of 1.0: one abort; condor_release: a new batch, same proc
    assert gm.call("BOINC_ABORT_JOBS", old + "#1.0") == ["NULL"]
    assert emulator.job(old + "#1.0")["error_mask"] & 16     # the server aborted it
    new = "condor#s#uppercase#200"
    submit(gm, inputs, new, ["1.0"])
    emulator.run(7200)
    emulator.advance(30)
    # partial queries (the client's own number back) and full ones alike
    seen = {}
    for mmt in [t, "0", t, "0"]:
        nt, groups = parse_groups(gm.query(mmt, [old, new]), 2)
        assert old + "#1.0" not in groups[0]
        for proc, statuses in by_proc(groups).items():
            seen.setdefault(proc, []).extend(statuses)
        if mmt != "0":
            t = nt
    assert "ERROR" not in seen["1.0"], seen
    assert seen["1.0"][-1] == "DONE" and seen["1.1"][-1] == "DONE", seen


def test_partial_query_lists_only_jobs_changed_since_its_number(make_gm, emulator, inputs):
    gm = make_gm()
    batch = "condor#s#uppercase#300"
    submit(gm, inputs, batch, ["3.0", "3.1", "3.2"])
    t0, (group,) = parse_groups(gm.query("0", [batch]), 1)
    assert set(group.values()) == {"IN_PROGRESS"} and len(group) == 3
    emulator.run(7200)
    emulator.advance(30)
    t1, (group,) = parse_groups(gm.query(t0, [batch]), 1)
    assert set(group.values()) == {"DONE"} and len(group) == 3
    assert int(t1) > int(t0)
    for _ in range(3):          # unchanged: nothing listed, the number stays
        emulator.advance(60)
        t2, (group,) = parse_groups(gm.query(t1, [batch]), 1)
        assert group == {} and t2 == t1
    # a full query still lists every job
    _, (group,) = parse_groups(gm.query("0", [batch]), 1)
    assert len(group) == 3


def test_after_a_restart_unsure_batches_get_every_job_and_the_number_waits(
        make_gm, emulator, inputs):
    gm = make_gm()
    a, b = "condor#s#uppercase#400", "condor#s#uppercase#500"
    submit(gm, inputs, a, ["4.0", "4.1"])
    submit(gm, inputs, b, ["5.0"])
    t, _ = parse_groups(gm.query("0", [a, b]), 2)
    emulator.run(7200)
    emulator.advance(30)
    t, groups = parse_groups(gm.query(t, [a, b]), 2)    # the DONEs, read
    assert [len(g) for g in groups] == [2, 1]
    gm.gahp.kill()
    gm = make_gm()              # a new grid manager: both batches unconfirmed
    # it stops reading after the first group it confirms: every job of each
    # batch is listed, and the client gets its own number back
    t1, groups = parse_groups(gm.query(t, [a, b]), 2)
    assert [len(g) for g in groups] == [2, 1] and t1 == t
    # a is confirmed now; b still is not: b's group is full, the number waits
    t2, groups = parse_groups(gm.query(t1, [a, b]), 2)
    assert groups == [{}, {b + "#5.0": "DONE"}] and t2 == t
    # both confirmed: only changes, and the number moves on
    t3, groups = parse_groups(gm.query(t2, [a, b]), 2)
    assert groups == [{}, {}]


def test_aborted_job_is_not_listed_even_in_a_full_query(make_gm, emulator, inputs):
    gm = make_gm()
    batch = "condor#s#uppercase#600"
    submit(gm, inputs, batch, ["6.0", "6.1"])
    assert gm.call("BOINC_ABORT_JOBS", batch + "#6.1") == ["NULL"]
    for mmt in ["0", "0"]:
        _, (group,) = parse_groups(gm.query(mmt, [batch]), 1)
        assert list(group) == [batch + "#6.0"], group
    # the journal says why, for an audit
    gm.gahp.kill()


def test_first_query_of_a_new_batch_rewrites_no_job(make_gm, emulator, inputs, journal):
    """Issue 22, migration 0013: a job is recorded at submit as UNSENT, what
    a server says of a job it has just created, so the first query finds
    every job unchanged and writes no job row; the batch's unchanged_seq
    takes the reply's number instead."""
    gm = make_gm()
    batch = "condor#s#uppercase#700"
    submit(gm, inputs, batch, ["7.0", "7.1", "7.2"])
    before = rows(journal, "SELECT id, status, status_seq, updated_at FROM jobs ORDER BY id")
    assert [r[1:3] for r in before] == [("UNSENT", 0)] * 3
    assert value(journal, "SELECT unchanged_seq FROM batches WHERE name = ?", batch) is None
    t, (group,) = parse_groups(gm.query("0", [batch]), 1)
    assert set(group.values()) == {"IN_PROGRESS"} and len(group) == 3
    assert rows(journal, "SELECT id, status, status_seq, updated_at FROM jobs ORDER BY id") == before
    assert value(journal, "SELECT unchanged_seq FROM batches WHERE name = ?", batch) == int(t)
    # a change is still written to each row, with the next number
    emulator.run(7200)
    emulator.advance(30)
    t1, (group,) = parse_groups(gm.query(t, [batch]), 1)
    assert set(group.values()) == {"DONE"} and len(group) == 3 and int(t1) > int(t)
    assert rows(journal, "SELECT DISTINCT status, status_seq FROM jobs") == [("DONE", int(t1))]


def test_new_jobs_are_listed_once_by_the_first_partial_query_that_sees_them(
        make_gm, emulator, inputs):
    """A batch submitted after the client took its number, and first queried
    after another partial query moved that number on, is listed (every job,
    IN_PROGRESS) by the partial query that first records it, and not again:
    what the rewrite of every job by the first query gave before 0013."""
    gm = make_gm()
    a, b = "condor#s#uppercase#800", "condor#s#uppercase#900"
    submit(gm, inputs, a, ["8.0"])
    t, _ = parse_groups(gm.query("0", [a]), 1)
    emulator.run(7200)
    emulator.advance(30)
    t, (group,) = parse_groups(gm.query(t, [a]), 1)
    assert group == {a + "#8.0": "DONE"}
    submit(gm, inputs, b, ["9.0", "9.1"])
    # a partial query of the other batch only: nothing of b recorded yet
    t2, (group,) = parse_groups(gm.query(t, [a]), 1)
    assert group == {}
    t3, groups = parse_groups(gm.query(t2, [a, b]), 2)
    assert groups == [{}, {b + "#9.0": "IN_PROGRESS", b + "#9.1": "IN_PROGRESS"}]
    assert int(t3) > int(t2)
    _, groups = parse_groups(gm.query(t3, [a, b]), 2)
    assert groups == [{}, {}]
