#!/usr/bin/python3
"""bench_clusters - one N-job cluster through HTCondor 9.0's grid type
`boinc` and the same cluster through HTCondor 25.0's `grid_resource =
batch boinc`, one after the other, on the same emulator (the pools'
boinc_emu, each job "running" 20 s), with the pools of `make check-real`
(run that first; as root).  Prints, for each: the time from
condor_submit until every job has left the queue with its output checked,
the BOINC batches it made, and the ratio; `--probe S` sets both pools'
GRIDMANAGER_JOB_PROBE_INTERVAL (default: as check-real leaves it, 5 s).
Prints numbers; asserts correctness only (Scenario.check).

    /usr/bin/python3 tests/real/bench_clusters.py [--jobs 1000]
"""
import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import realsys  # noqa: E402
import realsys25  # noqa: E402

FAST = "--cpu_time 1"


def run(label, scenario, n, timeout):
    t0 = time.monotonic()
    scenario.submit(n, arguments=FAST)
    scenario.wait_settled(timeout)
    took = time.monotonic() - t0
    scenario.check()
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--timeout", type=int, default=3600)
    args = ap.parse_args()
    if not realsys25.available():
        sys.exit("no HTCondor 25.0 pool: run make check-real first")
    emu = realsys.EmuProject()
    print("bench_clusters: %d jobs each, load %s" % (args.jobs, open("/proc/loadavg").read().split()[0]))

    realsys.ensure_queue_empty()
    s9 = realsys.Scenario("bench%d" % args.jobs, emu)
    t9 = run("9.0", s9, args.jobs, args.timeout)
    batches9 = len({m for m in re.findall(r"BOINC_SUBMIT \d+ (\S+)", s9.gm.text())})
    s9.cleanup()
    print("  HTCondor 9.0.19, grid_resource = boinc:     %.0f s, %d batch(es)" % (t9, batches9))

    p25 = realsys25.emu_project()
    realsys25.use_project(p25, "log_file = %s\n" % realsys25.rs.GAHP_LOG)
    s25 = realsys25.Scenario("bench%d" % args.jobs, p25)
    t25 = run("25.0", s25, args.jobs, args.timeout)
    closed = re.findall(r"closed with (\d+) job", s25.gahp.text())
    s25.cleanup()
    print("  HTCondor 25.0.13, grid_resource = batch boinc: %.0f s, %d batch(es) (%s jobs)"
          % (t25, len(closed), "+".join(closed)))
    print("  ratio 25.0 / 9.0: %.2f" % (t25 / t9))
    print("FIGURE\tclusters.boinc9_s\t%.1f\ts" % t9)
    print("FIGURE\tclusters.batch25_s\t%.1f\ts" % t25)


if __name__ == "__main__":
    main()
