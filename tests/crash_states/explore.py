#!/usr/bin/python3
"""explore.py - the crash-state explorer (issue 21, doc/recovery.md "Power loss").

For each workload: run the real build/boinc_gahp against the real
build/boinc_emu with the recorder (recorder.c, LD_PRELOAD) logging every
file-system operation on the journal, its WAL and the output files, and
every byte sent to the emulator; the driver appends its own markers (S
received, result received) to the same log, so the log is in causal order.
Then build crash states from the recording (model.py), and for each one:
materialise the files as a power loss would leave them, rebuild the
emulator as it was at that instant (its state is the remote server's: not
crashed, so the HTTP requests sent before the crash point are replayed on
a copy of its state before the workload), restart boinc_gahp on it,
re-issue every request whose result the client had not seen (as HTCondor
does), and check the invariants (checks in check_state()).

Last line: "crash states: N explored, V violations"; exit status 0 only
when V = 0.  Options: --workloads a,b  --max-states N (per workload)
--seed S  --jobs N (workloads at once; default one per CPU, or
CRASH_STATES_JOBS)  --keep (keep the work directory)  -v.
The server's environment is honoured: BOINC_GAHP_* of the caller (e.g.
BOINC_GAHP_SYNC=normal) are passed to every boinc_gahp started.
"""
import argparse
import functools
import hashlib
import multiprocessing
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)

import emu  # noqa: E402
import gahp_client  # noqa: E402
from gahp_client import Gahp, split_tokens  # noqa: E402
from submit_client import Client  # noqa: E402
import model  # noqa: E402

BUILD = os.path.abspath(os.path.join(HERE, "..", "..", "build"))
RECORDER = os.path.join(BUILD, "crash_states", "librecorder.so")
RESULT_TIMEOUT = 60


def server_env(extra=None):
    """The caller's BOINC_GAHP_* settings (gahp_env drops them), the test
    clock unless the caller set one, and extra."""
    env = {k: v for k, v in os.environ.items()
           if k.startswith("BOINC_GAHP_") and k not in ("BOINC_GAHP_CONFIG",)}
    env.setdefault("BOINC_GAHP_TEST_TIME_SCALE", "0.01")
    env.update(extra or {})
    return env


class Marker:
    """Appends the driver's lines to the recorder's log (O_APPEND, one
    write each: they interleave with the server's in causal order)."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def mark(self, *fields):
        line = "\t".join(str(f).replace("%", "%25").replace("\t", "%09").replace("\n", "%0A")
                         for f in fields) + "\n"
        data = line.encode("utf-8", "surrogateescape")
        if os.write(self.fd, data) != len(data):
            raise OSError("short write to the log")

    def close(self):
        os.close(self.fd)


class RecordingClient(Client):
    """A Client whose accepted requests and received results are marked in
    the log: key of a request = (command, escaped args) as the journal has it."""

    def __init__(self, gahp, emulator, marker):
        self.marker = marker
        self.keys = {}
        super().__init__(gahp, emulator)

    def send(self, line):
        super().send(line)
        if self.marker and " " in line:
            toks = line.split(" ", 2)
            if toks[0].startswith("BOINC_") and toks[0] != "BOINC_SELECT_PROJECT" \
                    and len(toks) >= 2 and toks[1].isdigit():
                key = (toks[0], toks[2] if len(toks) > 2 else "")
                self.keys[int(toks[1])] = key
                self.marker.mark("mark", "S", key[0], key[1])

    def wait(self, rid, timeout=RESULT_TIMEOUT):
        while rid not in self.pending:
            for line in self.gahp.wait_results(1, timeout=timeout):
                rest = line.split(" ", 1)
                toks = split_tokens(line)
                self.pending[int(toks[0])] = toks[1:]
                key = self.keys.get(int(toks[0]))
                if self.marker and key:
                    self.marker.mark("mark", "R", key[0], key[1], rest[1] if len(rest) > 1 else "")
        return self.pending.pop(rid)


# ---------------------------------------------------------------- workloads
class Ctx:
    """One workload's directories, emulator and helpers."""

    def __init__(self, work, emulator):
        self.work = work
        self.root = os.path.join(work, "root")
        self.journal = os.path.join(self.root, "journal.db")
        self.inputs = os.path.join(work, "inputs")
        self.emu = emulator
        os.makedirs(self.root)
        os.makedirs(self.inputs)

    def input(self, name, content):
        p = os.path.join(self.inputs, name)
        with open(p, "wb") as f:
            f.write(content)
        return p

    def gahp(self, env=None, marker=None, preload=False, log=None, args=()):
        extra = server_env(env)
        if preload:
            extra.update({"LD_PRELOAD": RECORDER, "CRASHREC_LOG": log,
                          "CRASHREC_ROOT": self.root,
                          "CRASHREC_PORT": str(self.emu.port)})
        # The log outside the recorded tree: it is no output whose crash
        # states the contract covers (by default it sits beside the journal).
        g = Gahp(self.journal, args=["--retry-budget", "5", "--log-file",
                                     os.path.join(self.work, "gahp.log")] + list(args),
                 env=extra,
                 stderr_path=os.path.join(self.work, "gahp.stderr"))
        return RecordingClient(g, self.emu, marker)


