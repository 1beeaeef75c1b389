"""Crash recovery, proven with SIGKILL: boinc_gahp killed at every step
boundary of a submit (BOINC_GAHP_TEST_CRASH_AT) and at random instants,
restarted on the same journal, re-driven the way HTCondor would; the
emulator's counters and state show that nothing was lost or duplicated."""
import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import threading
import time

import pytest

import emu
from gahp_client import Gahp, gahp_binary, gahp_env, split_tokens
from journal_db import rows, value, wait_value

SUBMIT_POINTS = [
    "submit.hashed", "submit.create_sent", "submit.created", "submit.query_sent",
    "submit.query_done", "submit.upload_sent", "submit.uploaded",
    "submit.submit_sent", "submit.submitted",
]


def phys(content, ext=".txt"):
    return hashlib.md5(content).hexdigest() + ext


def batch_jobs(inputs, name, shared, n=3):
    """n jobs: each a distinct input, plus one job on the shared input."""
    jobs = []
    for i in range(n):
        p = inputs("%s_%d.txt" % (name, i), ("%s input %d\n" % (name, i)).encode())
        jobs.append(("%s#%d" % (name, i), [], [(p, "in")]))
    jobs.append(("%s#shared" % name, [], [(shared, "in")]))
    return jobs


def assert_invariants(emulator, batches):
    """Every batch exactly once with exactly its jobs; every input uploaded
    at most once."""
    c = emulator.counters()
    for name, jobs in batches.items():
        assert c["batches_by_name"].get(name) == 1, (name, c["batches_by_name"])
        for job, _, _ in jobs:
            assert c["jobs_by_name"].get(job) == 1, (job, c["jobs_by_name"])
    assert all(v == 1 for v in c["uploads_by_name"].values()), c["uploads_by_name"]
    state = emulator.state()
    for name, jobs in batches.items():
        b = [x for x in state["batches"] if x["name"] == name]
        assert len(b) == 1 and b[0]["njobs"] == len(jobs), b
    return c


def assert_outputs(emulator, batches):
    emulator.run(7200)
    for jobs in batches.values():
        for job, _, ins in jobs:
            with open(ins[0][0], "rb") as f:
                want = f.read().upper()
            r = emulator.get_output(cmd="workunit_file", auth_str=emulator.authenticator,
                                    wu_name=job, file_num=0)
            assert r.status == 200 and r.body == want, (job, r)


def wait_killed(client, timeout=60):
    rc = client.gahp.proc.wait(timeout=timeout)
    assert rc == -signal.SIGKILL, "expected the crash point to SIGKILL, exit %r" % rc
    client.gahp.kill()


@pytest.mark.parametrize("point", SUBMIT_POINTS)
def test_crash_at_submit_step(point, make_client, emulator, inputs, journal):
    shared = inputs("shared.txt", b"shared by every batch\n")
    # a first batch, submitted cleanly, puts the shared file on the server
    first = batch_jobs(inputs, "pre", shared, n=1)
    c0 = make_client()
    assert c0.wait(c0.submit("pre", "uppercase", first)) == ["NULL"]
    c0.gahp.quit()

    jobs = batch_jobs(inputs, "b", shared)
    crashing = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": point})
    crashing.submit("b", "uppercase", jobs)
    wait_killed(crashing)

    # restart: the submit resumes in the background; HTCondor re-issues it
    again = make_client()
    assert again.wait(again.submit("b", "uppercase", jobs)) == ["NULL"]
    c = assert_invariants(emulator, {"pre": first, "b": jobs})
    assert c["uploads_by_name"][phys(b"shared by every batch\n")] == 1
    assert_outputs(emulator, {"pre": first, "b": jobs})

    db = sqlite3.connect(journal)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    step = db.execute("SELECT step FROM audit_batches WHERE name = 'b'").fetchone()[0]
    assert step == "submitted"
    if point != "submit.submitted":
        resumed = db.execute("SELECT count(*) FROM audit_resumed").fetchone()[0]
        assert resumed == 1


