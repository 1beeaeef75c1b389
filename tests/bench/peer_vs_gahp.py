#!/usr/bin/python3
"""peer_vs_gahp - boinc_gahp beside BOINC's own sample GAHP ("the peer",
samples/condor/boinc_gahp.cpp of BOINC, built into /opt/peer by
tests/real/recipes/boinc_server.sh), both driven through their stdin and
stdout against boinc_emu on 127.0.0.1, with the machine's own limits
measured in the same run (issue 22; doc/performance.md has the figures).

    PVG_EMU_ARGS="--php-limits none" tests/bench/peer_vs_gahp.py \\
        --peer /opt/peer/boinc_gahp --gahp build/boinc_gahp --emu build/boinc_emu \\
        [--work DIR] [--only fig1,fig6,...] [--reps N] [--no-perf]
    tests/bench/peer_vs_gahp.py --work DIR --table

`make bench` runs it when the peer is there.  The peer cannot split an
upload to fit PHP's limits, so the emulators of the figures get
PVG_EMU_ARGS (e.g. `--php-limits none`); boinc_gahp keeps its defaults.
In each figure the programs take turns (--progs order, --reps times);
every measurement is one JSON line in DIR/results.jsonl, so figures can
be run one at a time into the same DIR, and --table prints the medians
of everything there, program beside program, with the ratio.

Figures (--only, in the order given):
  fig1   N pipelined BOINC_PING (--pings, e.g. 10,000 and 100,000) to the
         emulator and to a dead loopback port (--targets): time until
         every S is read, until every result is completed and delivered;
         fsyncs counted with `perf stat` unless --no-perf.  fig3, the
         memory holding the last size's results undelivered, is read in
         the same run.
  fig2   BOINC_PING one at a time on an idle server (--rounds): p50 and
         p99 from writing the request to reading its S.
  fig45  a --jobs job submit of app twoinout (each job: its own 1 KB input
         and one 10 MB input all share), then the same inputs again as a
         new batch (fig5): wall, CPU, RPCs by kind, bytes uploaded, rchar.
  fig5s  the same two submits under strace: bytes read() from the input
         files in each.
  fig6   BOINC_QUERY_BATCHES of 1 and of 10 batches of --qb-jobs jobs, then
         the first again.
  fig7   --fo-jobs pipelined BOINC_FETCH_OUTPUT of completed jobs.
  fig8   boinc_gahp's start-up (to its banner) on a journal of 100,000
         requests (--startup-requests), after a crash and after a clean exit.
  fig9   limits: write+fdatasync rates of the work directory's disk, MD5
         throughput, a 200 MB loopback HTTP upload, a raw loopback copy.
  fig9b  limit for fig4's files: curl uploading all of them in one POST.

Standard library only; perf and strace are used when present.
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

LOOPBACK_PROXY = "http://127.0.0.1:9"
TICK = os.sysconf("SC_CLK_TCK")
EMU_EXTRA = os.environ.get("PVG_EMU_ARGS", "").split()
opts = None          # the parsed command line


def child_env():
    """Nothing beyond loopback; no configuration file of this machine (the
    caller's own BOINC_GAHP_* variables, e.g. BOINC_GAHP_MAX_REPLY_BYTES,
    are kept: they are the run's settings)."""
    e = dict(os.environ)
    e.setdefault("BOINC_GAHP_CONFIG", "/dev/null")
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        e[k] = LOOPBACK_PROXY
    e["no_proxy"] = e["NO_PROXY"] = "127.0.0.1"
    return e


# ------------------------------------------------------------------ results

def shown(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.0f" % v if abs(v) >= 100 else "%.3g" % v
    return str(v)


def note(fig, prog, metric, value, unit, **detail):
    row = {"fig": fig, "prog": prog, "metric": metric, "value": value, "unit": unit,
           "t": round(time.time(), 3)}
    row.update(detail)
    with open(os.path.join(opts.work, "results.jsonl"), "a") as f:
        f.write(json.dumps(row) + "\n")
    print("  %-5s %-5s %s: %s %s" % (fig, prog, metric, shown(value), unit), flush=True)


def print_table(work):
    path = os.path.join(work, "results.jsonl")
    if not os.path.exists(path):
        sys.exit("peer_vs_gahp: no %s (run some figures first)" % path)
    metrics, by = [], {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            key = (r["metric"], r["unit"])
            if key not in by:
                by[key] = {}
                metrics.append(key)
            by[key].setdefault(r["prog"], []).append(r["value"])

    def median(xs):
        xs = [x for x in xs if x is not None]
        return (statistics.median(xs) if xs else None), len(xs)

    print("| figure | unit | peer | boinc_gahp | boinc_gahp / peer | runs (peer/gahp) |")
    print("|---|---|---|---|---|---|")
    for key in metrics:
        progs = by[key]
        if "limit" in progs:
            v, n = median(progs["limit"])
            print("| %s | %s | limit: %s | | | %d |" % (key[0], key[1], shown(v), n))
            continue
        p, np_ = median(progs.get("peer", []))
        g, ng = median(progs.get("gahp", []))
        ratio = "%.3g" % (g / p) if p and g is not None else "-"
        others = "".join(" %s: %s" % (k, shown(median(v)[0]))
                         for k, v in progs.items() if k not in ("peer", "gahp"))
        print("| %s | %s | %s | %s | %s | %d/%d%s |" % (key[0], key[1], shown(p), shown(g),
                                                       ratio, np_, ng, others))


# ------------------------------------------------------------------ emulator

class Emulator:
    def __init__(self, state_dir, clock="manual", hosts=4):
        os.makedirs(state_dir, exist_ok=True)
        self.log = open(state_dir.rstrip("/") + ".log", "ab")
        self.proc = subprocess.Popen(
            [opts.emu, "--state-dir", state_dir, "--port", "0", "--clock", clock,
             "--hosts", str(hosts), "--log-level", "warn"] + EMU_EXTRA,
            stdout=subprocess.PIPE, stderr=self.log, env=child_env())
        hello = json.loads(self.proc.stdout.readline())
        self.url, self.auth = hello["url"], hello["authenticator"]
        u = urllib.parse.urlparse(self.url)
        self.addr = (u.hostname, u.port)

    def control(self, method, what, timeout=3600):
        c = http.client.HTTPConnection(*self.addr, timeout=timeout)
        try:
            c.request(method, "/control/" + what)
            return json.loads(c.getresponse().read())
        finally:
            c.close()

    def counters(self):
        return self.control("GET", "counters")

    def run_all(self):
        return self.control("POST", "run?max_seconds=100000")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def rpcs_between(c0, c1):
    return {k: v - c0["rpc"].get(k, 0) for k, v in c1["rpc"].items() if v - c0["rpc"].get(k, 0)}


def unused_port_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "http://127.0.0.1:%d/emu/" % s.getsockname()[1]


# ------------------------------------------------------------------ a GAHP

class Program:
    """One GAHP process, the peer or boinc_gahp, and its line protocol."""

    def __init__(self, kind, wd, url=None, auth=None, extra=(), journal=None, prefix=()):
        os.makedirs(wd, exist_ok=True)
        self.kind, self.wd = kind, wd
        if kind == "peer":
            # the peer also reads the project from ./config.txt
            with open(os.path.join(wd, "config.txt"), "w") as f:
                f.write("%s\n%s\n" % (url or "http://127.0.0.1:1/none/", auth or "none"))
            argv, self.journal = [opts.peer], None
        else:
            self.journal = journal or os.path.join(wd, "journal.db")
            argv = [opts.gahp, "--journal", self.journal] + list(extra)
        self.stderr = open(os.path.join(wd, "stderr.log"), "ab")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(list(prefix) + argv, cwd=wd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr,
                                     env=child_env(), bufsize=0)
        self.pid = self.proc.pid
        self.pending = b""
        self.banner = self.line(120)
        self.startup = time.perf_counter() - t0
        if url:
            self.write(b"BOINC_SELECT_PROJECT %s %s\n" % (url.encode(), auth.encode()))
            got = self.line()
            if got != b"S":
                raise RuntimeError("%s: BOINC_SELECT_PROJECT answered %r" % (kind, got))

    def _more(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError("%s: nothing on stdout for %.0f s" % (self.kind, timeout))
        data = os.read(self.proc.stdout.fileno(), 1 << 20)
        if not data:
            raise EOFError("%s closed its stdout (exit %s)" % (self.kind, self.proc.poll()))
        return data

    def line(self, timeout=600):
        while b"\n" not in self.pending:
            self.pending += self._more(timeout)
        first, self.pending = self.pending.split(b"\n", 1)
        return first.rstrip(b"\r")

    def lines(self, n, timeout=600):
        parts, count = [self.pending], self.pending.count(b"\n")
        while count < n:
            data = self._more(timeout)
            parts.append(data)
            count += data.count(b"\n")
        split = b"".join(parts).split(b"\n")
        self.pending = b"\n".join(split[n:])
        return [x.rstrip(b"\r") for x in split[:n]]

    def write(self, data):
        self.proc.stdin.write(data)

    def write_behind(self, data):
        """Write in a thread (a big pipelined write must not block the reader)."""
        t = threading.Thread(target=self.write, args=(data,), daemon=True)
        t.start()
        return t

    def results(self, timeout=600):
        self.write(b"RESULTS\n")
        head = self.line(timeout)
        if not head.startswith(b"S "):
            raise RuntimeError("%s: RESULTS answered %r" % (self.kind, head[:80]))
        out = {}
        for ln in self.lines(int(head.split()[1]), timeout):
            rid, _, rest = ln.partition(b" ")
            out[int(rid)] = rest
        return out

    def wait_results(self, ids, timeout, every=0.02):
        want, got = set(ids), {}
        end = time.monotonic() + timeout
        while True:
            got.update(self.results())
            if want <= set(got) or time.monotonic() > end:
                return got
            time.sleep(every)

    def proc_file(self, name):
        with open("/proc/%d/%s" % (self.pid, name)) as f:
            return f.read()

    def cpu(self):
        fields = self.proc_file("stat").rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def memory(self):
        s = dict(l.split(":", 1) for l in self.proc_file("status").splitlines() if ":" in l)
        return int(s["VmRSS"].split()[0]), int(s["VmHWM"].split()[0]), int(s["Threads"])

    def io(self):
        return {k: int(v) for k, v in (l.split(":") for l in self.proc_file("io").splitlines())}

    def threads(self):
        try:
            return len(os.listdir("/proc/%d/task" % self.pid))
        except FileNotFoundError:
            return 0

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        try:
            if self.alive():
                self.write(b"QUIT\n")
                self.proc.stdin.close()
            self.proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


class SyncCounter:
    """fsync + fdatasync calls of a running process (perf stat), or None."""

    def __init__(self, pid, out):
        self.proc, self.out = None, out
        if opts.no_perf or not shutil.which("perf"):
            return
        self.proc = subprocess.Popen(
            ["perf", "stat", "-e", "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync",
             "-p", str(pid), "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)

    def stop(self):
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(30)
        total = 0
        with open(self.out) as f:
            for line in f:
                m = re.match(r"\s*([\d,]+)\s+syscalls:sys_enter_f(data)?sync\b", line)
                if m:
                    total += int(m.group(1).replace(",", ""))
        return total


def sync_rate(seconds):
    """pwrite 4 KiB + fdatasync into a pre-allocated file, for `seconds`: the rate."""
    path = os.path.join(opts.work, "sync.probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, bytes(4096 * 256))
        os.fsync(fd)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            os.pwrite(fd, b"s" * 4096, (n % 256) * 4096)
            os.fdatasync(fd)
            n += 1
        return n / (time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.unlink(path)


def sync_probe(fig, before):
    """The disk is shared and its sync rate swings: measured before each boinc_gahp run."""
    note(fig, "limit", "%s: pwrite(4 KiB)+fdatasync rate just before %s" % (fig, before),
         sync_rate(0.5), "1/s")


def turns(reps):
    for r in range(reps):
        for kind in opts.progs.split(","):
            yield r, kind


def fresh_dir(*parts):
    d = os.path.join(opts.work, *parts)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def journal_done(journal, n):
    """How many of boinc_gahp's client BOINC_PINGs are completed (read-only)."""
    try:
        db = sqlite3.connect("file:%s?mode=ro" % journal, uri=True, timeout=10)
        try:
            return db.execute("SELECT count(*) FROM requests WHERE client_id > 0 AND command = "
                              "'BOINC_PING' AND state IN ('completed', 'delivered')").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return -1


def wait_done(prog, n, timeout):
    """Wait, without RESULTS, until all n pings are done: the peer's command
    threads have ended, or boinc_gahp's journal has them completed."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout and prog.alive():
        if (prog.threads() <= 1) if prog.kind == "peer" else journal_done(prog.journal, n) >= n:
            return time.monotonic() - t0
        time.sleep(0.1)
    return None


# ------------------------------------------------------------------ fig1 + fig3

def fig1(emu):
    original = emu
    sizes = [int(x) for x in opts.pings.split(",")]
    dead = unused_port_url()
    for n in sizes:
        reps = opts.reps if n == sizes[0] else opts.reps_big
        for target in opts.targets.split(","):
            for r, kind in turns(reps):
                # boinc_gahp retries a dead project for its retry budget:
                # measured with the default and with none
                for extra in ([(), ("--retry-budget", "0")] if kind == "gahp" and target == "dead"
                              else [()]):
                    if not emu.alive():
                        emu = Emulator(os.path.join(opts.work, "emu_main_%d" % time.time()))
                    url = emu.url if target == "emu" else dead
                    who = kind + ("-rb0" if extra else "")
                    if kind == "gahp" and not extra:
                        sync_probe("fig1", "%d pings to %s" % (n, target))
                    prog = Program(kind, fresh_dir("fig1", "%s_%s_%d_%d" % (who, target, n, r)),
                                   url, emu.auth, extra)
                    ping_rpcs = emu.counters()["rpc"].get("ping", 0) if target == "emu" else 0
                    label = "fig1 %d pings %s" % (n, target)
                    syncs = SyncCounter(prog.pid, os.path.join(prog.wd, "perf_ack.txt"))
                    t0 = time.perf_counter()
                    writer = prog.write_behind(b"".join(b"BOINC_PING %d\n" % i for i in range(1, n + 1)))
                    try:
                        acks = prog.lines(n)
                        t_ack, n_s = time.perf_counter() - t0, acks.count(b"S")
                    except (TimeoutError, EOFError) as e:
                        print("   %s: %s" % (who, e), flush=True)
                        t_ack, n_s = None, -1
                    writer.join(60)
                    syncs_ack = syncs.stop()
                    note("fig1", who, label + ": every S read", t_ack, "s", rep=r, s_lines=n_s)
                    syncs = SyncCounter(prog.pid, os.path.join(prog.wd, "perf_res.txt"))
                    waited = wait_done(prog, n, 600 if target == "emu" or kind == "peer" or extra else 5)
                    mem = prog.memory() if prog.alive() else (None, None, None)
                    t_all, got, detail = None, {}, ""
                    if prog.alive():
                        try:
                            got = prog.results()
                            t_all = time.perf_counter() - t0
                        except (TimeoutError, EOFError, RuntimeError) as e:
                            detail = str(e)
                    else:
                        detail = "exited %s" % prog.proc.poll()
                    syncs_res = syncs.stop()
                    if syncs_ack is not None:
                        note("fig1", who, label + ": fsync+fdatasync until every S", syncs_ack, "", rep=r)
                        note("fig1", who, label + ": fsync+fdatasync after, until delivered",
                             syncs_res, "", rep=r)
                    if target == "emu":
                        note("fig1", who, label + ": pings that reached the server",
                             emu.counters()["rpc"].get("ping", 0) - ping_rpcs, "", rep=r)
                    if kind == "peer":
                        with open(os.path.join(prog.wd, "stderr.log"), errors="replace") as f:
                            err = f.read()
                        note("fig1", who, label + ": peer's \"can't create thread\"",
                             err.count("can't create thread"), "", rep=r)
                    ok = waited is not None and len(got) == n
                    note("fig1", who, label + ": every result delivered", t_all if ok else None, "s",
                         rep=r, delivered=len(got), null=sum(1 for v in got.values() if v == b"NULL"),
                         why=detail)
                    if n == sizes[-1] and target == "emu" and mem[0] is not None:
                        note("fig3", who, "fig3 RSS holding %d undelivered results" % n,
                             mem[0] / 1024, "MB", rep=r, threads=mem[2])
                        note("fig3", who, "fig3 peak RSS (VmHWM) holding %d results" % n,
                             mem[1] / 1024, "MB", rep=r)
                    prog.close()
    if emu is not original:            # a replacement for an emulator that died
        emu.stop()


# ------------------------------------------------------------------ fig2

def fig2(emu):
    sync_probe("fig2", "the latency run")
    kinds = opts.progs.split(",")
    progs = {k: Program(k, fresh_dir("fig2", k), emu.url, emu.auth) for k in kinds}
    took = {k: [] for k in kinds}
    for i in range(1, opts.rounds + 1):
        for k in kinds:
            t0 = time.perf_counter()
            progs[k].write(b"BOINC_PING %d\n" % i)
            ack = progs[k].line()
            took[k].append(time.perf_counter() - t0)
            if ack != b"S" or i not in progs[k].wait_results([i], 30, 0.001):
                raise RuntimeError("fig2: %s did not answer ping %d" % (k, i))
            time.sleep(0.01)             # idle between requests
    for k in kinds:
        v = sorted(took[k])
        note("fig2", k, "fig2 isolated ping return line p50", v[len(v) // 2] * 1000, "ms", n=len(v))
        note("fig2", k, "fig2 isolated ping return line p99",
             v[min(len(v) - 1, int(len(v) * 0.99))] * 1000, "ms", n=len(v))
        progs[k].close()


# ------------------------------------------------------------------ fig4, fig5

def inputs(njobs):
    """fig4's files: one 10 MB input all jobs share, a 1 KB one per job (made once)."""
    d = os.path.join(opts.work, "inputs")
    done = os.path.join(d, "made.%d" % njobs)
    if not os.path.exists(done):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        rnd = random.Random(2026)
        with open(os.path.join(d, "common.bin"), "wb") as f:
            f.write(rnd.randbytes(10 << 20))
        for i in range(njobs):
            with open(os.path.join(d, "job%06d.bin" % i), "wb") as f:
                f.write(rnd.randbytes(1024))
        open(done, "w").close()
    return d, os.path.join(d, "common.bin"), [os.path.join(d, "job%06d.bin" % i) for i in range(njobs)]


def submit_request(rid, batch, jobs, app="twoinout"):
    """BOINC_SUBMIT of jobs = [(name, [(local path, name on the project)])]."""
    words = [b"BOINC_SUBMIT", b"%d" % rid, batch.encode(), app.encode(), b"%d" % len(jobs)]
    for name, files in jobs:
        words += [name.encode(), b"0", b"%d" % len(files)]
        for src, dst in files:
            words += [src.encode(), dst.encode()]
    return b" ".join(words) + b"\n"


def fig4_jobs(batch, kind, own, common):
    return [("%s_%s_%06d" % (batch, kind, i), [(own[i], "a"), (common, "b")]) for i in range(len(own))]


def measured_submit(prog, emu, rid, batch, jobs, record_to=None):
    syncs = SyncCounter(prog.pid, os.path.join(prog.wd, "perf_%s.txt" % batch))
    recorder = None
    if record_to and shutil.which("perf"):
        recorder = subprocess.Popen(["perf", "record", "-F", "1999", "-g", "-p", str(prog.pid),
                                     "-o", record_to], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        time.sleep(1)
    c0, cpu0, io0 = emu.counters(), prog.cpu(), prog.io()
    request = submit_request(rid, batch, jobs)
    t0 = time.perf_counter()
    writer = prog.write_behind(request)
    ack = prog.line(1800)
    got = prog.wait_results([rid], 1800)
    wall = time.perf_counter() - t0
    writer.join()
    c1, cpu1, io1 = emu.counters(), prog.cpu(), prog.io()
    if recorder:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(60)
    return {"ack": ack.decode(), "result": got.get(rid, b"(none)").decode(errors="replace"),
            "wall": wall, "cpu": cpu1 - cpu0, "rpcs": rpcs_between(c0, c1),
            "bytes_up": c1["bytes_uploaded"] - c0["bytes_uploaded"],
            "files_up": c1["files_uploaded"] - c0["files_uploaded"],
            "rchar": io1["rchar"] - io0["rchar"], "read_bytes": io1["read_bytes"] - io0["read_bytes"],
            "syncs": syncs.stop(), "request_bytes": len(request)}


def fig45(_emu):
    _, common, own = inputs(opts.jobs)
    for r, kind in turns(opts.reps):
        wd = fresh_dir("fig45", "%s_%d" % (kind, r))
        emu = Emulator(os.path.join(wd, "emu"), hosts=2)
        try:
            extra = opts.gahp_args.split() if kind == "gahp" else ()
            prog = Program(kind, os.path.join(wd, "g"), emu.url, emu.auth, extra)
            for fig, batch, rid in (("fig4", "b1", 1), ("fig5", "b2", 2)):
                if kind == "gahp":
                    sync_probe(fig, "the submit of " + batch)
                m = measured_submit(prog, emu, rid, batch, fig4_jobs(batch, kind[0], own, common),
                                    os.path.join(wd, "perf_%s.data" % batch) if opts.perf_record else None)
                what = "%s %d-job submit%s" % (fig, opts.jobs, "" if fig == "fig4" else
                                               " again (same inputs, new batch)")
                ok = m["result"] == "NULL"
                note(fig, kind, what + ": wall", m["wall"] if ok else None, "s", rep=r,
                     result=m["result"][:200])
                note(fig, kind, what + ": CPU (user+sys)", m["cpu"], "s", rep=r)
                note(fig, kind, what + ": RPCs", sum(m["rpcs"].values()), "", rep=r, by_kind=m["rpcs"])
                note(fig, kind, what + ": bytes uploaded", m["bytes_up"], "B", rep=r, files=m["files_up"])
                note(fig, kind, what + ": rchar (every read)", m["rchar"], "B", rep=r,
                     disk_reads=m["read_bytes"], request_bytes=m["request_bytes"])
                if m["syncs"] is not None:
                    note(fig, kind, what + ": fsync+fdatasync calls", m["syncs"], "", rep=r)
            prog.close()
        finally:
            emu.stop()


TRACE_LINE = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(.*)$")
READ_CALL = re.compile(r"^p?readv?(?:64)?\(\d+<([^>]*)>")
RETURNED = re.compile(r"\)\s+=\s+(-?\d+)")


def bytes_read_from(trace, prefix, t0, t1):
    """Bytes that read()-family calls returned from files under prefix between t0 and t1."""
    total, unfinished = 0, {}
    with open(trace, errors="replace") as f:
        for line in f:
            m = TRACE_LINE.match(line)
            if not m:
                continue
            pid, ts, rest = m.group(1), float(m.group(2)), m.group(3)
            if rest.startswith("<..."):                 # "<... read resumed>..."
                path = unfinished.pop(pid, None)
            else:
                call = READ_CALL.match(rest)
                if not call:
                    continue
                path = call.group(1)
                if rest.endswith("<unfinished ...>"):
                    unfinished[pid] = path
                    continue
            ret = RETURNED.search(rest)
            if path and path.startswith(prefix) and ret and t0 <= ts <= t1 + 1:
                total += max(0, int(ret.group(1)))
    return total


def fig5s(_emu):
    if not shutil.which("strace"):
        print("   fig5s skipped: no strace", flush=True)
        return
    d, common, own = inputs(opts.jobs)
    for _, kind in turns(1):
        wd = fresh_dir("fig5s", kind)
        trace = os.path.join(wd, "strace.txt")
        emu = Emulator(os.path.join(wd, "emu"), hosts=2)
        try:
            prog = Program(kind, os.path.join(wd, "g"), emu.url, emu.auth,
                           prefix=("strace", "-f", "-y", "-ttt", "-s", "0", "-o", trace,
                                   "-e", "trace=read,pread64,readv,preadv"))
            spans = {}
            for fig, batch, rid in (("fig4", "b1", 1), ("fig5", "b2", 2)):
                start = time.time()
                writer = prog.write_behind(submit_request(rid, batch, fig4_jobs(batch, kind[0], own, common)))
                prog.line(1800)
                result = prog.wait_results([rid], 1800, 0.05).get(rid)
                writer.join()
                spans[fig] = (start, time.time())
                if result != b"NULL":
                    raise RuntimeError("fig5s: %s's submit of %s: %r" % (kind, batch, result))
            prog.close()
            for fig, (t0, t1) in spans.items():
                note(fig + "s", kind, "%s bytes read() from the input files (strace)" % fig,
                     bytes_read_from(trace, d + "/", t0, t1), "B")
        finally:
            emu.stop()


# ------------------------------------------------------------------ fig6, fig7

def copy_journal(src, dst):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(src + suffix):
            shutil.copy(src + suffix, dst + suffix)


def prepared_project():
    """One emulator for fig6 and fig7, made once per work directory by
    boinc_gahp: batch fo (--fo-jobs jobs, run to completion) and ten
    unrun batches qb0..qb9 of --qb-jobs jobs.  Returns (emulator, the
    journal that submitted them)."""
    d = os.path.join(opts.work, "prepared")
    ready = os.path.join(d, "ready.json")
    if os.path.exists(ready):
        with open(ready) as f:
            return Emulator(os.path.join(d, "emu")), json.load(f)["journal"]
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "in"))
    emu = Emulator(os.path.join(d, "emu"))
    small_a, small_b = os.path.join(d, "in", "a.txt"), os.path.join(d, "in", "b.txt")
    with open(small_a, "w") as f:
        f.write("4 5\n")
    with open(small_b, "w") as f:
        f.write("1 2 3\n")
    rnd = random.Random(11)
    fo = []
    for i in range(opts.fo_jobs):
        fo.append(os.path.join(d, "in", "fo%05d.txt" % i))
        with open(fo[-1], "w") as f:
            f.write(" ".join(str(rnd.randint(0, 999)) for _ in range(200)) + "\n")
    prog = Program("gahp", os.path.join(d, "g"), emu.url, emu.auth)
    batches = [(1, "fo", [("fo_%05d" % i, [(fo[i], "a"), (small_b, "b")]) for i in range(opts.fo_jobs)])]
    batches += [(10 + k, "qb%d" % k, [("qb%d_%06d" % (k, i), [(small_a, "a"), (small_b, "b")])
                                      for i in range(opts.qb_jobs)]) for k in range(10)]
    for rid, name, jobs in batches:
        t0 = time.perf_counter()
        prog.write(submit_request(rid, name, jobs))
        if prog.line() != b"S" or prog.wait_results([rid], 900).get(rid) != b"NULL":
            raise RuntimeError("preparing fig6/fig7: the submit of %s failed" % name)
        print("   prepared %s in %.1f s" % (name, time.perf_counter() - t0), flush=True)
        if name == "fo":
            emu.run_all()              # run fo's jobs to completion (manual clock)
    prog.close()
    with open(ready, "w") as f:
        json.dump({"journal": prog.journal}, f)
    return emu, prog.journal


def fig6(emu, journal):
    jobs = "{:,}".format(opts.qb_jobs)
    asks = [(1, ["qb0"], "fig6 QUERY_BATCHES 1 x %s jobs" % jobs),
            (2, ["qb%d" % k for k in range(10)], "fig6 QUERY_BATCHES 10 x %s jobs" % jobs),
            (3, ["qb0"], "fig6 QUERY_BATCHES 1 x %s jobs (again)" % jobs)]
    for r, kind in turns(opts.reps):
        wd = fresh_dir("fig6", "%s_%d" % (kind, r))
        mine = None
        if kind == "gahp":              # boinc_gahp knows the batches it submitted
            mine = os.path.join(wd, "journal.db")
            copy_journal(journal, mine)
        prog = Program(kind, wd, emu.url, emu.auth, journal=mine)
        for rid, names, label in asks:
            t0 = time.perf_counter()
            prog.write(b"BOINC_QUERY_BATCHES %d 0 %d %s\n" % (rid, len(names), " ".join(names).encode()))
            if prog.line() != b"S":
                raise RuntimeError("fig6: %s refused the query" % kind)
            reply = prog.wait_results([rid], 600, 0.002).get(rid, b"")
            took = time.perf_counter() - t0
            note("fig6", kind, label, took if reply.startswith(b"NULL") else None, "s", rep=r,
                 reply_bytes=len(reply), head=reply[:60].decode(errors="replace"))
        prog.close()


def fig7(emu):
    n = opts.fo_jobs
    for r, kind in turns(opts.reps):
        wd = fresh_dir("fig7", "%s_%d" % (kind, r))
        prog = Program(kind, os.path.join(wd, "g"), emu.url, emu.auth)
        dirs = [os.path.join(wd, "out", "%05d" % i) for i in range(n)]
        for dd in dirs:
            os.makedirs(dd)
        cpu0, t0 = prog.cpu(), time.perf_counter()
        writer = prog.write_behind(b"".join(
            b"BOINC_FETCH_OUTPUT %d fo_%05d %s stderr.txt ALL 0\n" % (i + 1, i, dirs[i].encode())
            for i in range(n)))
        prog.lines(n)
        got = prog.wait_results(range(1, n + 1), 900)
        wall = time.perf_counter() - t0
        writer.join()
        ok = sum(1 for v in got.values() if v.startswith(b"NULL"))
        present = sum(1 for dd in dirs if os.path.exists(os.path.join(dd, "sum"))
                      and os.path.exists(os.path.join(dd, "log")))
        note("fig7", kind, "fig7 {:,} pipelined FETCH_OUTPUT: wall".format(n), wall if ok == n else None,
             "s", rep=r, results=len(got), ok=ok, outputs_present=present)
        note("fig7", kind, "fig7 {:,} FETCH_OUTPUT: CPU (user+sys)".format(n), prog.cpu() - cpu0, "s", rep=r)
        prog.close()


# ------------------------------------------------------------------ fig8

def time_to_banner(journal):
    t0 = time.perf_counter()
    p = subprocess.Popen([opts.gahp, "--journal", journal], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env())
    banner = p.stdout.readline()
    took = time.perf_counter() - t0
    p.stdin.close()
    p.wait(120)
    if not banner.startswith(b"$GahpVersion"):
        raise RuntimeError("fig8: no banner but %r" % banner[:80])
    return took


def fig8(_emu):
    n = opts.startup_requests
    wd = fresh_dir("fig8")
    journal = os.path.join(wd, "journal.db")
    prog = Program("gahp", wd, journal=journal)
    writer = prog.write_behind(b"".join(b"BOINC_PING %d\n" % i for i in range(1, n + 1)))
    prog.lines(n)
    writer.join()
    if wait_done(prog, n, 600) is None:
        raise RuntimeError("fig8: the pings did not complete")
    prog.proc.kill()                     # a crash with every result undelivered
    prog.proc.wait()
    prog.stderr.close()
    for state in ("after a crash, %d results undelivered" % n, "after a clean exit, all delivered"):
        if state.startswith("after a clean"):
            again = Program("gahp", wd, journal=journal, extra=("--requeue-undelivered",))
            again.wait_results(range(1, n + 1), 600, 0.2)
            again.close()
        times = []
        for k in range(5):
            copy = os.path.join(wd, "copy%d.db" % k)
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(copy + suffix):
                    os.unlink(copy + suffix)
            copy_journal(journal, copy)
            times.append(time_to_banner(copy))
        note("fig8", "gahp", "fig8 start-up to banner, %s" % state, statistics.median(times), "s",
             each=[round(t, 4) for t in times])


# ------------------------------------------------------------------ fig9, fig9b

def fig9(emu):
    path = os.path.join(opts.work, "sync.test")
    for mode in ("append", "overwrite"):
        for rep in range(3):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            if mode == "overwrite":          # like a reused WAL: no size change
                os.write(fd, bytes(4096 * 1024))
                os.fsync(fd)
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < 3:
                if mode == "append":
                    os.write(fd, b"x" * 4096)
                else:
                    os.pwrite(fd, b"x" * 4096, (n % 1024) * 4096)
                os.fdatasync(fd)
                n += 1
            rate = n / (time.perf_counter() - t0)
            os.close(fd)
            note("fig9", "limit", "fig9 %s 4 KiB + fdatasync rate, work directory's disk" % mode,
                 rate, "1/s", rep=rep)
    os.unlink(path)
    if opts.fsync_only:
        return
    block = os.urandom(1 << 16)
    for rep in range(3):
        h, t0 = hashlib.md5(), time.perf_counter()
        for _ in range(16384):               # 1 GiB
            h.update(block)
        note("fig9", "limit", "fig9 MD5 of 1 GiB in memory (hashlib)",
             (1 << 30) / (time.perf_counter() - t0) / 1e6, "MB/s", rep=rep)
    if shutil.which("openssl"):
        out = subprocess.run(["openssl", "speed", "-evp", "md5", "-seconds", "2", "-bytes", "65536"],
                             capture_output=True, text=True, timeout=120).stdout
        m = re.search(r"^md5\s+([\d.]+)k", out, re.M)
        if m:
            note("fig9", "limit", "fig9 MD5 (openssl speed, 64 KiB blocks)", float(m.group(1)) / 1000, "MB/s")
    if shutil.which("curl"):
        big = os.path.join(opts.work, "upload.bin")
        with open(big, "wb") as f:
            f.write(os.urandom(200 * 1000 * 1000))
        for rep in range(3):
            req = ("<upload_files>\n<authenticator>%s</authenticator>\n<phys_name>pvg_%d_%d.bin"
                   "</phys_name>\n</upload_files>\n" % (emu.auth, os.getpid(), rep))
            c0 = emu.counters()
            out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}",
                                  "-H", "Expect:", "--form-string", "request=" + req,
                                  "-F", "file_0=@" + big, emu.url + "job_file.php"],
                                 capture_output=True, text=True, env=child_env())
            code, secs = out.stdout.split()
            up = emu.counters()["bytes_uploaded"] - c0["bytes_uploaded"]
            note("fig9", "limit", "fig9 loopback HTTP upload of 200 MB (curl to the emulator)",
                 up / float(secs) / 1e6 if float(secs) else None, "MB/s", rep=rep, http=code)
        os.unlink(big)
    for rep in range(3):
        with socket.socket() as srv:
            srv.bind(("127.0.0.1", 0))
            srv.listen(1)
            received = [0]

            def drain():
                conn, _ = srv.accept()
                with conn:
                    while True:
                        b = conn.recv(1 << 20)
                        if not b:
                            return
                        received[0] += len(b)
            t = threading.Thread(target=drain)
            t.start()
            t0 = time.perf_counter()
            with socket.create_connection(srv.getsockname()) as c:
                chunk = bytes(1 << 20)
                for _ in range(1024):
                    c.sendall(chunk)
            t.join()
            note("fig9", "limit", "fig9 raw loopback TCP copy of 1 GiB",
                 received[0] / (time.perf_counter() - t0) / 1e6, "MB/s", rep=rep)


def fig9b(_emu):
    if not shutil.which("curl"):
        print("   fig9b skipped: no curl", flush=True)
        return
    _, common, own = inputs(opts.jobs)
    files = [common] + own
    for rep in range(3):
        wd = fresh_dir("fig9b", str(rep))
        emu = Emulator(os.path.join(wd, "emu"), hosts=1)
        try:
            request = os.path.join(wd, "request.xml")
            with open(request, "w") as f:
                f.write("<upload_files>\n<authenticator>%s</authenticator>\n" % emu.auth)
                for i in range(len(files)):
                    f.write("<phys_name>pvg%032x_%d.bin</phys_name>\n" % (random.getrandbits(128), i))
                f.write("</upload_files>\n")
            config = os.path.join(wd, "curl.cfg")
            with open(config, "w") as f:
                f.write('form = "request=<%s"\n' % request)
                for i, p in enumerate(files):
                    f.write('form = "file_%d=@%s"\n' % (i, p))
            c0 = emu.counters()
            out = subprocess.run(["curl", "-s", "-o", os.path.join(wd, "reply.txt"), "-w",
                                  "%{http_code} %{time_total}", "-H", "Expect:", "-K", config,
                                  emu.url + "job_file.php"], capture_output=True, text=True,
                                 env=child_env())
            code, secs = out.stdout.split()
            c1 = emu.counters()
            note("fig9", "limit", "fig9 loopback HTTP upload of fig4's %d files in one POST" % len(files),
                 (c1["bytes_uploaded"] - c0["bytes_uploaded"]) / float(secs) / 1e6, "MB/s", rep=rep,
                 http=code, files=c1["files_uploaded"] - c0["files_uploaded"])
        finally:
            emu.stop()


FIGURES = {"fig1": fig1, "fig2": fig2, "fig45": fig45, "fig5s": fig5s, "fig6": fig6,
           "fig7": fig7, "fig8": fig8, "fig9": fig9, "fig9b": fig9b}


def main():
    global opts
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", help="BOINC's sample GAHP (samples/condor/boinc_gahp)")
    ap.add_argument("--gahp", help="boinc_gahp")
    ap.add_argument("--emu", help="boinc_emu")
    ap.add_argument("--work", default="/tmp/peer_vs_gahp", help="work directory, results.jsonl")
    ap.add_argument("--only", default="fig9,fig2,fig1,fig45,fig5s,fig6,fig7,fig8",
                    help="figures to run, in this order (also: fig9b)")
    ap.add_argument("--reps", type=int, default=3, help="turns of each program per figure")
    ap.add_argument("--reps-big", type=int, default=2, help="turns for fig1's larger sizes")
    ap.add_argument("--rounds", type=int, default=200, help="fig2: pings per program")
    ap.add_argument("--jobs", type=int, default=10000, help="fig4/fig5: jobs per submit")
    ap.add_argument("--progs", default="peer,gahp", help="programs, in turn order")
    ap.add_argument("--pings", default="10000,100000", help="fig1 sizes (the last gives fig3)")
    ap.add_argument("--targets", default="emu,dead", help="fig1 projects: the emulator, a dead port")
    ap.add_argument("--qb-jobs", type=int, default=10000, help="fig6: jobs per batch")
    ap.add_argument("--fo-jobs", type=int, default=1000, help="fig7: jobs fetched")
    ap.add_argument("--startup-requests", type=int, default=100000, help="fig8: requests journaled")
    ap.add_argument("--no-perf", action="store_true", help="do not count fsyncs with perf stat")
    ap.add_argument("--perf-record", action="store_true", help="fig45: perf record each submit")
    ap.add_argument("--gahp-args", default="", help="fig45: more boinc_gahp options")
    ap.add_argument("--fsync-only", action="store_true", help="fig9: the sync rates only")
    ap.add_argument("--table", action="store_true", help="print the table of --work's results")
    opts = ap.parse_args()
    opts.work = os.path.abspath(opts.work)
    os.makedirs(opts.work, exist_ok=True)
    if opts.table:
        print_table(opts.work)
        return 0
    figs = opts.only.split(",")
    unknown = [f for f in figs if f not in FIGURES]
    if unknown:
        ap.error("no figure %s (figures: %s)" % (", ".join(unknown), " ".join(FIGURES)))
    needed = ["emu"] + [k for k in ("peer", "gahp") if k in opts.progs.split(",")]
    if "fig8" in figs and "gahp" not in needed:
        needed.append("gahp")
    for k in needed:
        if not getattr(opts, k) or not os.access(getattr(opts, k), os.X_OK):
            ap.error("--%s must name an executable (got %r)" % (k, getattr(opts, k)))
        setattr(opts, k, os.path.abspath(getattr(opts, k)))
    emu = Emulator(os.path.join(opts.work, "emu_main"))
    try:
        for fig in figs:
            print("== %s %s" % (fig, time.strftime("%H:%M:%S")), flush=True)
            t0 = time.perf_counter()
            if fig in ("fig6", "fig7"):
                prepared, journal = prepared_project()
                try:
                    fig6(prepared, journal) if fig == "fig6" else fig7(prepared)
                finally:
                    prepared.stop()
            else:
                FIGURES[fig](emu)
            print("== %s took %.0f s" % (fig, time.perf_counter() - t0), flush=True)
    finally:
        emu.stop()
    print_table(opts.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