def jobs_of(ctx, name, n, shared=None, app_in="in"):
    jobs = []
    for i in range(n):
        p = ctx.input("%s_%d.txt" % (name, i), ("%s input %d\n" % (name, i)).encode())
        jobs.append(("%s#%d" % (name, i), [], [(p, app_in)]))
    if shared:
        jobs.append(("%s#s" % name, [], [(shared, app_in)]))
    return jobs


def submit_requests(c, batches):
    return [c.submit_line(name, app, jobs) for name, app, jobs in batches]


class Workload:
    name = ""
    batches = ()         # (name, app, jobs) that must exist once on the server
    emu_config = None    # the emulator's configuration file (text), if any
    requeue = False      # restart with --requeue-undelivered, re-issue nothing

    def setup(self, ctx):
        """Unrecorded work before the recording (its journal is the
        recording's durable starting point)."""

    def requests(self, ctx, c):
        """[(rid, line)] issued (pipelined) in the recorded phase."""
        return []

    def env(self):
        return {}


class SubmitWorkload(Workload):
    name = "submit"

    def setup(self, ctx):
        shared = ctx.input("shared.txt", b"shared input\n")
        self.batches = [("sa", "uppercase", jobs_of(ctx, "sa", 2, shared)),
                        ("sb", "uppercase", jobs_of(ctx, "sb", 2, shared))]

    def requests(self, ctx, c):
        return submit_requests(c, self.batches)


class FetchWorkload(Workload):
    name = "fetch"

    def setup(self, ctx):
        self.batches = [("fz", "zipout", jobs_of(ctx, "fz", 1)),
                        ("fu", "uppercase", jobs_of(ctx, "fu", 1))]
        c = ctx.gahp()
        for rid, line in submit_requests(c, self.batches):
            c.send(line)
            assert c.wait(rid) == ["NULL"]
        c.gahp.quit()
        ctx.emu.run(7200)
        self.out_all = os.path.join(ctx.root, "out_all")
        self.out_some = os.path.join(ctx.root, "out_some")
        os.makedirs(self.out_all)
        os.makedirs(self.out_some)

    def requests(self, ctx, c):
        return [c.line("BOINC_FETCH_OUTPUT", "fz#0", self.out_all, "err.txt", "ALL", 0),
                c.line("BOINC_FETCH_OUTPUT", "fu#0", self.out_some, "err.txt", "SOME", 1,
                       "out", os.path.join(self.out_some, "result.txt"))]