def test_an_absence_learned_by_an_earlier_run_is_asked_again(make_client, emulator,
                                                             inputs, tmp_path):
    """Found by the crash-state explorer (make check-crash-states): batch a
    learns that a new input is absent, and its run ends before uploading it
    (there a crash, here uploads that keep failing); meanwhile batch b
    (another GAHP of the same project) uploads that input.  The re-issued a
    must not upload it again (a second upload is fatal on a real server): a
    file phase asks again about what an earlier one found absent."""
    shared = inputs("new.txt", b"new input, two batches\n")
    a_jobs = batch_jobs(inputs, "a", shared, n=1)
    c = make_client()
    emulator.fault("upload_files", "http500", count=1000)
    res = c.wait(c.submit("a", "uppercase", a_jobs))
    assert res != ["NULL"] and "upload_files" in res[0], res
    emulator.clear_faults()
    assert emulator.counters()["uploads_by_name"] == {}

    b_jobs = batch_jobs(inputs, "b", shared, n=1)
    other = make_client(path=str(tmp_path / "other-journal.db"))
    assert other.wait(other.submit("b", "uppercase", b_jobs)) == ["NULL"]
    other.gahp.quit()

    assert c.wait(c.submit("a", "uppercase", a_jobs)) == ["NULL"]
    counts = assert_invariants(emulator, {"a": a_jobs, "b": b_jobs})
    assert counts["uploads_by_name"][phys(b"new input, two batches\n")] == 1
    assert_outputs(emulator, {"a": a_jobs, "b": b_jobs})


def test_resumed_submit_finishes_without_the_client(make_client, emulator, inputs, journal):
    """Killed after create_batch, restarted, and nobody re-issues anything:
    the restarted server resumes the submit on its own and journals its
    outcome; the journal is what is waited on (its result is the last
    thing a submit writes), then the project has the batch once."""
    shared = inputs("shared.txt", b"s\n")
    jobs = batch_jobs(inputs, "bg", shared)
    crashing = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": "submit.created"})
    crashing.submit("bg", "uppercase", jobs)
    wait_killed(crashing)
    make_client()       # restart; nobody re-issues anything
    wait_value(journal, "SELECT state, result FROM requests WHERE command = 'BOINC_SUBMIT'",
               ("completed", "NULL"))
    assert value(journal, "SELECT count(*) FROM audit_resumed") == 1
    assert value(journal, "SELECT step FROM audit_batches WHERE name = 'bg'") == "submitted"
    assert_invariants(emulator, {"bg": jobs})


def test_random_sigkills_lose_and_duplicate_nothing(make_client, emulator, inputs, journal):
    rng = random.Random(20261121)
    shared = inputs("shared.txt", b"shared input for the random crash test\n")
    batches = {"r%d" % i: batch_jobs(inputs, "r%d" % i, shared, n=4) for i in range(6)}
    for round_no in range(8):
        c = make_client()
        for name, jobs in batches.items():
            c.submit(name, "uppercase", jobs)
        c.start("BOINC_QUERY_BATCHES", 0, 1, "r0")
        time.sleep(rng.uniform(0.0, 0.25))
        c.gahp.proc.send_signal(signal.SIGKILL)
        c.gahp.proc.wait()
        c.gahp.kill()
    final = make_client()
    rids = {name: final.submit(name, "uppercase", jobs) for name, jobs in batches.items()}
    for name, rid in rids.items():
        assert final.wait(rid) == ["NULL"], name
    assert_invariants(emulator, batches)
    assert_outputs(emulator, batches)
    db = sqlite3.connect(journal)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # every accepted request of every run was answered, replayed or closed
    left = db.execute("SELECT count(*) FROM audit_undelivered WHERE session_id <"
                      " (SELECT max(id) FROM sessions)").fetchone()[0]
    assert left == 0


