"""Benchmark (not a test; prints numbers): BOINC_QUERY_BATCHES of one
large batch through the real binary against the real emulator, with and
without the journal knowing the batch's jobs (so that the status updates
run), and a fetch of many small outputs.

    /usr/bin/python3 tests/e2e_cmds/bench_query.py [--jobs N]
"""
import argparse
import os
import sqlite3
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

from cmds_helpers import Emu, Gahp, Session, parse_query  # noqa: E402


def timed(fn):
    t = time.monotonic()
    out = fn()
    return time.monotonic() - t, out


def journal_knows(journal, batch, names):
    db = sqlite3.connect(journal, timeout=30)
    cols = {r[1] for r in db.execute("PRAGMA table_info(batches)")}
    pid = db.execute("SELECT id FROM projects").fetchone()[0]
    row = {"project_id": pid, "name": batch, "app": "uppercase", "step": "submitted", "state": 7,
           "njobs": len(names), "created_at": 1, "updated_at": 1, "spec_md5": "x"}
    row = {k: v for k, v in row.items() if k in cols}
    with db:
        bid = db.execute("INSERT INTO batches (%s) VALUES (%s)" % (
            ", ".join(row), ", ".join("?" * len(row))), list(row.values())).lastrowid
        db.executemany("INSERT INTO jobs (batch_id, name, updated_at) VALUES (?, ?, 1)",
                       [(bid, n) for n in names])
    db.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        emu = Emu(os.path.join(d, "emu"))
        g = Gahp(os.path.join(d, "journal.sqlite"))
        try:
            s = Session(g, emu)
            names = ["big#%06d" % i for i in range(args.jobs)]
            secs, _ = timed(lambda: emu.submit("big", "uppercase",
                                               [(n, [b"x"], None) for n in names]))
            print("setup: submitted %d jobs directly to the emulator in %.2f s" % (len(names), secs))
            s.call("BOINC_PING")
            secs, toks = timed(lambda: s.query("0", "big"))
            _, (jobs,) = parse_query(toks, 1)
            assert len(jobs) == len(names)
            print("query_batches, %d jobs, batch unknown to the journal: %.3f s" % (len(jobs), secs))
            journal_knows(g.journal, "big", names)
            secs, toks = timed(lambda: s.query("0", "big"))
            print("query_batches, %d jobs, all %d job rows updated: %.3f s" % (
                len(jobs), len(names), secs))
            secs, toks = timed(lambda: s.query("0", "big"))
            print("query_batches, %d jobs, statuses unchanged: %.3f s" % (len(jobs), secs))
        finally:
            g.quit()
            emu.stop()


if __name__ == "__main__":
    main()
