"""A journal that stays bounded while boinc_gahp runs for weeks (issue 19),
on the real binary, the emulator and real SQLite files: a poll of an
unchanged batch adds next to nothing and rewrites no job row, the pruner
thread prunes without a restart (the test clock shortens the retention and
the period alike), old batches go with their rows while recent ones stay,
free pages are returned, the journal stops growing under steady polling,
the audit views tell the truth about a submit failed at hashing and about
an earlier run's submit the client confirmed by a query, and upgrades make
a backup copy first and refuse a newer journal with a clear message."""
import os
import re
import signal
import sqlite3
import stat
import time

import pytest

from gahp_client import Gahp
from journal_db import value, wait_value


def used_bytes(journal):
    """Bytes of the journal's pages in use (the WAL's latest pages count,
    the free pages do not)."""
    db = sqlite3.connect("file:%s?mode=ro" % journal, uri=True, timeout=10)
    try:
        pages, free, size = (db.execute("PRAGMA %s" % p).fetchone()[0]
                             for p in ("page_count", "freelist_count", "page_size"))
        return (pages - free) * size
    finally:
        db.close()


def jobs_of(inputs, name, n):
    shared = inputs("%s.txt" % name, ("input of %s\n" % name).encode())
    return [("%s#%d" % (name, i), [], [(shared, "in")]) for i in range(n)]


def submit_ok(c, name, jobs):
    assert c.wait(c.submit(name, "uppercase", jobs), timeout=300) == ["NULL"]


def poll(c, name):
    toks = c.call("BOINC_QUERY_BATCHES", 0, 1, name)
    assert toks[0] == "NULL", toks[:4]
    return toks


def test_poll_of_an_unchanged_batch_adds_little_and_rewrites_no_job(make_client, inputs,
                                                                      journal):
    c = make_client()
    submit_ok(c, "steady", jobs_of(inputs, "steady", 2000))
    for _ in range(5):      # the first polls record the server's statuses
        toks = poll(c, "steady")
    assert int(toks[2]) == 2000
    jobs_before = value(journal, "SELECT sum(updated_at) + sum(status_seq) FROM jobs")
    before = used_bytes(journal)
    polls = 40
    for _ in range(polls):
        poll(c, "steady")
    grown = used_bytes(journal) - before
    assert grown / polls <= 2048, "%d bytes per poll" % (grown / polls)
    # the unchanged jobs were not rewritten
    assert value(journal, "SELECT sum(updated_at) + sum(status_seq) FROM jobs") == jobs_before
    # the delivered query results are gone, the rows stay for the audit
    assert value(journal, "SELECT count(*) FROM requests WHERE command ="
                 " 'BOINC_QUERY_BATCHES' AND state = 'delivered' AND result IS NOT NULL") == 0
    assert value(journal, "SELECT count(*) FROM requests WHERE command ="
                 " 'BOINC_QUERY_BATCHES'") == polls + 5


def test_pruner_prunes_old_batches_without_a_restart(make_client, inputs, journal):
    # 0.001 days = 86.4 s, 0.86 s on the test clock; the pruner runs every
    # tenth of it (the 1 s floor: 10 ms here)
    c = make_client(args=("--retention-days", "0.001"))
    submit_ok(c, "old", jobs_of(inputs, "old", 50))
    assert c.call("BOINC_RETIRE_BATCH", "old") == ["NULL"]
    wait_value(journal, "SELECT count(*) FROM batches WHERE name = 'old'", 0, timeout=30)
    assert "journal pruned" in c.gahp.stderr_text()
    submit_ok(c, "recent", jobs_of(inputs, "recent", 20))
    time.sleep(2.0)         # pruned again and again: an unretired batch stays
    assert value(journal, "SELECT count(*) FROM batches") == 1
    assert value(journal, "SELECT count(*) FROM jobs") == 20
    assert value(journal, "SELECT count(*) FROM batch_files") == 1
    # the retired batch's submit went with it; nothing dangles
    assert value(journal, "SELECT count(*) FROM pragma_foreign_key_check") == 0
    assert value(journal, "SELECT count(*) FROM requests WHERE args LIKE 'old %'") == 0
    # free pages were returned
    assert value(journal, "PRAGMA auto_vacuum") == 2
    wait_value(journal, "SELECT freelist_count = 0 FROM pragma_freelist_count", 1, timeout=30)
    assert c.gahp.proc.poll() is None