def test_replay_of_an_undelivered_result_to_the_reissue(make_client, emulator, inputs, journal):
    """A submit's result journaled but never delivered (SIGKILL before
    RESULTS): the next run answers the re-issue from the journal, without a
    single RPC, and records that the first run's request was answered
    through the re-issue."""
    a = inputs("a.txt", b"replay\n")
    jobs = [("rp#0", [], [(a, "in")])]
    c1 = make_client()
    first = c1.submit("rp", "uppercase", jobs)
    # wait until the result is journaled, then die before RESULTS delivers it
    wait_value(journal, "SELECT count(*) FROM requests WHERE state = 'completed'", 1)
    c1.gahp.proc.send_signal(signal.SIGKILL)
    c1.gahp.proc.wait()
    before = emulator.counters()
    c2 = make_client()
    c2.ids = iter(range(41, 100))       # the re-issue under another id
    again = c2.submit("rp", "uppercase", jobs)
    assert c2.wait(again) == ["NULL"]
    assert emulator.counters() == before
    # the first run's request, delivered through the second run's re-issue
    s1, s2 = [sid for (sid,) in rows(journal, "SELECT id FROM sessions ORDER BY id")]
    assert rows(journal, "SELECT old.session_id, old.client_id, old.state,"
                         " new.session_id, new.client_id"
                         " FROM requests old JOIN requests new ON new.id = old.replayed_by"
                ) == [(s1, first, "delivered", s2, again)]


def test_a_stored_result_is_not_replayed_to_another_project(make_client, emulator, inputs,
                                                            journal, tmp_path):
    """Issue 42: a result journaled but never delivered answers only the
    same command to the same project.  The next run re-issues the same
    submit (same id, same text) to project B: B gets its own batch, and
    project A's stored result stays undelivered, replayed by nothing."""
    a = inputs("a.txt", b"replay to the other project\n")
    jobs = [("rx#0", [], [(a, "in")])]
    c1 = make_client()
    first = c1.submit("rx", "uppercase", jobs)
    wait_value(journal, "SELECT count(*) FROM requests WHERE state = 'completed'", 1)
    c1.gahp.proc.send_signal(signal.SIGKILL)
    c1.gahp.proc.wait()
    before = emulator.counters()
    other = emu.Emulator(tmp_path / "emu_b", hosts=2)
    other.start()
    try:
        c2 = make_client(emu=other)
        c2.ids = iter(range(first, 100))    # the very same request line
        again = c2.submit("rx", "uppercase", jobs)
        assert again == first
        assert c2.wait(again) == ["NULL"]
        assert other.counters()["rpc"]["create_batch"] == 1
    finally:
        other.stop()
    assert emulator.counters() == before
    assert rows(journal, "SELECT count(*) FROM requests WHERE replayed_by IS NOT NULL") == [(0,)]
    s1 = rows(journal, "SELECT min(id) FROM sessions")[0][0]
    assert rows(journal, "SELECT state FROM requests WHERE session_id = ? AND client_id = ?",
                s1, first) == [("completed",)]


