"""Issue 10 #6 and #11: neither the authenticator nor a password in the
project URL survives, whole or as any piece of 8+ characters, in result
lines, the journal's result column, or the log (debug level included),
even from a server that echoes them back inside long error texts."""
import sqlite3
import time

import pytest

from hostile_helpers import AUTH, Client, secret_pieces

PASSWORD = "s3cretPassw0rd-xyz"


def leaks(text, *secrets):
    return sorted(p for s in secrets for p in secret_pieces(s) if p in text)


@pytest.mark.parametrize("status", [200, 500])
def test_echoed_secrets_are_scrubbed_before_the_cut(status, server, make_gahp, tmp_path, journal):
    # server <error> texts are cut at 2000 characters, error pages at 200
    server.cfg.update(post="echo", status=status, cut=2000 if status == 200 else 200)
    log = tmp_path / "gahp.log"
    g = make_gahp(("--retry-budget", "1", "--log-file", str(log), "--log-level", "debug"))
    url = server.url.replace("http://", "http://alice:%s@" % PASSWORD)
    c = Client(g, url)
    toks = c.call("BOINC_QUERY_BATCHES", 0, 1, "b1")
    assert len(toks) == 1 and toks[0].startswith("query_batch2 failed"), toks
    # The server did see both secrets (so the echo had something to leak).
    assert AUTH in server.posts()[0]
    assert leaks(toks[0], AUTH, PASSWORD) == []
    assert "***" in toks[0]
    g.quit()
    assert leaks(log.read_text(), AUTH, PASSWORD) == []
    db = sqlite3.connect(journal)
    results = " ".join(r[0] or "" for r in db.execute("SELECT result FROM requests"))
    # a query's result is not kept once delivered (doc/journal.md, "Retention")
    assert db.execute("SELECT state, result FROM requests").fetchall() == [("delivered", None)]
    db.close()
    assert leaks(results, AUTH, PASSWORD) == []


def test_url_password_not_in_debug_log_nor_audit_views(server, make_gahp, tmp_path, journal):
    log = tmp_path / "gahp.log"
    g = make_gahp(("--retry-budget", "1", "--log-file", str(log), "--log-level", "debug"))
    url = server.url.replace("http://", "http://alice:%s@" % PASSWORD)
    c = Client(g, url)
    assert c.call("BOINC_PING") == ["NULL"]
    c.start("BOINC_PING")                 # left undelivered: shows in audit_undelivered
    g.quit()
    text = log.read_text()
    assert "POST http://alice:***@127.0.0.1" in text
    assert leaks(text, PASSWORD) == []
    db = sqlite3.connect(journal)
    rows = db.execute("SELECT * FROM audit_undelivered").fetchall()
    db.close()
    assert rows and "alice:***@" in repr(rows)
    assert leaks(repr(rows), PASSWORD, AUTH) == []


def test_password_url_still_works_after_restart(server, make_gahp, journal):
    """The password is kept (the journal is private) for recovery and
    re-selection; only what people see is masked."""
    url = server.url.replace("http://", "http://alice:%s@" % PASSWORD)
    g = make_gahp()
    assert Client(g, url).call("BOINC_PING") == ["NULL"]
    g.quit()
    g2 = make_gahp()
    assert Client(g2, url).call("BOINC_PING") == ["NULL"]
    db = sqlite3.connect(journal)
    assert db.execute("SELECT count(*) FROM projects").fetchone()[0] == 1
    db.close()


def test_recovery_reconnects_with_the_stored_password(server, make_gahp, journal):
    """A request of a crashed run is run again from the journal, whose
    projects.url shows "***": the stored password is put back."""
    import base64
    server.cfg["post"] = "slow"
    url = server.url.replace("http://", "http://alice:%s@" % PASSWORD)
    g = make_gahp()
    c = Client(g, url)
    c.start("BOINC_PING")
    while not server.posts():
        time.sleep(0.05)
    g.kill()
    db = sqlite3.connect(journal)
    assert db.execute("SELECT url FROM projects").fetchone()[0].startswith("http://alice:***@")
    db.close()
    server.srv.release.set()
    g2 = make_gahp(("--retry-budget", "1", "--requeue-undelivered"))
    line = g2.wait_results(1)[0]
    assert line.split(" ")[1] == "NULL", line
    want = "Basic " + base64.b64encode(("alice:" + PASSWORD).encode()).decode()
    assert server.srv.auths == [want, want]


def test_older_journal_rows_are_masked_by_the_migration(make_gahp, journal):
    """Projects recorded before migration 0006 get the same split."""
    import os
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    db = sqlite3.connect(journal)
    for name in ("0001_core.sql", "0002_recovery.sql"):
        with open(os.path.join(repo, "migrations", name)) as f:
            db.executescript(f.read())
    db.execute("PRAGMA user_version = 2")
    db.execute("INSERT INTO projects (url, authenticator, first_used_at) VALUES"
               " ('http://alice:%s@127.0.0.1:9/p/', 'a', 1),"
               " ('http://127.0.0.1:9/q/', 'b', 1)" % PASSWORD)
    db.commit()
    db.close()
    os.chmod(journal, 0o600)
    g = make_gahp()
    g.quit()
    db = sqlite3.connect(journal)
    rows = db.execute("SELECT url, url_password FROM projects ORDER BY id").fetchall()
    db.close()
    assert rows == [("http://alice:***@127.0.0.1:9/p/", PASSWORD), ("http://127.0.0.1:9/q/", None)]
