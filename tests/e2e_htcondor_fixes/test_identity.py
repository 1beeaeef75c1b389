"""Issue 8 point 1: a re-issued BOINC_SUBMIT is identified by its batch
name, app and SET of jobs (name, arguments, inputs); the grid manager's
arbitrary job order and the trailing fields of whichever job comes first
do not count.  Proven after a SIGKILL in the middle of the submit, on the
emulator's counters (no batch or job twice)."""
import random
import signal
import sqlite3

from htc import assert_once, make_jobs


TRAILING_A = ("1e9", "1e10", "NULL", "NULL", "3600", "NULL")
TRAILING_B = ("NULL", "NULL", "1e8", "NULL", "NULL", "NULL")


def killed_mid_submit(make_gm, inputs, point, batch):
    jobs = make_jobs(inputs, batch)
    gm = make_gm(env={"BOINC_GAHP_TEST_CRASH_AT": point})
    gm.submit(batch, "uppercase", jobs, trailing=TRAILING_A, shuffle=random.Random(1))
    assert gm.gahp.proc.wait(timeout=60) == -signal.SIGKILL
    gm.gahp.kill()
    return jobs


def test_shuffled_resubmit_after_kill_is_bound(make_gm, emulator, inputs):
    batch = "condor#schedd#uppercase#1700000001"
    jobs = killed_mid_submit(make_gm, inputs, "submit.uploaded", batch)
    gm = make_gm()                          # a new grid manager: ids from 2 again
    rid = gm.submit(batch, "uppercase", jobs, trailing=TRAILING_B, shuffle=random.Random(7))
    assert gm.wait(rid) == ["NULL"]
    assert_once(emulator, batch, jobs)
    # and once more, after it finished, in yet another order: answered, nothing new
    rid = gm.submit(batch, "uppercase", jobs, trailing=TRAILING_A, shuffle=random.Random(99))
    assert gm.wait(rid) == ["NULL"]
    assert_once(emulator, batch, jobs)


def test_resubmit_while_resumed_in_background_is_bound(make_gm, emulator, inputs):
    """The restarted GAHP resumes the submit itself; the re-issue with the
    jobs in another order attaches to that run instead of being refused."""
    batch = "condor#schedd#uppercase#1700000002"
    jobs = killed_mid_submit(make_gm, inputs, "submit.create_sent", batch)
    emulator.fault("submit_batch", "delay", count=1, delay_ms=1500)
    gm = make_gm()
    rid = gm.submit(batch, "uppercase", jobs, trailing=TRAILING_B, shuffle=random.Random(3))
    assert gm.wait(rid) == ["NULL"]
    assert_once(emulator, batch, jobs)


def test_different_job_set_is_refused(make_gm, emulator, inputs):
    batch = "condor#schedd#uppercase#1700000003"
    jobs = killed_mid_submit(make_gm, inputs, "submit.uploaded", batch)
    gm = make_gm()
    changed = list(jobs)
    name, args, ins = changed[2]
    changed[2] = (name, args + ["extra"], ins)
    res = gm.wait(gm.submit(batch, "uppercase", changed, shuffle=random.Random(5)))
    assert len(res) == 1 and res[0].startswith("submit refused"), res
    # one job fewer is a different set too
    res = gm.wait(gm.submit(batch, "uppercase", jobs[:-1]))
    assert res[0].startswith("submit refused"), res
    # the journaled set itself still binds and completes, once
    assert gm.wait(gm.submit(batch, "uppercase", jobs, shuffle=random.Random(8))) == ["NULL"]
    assert_once(emulator, batch, jobs)


def test_journal_from_before_fingerprints_binds(make_gm, emulator, inputs, journal):
    """A batch journaled before migration 0004 has no fingerprint: it is
    computed from its request's arguments on first use."""
    batch = "condor#schedd#uppercase#1700000004"
    jobs = killed_mid_submit(make_gm, inputs, "submit.query_done", batch)
    db = sqlite3.connect(journal, timeout=30)
    with db:
        db.execute("UPDATE batches SET job_set_md5 = NULL")
    db.close()
    gm = make_gm()
    rid = gm.submit(batch, "uppercase", jobs, trailing=TRAILING_B, shuffle=random.Random(11))
    assert gm.wait(rid) == ["NULL"]
    assert_once(emulator, batch, jobs)
    db = sqlite3.connect(journal, timeout=30)
    assert db.execute("SELECT job_set_md5 IS NOT NULL FROM batches").fetchone() == (1,)
    db.close()
    # an outside connection closing must not take the server down
    assert gm.call("BOINC_PING") == ["NULL"]
    assert gm.gahp.proc.poll() is None