@pytest.mark.parametrize("when", ["after_the_resumed_run", "during_the_resumed_run"])
def test_resumed_submit_answered_through_a_reordered_reissue_is_linked(
        when, make_client, emulator, inputs, journal):
    """Issue 28, point 5: a submit killed mid-way, resumed by the next run,
    and answered through the client's re-issue with its jobs in another
    order (HTCondor 9.0's re-issue, doc/htcondor.md): the first run's
    request gets replayed_by = the re-issue, the "Replays" query of
    doc/auditing.md shows it, and neither audit_undelivered nor journal
    status lists it as not delivered.  The re-issue's text differs, so
    only the batch's job-set identity can link the two."""
    shared = inputs("shared.txt", b"s\n")
    jobs = batch_jobs(inputs, "ro", shared)
    crashing = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": "submit.created"})
    first = crashing.submit("ro", "uppercase", jobs)
    wait_killed(crashing)
    if when == "during_the_resumed_run":
        # the resumed run waits in submit_batch while the re-issue arrives
        # (it attaches to that run, or finds its outcome: linked either way)
        emulator.fault("submit_batch", "delay", count=1, delay_ms=2000)
    c2 = make_client()
    if when == "after_the_resumed_run":
        wait_value(journal, "SELECT state, result FROM requests WHERE command = 'BOINC_SUBMIT'",
                   ("completed", "NULL"))
    c2.ids = iter(range(41, 100))       # the re-issue under another id
    again = c2.submit("ro", "uppercase", list(reversed(jobs)))
    assert c2.wait(again) == ["NULL"]
    s1, s2 = [sid for (sid,) in rows(journal, "SELECT id FROM sessions ORDER BY id")]
    # doc/auditing.md, "Replays"
    replays = rows(journal, "SELECT old.id AS stored, old.session_id, new.id AS reissued,"
                            " new.session_id, old.command, old.result"
                            " FROM requests old JOIN requests new ON new.id = old.replayed_by")
    assert [(r[1], r[3], r[4]) for r in replays] == [(s1, s2, "BOINC_SUBMIT")], replays
    assert rows(journal, "SELECT client_id FROM requests WHERE id = ?", replays[0][2]) == \
        [(again,)]
    assert rows(journal, "SELECT client_id FROM requests WHERE id = ?", replays[0][0]) == \
        [(first,)]
    assert value(journal, "SELECT count(*) FROM audit_undelivered WHERE session_id < ?",
                 s2) == 0
    # the re-issue's own result is delivered (RESULTS above), so status
    # lists no submit at all
    wait_value(journal, "SELECT state FROM requests WHERE id = ?", "delivered", replays[0][2])
    p = subprocess.run([gahp_binary(), "--journal", journal, "journal", "status"],
                       capture_output=True, env=gahp_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    undelivered = p.stdout.decode().split("results not yet delivered", 1)[1]
    undelivered = undelivered.split("\nbatches by state", 1)[0]
    assert "BOINC_SUBMIT" not in undelivered, p.stdout.decode()
    assert_invariants(emulator, {"ro": jobs})


def test_requeue_option_delivers_under_the_original_ids(make_client, journal):
    c1 = make_client()
    for i in range(3):
        c1.start("BOINC_PING")
    wait_value(journal, "SELECT count(*) FROM requests WHERE state = 'completed'", 3)
    c1.gahp.proc.send_signal(signal.SIGKILL)
    c1.gahp.proc.wait()
    c2 = make_client(args=("--retry-budget", "5", "--requeue-undelivered"))
    # an id that an earlier run's result will answer is pending until then
    assert c2.gahp.command("BOINC_PING 2") == "E"
    got = sorted(split_tokens(l)[0] for l in c2.gahp.wait_results(3))
    assert got == ["1", "2", "3"]
    assert c2.gahp.command("BOINC_PING 2") == "S"


def test_sigkill_during_journal_writes_keeps_every_acknowledged_request(journal):
    """Write-ahead under SIGKILL: a burst of 20,000 pings, and the server is
    killed the instant the first byte of its first S arrives, while it
    commits the next accepts.  Every S it wrote before it died has its
    request committed in the journal; the journal opens clean for the next
    run, which is killed the same way (three runs on one journal).  The
    server is read raw (no reader thread in between), so that the kill
    follows the first write at once."""
    n = 20000
    burst = b"".join(b"BOINC_PING %d\n" % i for i in range(1, n + 1))
    for attempt in range(3):
        with open(journal + ".stderr", "ab") as err:
            proc = subprocess.Popen([gahp_binary(), "--journal", journal],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=err, env=gahp_env())
        try:
            out = proc.stdout.fileno()
            banner = b""
            while not banner.endswith(b"\n"):
                banner += os.read(out, 1)
            assert banner.startswith(b"$GahpVersion"), banner

            def feed():
                try:
                    proc.stdin.write(burst)
                    proc.stdin.flush()
                except OSError:
                    pass                # killed before it read everything
            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            first = os.read(out, 1)     # blocks until the first S is written
            proc.kill()
            proc.wait()
            rest = b""
            while True:
                chunk = os.read(out, 1 << 16)
                if not chunk:
                    break
                rest += chunk
            writer.join(30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            try:
                proc.stdin.close()
            except OSError:
                pass
        lines = (first + rest).split(b"\n")
        assert lines[-1] == b"" and set(lines[:-1]) == {b"S"}, (first + rest)[:200]
        acked = len(lines) - 1          # S lines 1..acked answer pings 1..acked
        committed = {cid for (cid,) in rows(
            journal, "SELECT client_id FROM requests WHERE session_id ="
                     " (SELECT max(id) FROM sessions)")}
        missing = set(range(1, acked + 1)) - committed
        assert not missing, "run %d: %d of %d acknowledged pings not in the journal, e.g. %s" \
            % (attempt, len(missing), acked, sorted(missing)[:5])
        assert value(journal, "PRAGMA integrity_check") == "ok"
    g = Gahp(journal)
    assert g.command("VERSION").startswith("S $GahpVersion")
    assert g.quit() == 0


def _mount_tmpfs(path, opts):
    os.makedirs(path, exist_ok=True)
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)],
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip("cannot mount a tmpfs here (needs root): %s" % e)


