"""Migration 0020 (issue 39: nothing in the process parses its own
output) through the real binary: a journal at schema 19, whose delivered
BLAH job has its end as the text "NULL <exit> <elapsed> <cpu>" in
blah_jobs.fetch_result (as boinc_gahp wrote it before), opens with this
boinc_gahp; the numbers are in the typed columns exit_code, wall_s and
cpu_s, fetch_result is NULL, and BLAH_JOB_STATUS answers the same numbers
it answered from the text."""
import os
import sqlite3
import time

from blah_client import stage, submit_ad

MIGRATIONS = os.path.join(os.path.dirname(__file__), "..", "..", "migrations")


def wait_completed(client, job, emu, timeout=60):
    """Poll the job until it is completed, moving the emulator's clock on."""
    deadline = time.monotonic() + timeout
    while client.status(job)[2] != 4:
        assert time.monotonic() < deadline, client.status(job)
        emu.run(max_seconds=600)
        time.sleep(0.2)


def migration_text(prefix):
    name = [n for n in os.listdir(MIGRATIONS) if n.startswith(prefix)]
    assert len(name) == 1, name
    with open(os.path.join(MIGRATIONS, name[0])) as f:
        return f.read()


def schema_19_columns():
    """blah_jobs's columns as migrations 0001 to 0019 build them."""
    db = sqlite3.connect(":memory:")
    try:
        for n in sorted(os.listdir(MIGRATIONS))[:19]:
            with open(os.path.join(MIGRATIONS, n)) as f:
                db.executescript(f.read())
        return db.execute("PRAGMA table_info(blah_jobs)").fetchall()
    finally:
        db.close()


def back_to_schema_19(journal, job, old_result):
    """The journal as a boinc_gahp of schema 19 leaves it: no typed
    columns (the 0018 audit view, which does not name them), the job's
    end as the text it wrote."""
    view = migration_text("0018_")
    view = view[view.index("CREATE VIEW audit_blah_jobs"):]
    db = sqlite3.connect(journal, timeout=30)
    try:
        with db:
            db.execute("UPDATE blah_jobs SET fetch_result = ?, exit_code = NULL,"
                       " wall_s = NULL, cpu_s = NULL WHERE gahp_id = ?", (old_result, job))
            db.execute("DROP VIEW audit_blah_jobs")
            for col in ("exit_code", "wall_s", "cpu_s"):
                db.execute("ALTER TABLE blah_jobs DROP COLUMN " + col)
            db.executescript(view)
        db.execute("PRAGMA user_version = 19")
        assert db.execute("PRAGMA table_info(blah_jobs)").fetchall() == schema_19_columns()
    finally:
        db.close()


def test_a_schema_19_journal_keeps_its_jobs_numbers(make_client, emu, iwd, journal):
    c = make_client()
    stage(iwd, "in", "x\n")
    rc, err, job = c.submit(submit_ad(iwd, "home_bl_mig.0_1", transfer_input="in",
                                      transfer_output="out",
                                      arguments="--times 125.4 37.6"))
    assert rc == 0, err
    wait_completed(c, job, emu)
    c.stop()
    # numbers other than the emulator's, so that the answer can only come
    # from the converted text; "%ld %.6f %.6f" as the old fetch_one wrote
    back_to_schema_19(journal, job, "NULL 7 61.250000 0.319000")

    c = make_client()
    rc, err, status, ad = c.status(job)
    assert (rc, status) == (0, 4), (rc, err)
    assert (ad["ExitCode"], ad["RemoteWallClockTime"], ad["RemoteUserCpu"]) == \
        ("7", "61.250", "0.319"), ad
    c.stop()
    db = sqlite3.connect(journal, timeout=30)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 20
        row = db.execute("SELECT exit_code, wall_s, cpu_s, fetch_result FROM audit_blah_jobs"
                         " WHERE job_id = ?", (job,)).fetchone()
    finally:
        db.close()
    assert row == (7, 61.25, 0.319, None), row
    assert os.path.exists(str(journal) + ".v19.bak")
