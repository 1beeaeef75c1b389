"""Write-ahead journaling seen from outside: a journal that cannot be
written gives F (and the server keeps running), accepted requests are in
the journal before their S, results are committed before RESULTS shows
them, and delivery is recorded."""
import sqlite3
import time

from journal_db import locked, rows, value


def test_locked_journal_gives_F_and_server_recovers(gahp, journal):
    g = gahp(args=["--busy-timeout", "200"])
    assert g.command("BOINC_PING 1") == "S"
    assert g.wait_results(1) == [r"1 no\ project\ selected"]
    with locked(journal):
        assert g.command("BOINC_PING 2") == "F"
        # several requests in one burst share the failed transaction
        g.send_raw(b"BOINC_PING 3\nBOINC_PING 4\n")
        assert g.read_line() == "F"
        assert g.read_line() == "F"
        assert g.command("VERSION").startswith("S $GahpVersion")   # still alive
    # F means not accepted: the same ids can be used again
    assert g.command("BOINC_PING 2") == "S"
    assert g.wait_results(1) == [r"2 no\ project\ selected"]
    assert g.quit() == 0
    with sqlite3.connect(journal) as c:
        ids = sorted(r[0] for r in c.execute("SELECT client_id FROM requests"))
    assert ids == [1, 2]


def test_results_wait_for_the_journal(gahp, journal, ping_server):
    """A completed result is not shown by RESULTS while its commit is
    blocked.  The order is forced, not raced: the ping is held by the
    project (a gate) until the test holds the journal's write lock, and
    RESULTS is asked only once the server's log shows its committer
    refused by that lock, i.e. once the ping has completed."""
    g = gahp()
    assert g.command("BOINC_SELECT_PROJECT %s/gate/ auth" % ping_server.base) == "S"
    assert g.command("BOINC_PING 1") == "S"
    deadline = time.monotonic() + 30
    while ping_server.hits == 0:            # the worker is inside the ping
        assert time.monotonic() < deadline, "the ping never reached the project"
        time.sleep(0.01)
    with locked(journal):
        ping_server.gate.set()              # the ping completes now...
        g.wait_stderr("journal locked by another process")   # ...its commit waits
        assert value(journal, "SELECT state FROM requests") == "accepted"
        assert g.results() == []            # not durable yet: not shown
    assert g.wait_results(1) == ["1 NULL"]  # committed once the lock is gone
    assert g.quit() == 0
    assert rows(journal, "SELECT state, result, completed_at >= accepted_at,"
                         " delivered_at >= completed_at FROM requests") == [
        ("delivered", None, 1, 1)]     # a ping's result goes once delivered


def test_accepted_before_S(gahp, journal):
    g = gahp()
    g.send_raw(b"".join(b"BOINC_SET_LEASE %d batch%d %d\n" % (i, i, 1700000000 + i)
                        for i in range(1, 201)))
    for i in range(200):
        assert g.read_line() == "S"
        # at the moment an S is read, its row must already be committed
        if i in (0, 199):
            with sqlite3.connect(journal) as c:
                (n,) = c.execute("SELECT count(*) FROM requests").fetchone()
            assert n >= i + 1
    res = g.wait_results(200)
    assert len(res) == 200
    assert g.quit() == 0
    with sqlite3.connect(journal) as c:
        rows = c.execute("SELECT command, args, state FROM requests ORDER BY client_id"
                         " LIMIT 1").fetchall()
        assert rows == [("BOINC_SET_LEASE", "batch1 1700000001", "delivered")]
        (sessions,) = c.execute("SELECT count(*) FROM sessions").fetchone()
        assert sessions == 1


def test_retention_prunes_only_delivered(gahp, journal):
    g = gahp()
    assert g.command("BOINC_PING 1") == "S"
    assert g.wait_results(1)
    assert g.command("BOINC_PING 2") == "S"
    # 2 completes but is never delivered
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with sqlite3.connect(journal) as c:
            if c.execute("SELECT state FROM requests WHERE client_id = 2").fetchone()[0] \
                    == "completed":
                break
        time.sleep(0.02)
    assert g.quit() == 0
    with sqlite3.connect(journal) as c:
        c.execute("UPDATE requests SET delivered_at = delivered_at - 8 * 86400"
                  " WHERE client_id = 1")
    g2 = gahp()                                   # start-up prunes (default 7 days)
    assert g2.quit() == 0
    with sqlite3.connect(journal) as c:
        rows = c.execute("SELECT client_id, state FROM requests").fetchall()
    assert rows == [(2, "completed")]
