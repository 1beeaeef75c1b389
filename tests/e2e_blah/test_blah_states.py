"""The BLAH job state machine through the real binary (doc/blah-core.md,
"The BLAH job states"): one job walked from gathering to completed, one
cancelled, one held at close and released.  At each step the journal is
read with Python's sqlite3 and the state derived from the same columns
src/journal/blah_job_state.c reads (blah_job_state_of, written again
here); the JobStatus BLAH_JOB_STATUS answers must be that state's.  The
existing suites cover the commands' answers; this one covers that the
answer and the journal's state agree."""
import sqlite3
import time

from blah_client import submit_ad

# the states a job goes through on the way to completed, in order
PATH = ["gathering", "closed", "submitting", "submitted", "running", "ended", "fetching",
        "completed"]
STATUS = {"gathering": 1, "closed": 1, "submitting": 1, "submit_wait": 1, "splitting": 1,
          "submitted": 1, "running": 2, "ended": 2, "fetching": 2, "completed": 4,
          "held_alone": 5, "held_failed": 5, "held_submit": 5,
          "cancelled_abort_owed": 3, "cancelled_abort_sent": 3}
# the columns of journal_blah.c's BLAH_JOB_SQL that the state is derived from
FACTS = ("SELECT g.state, coalesce(b.state, -1), coalesce(b.may_pass, 0),"
         " b.bad_input IS NOT NULL, jb.status, bj.cancelled_at IS NOT NULL, bj.abort_state,"
         " bj.held_at IS NOT NULL, bj.fetched_at IS NOT NULL,"
         " bj.fetch_started_at IS NOT NULL"
         " FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id"
         " LEFT JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name"
         " LEFT JOIN jobs jb ON jb.batch_id = b.id AND jb.name = bj.gahp_id"
         " WHERE bj.gahp_id = ? ORDER BY b.id DESC LIMIT 1")


def derive(row):
    """blah_job_state_of, in the same order."""
    group, batch, may_pass, bad_input, boinc, cancelled, abort, held, fetched, started = row
    if cancelled:
        return "cancelled_abort_owed" if abort == 1 else "cancelled_abort_sent"
    if held:
        return "held_alone"
    if fetched:
        return "held_failed" if boinc == "ERROR" else "completed"
    if group == "open":
        return "gathering"
    if batch < 0:
        return "closed"
    if batch == 8:
        return "submit_wait" if may_pass else "splitting" if bad_input else "held_submit"
    if batch == 0 and bad_input:
        return "splitting"
    if batch != 7:
        return "submitting"
    if boinc in ("DONE", "ERROR"):
        return "fetching" if started else "ended"
    return "running" if boinc == "IN_PROGRESS" else "submitted"


def state(journal, job):
    db = sqlite3.connect("file:%s?mode=ro" % journal, uri=True, timeout=10)
    try:
        row = db.execute(FACTS, (job,)).fetchone()
    finally:
        db.close()
    assert row is not None, job
    return derive(row)


def checked_status(client, journal, job):
    """The status, checked against the states read just before and just
    after it (the scheduler may move the job in between): the state after."""
    before = state(journal, job)
    rc, err, status, _ = client.status(job)
    after = state(journal, job)
    assert (rc, err) == (0, "NULL")
    between = {before, after}
    if before in PATH and after in PATH:
        between = set(PATH[PATH.index(before):PATH.index(after) + 1])
    assert status in {STATUS[s] for s in between}, (job, before, status, after)
    return after


def one_job(client, iwd, name, window_input=True):
    (iwd / ("in." + name)).write_text("input of %s\n" % name)
    ad = submit_ad(iwd, "home_bl_127.0.0.1_9618_schedd_%s.0_1795751136" % name,
                   transfer_input="in." + name, transfer_output="out",
                   remaps="out = out." + name, out="out.txt." + name, err="err.txt." + name)
    rc, err, job = client.submit(ad)
    assert rc == 0, err
    return ad, job


def walk(client, emu, journal, job, until, timeout=90, advance=True):
    """The states seen until one of until; each status checked.  With
    advance, the emulator's clock moves on between statuses (its jobs
    run and end); without, a job on the server stays IN_PROGRESS."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        s = checked_status(client, journal, job)
        if not seen or seen[-1] != s:
            seen.append(s)
        if s in until:
            return seen
        assert time.monotonic() < deadline, seen
        if advance:
            emu.run(max_seconds=600)
        time.sleep(0.1)


ARGS = ("--blah-batch-window", "1.5", "--blah-status-interval", "0", "--retry-budget", "5")


def test_a_job_walks_from_gathering_to_completed(make_client, emu, iwd, journal):
    c = make_client(args=ARGS)
    _, job = one_job(c, iwd, "walk")
    seen = walk(c, emu, journal, job, {"completed"})
    assert seen[0] == "gathering" and seen[-1] == "completed", seen
    # only forward along the path, never back
    assert all(s in PATH for s in seen), seen
    assert [PATH.index(s) for s in seen] == sorted(PATH.index(s) for s in seen), seen


def test_a_cancelled_job_owes_its_abort_until_sent(make_client, emu, iwd, journal):
    c = make_client(args=ARGS)
    _, job = one_job(c, iwd, "cancel")
    # the emulator's clock stands still: the job cannot end (and be
    # delivered) before the cancel, however slowly this machine runs
    walk(c, emu, journal, job, {"submitted", "running"}, advance=False)
    assert c.cancel(job) == (0, "NULL")
    assert state(journal, job) in ("cancelled_abort_owed", "cancelled_abort_sent")
    assert walk(c, emu, journal, job, {"cancelled_abort_sent"})[-1] == "cancelled_abort_sent"
    # a second cancel changes nothing
    assert c.cancel(job) == (0, "NULL")
    assert checked_status(c, journal, job) == "cancelled_abort_sent"


def test_a_job_held_at_close_is_released_as_a_new_job(make_client, emu, iwd, journal):
    c = make_client(args=ARGS)
    ad, job = one_job(c, iwd, "hold")
    assert state(journal, job) == "gathering"
    (iwd / "in.hold").unlink()          # gone before its group closes
    assert walk(c, emu, journal, job, {"held_alone"})[-1] == "held_alone"
    # condor_release: the grid manager cancels the held job, then submits
    # its JobDirectory again: a new job, gathering
    assert c.cancel(job) == (0, "NULL")
    assert walk(c, emu, journal, job, {"cancelled_abort_sent"})[-1] == "cancelled_abort_sent"
    (iwd / "in.hold").write_text("input of hold, again\n")
    rc, err, again = c.submit(ad)
    assert rc == 0, err
    assert again != job
    assert walk(c, emu, journal, again, {"completed"})[-1] == "completed"
