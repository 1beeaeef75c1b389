#!/usr/bin/python3
"""bench_retention - the journal's size under steady polling (issue 19),
through the real binary against the real emulator.

1. Bytes per poll of an unchanged batch (--sizes, default 2,000 and 10,000
   jobs): the batch is submitted through boinc_gahp, polled a few times
   (the first polls record the server's statuses), the pruner drops the
   answered submit's text, then the batch is polled --polls more times;
   the journal's used bytes ((page_count - freelist_count) x
   page_size, WAL included) before and after, divided by the polls.

2. A simulated month of polling (--jobs, default 10,000): one poll of the
   batch stands for one simulated minute.  The retention (7 simulated
   days = --window polls, default 10,080, one a minute) is set on the test
   clock (BOINC_GAHP_TEST_TIME_SCALE=--scale): the real duration of one
   poll is measured first, and --retention-days is chosen so that the
   retention lasts --window polls.  The batch is then polled back to back
   for --rounds windows (default 1.5: past the retention, where the
   growth must stop) and the journal's size is printed every quarter
   window.  A month (43,200 polls) is 4.3 windows; the size past the first
   window is the size of any later day, which is what the figure reports.

Also prints the server's peak RSS (VmHWM).  Prints numbers; asserts
nothing but correctness."""
import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from figures import figure, rss_kib  # noqa: E402


def used_bytes(journal):
    db = sqlite3.connect("file:%s?mode=ro" % journal, uri=True, timeout=30)
    try:
        pages, free, size = (db.execute("PRAGMA %s" % p).fetchone()[0]
                             for p in ("page_count", "freelist_count", "page_size"))
        return (pages - free) * size
    finally:
        db.close()


def file_bytes(journal):
    return sum(os.path.getsize(journal + s) for s in ("", "-wal")
               if os.path.exists(journal + s))


def start(journal, emu, env, args=()):
    from gahp_client import Gahp
    from submit_client import Client
    return Client(Gahp(journal, args=list(args), env=env), emu)


def submit(c, tmp, name, njobs):
    src = os.path.join(tmp, name + ".in")
    with open(src, "w") as f:
        f.write("input of %s\n" % name)
    jobs = [("%s#%d" % (name, i), [], [(src, "in")]) for i in range(njobs)]
    assert c.wait(c.submit(name, "uppercase", jobs), timeout=1800) == ["NULL"]


def poll(c, name):
    toks = c.call("BOINC_QUERY_BATCHES", 0, 1, name, timeout=600)
    assert toks[0] == "NULL", toks[:3]
    return toks


def bytes_per_poll(tmp, emu, njobs, polls, env):
    journal = os.path.join(tmp, "perpoll_%d.db" % njobs)
    c = start(journal, emu, env)
    name = "pp%d" % njobs
    submit(c, tmp, name, njobs)
    for _ in range(5):
        toks = poll(c, name)
    assert int(toks[2]) == njobs
    # The pruner drops the answered submit's text (1.3 MB at 10,000 jobs)
    # within a tenth of the retention on the test clock: wait for it, so
    # that the figure is the polls' own.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and sqlite3.connect(journal).execute(
            "SELECT count(*) FROM requests WHERE command = 'BOINC_SUBMIT'"
            " AND args NOT LIKE '(submit text of %'").fetchone()[0]:
        time.sleep(0.2)
    before = used_bytes(journal)
    t0 = time.monotonic()
    for _ in range(polls):
        poll(c, name)
    secs = (time.monotonic() - t0) / polls
    per = (used_bytes(journal) - before) / polls
    hwm = rss_kib(c.gahp.proc.pid, "VmHWM")
    c.gahp.quit()
    print("%6d jobs: %.0f bytes per poll of the unchanged batch (%d polls, %.1f ms a poll);"
          " peak RSS %d KiB" % (njobs, per, polls, secs * 1000, hwm))
    figure("retention.bytes_per_poll_%d_jobs" % njobs, per, "B")
    return secs


def simulated_month(tmp, emu, args, env):
    journal = os.path.join(tmp, "month.db")
    c = start(journal, emu, env)
    submit(c, tmp, "month", args.jobs)
    durations = []
    for _ in range(8):
        t0 = time.monotonic()
        poll(c, "month")
        durations.append(time.monotonic() - t0)
    c.gahp.quit()
    d = statistics.median(durations[3:])
    retention_days = args.window * d / (86400.0 * args.scale)
    print("one poll: %.1f ms; retention = %d polls = %.1f s real = --retention-days %.6g"
          " on the test clock (scale %g)" % (d * 1000, args.window, args.window * d,
                                             retention_days, args.scale))
    c = start(journal, emu, env, ("--retention-days", "%.9g" % retention_days))
    total = int(args.rounds * args.window)
    step = max(1, args.window // 4)
    t0 = time.monotonic()
    sizes = []
    for i in range(1, total + 1):
        poll(c, "month")
        if i % step == 0 or i == total:
            used, on_disk = used_bytes(journal), file_bytes(journal)
            rows = sqlite3.connect("file:%s?mode=ro" % journal, uri=True).execute(
                "SELECT count(*) FROM requests").fetchone()[0]
            sizes.append((i, used, on_disk))
            print("after %6d polls (%5.2f simulated days, %6.0f s): used %8.0f KiB,"
                  " files %8.0f KiB, %d request rows" % (
                      i, i * 7.0 / args.window, time.monotonic() - t0, used / 1024,
                      on_disk / 1024, rows), flush=True)
    hwm = rss_kib(c.gahp.proc.pid, "VmHWM")
    log = c.gahp.stderr_text()
    c.gahp.quit()
    past = [s for s in sizes if s[0] >= args.window]
    plateau = max(s[1] for s in past) if past else None
    print("past the retention (%d samples): used at most %.0f KiB; peak RSS %d KiB; %d prunes"
          " logged" % (len(past), (plateau or 0) / 1024, hwm, log.count("journal pruned")))
    figure("retention.month_used_bytes", plateau, "B")
    figure("retention.month_file_bytes", max(s[2] for s in past) if past else None, "B")
    figure("retention.peak_rss", hwm, "KiB")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--sizes", default="2000,10000")
    ap.add_argument("--polls", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--window", type=int, default=10080)
    ap.add_argument("--rounds", type=float, default=1.5)
    ap.add_argument("--scale", type=float, default=0.001)
    ap.add_argument("--skip-month", action="store_true")
    args, _ = ap.parse_known_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    os.environ["BOINC_EMU"] = os.path.abspath(args.emu)
    import emu as emu_mod
    env = {"BOINC_GAHP_TEST_TIME_SCALE": "%g" % args.scale}
    with tempfile.TemporaryDirectory(prefix="bench_retention.") as tmp:
        e = emu_mod.Emulator(os.path.join(tmp, "emu"), hosts=2)
        e.start()
        try:
            for n in (int(x) for x in args.sizes.split(",") if x):
                bytes_per_poll(tmp, e, n, args.polls, env)
            if not args.skip_month:
                simulated_month(tmp, e, args, env)
        finally:
            e.stop()


if __name__ == "__main__":
    main()