def test_the_journal_stops_growing_under_steady_polling(make_client, inputs, journal):
    # retention 0.0005 days = 43.2 s, 0.43 s on the test clock
    c = make_client(args=("--retention-days", "0.0005"))
    submit_ok(c, "polled", jobs_of(inputs, "polled", 500))
    sizes = []
    for round_no in range(4):
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            poll(c, "polled")
        sizes.append(used_bytes(journal))
    # past the retention every poll's row replaces a pruned one
    assert sizes[3] <= sizes[1] * 1.2 + 16384, sizes
    assert value(journal, "SELECT count(*) FROM requests") < 400
    assert value(journal, "SELECT count(*) FROM jobs") == 500


def test_a_submit_failed_at_hashing_shows_failed_in_the_audit(client, inputs, journal, tmp_path):
    missing = str(tmp_path / "no such input")
    toks = client.wait(client.submit("nohash", "uppercase", [("nohash#0", [], [(missing, "in")])]))
    assert toks[0] != "NULL"
    row = sqlite3.connect(journal).execute(
        "SELECT step, failed_step, error FROM audit_batches WHERE name = 'nohash'").fetchone()
    assert row[0] == "failed" and row[1] == "new", row
    assert "no such input" in row[2].replace("\\ ", " ")


def test_a_resumed_submit_confirmed_by_a_query_is_answered(make_client, inputs, journal):
    """Killed after create_batch; the restarted server finishes the submit
    in the background; the client (as HTCondor does) queries the batch
    instead of re-issuing the submit: that answers it."""
    jobs = jobs_of(inputs, "bg", 3)
    crashing = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": "submit.created"})
    crashing.submit("bg", "uppercase", jobs)
    assert crashing.gahp.proc.wait(timeout=60) == -signal.SIGKILL
    crashing.gahp.kill()
    c = make_client()
    wait_value(journal, "SELECT state, result FROM requests WHERE command = 'BOINC_SUBMIT'",
               ("completed", "NULL"))
    assert value(journal, "SELECT count(*) FROM audit_undelivered WHERE command ="
                 " 'BOINC_SUBMIT'") == 1
    toks = poll(c, "bg")
    assert int(toks[2]) == 3
    assert value(journal, "SELECT count(*) FROM audit_undelivered WHERE command ="
                 " 'BOINC_SUBMIT'") == 0
    what = value(journal, "SELECT what_became_of_it FROM audit_pending_at_stop"
                 " WHERE command = 'BOINC_SUBMIT'")
    assert "confirmed by a status query in session" in what, what
    # journal status agrees with audit_undelivered (issue 28)
    from ops_helpers import run
    home = os.path.join(os.path.dirname(journal), "ops-home")
    os.mkdir(home)
    out = run(home, "--journal", journal, "journal", "status").stdout.decode()
    undelivered = out.split("results not yet delivered to the client:")[1].split(":\n")[0]
    assert "BOINC_SUBMIT" not in undelivered, out
    c.gahp.kill()
    again = make_client()
    again.call("BOINC_PING")
    this_run = again.gahp.stderr_text().encode()[again.gahp._stderr_start:].decode()
    assert not re.search(r"[1-9][0-9]* results kept for replay", this_run), this_run


MIGRATIONS = os.path.join(os.path.dirname(__file__), "..", "..", "migrations")


def migration_files():
    return sorted(f for f in os.listdir(MIGRATIONS) if f.endswith(".sql"))


def make_journal_at(journal, version):
    files = migration_files()
    db = sqlite3.connect(journal)
    for f in files[:version]:
        with open(os.path.join(MIGRATIONS, f)) as fh:
            db.executescript(fh.read())
    db.execute("PRAGMA user_version = %d" % version)
    db.execute("INSERT INTO sessions (started_at, pid, version) VALUES (1, 1, 'old')")
    db.commit()
    db.close()
    os.chmod(journal, 0o600)
    return len(files)


