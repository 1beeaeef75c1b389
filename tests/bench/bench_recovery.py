#!/usr/bin/python3
"""bench_recovery - start-up time after a crash with 100,000 journaled
commands (issue 5): a server accepts 100,000 requests and is SIGKILLed
before delivering their results; then the time from exec to the banner of
the restarted server (which runs recovery over all of them) is measured,
three times on fresh copies of the crashed journal.  Prints numbers."""
import argparse
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from figures import figure  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--requests", type=int, default=100000)
    args, _ = ap.parse_known_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    from gahp_client import Gahp, gahp_env

    with tempfile.TemporaryDirectory(prefix="bench_recovery.") as tmp:
        journal = os.path.join(tmp, "journal.db")
        g = Gahp(journal)
        # Half are submits (kept for replay or resumed), half pings (closed):
        # no project is selected, so each completes at once with an error.
        n = args.requests
        lines = []
        for i in range(1, n + 1):
            if i % 2:
                lines.append("BOINC_PING %d" % i)
            else:
                lines.append("BOINC_SUBMIT %d batch%d uppercase 1 job%d 0 1 /x/in%d in" % (i, i, i, i))
        g.send_raw(("\n".join(lines) + "\n").encode())
        for _ in range(n):
            assert g.read_line(timeout=120) == "S"
        deadline = time.monotonic() + 120
        db = sqlite3.connect(journal)
        while db.execute("SELECT count(*) FROM requests WHERE state = 'completed'").fetchone()[0] < n:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        done = db.execute("SELECT count(*) FROM requests WHERE state = 'completed'").fetchone()[0]
        db.close()
        g.proc.send_signal(signal.SIGKILL)
        g.proc.wait()
        g.kill()
        print("crashed run: %d requests journaled, %d completed and undelivered" % (n, done))

        times = []
        for k in range(3):
            copy = os.path.join(tmp, "copy%d.db" % k)
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(journal + suffix):
                    shutil.copy(journal + suffix, copy + suffix)
            t0 = time.monotonic()
            p = subprocess.Popen([args.gahp, "--journal", copy], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 env=gahp_env())
            banner = p.stdout.readline()
            times.append(time.monotonic() - t0)
            assert banner.startswith(b"$GahpVersion"), banner
            p.stdin.close()
            p.wait(timeout=60)
        print("start-up to banner with %d journaled commands: min %.3f s, median %.3f s, max %.3f s"
              % (n, min(times), statistics.median(times), max(times)))
        figure("recovery.startup_s", statistics.median(times), "s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
