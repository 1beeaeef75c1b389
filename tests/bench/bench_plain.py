#!/usr/bin/python3
"""bench_plain - the plain-input submit of issue 31, side by side with
BOINC's sample GAHP when it is there.

One BOINC_SUBMIT of N jobs of app `uppercase`, each with its own 1 KB
input file (no shared input: the case beside fig4 of peer_vs_gahp.py,
whose jobs also share a 10 MB input), against a fresh emulator with PHP's
upload limits lifted (the sample GAHP cannot split uploads), for each N of
--jobs (default 10,000 and 100,000).  The programs run in the same
invocation, alternating (peer, gahp, peer, gahp, ...), --repeat times
each; both are driven the same way (the request line written, RESULTS
polled every 20 ms, as peer_vs_gahp.py does).  Reports per program and N
the wall time from the request line to its result, the server's CPU time
(user + system) over the submit, the emulator's CPU time over the same
span (the server work either program waits for: on a machine with few
cores, (server + emulator CPU) / cores bounds the wall time from below),
its peak RSS (VmHWM) and the RPCs by kind, medians over the repetitions,
and the ratios gahp / peer.

    /usr/bin/python3 tests/bench/bench_plain.py --gahp build/boinc_gahp \\
        --emu build/boinc_emu [--peer /opt/peer/boinc_gahp] [--jobs 10000,100000] [--repeat 3]

The inputs are made once per N in --work (default: a temporary
directory); the emulator keeps its state in tmpfs (figures.emu_state_dir).
With --phases, each boinc_gahp run also prints where its wall time went:
per phase of its log (debug level; planning, each RPC kind) the wall time
and the CPU time of the emulator and of boinc_gahp (sampled every 5 ms),
and the floor under it on this machine: submit_batch is one request (one
emulator thread, after every upload), the rest spreads over the cores, so
the submit cannot end before submit_batch's emulator CPU plus the other
phases' CPU (the emulator's, and the client's own) divided by the cores.

Prints numbers and FIGURE lines; asserts only correctness."""
import argparse
import datetime
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from figures import emu_state_dir, figure, load_average, median  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid):
    """User + system CPU seconds of a running process (all its threads)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class Emu:
    """A fresh boinc_emu with PHP's limits lifted."""

    def __init__(self, binary, state_dir):
        if os.path.exists(state_dir):
            shutil.rmtree(state_dir)
        os.makedirs(state_dir)
        self.log = open(state_dir + ".log", "ab")
        self.p = subprocess.Popen([binary, "--state-dir", state_dir, "--port", "0",
                                   "--clock", "manual", "--hosts", "2", "--log-level", "warn",
                                   "--php-limits", "none"],
                                  stdout=subprocess.PIPE, stderr=self.log)
        info = json.loads(self.p.stdout.readline())
        self.url, self.auth, self.control = info["url"], info["authenticator"], info["control"]

    def counters(self):
        import urllib.request
        with urllib.request.urlopen(self.control + "counters", timeout=600) as r:
            return json.loads(r.read())

    def cpu_s(self):
        """The emulator's CPU time (user + system, all its threads)."""
        return proc_cpu_s(self.p.pid)

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.log.close()


class Program:
    """One GAHP process: 'gahp' (boinc_gahp) or 'peer' (the sample GAHP)."""

    def __init__(self, kind, binary, wd, emu, env=None):
        binary = os.path.abspath(binary)        # it runs in wd
        if os.path.exists(wd):
            shutil.rmtree(wd)
        os.makedirs(wd)
        if kind == "peer":      # the sample GAHP reads its project from config.txt
            with open(os.path.join(wd, "config.txt"), "w") as f:
                f.write("%s\n%s\n" % (emu.url, emu.auth))
            cmd = [binary]
        else:
            cmd = [binary, "--journal", os.path.join(wd, "journal.db")]
        self.err = open(os.path.join(wd, "stderr.log"), "ab")
        self.p = subprocess.Popen(cmd, cwd=wd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, bufsize=0, env=env)
        self.buf = b""
        self.readline()                             # the banner
        self.p.stdin.write(b"BOINC_SELECT_PROJECT %s %s\n" % (emu.url.encode(), emu.auth.encode()))
        assert self.readline() == b"S"

    def readline(self, timeout=3600):
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [], timeout)
            chunk = os.read(self.p.stdout.fileno(), 1 << 20) if r else b""
            if not chunk:
                raise EOFError("no line from the GAHP")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def result_of(self, rid, timeout=3600):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.p.stdin.write(b"RESULTS\n")
            head = self.readline()
            assert head.startswith(b"S "), head
            for _ in range(int(head.split()[1])):
                i, _, tail = self.readline().partition(b" ")
                if int(i) == rid:
                    return tail.decode()
            time.sleep(0.02)
        raise TimeoutError("no result")

    def proc(self, field):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise KeyError(field)

    def cpu_s(self):
        return proc_cpu_s(self.p.pid)

    def quit(self):
        try:
            self.p.stdin.write(b"QUIT\n")
            self.p.stdin.close()
            self.p.wait(timeout=60)
        except Exception:
            self.p.kill()
            self.p.wait()
        self.err.close()