def test_a_backup_copy_is_made_before_migrating(journal):
    count = make_journal_at(journal, 8)
    g = Gahp(journal)
    assert g.quit() == 0
    bak = journal + ".v8.bak"
    assert stat.S_IMODE(os.stat(bak).st_mode) == 0o600
    db = sqlite3.connect(bak)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 8
    assert db.execute("SELECT version FROM sessions").fetchone()[0] == "old"
    db.close()
    assert value(journal, "PRAGMA user_version") == count
    assert value(journal, "PRAGMA auto_vacuum") == 2


def test_a_new_journal_is_created_in_one_step_with_incremental_vacuum(journal):
    """A new journal gets every migration in one transaction and the
    incremental vacuum from its first page: no line a migration, no
    one-time VACUUM (that was 15 commits and a VACUUM at every first
    start), and the same schema as a migrated one."""
    count = len(migration_files())
    g = Gahp(journal)
    assert g.quit() == 0
    err = g.stderr_text()
    assert "journal %s created with schema version %d" % (journal, count) in err, err
    assert "migrated to schema version" not in err
    assert "incremental vacuum turned on" not in err
    assert value(journal, "PRAGMA auto_vacuum") == 2
    assert value(journal, "PRAGMA user_version") == count
    # a restart creates nothing again
    g = Gahp(journal)
    assert g.quit() == 0
    this_run = g.stderr_text().encode()[g._stderr_start:].decode()
    assert "started (session 2" in this_run, this_run
    assert "created with schema version" not in this_run


def test_a_version_0_file_with_tables_gets_the_one_time_vacuum(journal):
    """A file of schema version 0 that is not empty (a foreign table in
    it) cannot take the vacuum mode before its first page: it is created
    the same way and then gets the one-time VACUUM."""
    db = sqlite3.connect(journal)
    db.execute("CREATE TABLE unrelated (x)")
    db.commit()
    db.close()
    os.chmod(journal, 0o600)
    g = Gahp(journal)
    assert g.quit() == 0
    err = g.stderr_text()
    assert "created with schema version" in err, err
    assert "incremental vacuum turned on" in err
    assert value(journal, "PRAGMA auto_vacuum") == 2


def test_a_newer_journal_is_refused_with_what_to_do(journal):
    count = make_journal_at(journal, 8)
    g = Gahp(journal)
    assert g.quit() == 0
    db = sqlite3.connect(journal)
    db.execute("PRAGMA user_version = %d" % (count + 5))
    db.close()
    g = Gahp(journal, read_banner=False)
    assert g.wait() == 1
    err = g.stderr_text()
    assert "schema version %d" % (count + 5) in err
    assert "a newer boinc_gahp wrote it" in err
    assert journal + ".v8.bak" in err
    assert g.read_raw(timeout=1) in (b"", None)


@pytest.mark.parametrize("version", [-1, -2147483648, 2147483647])
def test_a_user_version_out_of_range_is_refused_with_a_message(journal, version):
    """Issue 29 #5: flipped bytes of a journal left user_version negative
    and the start-up migration loop indexed its table out of bounds
    (SIGSEGV, exit 139).  Any value outside 0..known is a clean exit 1 with
    a message, and the file is left as it was."""
    g = Gahp(journal)
    assert g.quit() == 0
    db = sqlite3.connect(journal)
    db.execute("PRAGMA user_version = %d" % version)
    db.close()
    with open(journal, "rb") as f:
        before = f.read()
    g = Gahp(journal, read_banner=False)
    assert g.wait() == 1
    err = g.stderr_text()
    assert "schema version %d" % version in err, err
    assert ("the file is damaged" if version < 0 else "a newer boinc_gahp wrote it") in err
    assert g.read_raw(timeout=1) in (b"", None)
    with open(journal, "rb") as f:
        assert f.read() == before
