"""BOINC_QUERY_BATCHES against the real emulator: full and incremental
queries, status mapping, unknown batches, retried 5xx, journal updates."""
import os
import sqlite3

import pytest

from cmds_helpers import parse_query


def _submit_two(emu, batch="b1"):
    emu.submit(batch, "uppercase", [("%s#j1" % batch, [b"hello\n"], None),
                                    ("%s#j2" % batch, [b"world\n"], None)])


def test_query_running_then_finished_batch(session, emu):
    _submit_two(emu)
    # Not yet sent to any host: the server says UNSENT, the protocol only
    # knows IN_PROGRESS.
    t0, (jobs,) = parse_query(session.query("0", "b1"), 1)
    assert jobs == {"b1#j1": "IN_PROGRESS", "b1#j2": "IN_PROGRESS"}
    assert int(t0) >= 0         # a change number of the journal's, not a time

    emu.advance(5)
    assert emu.run()["unfinished_jobs"] == 0
    _, (jobs,) = parse_query(session.query(t0, "b1"), 1)
    assert jobs == {"b1#j1": "DONE", "b1#j2": "DONE"}
    emu.advance(10)
    t1, (jobs,) = parse_query(session.query("0", "b1"), 1)
    assert jobs == {"b1#j1": "DONE", "b1#j2": "DONE"}

    # A batch the journal does not know (submitted by another program) is
    # listed as the server lists it for min_mod_time 0: every job, each
    # time (the client's number is ours, not a server time).
    emu.advance(5)
    t2, (jobs,) = parse_query(session.query(t1, "b1"), 1)
    assert jobs == {"b1#j1": "DONE", "b1#j2": "DONE"}
    assert int(t2) >= int(t1)


def test_query_several_batches_in_request_order(session, emu):
    _submit_two(emu, "first")
    emu.submit("second", "uppercase", [("second#x", [b"x"], None)])
    _, (a, b, c) = parse_query(session.query("0", "second", "first", "second"), 3)
    assert set(a) == {"second#x"}
    assert set(b) == {"first#j1", "first#j2"}
    assert c == a


def test_unknown_batch_message_ends_with_its_name(session, emu):
    _submit_two(emu)
    toks = session.query("0", "b1", "no such#batch")
    assert len(toks) == 1, toks
    assert toks[0].startswith("query_batch2 failed")
    # HTCondor takes the rest after "no batch named " as the batch name.
    assert toks[0].split("no batch named ", 1)[1] == "no such#batch"


@pytest.mark.parametrize("name", ["two  spaces", "trailing blank ", "line\nbreak",
                                  "long#" + "x" * 3000],
                         ids=["double-space", "trailing-blank", "newline", "3000-bytes"])
def test_unknown_batch_name_survives_message_squashing(session, emu, name):
    # The client module squashes server messages to one capped line; the
    # name HTCondor will resubmit must still be the exact one.
    _submit_two(emu)
    toks = session.query("0", "b1", name)
    assert len(toks) == 1, toks
    assert toks[0].split("no batch named ", 1)[1] == name


def test_error_job_is_reported_as_error(session, emu):
    emu.submit("bf", "failer", [("bf#ok", [b"a"], None),
                                ("bf#bad", [b"b"], "--exit 3")])
    emu.run()
    _, (jobs,) = parse_query(session.query("0", "bf"), 1)
    assert jobs == {"bf#ok": "DONE", "bf#bad": "ERROR"}


def test_query_5xx_fault_is_retried(session, emu):
    _submit_two(emu)
    before = emu.counters()["rpc"]["query_batch2"]
    emu.fault("query_batch2", "http500", count=2)
    _, (jobs,) = parse_query(session.query("0", "b1"), 1)
    assert set(jobs) == {"b1#j1", "b1#j2"}
    # Two 500s, then the answer: the client module retried a safe RPC.
    assert emu.counters()["rpc"]["query_batch2"] - before == 3


def test_query_persistent_5xx_is_one_error_token(session, emu):
    _submit_two(emu)
    emu.fault("query_batch2", "http503", count=1000)
    toks = session.query("0", "b1")
    assert len(toks) == 1
    assert toks[0].startswith("query_batch2 failed: HTTP error"), toks


def test_query_updates_known_jobs_in_journal(make_session, emu, journal):
    _submit_two(emu)
    s = make_session(emu)
    # Teach the journal this batch the way BOINC_SUBMIT records it: one
    # batches row for (project, name) and one jobs row per job.
    s.call("BOINC_PING")
    db = sqlite3.connect(journal, timeout=10)
    cols = {r[1] for r in db.execute("PRAGMA table_info(batches)")}
    pid = db.execute("SELECT id FROM projects").fetchone()[0]
    row = {"project_id": pid, "name": "b1", "app": "uppercase", "step": "submitted", "state": 7,
           "njobs": 2, "created_at": 1, "updated_at": 1, "spec_md5": "x"}
    row = {k: v for k, v in row.items() if k in cols}
    with db:
        cur = db.execute("INSERT INTO batches (%s) VALUES (%s)" % (
            ", ".join(row), ", ".join("?" * len(row))), list(row.values()))
        bid = cur.lastrowid
        db.execute("INSERT INTO jobs (batch_id, name, updated_at) VALUES (?, 'b1#j1', 1)", (bid,))
    emu.run()
    _, (jobs,) = parse_query(s.query("0", "b1"), 1)
    assert jobs["b1#j1"] == "DONE"
    rows = db.execute("SELECT name, status, updated_at FROM jobs").fetchall()
    # Only the existing row is updated; b1#j2 is not invented.
    assert len(rows) == 1
    assert rows[0][0] == "b1#j1" and rows[0][1] == "DONE" and rows[0][2] > 1
    db.close()


def test_a_batch_shadowed_by_another_of_the_same_name_is_logged(make_session, emu, journal):
    """HTCondor 9.0 can give two batches of one user the same name (two
    grid managers, the same app, the same second); the server answers a
    query of that name with the other one.  The batch's jobs then never
    change: the server's log must say why (doc/operating.md)."""
    _submit_two(emu)                       # the server's "b1": jobs j1, j2
    s = make_session(emu)
    s.call("BOINC_PING")
    db = sqlite3.connect(journal, timeout=10)
    pid = db.execute("SELECT id FROM projects").fetchone()[0]
    with db:                               # this journal's own "b1", job mine
        bid = db.execute(
            "INSERT INTO batches (project_id, name, app, state, njobs, created_at,"
            " updated_at, spec_md5) VALUES (?, 'b1', 'uppercase', 7, 1, 1, 1, 'x')",
            (pid,)).lastrowid
        db.execute("INSERT INTO jobs (batch_id, name, updated_at) VALUES (?, 'b1#mine', 1)",
                   (bid,))
    db.close()
    _, (jobs,) = parse_query(s.query("0", "b1"), 1)
    assert jobs == {"b1#mine": "IN_PROGRESS"}
    log = journal[:-len(".db")] + ".log"        # named after the journal
    with open(log) as f:
        text = f.read()
    assert "the server's batch named b1 is not the one this journal submitted" in text, text
    assert "b1#j1" in text