def make_inputs(work, n):
    d = os.path.join(work, "inputs%d" % n)
    if not os.path.exists(os.path.join(d, "done")):
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            with open(os.path.join(d, "in%06d.dat" % i), "wb") as f:
                f.write(os.urandom(1024))
        open(os.path.join(d, "done"), "w").close()
    return [os.path.join(d, "in%06d.dat" % i) for i in range(n)]


def submit_line(rid, batch, paths):
    parts = [b"BOINC_SUBMIT", b"%d" % rid, batch.encode(), b"uppercase", b"%d" % len(paths)]
    for i, p in enumerate(paths):
        parts += [b"%s_%06d" % (batch.encode(), i), b"0", b"1", p.encode(), b"in"]
    return b" ".join(parts) + b"\n"


class CpuSampler:
    """A process's CPU time every 5 ms, with the wall clock (the GAHP's log
    is in wall-clock time)."""

    def __init__(self, pid):
        self.pid, self.samples, self.done = pid, [], False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.done:
            try:
                self.samples.append((time.time(), proc_cpu_s(self.pid)))
            except OSError:         # it ended
                return
            time.sleep(0.005)

    def stop(self):
        self.done = True
        self.t.join()

    def at(self, t):
        """CPU seconds at wall-clock time t (the last sample before it)."""
        best = self.samples[0][1]
        for ts, c in self.samples:
            if ts > t:
                break
            best = c
        return best


PHASE_MARKS = (("inputs planned", "get_templates etc."), ("query_files: POST", "query_files"),
               ("upload_files: POST", "upload_files"), ("submit_batch: POST", "submit_batch"),
               ("finished: ok", None))


def print_phases(log_path, emu_cpu, gahp_cpu, wall):
    """Per phase of the GAHP's log: wall time, the emulator's and the
    GAHP's CPU; then the floor (see the module's doc)."""
    marks = []
    first_line = None
    for line in open(log_path, encoding="utf-8", errors="replace"):
        m = re.match(r"(\S+)Z boinc_gahp\[\w+\] (.*)", line)
        if not m:
            continue
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        for key, name in PHASE_MARKS:
            if key in m.group(2) and key not in [k for _, k, _ in marks]:
                marks.append((t, key, name))
                if key == "finished: ok":
                    first_line = t - int(re.search(r"ok in (\d+) ms", m.group(2)).group(1)) / 1000.0
    marks.insert(0, (first_line, "start", "parse and plan"))
    cpu, own = {}, {}
    print("  %-20s %8s %15s %12s" % ("phase", "wall s", "emulator CPU s", "GAHP CPU s"))
    for (t0, _, name), (t1, _, _) in zip(marks, marks[1:]):
        cpu[name] = emu_cpu.at(t1) - emu_cpu.at(t0)
        own[name] = gahp_cpu.at(t1) - gahp_cpu.at(t0)
        print("  %-20s %8.3f %15.2f %12.2f" % (name, t1 - t0, cpu[name], own[name]))
    cores = os.cpu_count() or 1
    serial = cpu.get("submit_batch", 0.0)
    spread = sum(v for k, v in cpu.items() if k != "submit_batch")
    client = sum(v for k, v in own.items() if k != "submit_batch")
    print("  floor: submit_batch %.2f s + (the emulator's other %.2f s + the GAHP's %.2f s of CPU)"
          " / %d cores = %.2f s (this run: %.2f s)"
          % (serial, spread, client, cores, serial + (spread + client) / cores, wall), flush=True)


