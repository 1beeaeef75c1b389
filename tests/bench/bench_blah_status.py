#!/usr/bin/python3
"""bench_blah_status - BLAH_JOB_STATUS throughput from the journal (issue 39):
N (default 10,000) live `batch boinc` jobs, submitted through the real
binary to the real emulator (127.0.0.1 only), on the server and running
(the emulator's manual clock advanced by 0: every job IN_PROGRESS), then
status rounds over all N jobs, many statuses in flight as the grid manager
pipelines them (ASYNC_MODE_ON: requests written in bulk, RESULTS on each
R), for --seconds each:

  (a) the project reachable, with --status-interval small so that the
      scheduler queries the project during the measurement;
  (b) the project unreachable (every RPC answered 503 by the emulator's
      fault injection), where the scheduler must back off.

For each: statuses a second, latency from the request's write to its
result line (p50/p99/max), the server's and this client's CPU during the
phase (so the reader sees who limited the number) and the project RPCs
made (the emulator's counters, faulted ones included), per round.

The client is one thread with non-blocking pipes: it writes requests in
bulk and parses result lines in bulk (not blah_client.py's one-at-a-time
model, whose per-line queue would be the bottleneck).  Prints numbers;
asserts only correctness: every status answers 0, with the job's own
BatchJobId and the expected JobStatus (2 while running, 2 or 1 in the
outage), and exactly the grid manager's 5 tokens."""
import argparse
import collections
import fcntl
import os
import selectors
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from figures import cpu_seconds, emu_state_dir, figure, load_average, rss_kib  # noqa: E402


def syscalls(pid):
    """(read, write) system calls of a live process so far (/proc/PID/io)."""
    with open("/proc/%d/io" % pid) as f:
        io = dict(line.split(": ") for line in f.read().splitlines())
    return int(io["syscr"]), int(io["syscw"])


class Pipelined:
    """One boinc_gahp over non-blocking pipes, spoken to like the grid
    manager in async mode, with no per-line thread or queue."""

    def __init__(self, cmd, env, stderr_path):
        self.stderr = open(stderr_path, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, bufsize=0)
        self.win, self.rout = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        for fd in (self.win, self.rout):
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.rout, selectors.EVENT_READ)
        self.inbuf = b""
        self.lines = collections.deque()
        self.out = bytearray()
        self.next_id = 2            # the grid manager's ids start at 2
        banner = self.line()
        assert banner.startswith("$GahpVersion"), banner

    # ---- raw I/O ----------------------------------------------------------
    def _pump(self, timeout):
        """Write what is pending, read what is there (one select)."""
        if self.out:
            try:
                n = os.write(self.win, self.out)
                del self.out[:n]
            except BlockingIOError:
                pass
        # with bytes still to write, come back soon to write them
        if not self.sel.select(min(timeout, 0.001) if self.out else timeout):
            return
        try:
            data = os.read(self.rout, 1 << 20)
        except BlockingIOError:
            return
        if not data:
            raise EOFError("boinc_gahp closed its stdout")
        parts = (self.inbuf + data).split(b"\n")
        self.inbuf = parts.pop()
        # result lines here never hold an escaped LF (status ads, job ids):
        # a plain split is exact
        self.lines.extend(p.decode("utf-8", "surrogateescape") for p in parts)

    def line(self, timeout=60):
        deadline = time.monotonic() + timeout
        while not self.lines:
            if time.monotonic() > deadline:
                raise TimeoutError("no line from boinc_gahp in %ss" % timeout)
            self._pump(0.05)
        return self.lines.popleft()

    def command(self, text):
        """A synchronous command before the pipelined part."""
        self.out += text.encode() + b"\n"
        return self.line()

    # ---- pipelined requests ------------------------------------------------
    def run(self, make_args, total, window, check, timeout=600):
        """Send `total` requests (make_args(k) -> (command, escaped args)),
        at most `window` unanswered, RESULTS on every R.  check(k, tokens)
        sees each result's tokens after the id (unescaped only as far as the
        caller needs).  Returns (latencies in s, first send, last result)."""
        sent_at, which, lat = {}, {}, []
        expect = collections.deque()        # "S" per request, "H" per RESULTS
        results_out = False
        more_r = False
        in_block = 0
        k = done = 0
        t_first = time.monotonic()
        deadline = t_first + timeout
        while done < total:
            if k < total and len(sent_at) < window:
                now = time.monotonic()
                parts = []
                while k < total and len(sent_at) < window:
                    rid = self.next_id
                    self.next_id += 1
                    cmd, args = make_args(k)
                    parts.append("%s %d %s\n" % (cmd, rid, args))
                    sent_at[rid] = now
                    which[rid] = k
                    expect.append("S")
                    k += 1
                self.out += "".join(parts).encode("utf-8", "surrogateescape")
            if not self.lines:
                if time.monotonic() > deadline:
                    raise TimeoutError("%d of %d results after %ss" % (done, total, timeout))
                self._pump(1.0)
            now = time.monotonic()
            lines = self.lines
            while lines:
                ln = lines.popleft()
                if in_block:
                    in_block -= 1
                    rid_s, rest = ln.split(" ", 1)
                    rid = int(rid_s)
                    lat.append(now - sent_at.pop(rid))
                    check(which.pop(rid), rest)
                    done += 1
                    if in_block == 0:
                        results_out = False
                        if more_r:
                            more_r = False
                            self.out += b"RESULTS\n"
                            expect.append("H")
                            results_out = True
                    continue
                if ln == "R":
                    if results_out:
                        more_r = True
                    else:
                        self.out += b"RESULTS\n"
                        expect.append("H")
                        results_out = True
                    continue
                what = expect.popleft()
                if what == "S":
                    assert ln == "S", "request refused: %r" % ln
                else:
                    assert ln.startswith("S "), "RESULTS answered %r" % ln
                    in_block = int(ln[2:])
                    if in_block == 0:
                        results_out = False
        return lat, t_first, time.monotonic()

    def stop(self):
        self.out += b"QUIT\n"
        try:
            while self.out:
                self._pump(0.1)
            rc = self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.stderr.close()
        return rc


