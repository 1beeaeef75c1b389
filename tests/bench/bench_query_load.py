"""Benchmark (not a test; prints numbers): the load status polling puts on
the BOINC server, and the latency of BOINC_QUERY_BATCHES, through the real
binary against the real emulator.

Jobs are created straight on the emulator and made known to the journal
(as BOINC_SUBMIT would have), the batch is queried once (the GAHP records
every status), the emulator's clock moves on, and then the batch is polled
the way HTCondor's grid manager does, unchanged.  For each poll: the time
until the result line, and how many job lines the server's query_batch2
replies listed (the emulator's query_batch2_jobs counter).

    /usr/bin/python3 tests/bench/bench_query_load.py --batches 1 --jobs 100000
    /usr/bin/python3 tests/bench/bench_query_load.py --batches 10 --jobs 10000

BOINC_GAHP / BOINC_EMU, or --gahp / --emu (as run_all.py passes them),
choose the binaries (compare two builds that way).  Prints FIGURE lines
(figures.py) for the journal-answered query of the batch.
"""
import argparse
import os
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)

from figures import emu_state_dir, figure, median  # noqa: E402


def journal_knows(journal, batch, names):
    """The rows BOINC_SUBMIT leaves: a submitted batch and its jobs."""
    db = sqlite3.connect(journal, timeout=60)
    cols = {r[1] for r in db.execute("PRAGMA table_info(batches)")}
    pid = db.execute("SELECT id FROM projects").fetchone()[0]
    row = {"project_id": pid, "name": batch, "app": "uppercase", "step": "submitted",
           "njobs": len(names), "created_at": 1, "updated_at": 1, "spec_md5": "x"}
    row = {k: v for k, v in row.items() if k in cols}
    with db:
        bid = db.execute("INSERT INTO batches (%s) VALUES (%s)" % (
            ", ".join(row), ", ".join("?" * len(row))), list(row.values())).lastrowid
        db.executemany("INSERT INTO jobs (batch_id, name, status, updated_at)"
                       " VALUES (?, ?, 'IN_PROGRESS', 1)", [(bid, n) for n in names])
    db.close()


def timed_query(s, mmt, batches):
    t = time.monotonic()
    toks = s.query(mmt, *batches)
    return time.monotonic() - t, toks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=100000, help="jobs per batch")
    ap.add_argument("--polls", type=int, default=5)
    ap.add_argument("--gahp", default=None)
    ap.add_argument("--emu", default=None)
    args, _ = ap.parse_known_args()
    if args.gahp:
        os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    if args.emu:
        os.environ["BOINC_EMU"] = os.path.abspath(args.emu)
    from cmds_helpers import Emu, Gahp, Session, parse_query
    polls = []
    with tempfile.TemporaryDirectory() as d:
        # The batches are put on the emulator straight through its RPCs in
        # one submit_batch each: a 100,000-job request is over a stock
        # server's post_max_size.
        emu = Emu(os.path.join(emu_state_dir("query_load"), "emu"), php_limits="none")
        g = Gahp(os.path.join(d, "journal.sqlite"))
        try:
            s = Session(g, emu)
            s.call("BOINC_PING")
            batches = ["load%d" % b for b in range(args.batches)]
            t = time.monotonic()
            for b in batches:
                names = ["%s#%06d" % (b, i) for i in range(args.jobs)]
                emu.submit(b, "uppercase", [(n, [b"x"], None) for n in names])
                journal_knows(g.journal, b, names)
            print("setup: %d batches x %d jobs on the emulator and in the journal, %.1f s"
                  % (args.batches, args.jobs, time.monotonic() - t))
            secs, toks = timed_query(s, "0", batches)
            server_time, groups = parse_query(toks, len(batches))
            print("first query (records every status): %.3f s, %d job lines to the client"
                  % (secs, sum(len(x) for x in groups)))
            emu.advance(60)
            for i in range(args.polls):
                before = emu.counters()["query_batch2_jobs"]
                mmt = "0" if i % 2 == 0 else server_time     # full, then partial
                secs, toks = timed_query(s, mmt, batches)
                server_time, groups = parse_query(toks, len(batches))
                listed = emu.counters()["query_batch2_jobs"] - before
                polls.append((secs, listed))
                print("poll %d (min_mod_time %s): %.3f s; server listed %d job lines; "
                      "%d job lines to the client" % (i + 1, "0" if mmt == "0" else "prev",
                                                      secs, listed,
                                                      sum(len(x) for x in groups)))
                emu.advance(60)
        finally:
            g.quit()
            emu.stop()
    # polls after the first one whose clock moved: the server lists only
    # what changed, the client still gets every status from the journal
    later = polls[1:]
    figure("query_load.poll_s", median([p[0] for p in later]), "s")
    figure("query_load.server_job_lines", median([p[1] for p in later]), "lines")


if __name__ == "__main__":
    main()