def _umount(path):
    subprocess.run(["umount", str(path)], check=False, capture_output=True)


def _start_fails(journal_path):
    return subprocess.run([gahp_binary(), "--journal", str(journal_path)], input=b"",
                          capture_output=True, timeout=60, env=gahp_env())


def test_read_only_journal_directory_fails_at_start(tmp_path):
    mnt = tmp_path / "ro"
    _mount_tmpfs(mnt, "ro,size=1m")
    try:
        r = _start_fails(mnt / "journal.db")
        assert r.returncode != 0
        assert b"Read-only file system" in r.stderr, r.stderr
        assert r.stdout == b""
    finally:
        _umount(mnt)


def test_full_disk_at_start_fails_clearly(tmp_path):
    mnt = tmp_path / "full"
    _mount_tmpfs(mnt, "size=64k")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        r = _start_fails(mnt / "journal.db")
        assert r.returncode != 0
        assert r.stdout == b""
        assert r.stderr.strip(), "no message"
    finally:
        _umount(mnt)


def test_journal_of_an_older_schema_is_migrated_on_open(journal):
    repo = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(repo, "migrations", "0001_core.sql")) as f:
        v1 = f.read()
    db = sqlite3.connect(journal)
    db.executescript(v1)
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO sessions (started_at, pid, version) VALUES (1, 1, 'old')")
    db.execute("INSERT INTO projects (url, authenticator, first_used_at)"
               " VALUES ('http://127.0.0.1:9/p/', 'secret', 1)")
    db.execute("INSERT INTO requests (session_id, client_id, command, args, project_id,"
               " state, accepted_at, completed_at, result)"
               " VALUES (1, 7, 'BOINC_PING', '', 1, 'completed', 1, 2, 'NULL')")
    # changed just now: an old failed batch would be pruned at start-up
    now = time.time()
    db.execute("INSERT INTO batches (project_id, name, app, step, failed_step, error,"
               " spec_md5, njobs, created_at, updated_at)"
               " VALUES (1, 'old', 'a', 'failed', 'submit_sent', 'e', 'x', 1, ?, ?)",
               (now, now))
    db.commit()
    db.close()
    os.chmod(journal, 0o600)
    g = Gahp(journal)
    assert g.quit() == 0
    db = sqlite3.connect(journal)
    migrations = [f for f in os.listdir(os.path.join(repo, "migrations")) if f.endswith(".sql")]
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(migrations)
    # a batch's step name became its state number (migration 0003)
    assert db.execute("SELECT state, resume_state FROM batches").fetchone() == (8, 6)
    assert db.execute("SELECT step, failed_step FROM audit_batches").fetchone() == (
        "failed", "submit_sent")
    assert db.execute("SELECT client_id, result FROM requests").fetchone() == (7, "NULL")
    # the audit views exist and never show the authenticator
    rows = db.execute("SELECT * FROM audit_pending_at_stop").fetchall()
    assert rows and all("secret" not in repr(r) for r in rows)


