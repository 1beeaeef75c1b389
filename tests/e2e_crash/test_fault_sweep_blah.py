"""The journal and allocation fault sweeps over the BLAH round trip (issue
39): HTCondor 10.0-25.x's grid manager submits one job with
BLAH_JOB_SUBMIT and polls BLAH_JOB_STATUS until it completes, while the
N-th sqlite3_step of the server fails (BOINC_GAHP_TEST_FAULT_AT=step:N,
SQLITE_FULL or SQLITE_IOERR) or the N-th allocation of SQLite or libcurl
does (alloc.<library>:N).  The step sweep covers start-up, the accept
path, the group's journal rows, the background scheduler's submit,
refresh, fetch and retire, and the status answers from the journal.

Each faulted run must end cleanly: every request answered S or F, every
accepted one answered with the token count the grid manager asserts,
the server ending with 0 or 1 (never a crash or a hang), the journal
passing its integrity checks.  Then a server without the fault, driven
the way the grid manager re-drives a restarted GAHP (the submit sent
again with the same JobDirectory, statuses polled), delivers the job:
status 4, its output whole in Iwd, one BOINC job on the project (never a
second one for the same JobDirectory).  Real binary, real pipes, the
emulator on 127.0.0.1, real SQLite files."""
import concurrent.futures
import os
import re
import shutil
import sqlite3
import time

from blah_client import RESULT_TOKENS, parse_status_ad, submit_ad, write_config
from cmds_helpers import Emu
from gahp_client import Gahp, escape, split_tokens

# The grid manager's settings of the suite: a short window, every pass
# of the scheduler at once.
ARGS = ["--blah-batch-window", "0.2", "--blah-status-interval", "0", "--retry-budget", "2",
        "--http-timeout", "3"]
PARALLEL = 4
STEP_CODES = ["full", "ioerr"]