def one_run(args, kind, n, rep, paths):
    emu = Emu(args.emu, os.path.join(emu_state_dir("plain"), "emu"))
    binary = args.peer if kind == "peer" else args.gahp
    phases = args.phases and kind == "gahp"
    env = dict(os.environ, BOINC_GAHP_LOG_LEVEL="debug") if phases else None
    wd = os.path.join(args.work, "run_%s_%d_%d" % (kind, n, rep))
    g = Program(kind, binary, wd, emu, env)
    samplers = (CpuSampler(emu.p.pid), CpuSampler(g.p.pid)) if phases else ()
    try:
        batch = "plain%s%d" % (kind[0], rep)
        line = submit_line(1, batch, paths)         # built before the clock starts
        c0 = emu.counters()["rpc"]
        cpu0 = g.cpu_s()
        emu_cpu0 = emu.cpu_s()
        t0 = time.monotonic()
        w = threading.Thread(target=g.p.stdin.write, args=(line,), daemon=True)
        w.start()
        assert g.readline() == b"S"
        res = g.result_of(1)
        wall = time.monotonic() - t0
        w.join()
        cpu = g.cpu_s() - cpu0
        emu_cpu = emu.cpu_s() - emu_cpu0
        peak = g.proc("VmHWM") / 1024.0
        c1 = emu.counters()
        assert res == "NULL", res
        assert c1["files_uploaded"] == n, c1["files_uploaded"]
        rpcs = {k: v - c0.get(k, 0) for k, v in c1["rpc"].items() if v - c0.get(k, 0)}
        g.quit()
    finally:
        for sampler in samplers:
            sampler.stop()
        if g.p.poll() is None:
            g.p.kill()
        emu.stop()
    load = load_average()
    print("[load %s] %s %d jobs, run %d: wall %.2f s, CPU %.2f s (the emulator's %.2f s), "
          "peak RSS %.1f MB, RPCs %s" % (load, kind, n, rep, wall, cpu, emu_cpu, peak, rpcs),
          flush=True)
    if phases:
        print_phases(os.path.join(wd, "journal.log"), samplers[0], samplers[1], wall)
    return dict(wall=wall, cpu=cpu, peak=peak, emu_cpu=emu_cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--peer", default=os.environ.get("PEER", "/opt/peer/boinc_gahp"),
                    help="the sample GAHP, skipped when absent (default: $PEER, "
                    "else /opt/peer/boinc_gahp, where `make bench` looks too)")
    ap.add_argument("--jobs", default="10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work")
    ap.add_argument("--phases", action="store_true",
                    help="per boinc_gahp run: wall time and the emulator's and the GAHP's CPU "
                    "per phase, and the floor they set on this machine (needs the GAHP's "
                    "debug log: slightly slower)")
    args, _ = ap.parse_known_args()
    kinds = ["gahp"]
    if args.peer and os.access(args.peer, os.X_OK):
        kinds = ["peer", "gahp"]
    else:
        print("sample GAHP not found (%s): boinc_gahp alone" % args.peer, flush=True)
    tmp = None
    if not args.work:
        tmp = args.work = tempfile.mkdtemp(prefix="bench_plain.")
    else:
        os.makedirs(args.work, exist_ok=True)
    try:
        for n in [int(x) for x in args.jobs.split(",")]:
            paths = make_inputs(args.work, n)
            got = {k: [] for k in kinds}
            for rep in range(args.repeat):
                for kind in kinds:
                    got[kind].append(one_run(args, kind, n, rep, paths))
            for kind in kinds:
                for m, unit in (("wall", "s"), ("cpu", "s"), ("emu_cpu", "s"), ("peak", "MB")):
                    figure("plain%d.%s.%s" % (n, kind, m), median([r[m] for r in got[kind]]), unit)
            if "peer" in got:
                for m in ("wall", "cpu", "peak"):
                    ratio = (median([r[m] for r in got["gahp"]]) /
                             median([r[m] for r in got["peer"]]))
                    print("%d jobs: gahp / peer %s = %.2f" % (n, m, ratio), flush=True)
                    figure("plain%d.ratio.%s" % (n, m), ratio, "x")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