class FetchStderrElsewhereWorkload(FetchWorkload):
    """A zip fetch (the app's one output is out.zip: its members are
    delivered) with its stderr file in another directory (issue 29 #4):
    the stderr file's sync of the output directory made the members'
    names durable too, and hid a publication without a directory sync."""
    name = "fetch_stderr_elsewhere"
    emu_config = ("<emu_config>\n  <app><name>zipout</name><output>out.zip</output></app>\n"
                  "</emu_config>\n")

    def setup(self, ctx):
        super().setup(ctx)
        # before the recording: the states start from a copy of ctx.root
        self.err_dir = os.path.join(ctx.root, "stderr_dir")
        os.makedirs(self.err_dir)

    def requests(self, ctx, c):
        err_dir = self.err_dir
        return [c.line("BOINC_FETCH_OUTPUT", "fz#0", self.out_all,
                       os.path.join(err_dir, "err.txt"), "ALL", 0)]


class CheckpointWorkload(SubmitWorkload):
    """The submits with the checkpointer's threshold lowered to 8 frames
    (issue 29 #2): the checkpointer thread copies the WAL into the
    database file many times, and the WAL restarts after each; the
    unsampled check wal_restart_violations() holds on its recording."""
    name = "checkpoint"

    def env(self):
        return {"BOINC_GAHP_TEST_CKPT_FRAMES": "8"}


class ManageWorkload(Workload):
    name = "manage"

    def setup(self, ctx):
        self.batches = [("ma", "uppercase", jobs_of(ctx, "ma", 2)),
                        ("mb", "uppercase", jobs_of(ctx, "mb", 1))]
        c = ctx.gahp()
        for rid, line in submit_requests(c, self.batches):
            c.send(line)
            assert c.wait(rid) == ["NULL"]
        c.gahp.quit()

    def requests(self, ctx, c):
        return [c.line("BOINC_QUERY_BATCHES", 0, 2, "ma", "mb"),
                c.line("BOINC_SET_LEASE", "ma", 2000000000),
                c.line("BOINC_ABORT_JOBS", "ma#1"),
                c.line("BOINC_RETIRE_BATCH", "mb"),
                c.line("BOINC_PING")]


class ManageRequeueWorkload(ManageWorkload):
    """The manage requests, restarted with --requeue-undelivered (issue 29
    #3): the client re-issues nothing, and every request it saw accepted
    but never saw answered must come back exactly once under its original
    id with the recording's result."""
    name = "manage_requeue"
    requeue = True


class RecoveryWorkload(Workload):
    """Start-up after a crash, itself crashed: the setup SIGKILLs a submit
    after create_batch (crash point submit.created); the recording is the
    next start-up (which resumes it) and the client's re-issue."""
    name = "recovery"

    def setup(self, ctx):
        shared = ctx.input("shared.txt", b"shared input\n")
        self.batches = [("ra", "uppercase", jobs_of(ctx, "ra", 2, shared))]
        c = ctx.gahp(env={"BOINC_GAHP_TEST_CRASH_AT": "submit.created"})
        for rid, line in submit_requests(c, self.batches):
            c.send(line)
        rc = c.gahp.proc.wait(timeout=60)
        assert rc == -signal.SIGKILL, rc
        c.gahp.kill()

    def requests(self, ctx, c):
        return submit_requests(c, self.batches)


WORKLOADS = {w.name: w for w in (SubmitWorkload, FetchWorkload, FetchStderrElsewhereWorkload,
                                 ManageWorkload, ManageRequeueWorkload, RecoveryWorkload,
                                 CheckpointWorkload)}


def wal_restart_violations(rec, journal):
    """Unsampled, on every recording: the database file is synced after
    the last write into it (a checkpoint's copy) before the WAL is
    restarted (its header rewritten at offset 0) or deleted; otherwise a
    power loss can lose checkpointed transactions that are no longer in
    the WAL.  Returns (violations, restarts seen)."""
    wal = journal + "-wal"
    bad, restarts = [], 0
    unsynced = None         # index of the first write to the database since its sync
    wal_started = False
    for o in rec.ops:
        if o.kind == "write" and o.path == journal and unsynced is None:
            unsynced = o.i
        elif o.kind == "sync" and o.path == journal:
            unsynced = None
        elif o.kind == "write" and o.path == wal and o.off == 0:
            if wal_started:
                restarts += 1
                if unsynced is not None:
                    bad.append("%s restarted at op %d, but %s was written at op %d and not"
                               " synced since (check: database synced before the WAL"
                               " restarts)" % (os.path.basename(wal), o.i,
                                               os.path.basename(journal), unsynced))
            wal_started = True
        elif o.kind == "unlink" and o.path == wal:
            if unsynced is not None:
                bad.append("%s deleted at op %d, but %s was written at op %d and not synced"
                           " since (check: database synced before the WAL is deleted)"
                           % (os.path.basename(wal), o.i, os.path.basename(journal), unsynced))
            wal_started = False
    return bad, restarts


