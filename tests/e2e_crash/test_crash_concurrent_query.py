"""query_files chunks of one submit in flight at once (--upload-connections,
issue 12): a batch whose 5,000 inputs the server already holds is queried
in three chunks of at most 2,000 names on three connections.  A real server treats
a file listed twice for one batch as fatal (duplicate association), so a
successful submit proves no name was queried twice; a SIGKILL with several
chunks in flight is resolved after the restart the same way."""
import signal
import sqlite3

import pytest

CONC = ("--retry-budget", "5", "--upload-connections", "3")
N = 5000   # three query_files chunks of at most 2,000 names


def make_jobs(inputs, prefix):
    paths = [inputs("q%04d.txt" % i, ("query chunk %d\n" % i).encode()) for i in range(N)]
    return lambda batch: [("%s#%d" % (batch, i), [], [(p, "in")]) for i, p in enumerate(paths)]


def states_of(journal, batch):
    db = sqlite3.connect(journal)
    rows = db.execute("SELECT f.state, count(*) FROM batch_files f JOIN batches b"
                      " ON b.id = f.batch_id WHERE b.name = ? GROUP BY f.state",
                      (batch,)).fetchall()
    db.close()
    return rows


def audit_states_of(journal, batch):
    """States as the audit view shows them: a file of an unanswered query
    announcement (batch_file_queries, migration 0007) is 'query_sent'."""
    db = sqlite3.connect(journal)
    rows = dict(db.execute("SELECT state, count(*) FROM audit_batch_files WHERE batch = ?"
                           " GROUP BY state", (batch,)).fetchall())
    announced = db.execute("SELECT count(*) FROM batch_file_queries q JOIN batches b"
                           " ON b.id = q.batch_id WHERE b.name = ?", (batch,)).fetchone()[0]
    db.close()
    return rows, announced


def test_concurrent_query_chunks_list_every_file_once(make_client, emulator, inputs, journal):
    jobs = make_jobs(inputs, "qa")
    c = make_client(args=CONC)
    assert c.wait(c.submit("qa", "uppercase", jobs("qa")), timeout=300) == ["NULL"]
    c.gahp.quit()
    # a fresh emulator counter: each query_files held 300 ms, so chunks
    # sent on several connections are seen in flight together
    emulator.stop()
    emulator.start()
    emulator.fault("query_files", "delay", count=100, delay_ms=300)
    c = make_client(args=CONC)
    before = emulator.counters()
    assert c.wait(c.submit("qb", "uppercase", jobs("qb")), timeout=300) == ["NULL"]
    after = emulator.counters()
    assert after["most_in_flight"] == 3, after["most_in_flight"]
    assert after["rpc"]["query_files"] - before["rpc"].get("query_files", 0) == 3
    assert after["files_uploaded"] == before["files_uploaded"] == 0
    assert states_of(journal, "qb") == [("confirmed", N)]
    assert len([j for j in after["jobs_by_name"] if j.startswith("qb#")]) == N


def as_written_before_0007(journal):
    """Turn the query announcements into what a journal written before
    migration 0007 holds after the same crash: each file 'query_sent'."""
    db = sqlite3.connect(journal)
    db.execute("UPDATE batch_files SET state = 'query_sent' WHERE state = 'hashed' AND"
               " (batch_id, phys_name) IN (SELECT q.batch_id, e.value FROM batch_file_queries q,"
               " json_each(q.names) e)")
    db.execute("DELETE FROM batch_file_queries")
    db.commit()
    db.close()


@pytest.mark.parametrize("legacy", [False, True], ids=["announced", "legacy_rows"])
@pytest.mark.parametrize("point", ["submit.query_sent:2", "submit.query_done:1"])
def test_crash_during_concurrent_queries_never_lists_a_file_twice(point, legacy, make_client,
                                                                  emulator, inputs, journal):
    jobs = make_jobs(inputs, "qc")
    first = make_client(args=CONC)
    assert first.wait(first.submit("qc", "uppercase", jobs("qc")), timeout=300) == ["NULL"]
    first.gahp.quit()
    crashing = make_client(args=CONC, env={"BOINC_GAHP_TEST_CRASH_AT": point})
    crashing.submit("qd", "uppercase", jobs("qd"))
    rc = crashing.gahp.proc.wait(timeout=120)
    assert rc == -signal.SIGKILL, "expected the crash point to SIGKILL, exit %r" % rc
    crashing.gahp.kill()
    # killed with chunks in flight: their files are query_sent, journaled
    # as one announcement per chunk, never as a state of each file
    states, announced = audit_states_of(journal, "qd")
    assert states.get("query_sent", 0) >= 1000 and announced >= 1, (states, announced)
    assert sum(states.values()) == N
    assert ("query_sent", states["query_sent"]) not in states_of(journal, "qd")
    if legacy:
        as_written_before_0007(journal)
        assert audit_states_of(journal, "qd") == (states, 0)
    again = make_client(args=CONC)
    assert again.wait(again.submit("qd", "uppercase", jobs("qd")), timeout=300) == ["NULL"]
    c = emulator.counters()
    assert c["batches_by_name"].get("qd") == 1, c["batches_by_name"]
    assert len([j for j in c["jobs_by_name"] if j.startswith("qd#")]) == N
    assert c["files_uploaded"] == N and all(v == 1 for v in c["uploads_by_name"].values())
    assert states_of(journal, "qd") == [("confirmed", N)]
    assert audit_states_of(journal, "qd") == ({"confirmed": N}, 0)
