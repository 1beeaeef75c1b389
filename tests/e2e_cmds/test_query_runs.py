"""Status recording by runs of rows (issue 22, migration 0012): a query
compares each job's recorded status with the server's and writes only the
rows that changed, one UPDATE per run of consecutive rows that changed
alike, the others through one list.  Through the real submit path (so the
batch has its row-id range) and the real emulator: every job is listed
with the right status, each change once, and the journal holds exactly
what the server said."""
import os
import sqlite3

from cmds_helpers import parse_query

N = 40
CRASHED = {5, 17, 18, 30}      # breaks the DONE rows into several runs


def statuses(journal, batch):
    db = sqlite3.connect(journal)
    try:
        return dict(db.execute("SELECT j.name, j.status FROM jobs j JOIN batches b"
                               " ON b.id = j.batch_id WHERE b.name = ?", (batch,)))
    finally:
        db.close()


def test_runs_of_changed_rows_are_recorded_and_listed_once(make_client, emulator, inputs,
                                                           journal):
    path = inputs("in.txt", b"status runs\n")
    jobs = [("rb#%d" % i, [], [(path, "in")]) for i in range(N)]
    c = make_client()
    assert c.wait(c.submit("rb", "uppercase", jobs)) == ["NULL"]

    t0, (listed,) = parse_query(c.call("BOINC_QUERY_BATCHES", "0", "1", "rb"), 1)
    assert listed == {"rb#%d" % i: "IN_PROGRESS" for i in range(N)}

    for i in CRASHED:                   # every instance fails: the job errs
        for inst in range(3):
            emulator.behaviour("rb#%d" % i, "crash", instance=inst)
    emulator.run()
    t1, (listed,) = parse_query(c.call("BOINC_QUERY_BATCHES", t0, "1", "rb"), 1)
    want = {"rb#%d" % i: ("ERROR" if i in CRASHED else "DONE") for i in range(N)}
    assert listed == want
    recorded = statuses(journal, "rb")
    assert set(recorded) == set(want)
    assert all((recorded[n] == "DONE") == (s == "DONE") for n, s in want.items()), recorded

    # nothing changed since t1: an empty group, and the journal as it was
    t2, (listed,) = parse_query(c.call("BOINC_QUERY_BATCHES", t1, "1", "rb"), 1)
    assert listed == {}
    assert statuses(journal, "rb") == recorded
    c.gahp.quit()
    # its own batch is never taken for another one of the same name
    log = journal[:-len(".db")] + ".log"
    with open(log) as f:
        assert "is not the one this journal submitted" not in f.read()