# ---------------------------------------------------------------- the emulator
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def copytree(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)


class EmuEpochs:
    """The emulator's state after the first k recorded HTTP requests: built
    once per k from the state before the workload by replaying them."""

    def __init__(self, work, base_state, port, requests, config=None):
        self.work = work
        self.config = config          # the workload's emulator configuration file
        self.base = base_state
        self.port = port
        self.requests = requests      # [bytes]
        self.cache = {0: base_state}
        self.live = None

    def _build(self, k):
        prev = max(j for j in self.cache if j <= k)
        d = os.path.join(self.work, "emu_epoch_%d" % k)
        copytree(self.cache[prev], d)
        e = emu.Emulator(d, port=self.port, hosts=2, config=self.config)
        e.start()
        try:
            for req in self.requests[prev:k]:
                model.replay_http(self.port, req)
        finally:
            e.stop()
        self.cache[k] = d
        return d

    def start(self, k):
        """A running emulator in the state of epoch k (a fresh copy)."""
        self.stop()
        src = self.cache.get(k) or self._build(k)
        live = os.path.join(self.work, "emu_live")
        copytree(src, live)
        self.live = emu.Emulator(live, port=self.port, hosts=2, config=self.config)
        self.live.start()
        return self.live

    def stop(self):
        if self.live is not None:
            self.live.stop()
            self.live = None


# ---------------------------------------------------------------- one workload
def journal_requests(path):
    """{(command, args): [(state, result)]} of a journal file (read from a
    copy, so the state itself is not touched); raises on a bad journal."""
    tmp = tempfile.mkdtemp(prefix="jcopy")
    try:
        for suffix in ("", "-wal"):
            if os.path.exists(path + suffix):
                shutil.copy(path + suffix, os.path.join(tmp, "j.db" + suffix))
        db = sqlite3.connect(os.path.join(tmp, "j.db"))
        try:
            ok = db.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok":
                raise sqlite3.DatabaseError("integrity_check: " + ok)
            out = {}
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'requests'").fetchone():
                return out      # a journal never committed: as if new
            for cmd, args, state, result in db.execute(
                    "SELECT command, args, state, result FROM requests"):
                out.setdefault((cmd, args), []).append((state, result))
            return out
        finally:
            db.close()
    finally:
        shutil.rmtree(tmp)


