"""BOINC_ABORT_JOBS, BOINC_RETIRE_BATCH and BOINC_SET_LEASE against the
real emulator, and what they record in the journal."""
import sqlite3

from cmds_helpers import parse_query


def _journal_batch(journal, name, app="uppercase"):
    """Insert the batches row BOINC_SUBMIT would have made (the project
    row exists once a command has been accepted)."""
    db = sqlite3.connect(journal, timeout=10)
    cols = {r[1] for r in db.execute("PRAGMA table_info(batches)")}
    pid = db.execute("SELECT id FROM projects").fetchone()[0]
    row = {"project_id": pid, "name": name, "app": app, "step": "submitted", "state": 7,
           "njobs": 1, "created_at": 1, "updated_at": 1, "spec_md5": "x"}
    row = {k: v for k, v in row.items() if k in cols}
    with db:
        db.execute("INSERT INTO batches (%s) VALUES (%s)" % (
            ", ".join(row), ", ".join("?" * len(row))), list(row.values()))
    return db


def test_abort_jobs(session, emu):
    emu.submit("a", "uppercase", [("a#1", [b"x"], None), ("a#2", [b"y"], None),
                                  ("a#3", [b"z"], None)])
    assert session.call("BOINC_ABORT_JOBS", "a#1", "a#2") == ["NULL"]
    assert emu.job_state("a#1")["error_mask"] & 16
    assert emu.job_state("a#2")["error_mask"] & 16
    assert emu.job_state("a#3")["error_mask"] == 0
    emu.run()
    _, (jobs,) = parse_query(session.query("0", "a"), 1)
    assert jobs == {"a#1": "ERROR", "a#2": "ERROR", "a#3": "DONE"}


def test_abort_unknown_job_is_one_error_token(session, emu):
    toks = session.call("BOINC_ABORT_JOBS", "no such job")
    assert len(toks) == 1
    assert toks[0].startswith("abort_jobs failed: server error: "), toks
    assert "no such job" in toks[0]


def test_retire_batch_then_query_shows_the_server_view(make_session, emu, journal):
    emu.submit("r", "uppercase", [("r#1", [b"x"], None)])
    emu.run()
    s = make_session(emu)
    s.call("BOINC_PING")
    db = _journal_batch(journal, "r")
    assert s.call("BOINC_RETIRE_BATCH", "r") == ["NULL"]
    (b,) = emu.batch_state("r")
    assert b["retired"] is True
    assert db.execute("SELECT retired FROM batches WHERE name = 'r'").fetchone() == (1,)
    # Whatever the server answers for a retired batch is passed on: a
    # result with the right shape, or one error token.
    toks = s.query("0", "r")
    if toks[0] == "NULL":
        parse_query(toks, 1)
    else:
        assert len(toks) == 1 and toks[0].startswith("query_batch2 failed"), toks
    db.close()


def test_retire_unknown_batch(session, emu):
    toks = session.call("BOINC_RETIRE_BATCH", "nope")
    # One token: the step, then the server's own text.
    assert len(toks) == 1, toks
    prefix = "retire_batch failed: server error: "
    assert toks[0].startswith(prefix) and len(toks[0]) > len(prefix), toks


def test_set_lease(make_session, emu, journal):
    emu.submit("l", "uppercase", [("l#1", [b"x"], None)])
    s = make_session(emu)
    s.call("BOINC_PING")
    db = _journal_batch(journal, "l")
    lease = int(emu.state()["time"]) + 6 * 3600
    assert s.call("BOINC_SET_LEASE", "l", lease) == ["NULL"]
    (b,) = emu.batch_state("l")
    assert b["expire_time"] == lease
    assert db.execute("SELECT lease FROM batches WHERE name = 'l'").fetchone() == (lease,)
    db.close()


def test_set_lease_unknown_batch(session, emu):
    toks = session.call("BOINC_SET_LEASE", "nope", 1900000000)
    assert len(toks) == 1, toks
    prefix = "set_expire_time failed: server error: "
    assert toks[0].startswith(prefix) and len(toks[0]) > len(prefix), toks


def test_retire_and_lease_of_batches_the_journal_does_not_know(session, emu):
    # Server work succeeds; the journal simply has nothing to record.
    emu.submit("x", "uppercase", [("x#1", [b"x"], None)])
    assert session.call("BOINC_SET_LEASE", "x", 1900000000) == ["NULL"]
    assert session.call("BOINC_RETIRE_BATCH", "x") == ["NULL"]
    (b,) = emu.batch_state("x")
    assert b["retired"] is True and b["expire_time"] == 1900000000
