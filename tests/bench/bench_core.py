#!/usr/bin/python3
"""bench_core - throughput, latency and memory of the core server.

Prints numbers, asserts nothing about speed:
  1. 100,000 pipelined BOINC_PING acknowledged (journal synchronous=FULL):
     acknowledgements per second.  No project is selected, so no network is
     involved: every request is journaled, executed and its result
     group-committed.
  2. Isolated BOINC_PING on an idle server: p50/p99 of the time from
     writing the request to reading its return line (one fsync on the path),
     with the fdatasync time measured in the same directory in the same run
     and the round trip of a command that writes nothing to the journal.
  3. RSS of the server holding 100,000 completed, undelivered results; then
     the time of the RESULTS that delivers them all.
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from figures import figure  # noqa: E402
from bench_limits import fdatasync_ms  # noqa: E402
DEAD_PROXY = "http://127.0.0.1:9"


def env():
    # No settings of this machine (BOINC_GAHP_*, config files) leak in.
    e = {k: v for k, v in os.environ.items() if not k.startswith("BOINC_GAHP_")}
    e["BOINC_GAHP_CONFIG"] = "/dev/null"
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        e[k] = DEAD_PROXY
    e["no_proxy"] = e["NO_PROXY"] = "127.0.0.1"
    return e


class Server:
    def __init__(self, gahp, journal, args=()):
        self.journal = journal
        self.proc = subprocess.Popen([gahp, "--journal", journal, "--log-level", "warn"] + list(args),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env(), bufsize=0)
        self.buf = b""
        self.readline()                      # banner

    def readline(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("server closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def count_lines(self, n):
        """Read until n more lines arrived; returns nothing (fast path)."""
        got = self.buf.count(b"\n")
        data = [self.buf]
        while got < n:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("server closed stdout")
            got += chunk.count(b"\n")
            data.append(chunk)
        rest = b"".join(data)
        # keep what follows the n-th line
        idx = -1
        for _ in range(n):
            idx = rest.index(b"\n", idx + 1)
        self.buf = rest[idx + 1:]
        return rest[:idx + 1]

    def send(self, data):
        self.proc.stdin.write(data)

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return -1

    def quit(self):
        self.send(b"QUIT\n")
        self.readline()
        self.proc.wait(timeout=60)


def wait_completed(journal, n, timeout=600):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with sqlite3.connect(journal) as c:
            (k,) = c.execute("SELECT count(*) FROM requests WHERE state = 'completed'").fetchone()
        if k >= n:
            return
        time.sleep(0.2)
    raise TimeoutError("only %d of %d completed" % (k, n))


def bench_pipelined(gahp, tmp, n):
    journal = os.path.join(tmp, "pipelined.db")
    s = Server(gahp, journal)
    payload = b"".join(b"BOINC_PING %d\n" % i for i in range(1, n + 1))
    writer = threading.Thread(target=s.send, args=(payload,))
    t0 = time.perf_counter()
    writer.start()
    acks = s.count_lines(n)
    t1 = time.perf_counter()
    writer.join()
    assert acks.count(b"S\n") == n, "not every request was acknowledged with S"
    rate = n / (t1 - t0)
    print("1. pipelined acknowledgements: %d requests in %.3f s = %.0f requests/s "
          "(synchronous=FULL)" % (n, t1 - t0, rate))
    figure("core.ack_rate", rate, "req/s")
    return s, journal


def bench_memory_and_delivery(s, journal, n):
    wait_completed(journal, n)
    rss = s.rss_kib()
    print("3. RSS with %d completed, undelivered results: %.1f MB" % (n, rss / 1024.0))
    figure("core.rss_undelivered_mb", rss / 1024.0, "MB")
    t0 = time.perf_counter()
    s.send(b"RESULTS\n")
    head = s.readline()
    k = int(head.split()[1])
    s.count_lines(k)
    t1 = time.perf_counter()
    print("   RESULTS delivering %d results: %.3f s" % (k, t1 - t0))
    figure("core.results_delivery_s", t1 - t0, "s")
    s.quit()


def percentile_ms(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] * 1000


def bench_latency(gahp, tmp, rounds):
    journal = os.path.join(tmp, "latency.db")
    s = Server(gahp, journal)
    lat, floor = [], []
    for i in range(1, rounds + 1):
        t0 = time.perf_counter()
        s.send(b"BOINC_PING %d\n" % i)
        line = s.readline()
        lat.append(time.perf_counter() - t0)
        assert line == b"S"
        # let the result commit finish so the next request sees an idle server
        wait_done = time.monotonic() + 10
        while time.monotonic() < wait_done:
            s.send(b"RESULTS\n")
            head = s.readline()
            k = int(head.split()[1])
            for _ in range(k):
                s.readline()
            if k:
                break
            time.sleep(0.001)
        # The reader thread journals the delivery right after writing the
        # RESULTS reply (one more commit): without waiting for it, the next
        # request queued behind that commit and was not isolated.  VERSION
        # is answered by the same thread after it, without a journal write.
        s.send(b"VERSION\n")
        assert s.readline().startswith(b"S ")
        # A second one, on the idle server: the round trip of a command
        # without journal write (this client's and the pipes' share).
        t0 = time.perf_counter()
        s.send(b"VERSION\n")
        assert s.readline().startswith(b"S ")
        floor.append(time.perf_counter() - t0)
    s.quit()
    lat.sort()
    p50, p99 = percentile_ms(lat, 0.5), percentile_ms(lat, 0.99)
    sync_ms = fdatasync_ms(tmp, 200)
    # the request's own sync meets a disk idle since the previous request
    idle_sync_ms = fdatasync_ms(tmp, 200, idle_s=0.01)
    print("2. isolated request, return-line latency over %d requests: p50 %.3f ms, "
          "p99 %.3f ms, max %.3f ms" % (rounds, p50, p99, lat[-1] * 1000))
    print("   fdatasync in the same directory, same run: back to back %.3f ms, after "
          "10 ms idle %.3f ms; p50 = %.2f x the idle one (target <= 2), %.2f x the "
          "back-to-back one; round trip of a command without journal write (VERSION): "
          "p50 %.3f ms" % (sync_ms, idle_sync_ms, p50 / idle_sync_ms, p50 / sync_ms,
                           percentile_ms(floor, 0.5)))
    figure("core.latency_p50_ms", p50, "ms")
    figure("core.latency_p99_ms", p99, "ms")
    figure("core.latency_fdatasync_ms", sync_ms, "ms")
    figure("core.latency_fdatasync_idle_ms", idle_sync_ms, "ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", default=os.path.join(HERE, "..", "..", "build", "boinc_gahp"))
    ap.add_argument("--emu", default=None, help="unused here")
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=300)
    args, _ = ap.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="bench_core.") as tmp:
        s, journal = bench_pipelined(args.gahp, tmp, args.requests)
        # The first server's committer is still journaling its completions:
        # let it finish, so that the isolated requests meet an idle disk.
        wait_completed(journal, args.requests)
        bench_latency(args.gahp, tmp, args.rounds)
        bench_memory_and_delivery(s, journal, args.requests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