def run_workload(wl, work, args, out):
    """Record wl, explore its crash states; returns (explored, violations)."""
    os.makedirs(work)
    base_emu = os.path.join(work, "emu_base")
    port = free_port()
    config = None
    if wl.emu_config is not None:
        config = os.path.join(work, "emu_config.xml")
        with open(config, "w") as f:
            f.write(wl.emu_config)
    e = emu.Emulator(os.path.join(work, "emu_setup"), port=port, hosts=2, config=config)
    e.start()
    ctx = Ctx(work, e)
    wl.setup(ctx)
    e.stop()
    copytree(os.path.join(work, "emu_setup"), base_emu)
    init_root = os.path.join(work, "init_root")
    for f in os.listdir(ctx.root):
        if f.endswith("-shm"):
            os.unlink(os.path.join(ctx.root, f))
    copytree(ctx.root, init_root)

    # ---- record
    log = os.path.join(work, "oplog")
    e.start()
    marker = Marker(log)
    c = ctx.gahp(env=wl.env(), marker=marker, preload=True, log=log)
    reqs = wl.requests(ctx, c)
    for _, line in reqs:
        c.send(line)
    expected = {}
    for rid, line in reqs:
        expected[c.keys[rid]] = c.wait(rid)
    c.gahp.quit()
    marker.close()
    e.stop()
    rec = model.Recording(log, init_root, ctx.root)
    if not rec.http or rec.nsyncs == 0:
        raise RuntimeError("%s: the recording has no sync or no HTTP request: is the"
                           " recorder loaded?" % wl.name)
    final_outputs = rec.final_files(exclude=("journal.db",))
    wal_bad, restarts = wal_restart_violations(rec, ctx.journal)
    for v in wal_bad:
        out("VIOLATION %s recording: %s" % (wl.name, v))
    if wl.env().get("BOINC_GAHP_TEST_CKPT_FRAMES") and restarts == 0:
        raise RuntimeError("%s: the WAL never restarted: the checkpointer's test"
                           " threshold did not take effect" % wl.name)
    out("%s: recorded %d operations (%d syncs, %d HTTP requests), %d requests"
        % (wl.name, len(rec.ops), rec.nsyncs, len(rec.http), len(reqs)))

    states = rec.crash_states(random.Random(args.seed), args.max_states)
    epochs = EmuEpochs(work, base_emu, port, rec.http, config)
    violations = 0
    for n, st in enumerate(states):
        v = check_state(wl, ctx, rec, st, epochs, reqs, expected, final_outputs, args)
        if v:
            violations += 1
            out("VIOLATION %s state %d (%s): %s" % (wl.name, n, st.describe(rec), "; ".join(v)))
            # the restarted server's log, for --keep
            kept = os.path.join(work, "gahp.violation.%d.stderr" % n)
            if os.path.exists(os.path.join(work, "gahp.stderr")):
                shutil.copyfile(os.path.join(work, "gahp.stderr"), kept)
        elif args.verbose:
            out("ok %s state %d (%s; %d re-issued)" % (wl.name, n, st.describe(rec),
                                                      getattr(st, "reissued", 0)))
    epochs.stop()
    out("%s: %d WAL restarts checked, %d violations" % (wl.name, restarts, len(wal_bad)))
    return len(states), violations + len(wal_bad)


# Commands whose answer is about its moment: their result waits for its
# delivery in transient_results and is deleted with the delivery mark.
TRANSIENT = ("BOINC_PING", "BOINC_QUERY_BATCHES")


# The RPCs with an effect on the server that each command may send.
SIDE_EFFECTS = {
    "BOINC_SUBMIT": ("create_batch", "upload_files", "submit_batch"),
    "BOINC_ABORT_JOBS": ("abort_jobs",),
    "BOINC_RETIRE_BATCH": ("retire_batch",),
    "BOINC_SET_LEASE": ("set_expire_time",),
}


def rerun_violations(reqs, jr, cnt):
    """Issue 29 #3: a request completed in the crash state is answered
    from the journal after the restart, never run again: when every
    request of a command was completed, none of its side-effecting RPCs
    may reach the server after the restart (the emulator's rpc counters
    start at 0 with it)."""
    bad = []
    for command, rpcs in SIDE_EFFECTS.items():
        keys = [(line.split(" ", 2)[0], line.split(" ", 2)[2] if line.count(" ") > 1 else "")
                for _, line in reqs if line.startswith(command + " ")]
        # only "completed": a row marked delivered had its RESULTS written,
        # and the client's R markers (written after it read them) may lag
        done = all(any(s == "completed" for s, _ in jr.get(k, [])) for k in keys)
        if not keys or not done:
            continue
        for rpc in rpcs:
            if cnt["rpc"].get(rpc, 0):
                bad.append("%s sent %d times after the restart although every %s was"
                           " completed in the journal (check: no re-run of a completed"
                           " request)" % (rpc, cnt["rpc"][rpc], command))
    return bad


