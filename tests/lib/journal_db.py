"""journal_db - reading the server's SQLite journal from a test, the way an
auditor would (doc/auditing.md): each call opens its own connection and
closes it, so a test never holds a read transaction across server work.

    from journal_db import rows, value, wait_value, locked

    rows(journal, "SELECT client_id, state FROM requests")
    wait_value(journal, "SELECT state FROM requests WHERE client_id = 2", "completed")
    with locked(journal):         # another process holding the write lock
        ...
"""
import contextlib
import sqlite3
import time


def rows(journal, sql, *params):
    """Every row of a query, as a list of tuples."""
    db = sqlite3.connect(journal, timeout=30)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def value(journal, sql, *params):
    """The first row of a query: its only column alone, else the tuple;
    None when there is no row."""
    got = rows(journal, sql, *params)
    if not got:
        return None
    return got[0][0] if len(got[0]) == 1 else got[0]


def wait_value(journal, sql, want, *params, timeout=60, interval=0.05):
    """Poll value(sql) until it equals want (or, when want is callable,
    until want(value) is true); fails with the last value seen after
    timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = value(journal, sql, *params)
        if (want(got) if callable(want) else got == want):
            return got
        assert time.monotonic() < deadline, \
            "journal: %s gave %r for %ss, waiting for %r" % (sql, got, timeout, want)
        time.sleep(interval)


@contextlib.contextmanager
def locked(journal):
    """Hold the journal's write lock from another process-level connection:
    a real SQLite lock, which root cannot bypass (unlike file modes)."""
    c = sqlite3.connect(journal, isolation_level=None, timeout=30)
    c.execute("BEGIN EXCLUSIVE")
    try:
        yield c
    finally:
        c.execute("ROLLBACK")
        c.close()