def pct(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    i = min(len(sorted_vals) - 1, int(round(p / 100.0 * (len(sorted_vals) - 1))))
    return sorted_vals[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--window", type=int, default=2000,
                    help="statuses in flight (written before their results are read)")
    ap.add_argument("--seconds", type=float, default=10.0,
                    help="length of each phase (whole rounds over every job)")
    ap.add_argument("--status-interval", default="0.5",
                    help="--blah-status-interval of the server")
    ap.add_argument("--gahp-arg", action="append", default=[])
    ap.add_argument("--emu-arg", action="append", default=[])
    args, _ = ap.parse_known_args()
    os.environ["BOINC_GAHP"] = args.gahp
    os.environ["BOINC_EMU"] = args.emu
    import gahp_client
    gahp_client.DEFAULTS.clear()            # real time
    from gahp_client import escape
    from blah_client import submit_ad
    import emu as emu_mod

    tmp = tempfile.mkdtemp(prefix="bench_blah_status.")
    # its journal and log reach ~150 MB: removed at exit (BENCH_KEEP=1 keeps them)
    if not os.environ.get("BENCH_KEEP"):
        import atexit
        import shutil
        atexit.register(shutil.rmtree, tmp, True)
    # the emulator gives a host at most 1,000 tasks: enough hosts for all to run
    emu = emu_mod.Emulator(emu_state_dir("blah_status"), hosts=args.jobs // 500 + 2,
                           php_limits="none")
    emu.start()
    try:
        auth = os.path.join(tmp, "auth")
        with open(auth, "w") as f:
            f.write(emu.authenticator + "\n")
        os.chmod(auth, 0o600)
        cfg = os.path.join(tmp, "boinc_gahp.conf")
        with open(cfg, "w") as f:
            f.write("project_url = %s\nauthenticator_file = %s\n" % (emu.url, auth))
        os.chmod(cfg, 0o600)
        iwd = os.path.join(tmp, "iwd")
        os.mkdir(iwd)
        for i in range(args.jobs):
            with open(os.path.join(iwd, "in.%d" % i), "w") as f:
                f.write("job %d\n" % i)
        cmd = [args.gahp, "--journal", os.path.join(tmp, "journal.db"),
               "--blah-status-interval", args.status_interval,
               "--blah-batch-window", "1"] + args.gahp_arg
        env = gahp_client.gahp_env({"BOINC_GAHP_CONFIG": cfg})
        g = Pipelined(cmd, env, os.path.join(tmp, "gahp.stderr"))
        pid = g.proc.pid
        assert g.command("COMMANDS").startswith("S ")
        assert g.command("ASYNC_MODE_ON") == "S"
        print("bench_blah_status: %d jobs, %d statuses in flight, blah_status_interval %s s,"
              " phases of %.0f s; load %s, %d CPUs"
              % (args.jobs, args.window, args.status_interval, args.seconds, load_average(),
                 os.cpu_count()))

        def expect_ok(k, rest):
            assert rest.startswith("0 NULL"), rest
        g.run(lambda k: ("BLAH_PING", "boinc"), 1, 1, expect_ok, timeout=60)

        # ---- N submits, pipelined ------------------------------------------
        ads = [escape(submit_ad(iwd, "home_bl_bench_%d.0_1" % i, transfer_input="in.%d" % i,
                                transfer_output="out", remaps="out = out.%d" % i,
                                out="out.txt.%d" % i, err="err.txt.%d" % i))
               for i in range(args.jobs)]
        jobs = [None] * args.jobs

        def got_id(k, rest):
            rc, err, job = rest.split(" ")
            assert rc == "0", rest
            jobs[k] = job
        t0 = time.monotonic()
        g.run(lambda k: ("BLAH_JOB_SUBMIT", ads[k]), args.jobs, min(args.window, 500), got_id)
        answered = time.monotonic() - t0
        while len(emu.counters()["jobs_by_name"]) < args.jobs:
            time.sleep(0.2)
        counts = emu.counters()
        assert set(counts["jobs_by_name"].values()) == {1}
        assert set(counts["jobs_by_name"]) == set(jobs)
        print("  submit: %d ids in %.1f s, all on the server after %.1f s, %d batch(es)"
              % (args.jobs, answered, time.monotonic() - t0, counts["rpc"]["create_batch"]))
        emu.control("advance", "POST", timeout=emu_mod.HEAVY_TIMEOUT, seconds=0)
        st = collections.Counter(j["state"] if "state" in j else j.get("status")
                                 for j in emu.state()["jobs"])
        print("  on the emulator after advance(0): %s" % dict(st))

        # ---- the status rounds ---------------------------------------------
        escaped = [escape(j) for j in jobs]
        prefix = ["[\\ BatchJobId\\ =\\ \"%s\";\\ JobStatus\\ =\\ " % j for j in jobs]
        seen = collections.Counter()

        def status_check(allowed):
            def check(k, rest):
                rc, err, status, ad = rest.split(" ", 3)
                assert rc == "0" and err == "NULL", rest
                assert status in allowed, (jobs[k], rest)
                # the ad is one token: its spaces escaped, and it is this job's
                assert " " not in ad.replace("\\ ", ""), rest
                assert ad.startswith(prefix[k] + status), (jobs[k], rest)
                seen[status] += 1
            return check

        def rounds(allowed, label):
            """Whole rounds over every job until --seconds have passed."""
            n = args.jobs
            before, cpu0, me0 = emu.counters()["rpc"], cpu_seconds(pid), time.process_time()
            sys0 = syscalls(pid)
            lat, per_round, t_start = [], [], time.monotonic()
            seen.clear()
            while True:
                r0 = emu.counters()["rpc"]
                la, t1, t2 = g.run(lambda k: ("BLAH_JOB_STATUS", escaped[k]), n,
                                   args.window, status_check(allowed))
                lat += la
                r1 = emu.counters()["rpc"]
                per_round.append((n / (t2 - t1), sum(r1.values()) - sum(r0.values())))
                if time.monotonic() - t_start >= args.seconds:
                    break
            secs = time.monotonic() - t_start
            after = emu.counters()["rpc"]
            cpu, me = cpu_seconds(pid) - cpu0, time.process_time() - me0
            sys1 = syscalls(pid)
            rpcs = {k: after[k] - before[k] for k in after if after[k] != before[k]}
            lat.sort()
            total = len(lat)
            rate = total / secs
            print("  %s: %d statuses in %.2f s = %.0f statuses/s; latency p50 %.1f ms, "
                  "p99 %.1f ms, max %.1f ms; server CPU %.2f s (%.0f%% of one core), "
                  "%.0f us server CPU and %.1f read / %.1f write syscalls a status; "
                  "client CPU %.2f s (%.0f%%); answers %s; %d project RPC(s) %s"
                  % (label, total, secs, rate, pct(lat, 50) * 1e3, pct(lat, 99) * 1e3,
                     lat[-1] * 1e3, cpu, 100 * cpu / secs, 1e6 * cpu / total,
                     (sys1[0] - sys0[0]) / total, (sys1[1] - sys0[1]) / total,
                     me, 100 * me / secs,
                     dict(seen), sum(rpcs.values()), rpcs))
            print("    per round (statuses/s, RPCs): %s"
                  % ", ".join("%.0f/%d" % x for x in per_round))
            return rate, lat, cpu / secs, me / secs, sum(rpcs.values())

        # until the journal knows every job runs (the scheduler's first query)
        t_wait = time.monotonic()
        while True:
            seen.clear()
            g.run(lambda k: ("BLAH_JOB_STATUS", escaped[k]), args.jobs, args.window,
                  status_check({"1", "2"}))
            if seen["2"] == args.jobs:
                break
            assert time.monotonic() - t_wait < 120, dict(seen)
            time.sleep(0.2)
        print("  every job answers 2 (running) %.1f s after advance(0)"
              % (time.monotonic() - t_wait))

        res = {}
        res["up"] = rounds({"2"}, "(a) project reachable")
        emu.fault("*", "http503", probability=1)
        res["down"] = rounds({"2"}, "(b) project unreachable (every RPC 503)")
        emu.clear_faults()
        for key, (rate, lat, cpu, me, rpcs) in res.items():
            figure("blah_status.%s_per_s" % key, rate, "statuses/s")
            figure("blah_status.%s_p50_ms" % key, pct(lat, 50) * 1e3, "ms")
            figure("blah_status.%s_p99_ms" % key, pct(lat, 99) * 1e3, "ms")
            figure("blah_status.%s_max_ms" % key, lat[-1] * 1e3, "ms")
            figure("blah_status.%s_server_cpu" % key, cpu, "cores")
            figure("blah_status.%s_client_cpu" % key, me, "cores")
            figure("blah_status.%s_rpcs" % key, rpcs, "RPCs")
        peak = rss_kib(pid, "VmHWM") / 1024.0
        print("  server peak RSS %.1f MB; load at the end %s" % (peak, load_average()))
        figure("blah_status.peak_rss_mb", peak, "MB")
        assert g.stop() == 0
    finally:
        emu.stop()


if __name__ == "__main__":
    main()