class BlahRun:
    """One server on a copy of the base journal (fault armed when given),
    its own emulator and Iwd, driven as the 25.0 grid manager drives it."""

    def __init__(self, root, base, tag, env=None):
        self.dir = root / tag
        self.dir.mkdir()
        self.iwd = self.dir / "iwd"
        self.iwd.mkdir()
        (self.iwd / "in").write_bytes(b"input of %s\n" % tag.encode())
        self.journal = str(self.dir / "journal.db")
        shutil.copyfile(base, self.journal)
        os.chmod(self.journal, 0o600)
        self.emu = Emu(self.dir / "emu")
        self.config = write_config(self.dir / "boinc_gahp.conf", self.emu)
        self.env = dict(env or {})
        self.ad = submit_ad(self.iwd, "home_bl_sweep_" + tag, transfer_input="in",
                            transfer_output="out")
        self.ids = iter(range(2, 100000))
        self.job = None
        self.g = None
        self.last = None

    def start(self, env=None):
        e = {"BOINC_GAHP_CONFIG": str(self.config)}
        e.update(env or {})
        self.g = Gahp(self.journal, args=ARGS, env=e, read_banner=False)
        self.banner = self.g.read_raw(timeout=30)
        return self.banner is not None and self.banner.startswith("$GahpVersion")

    def banner_ok(self):
        return self.banner is not None and self.banner.startswith("$GahpVersion")

    def request(self, command, *args, timeout=30):
        """The tokens after the id, or None when the server refused (F) or
        is gone; asserts the grid manager's token count."""
        rid = next(self.ids)
        line = " ".join([command, str(rid)] + [escape(str(a)) for a in args])
        reply = self.g.command(line)
        if reply != "S":
            assert reply in ("F", None) or reply.startswith("E"), (line[:80], reply)
            return None
        deadline = time.monotonic() + timeout
        while True:
            try:
                lines = self.g.wait_results(1, timeout=max(0.1, deadline - time.monotonic()))
            except (TimeoutError, EOFError, BrokenPipeError):
                return None
            for ln in lines:
                toks = split_tokens(ln)
                if int(toks[0]) == rid:
                    assert len(toks) - 1 == RESULT_TOKENS[command], ln
                    return toks[1:]

    def set_up(self):
        reply = self.g.command("COMMANDS")
        if reply is None or not reply.startswith("S "):
            return False
        if self.g.command("ASYNC_MODE_ON") != "S":
            return False
        self.g.async_mode = True
        return self.request("BLAH_PING", "boinc") is not None

    def submit(self):
        r = self.request("BLAH_JOB_SUBMIT", self.ad)
        if r is not None and r[0] == "0":
            self.job = r[2]
        return r

    def poll(self, seconds):
        """Statuses until 4 (the status ad), an error or the time is up
        (False; the last answer in self.last)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.g.proc.poll() is None:
            r = self.request("BLAH_JOB_STATUS", self.job)
            self.last = r
            if r is None or r[0] != "0":
                return False
            if int(r[2]) == 4:
                return parse_status_ad(r[3])
            self.emu.run(max_seconds=600)
            time.sleep(0.1)
        return False

    def end(self):
        # a server that stopped at start-up (no banner) has closed its
        # output: nothing to QUIT, only its exit to wait for
        if self.banner_ok() and self.g.proc.poll() is None:
            try:
                self.g.command("QUIT")
            except TimeoutError:
                pass    # it stopped meanwhile (a fault): its exit says how
        rc = self.g.wait(timeout=60)
        log = self.g.stderr_text()
        assert rc in (0, 1), "server ended with %r:\n%s" % (rc, log[-3000:])
        return log

    def stop(self):
        if self.g is not None:
            self.g.kill()
        self.emu.stop()


def check_journal(path):
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        db.close()


def interesting(log):
    """The lines of a log that say what went wrong."""
    return "\n".join(ln for ln in log.splitlines()
                     if re.search(r"\[(warn|error)\]|test fault", ln))[-4000:]


def redrive(run, first_log):
    """No fault: the submit sent again (same JobDirectory), statuses until
    the job completes; its output whole, one BOINC job on the project."""
    assert run.start(), run.g.stderr_text()[-3000:]
    try:
        assert run.set_up()
        r = run.submit()
        assert r is not None and r[0] == "0", r
        ad = run.poll(90)
        assert ad, "%s: job %s never completed after the restart (last status %r);" \
            " the faulted run:\n%s\nthe restart:\n%s" % (
                run.dir.name, run.job, run.last, interesting(first_log),
                interesting(run.g.stderr_text()))
        assert ad["ExitCode"] == "0", ad
        assert (run.iwd / "out").read_bytes() == (run.iwd / "in").read_bytes().upper()
        jobs = run.emu.counters()["jobs_by_name"]
        assert sorted(jobs.values()) == [1], jobs
        run.end()
    finally:
        run.g.kill()


def one_run(root, base, tag, fault, code=None):
    """The round trip under fault: (reached, None), or (True, why) when a
    check failed (the sweep goes on and reports every such run)."""
    try:
        return checked_run(root, base, tag, fault, code), None
    except (AssertionError, TimeoutError) as e:
        log = ""
        path = root / tag / "journal.db.stderr"
        if path.exists():
            text = path.read_text(errors="replace")
            log = interesting(text) + "\n--- its last lines:\n" + "\n".join(
                text.splitlines()[-25:])
        return True, "%s (%s): %s: %s\n%s" % (tag, fault, type(e).__name__, str(e)[:2500],
                                             log[-5000:])


def checked_run(root, base, tag, fault, code=None):
    """The round trip under fault; True when the fault was reached."""
    env = {"BOINC_GAHP_TEST_FAULT_AT": fault}
    if code is not None:
        env["BOINC_GAHP_TEST_STEP_ERROR"] = code
    run = BlahRun(root, base, tag, env)
    point = fault.split(":")[0].split(".")[0]
    try:
        if run.start(env) and run.set_up():
            if run.submit() is not None and run.job is not None:
                run.poll(8)
        log = run.end()
        reached = "test fault " + point in log
        if not run.banner_ok():
            # a fault at start-up: an exit 1 with a message, never a crash
            assert run.g.proc.returncode == 1, log[-2000:]
        check_journal(run.journal)
        redrive(run, log)
        return reached
    finally:
        run.stop()


def boot_journal(root):
    """A journal past its first start, so each run starts in a few steps."""
    path = str(root / "base.db")
    g = Gahp(path)
    assert g.quit() == 0
    return path


def fault_count(root, base, point):
    """How often one unfaulted round trip reaches the fault point (the
    scheduler's passes make it vary from run to run)."""
    run = BlahRun(root, base, "count-" + point.replace(".", "-"))
    try:
        env = {"BOINC_GAHP_TEST_FAULT_AT": "%s:1000000000" % point}
        assert run.start(env) and run.set_up()
        run.submit()
        assert run.poll(60), run.g.stderr_text()[-3000:]
        log = run.end()
    finally:
        run.stop()
    counts = re.findall(r"test fault point %s reached (\d+) times" % re.escape(point), log)
    assert counts, log[-2000:]
    return int(counts[-1])


def sample(hits, first, spread):
    """1..first, then spread Ns evenly over the rest of the run (the
    scheduler passes every few ms in the suite's settings, so a round trip
    makes about a thousand steps: every N would take an hour)."""
    out = set(range(1, min(first, hits) + 1))
    out |= {first + 1 + (hits - first - 1) * k // spread for k in range(spread)}
    return sorted(n for n in out if 1 <= n <= hits)


def sweep(tmp_path, point, tags, first, spread, codes=(None,)):
    """The round trip under point:N for each sampled N (codes in turn);
    every run must pass its checks.  Returns (hits, runs, reached)."""
    tmp_path.mkdir(exist_ok=True)
    base = boot_journal(tmp_path)
    hits = fault_count(tmp_path, base, point)
    ns = sample(hits, first, spread)
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        results = list(pool.map(
            lambda n: one_run(tmp_path, base, "%s%d" % (tags, n), "%s:%d" % (point, n),
                              codes[n % len(codes)]), ns))
    failed = [why for _, why in results if why is not None]
    assert not failed, "%d run(s) failed:\n\n%s" % (len(failed), "\n\n".join(failed))
    return hits, len(ns), sum(1 for ok, _ in results if ok)


# Ns of a sweep: every one of the first few (start-up, the accept path,
# the group's rows), then a spread over the rest of the round trip.
# BLAH_SWEEP_SCALE=K runs K times as many (the long sweep).
SCALE = int(os.environ.get("BLAH_SWEEP_SCALE", "1"))


def test_fault_sweep_blah(tmp_path):
    """A failing sqlite3_step (SQLITE_FULL or SQLITE_IOERR in turn)."""
    hits, runs, reached = sweep(tmp_path, "step", "s", 24 * SCALE, 24 * SCALE, STEP_CODES)
    print("BLAH sweep: %d steps, %d runs, %d reached" % (hits, runs, reached))
    assert hits > 100 and reached >= runs - 3, (hits, runs, reached)


def test_alloc_sweep_blah(tmp_path):
    """A failing allocation of SQLite, then of libcurl."""
    for library in ("sqlite", "curl"):
        hits, runs, reached = sweep(tmp_path / library, "alloc." + library, "a" + library,
                                    4 * SCALE, 12 * SCALE)
        print("BLAH allocation sweep: %s %d allocations, %d runs, %d reached"
              % (library, hits, runs, reached))
        assert hits > 50 and reached >= runs - 3, (library, hits, runs, reached)


def test_a_group_whose_submit_failed_in_the_journal_is_submitted_again(tmp_path):
    """Found by the sweep: when the journal fails as a group's submit
    writes its batch (the first batch insert fails with SQLITE_FULL),
    nothing was sent, and the group must be submitted again by the
    scheduler, as after an outage: the job completes in the same run,
    once on the project (it answered 1 forever)."""
    base = boot_journal(tmp_path)
    run = BlahRun(tmp_path, base, "batch-insert")
    try:
        assert run.start({"BOINC_GAHP_TEST_FAULT_AT": "step.batch insert:1",
                          "BOINC_GAHP_TEST_STEP_ERROR": "full"})
        assert run.set_up()
        r = run.submit()
        assert r is not None and r[0] == "0", r
        ad = run.poll(60)
        log = run.g.stderr_text()
        assert "test fault step.batch insert injected" in log, interesting(log)
        assert ad and ad["ExitCode"] == "0", (run.last, interesting(log))
        assert "submitted again" in log, interesting(log)
        assert (run.iwd / "out").read_bytes() == (run.iwd / "in").read_bytes().upper()
        assert sorted(run.emu.counters()["jobs_by_name"].values()) == [1]
        run.end()
    finally:
        run.stop()