def requeue_violations(c, reqs, seen_s, seen_r, expected, jr):
    """--requeue-undelivered: each request acknowledged S but not answered
    before the crash comes back once, under its original id, with the
    recording's result (a query: a NULL result), without a re-issue."""
    want = {}
    for rid, line in reqs:
        toks = line.split(" ", 2)
        key = (toks[0], toks[2] if len(toks) > 2 else "")
        # a row the journal has delivered had its RESULTS written (the
        # client's R markers lag behind its read): not required back
        delivered = any(s == "delivered" for s, _ in jr.get(key, []))
        if key in seen_s and key not in seen_r and not delivered:
            want[rid] = key
    got = {}
    deadline = time.monotonic() + RESULT_TIMEOUT
    while not set(want) <= set(got) and time.monotonic() < deadline:
        for line in c.gahp.results():
            toks = split_tokens(line)
            got.setdefault(int(toks[0]), []).append(toks[1:])
        time.sleep(0.05)
    for line in c.gahp.results():       # nothing more for those ids
        toks = split_tokens(line)
        got.setdefault(int(toks[0]), []).append(toks[1:])
    bad = []
    for rid, key in sorted(want.items()):
        results = got.get(rid, [])
        if len(results) != 1:
            bad.append("%s (id %d), accepted and never answered before the crash, came back"
                       " %d times (check: requeued exactly once)" % (key[0], rid, len(results)))
        elif key[0] in TRANSIENT:
            if results[0][0] != "NULL":
                bad.append("requeued %s (id %d) failed: %s" % (key[0], rid, " ".join(results[0])))
        elif results[0] != expected[key]:
            bad.append("requeued %s (id %d) got %r, the recording %r (check: requeued result)"
                       % (key[0], rid, results[0], expected[key]))
    return bad


def check_state(wl, ctx, rec, st, epochs, reqs, expected, final_outputs, args):
    """Materialise one crash state, restart on it, re-issue, check."""
    bad = []
    shutil.rmtree(ctx.root)
    rec.materialise(st, ctx.root)
    seen_s, seen_r = rec.client_knowledge(st.pos)

    # the state itself: journal sound, acknowledged requests and delivered
    # results in it, no partial or stale output under a final name
    try:
        jr = journal_requests(ctx.journal)
    except sqlite3.DatabaseError as ex:
        return ["journal unreadable or corrupt: %s" % ex]   # nothing else to check
    for key in seen_s:
        if key not in jr:
            bad.append("request %s acknowledged S before the crash is not in the journal"
                       % key[0])
    for key, result in seen_r.items():
        if key[0] in TRANSIENT:
            # its result is deleted once delivered (doc/journal.md,
            # "transient_results"): the request must still be there
            if key not in jr:
                bad.append("request %s delivered before the crash is not in the journal"
                           % key[0])
            continue
        if not any(r == result for _, r in jr.get(key, [])):
            bad.append("result of %s delivered before the crash (%r) is not in the journal"
                       % (key[0], result))
    for rel, content in final_outputs.items():
        p = os.path.join(ctx.root, rel)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                got = f.read()
            if got != content:
                bad.append("output %s partial or stale under its final name (%d of %d bytes)"
                           % (rel, len(got), len(content)))
    delivered_fetch = any(k[0] == "BOINC_FETCH_OUTPUT" for k in seen_r)

    # restart against the remote server as it was at the crash point
    e = epochs.start(rec.http_before(st.pos))
    ctx.emu = e
    try:
        c = ctx.gahp(args=["--requeue-undelivered"] if wl.requeue else [])
    except Exception as ex:     # noqa: BLE001 - any start-up failure is a finding
        return bad + ["server does not start: %s" % ex]
    if wl.requeue:
        try:
            bad += requeue_violations(c, reqs, seen_s, seen_r, expected, jr)
            rc = c.gahp.quit()
            if rc != 0:
                bad.append("server exit status %s after QUIT" % rc)
        except Exception as ex:     # noqa: BLE001
            bad.append("requeued results: %s: %s" % (type(ex).__name__, ex))
        finally:
            c.gahp.kill()
    else:
        try:
            todo = []
            for rid, line in reqs:
                toks = line.split(" ", 2)
                key = (toks[0], toks[2] if len(toks) > 2 else "")
                if key not in seen_r:
                    nrid = next(c.ids)
                    nline = " ".join(t for t in (key[0], str(nrid), key[1]) if t)
                    c.send(nline)
                    todo.append((nrid, key))
            st.reissued = len(todo)
            for nrid, key in todo:
                got = c.wait(nrid)
                want = expected[key]
                if key[0] == "BOINC_QUERY_BATCHES":
                    if got[0] != "NULL":
                        bad.append("re-issued query failed: %s" % " ".join(got))
                elif got != want:
                    bad.append("re-issued %s got %r, the recording %r" % (key[0], got, want))
            rc = c.gahp.quit()
            if rc != 0:
                bad.append("server exit status %s after QUIT" % rc)
        except Exception as ex:     # noqa: BLE001
            bad.append("re-issue failed: %s: %s" % (type(ex).__name__, ex))
        finally:
            c.gahp.kill()

    cnt = e.counters()
    bad += rerun_violations(reqs, jr, cnt)
    for name, _, jobs in wl.batches:
        if cnt["batches_by_name"].get(name, 0) != 1:
            bad.append("batch %s on the server %d times" % (name, cnt["batches_by_name"].get(name, 0)))
        for job, _, _ in jobs:
            if cnt["jobs_by_name"].get(job, 0) != 1:
                bad.append("job %s on the server %d times" % (job, cnt["jobs_by_name"].get(job, 0)))
    for f, k in cnt["uploads_by_name"].items():
        if k != 1:
            bad.append("file %s uploaded %d times" % (f, k))
    for rel, content in final_outputs.items():
        p = os.path.join(ctx.root, rel)
        if not os.path.isfile(p):
            bad.append("output %s missing after the re-issue" % rel)
            continue
        with open(p, "rb") as f:
            if f.read() != content:
                bad.append("output %s wrong after the re-issue" % rel)
    del delivered_fetch
    try:
        journal_requests(ctx.journal)
    except sqlite3.DatabaseError as ex:
        bad.append("journal after the restart: %s" % ex)
    return bad