def test_journal_at_migration_0003_gets_the_upload_limits_table(journal):
    """Lane numbers leave gaps (0004 comes later): a journal built by
    0001..0003 gets the next migration file (0005, upload_limits), and the
    version counts the files applied."""
    repo = os.path.join(os.path.dirname(__file__), "..", "..")
    files = sorted(f for f in os.listdir(os.path.join(repo, "migrations")) if f.endswith(".sql"))
    upto = [f for f in files if f[:4] <= "0003"]
    assert len(upto) == 3 and any(f.startswith("0005") for f in files)
    db = sqlite3.connect(journal)
    for f in upto:
        with open(os.path.join(repo, "migrations", f)) as fh:
            db.executescript(fh.read())
    db.execute("PRAGMA user_version = 3")
    db.commit()
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'upload_limits'"
                      ).fetchone() == (0,)
    db.close()
    os.chmod(journal, 0o600)
    g = Gahp(journal)
    assert g.quit() == 0
    db = sqlite3.connect(journal)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(files)
    assert db.execute("SELECT count(*) FROM upload_limits").fetchone() == (0,)


@pytest.mark.parametrize("point", ["fetch.downloaded", "fetch.renamed"])
def test_fetch_interrupted_by_a_crash_completes_when_reissued(point, make_client, emulator,
                                                             inputs, tmp_path):
    """SIGKILL after the outputs were downloaded to temporary files, or after
    the first of two was renamed into place: no final name ever holds a
    partial file, and the re-issued fetch completes."""
    a = inputs("a.txt", b"left side\n")
    b = inputs("b.txt", b"right side\n")
    c = make_client()
    assert c.call("BOINC_SUBMIT", "fx", "twoinout", 1, "fx#0", 0, 2, a, "a", b, "b") == ["NULL"]
    emulator.run(3600)
    want = {}
    for num, name in enumerate(["sum", "log"]):
        r = emulator.get_output(cmd="workunit_file", auth_str=emulator.authenticator,
                                wu_name="fx#0", file_num=num)
        assert r.status == 200
        want[name] = r.body
    c.gahp.quit()

    out = tmp_path / "fetch out"
    out.mkdir()
    crashing = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": point})
    crashing.start("BOINC_FETCH_OUTPUT", "fx#0", str(out), "err.txt", "ALL", 0)
    wait_killed(crashing)
    finals = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert finals == ([] if point == "fetch.downloaded" else ["sum"]), finals
    for name in finals:
        assert (out / name).read_bytes() == want[name]

    again = make_client()
    res = again.call("BOINC_FETCH_OUTPUT", "fx#0", str(out), "err.txt", "ALL", 0)
    assert res[0] == "NULL" and len(res) == 4, res
    for name, data in want.items():
        assert (out / name).read_bytes() == data


@pytest.mark.parametrize("requeue", [True, False])
def test_results_the_client_never_saw_come_back_after_a_crash(requeue, make_client, journal):
    """Issue 29 #3: a result marked delivered before its RESULTS reply is
    written is lost if the server dies in between.  Killed after RESULTS
    took three ping results and before it wrote them (crash point
    results.taken): with --requeue-undelivered every result comes back
    exactly once under its original id without a re-issue; without it,
    the journal still holds them as not delivered, so a re-issue is
    answered from them."""
    c1 = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": "results.taken"})
    rids = [c1.start("BOINC_PING") for _ in range(3)]
    wait_value(journal, "SELECT count(*) FROM requests WHERE state = 'completed'", 3)
    c1.gahp.send("RESULTS")
    assert c1.gahp.proc.wait(timeout=60) == -signal.SIGKILL
    c1.gahp.kill()
    assert value(journal, "SELECT count(*) FROM requests WHERE state = 'delivered'") == 0
    if requeue:
        c2 = make_client(args=("--retry-budget", "5", "--requeue-undelivered"))
        got = sorted(split_tokens(l)[0] for l in c2.gahp.wait_results(3))
        assert got == [str(r) for r in rids]
        assert c2.gahp.results() == []
    else:
        c2 = make_client()
        for r in rids:
            assert c2.gahp.command("BOINC_PING %d" % r) == "S"
        got = sorted(split_tokens(l)[0] for l in c2.gahp.wait_results(3))
        assert got == [str(r) for r in rids]
