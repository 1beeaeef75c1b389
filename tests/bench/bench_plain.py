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
(user + system) over the submit, its peak RSS (VmHWM) and the RPCs by
kind, medians over the repetitions, and the ratios gahp / peer.

    /usr/bin/python3 tests/bench/bench_plain.py --gahp build/boinc_gahp \\
        --emu build/boinc_emu [--peer /opt/peer/boinc_gahp] [--jobs 10000,100000] [--repeat 3]

The inputs are made once per N in --work (default: a temporary
directory); the emulator keeps its state in tmpfs (figures.emu_state_dir).
Prints numbers and FIGURE lines; asserts only correctness."""
import argparse
import json
import os
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

    def __init__(self, kind, binary, wd, emu):
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
                                  stderr=self.err, bufsize=0)
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
        with open("/proc/%d/stat" % self.p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

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


def one_run(args, kind, n, rep, paths):
    emu = Emu(args.emu, os.path.join(emu_state_dir("plain"), "emu"))
    binary = args.peer if kind == "peer" else args.gahp
    g = Program(kind, binary, os.path.join(args.work, "run_%s_%d_%d" % (kind, n, rep)), emu)
    try:
        batch = "plain%s%d" % (kind[0], rep)
        line = submit_line(1, batch, paths)         # built before the clock starts
        c0 = emu.counters()["rpc"]
        cpu0 = g.cpu_s()
        t0 = time.monotonic()
        w = threading.Thread(target=g.p.stdin.write, args=(line,), daemon=True)
        w.start()
        assert g.readline() == b"S"
        res = g.result_of(1)
        wall = time.monotonic() - t0
        w.join()
        cpu = g.cpu_s() - cpu0
        peak = g.proc("VmHWM") / 1024.0
        c1 = emu.counters()
        assert res == "NULL", res
        assert c1["files_uploaded"] == n, c1["files_uploaded"]
        rpcs = {k: v - c0.get(k, 0) for k, v in c1["rpc"].items() if v - c0.get(k, 0)}
        g.quit()
    finally:
        if g.p.poll() is None:
            g.p.kill()
        emu.stop()
    load = load_average()
    print("[load %s] %s %d jobs, run %d: wall %.2f s, CPU %.2f s, peak RSS %.1f MB, RPCs %s"
          % (load, kind, n, rep, wall, cpu, peak, rpcs), flush=True)
    return dict(wall=wall, cpu=cpu, peak=peak)


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
                for m, unit in (("wall", "s"), ("cpu", "s"), ("peak", "MB")):
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