def explore_workload(name, base, args):
    """One workload in a pool process: (name, explored, violations, lines)."""
    lines = []
    n, v = run_workload(WORKLOADS[name](), os.path.join(base, name), args, lines.append)
    return name, n, v, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--max-states", type=int, default=int(os.environ.get("CRASH_STATES_MAX", 100)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("CRASH_STATES_SEED", 21)))
    ap.add_argument("--jobs", type=int,
                    default=int(os.environ.get("CRASH_STATES_JOBS", os.cpu_count() or 1)),
                    help="workloads explored at once (default: one per CPU)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if not os.path.exists(RECORDER):
        sys.exit("explore.py: %s is missing (make check-crash-states builds it)" % RECORDER)
    gahp_client.DEFAULTS.update(gahp_client.TEST_CLOCK)
    base = tempfile.mkdtemp(prefix="crash_states.")
    t0 = time.monotonic()
    total = bad = 0
    names = args.workloads.split(",")
    for name in names:
        if name not in WORKLOADS:
            sys.exit("explore.py: no workload %r (there are: %s)" % (name, ", ".join(WORKLOADS)))
    try:
        # Workloads are independent (each its own directory, emulator and
        # port), so they run side by side on --jobs processes; a
        # workload's lines are printed together when it ends.
        with multiprocessing.get_context("fork").Pool(max(1, min(args.jobs, len(names)))) as pool:
            for name, n, v, lines in pool.imap_unordered(
                    functools.partial(explore_workload, base=base, args=args), names):
                for line in lines:
                    print(line)
                print("%s: %d states, %d violations (%.0f s so far)"
                      % (name, n, v, time.monotonic() - t0), flush=True)
                total += n
                bad += v
    finally:
        if args.keep:
            print("work directory kept: %s" % base)
        else:
            shutil.rmtree(base, ignore_errors=True)
    print("crash states: %d explored, %d violations" % (total, bad))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
