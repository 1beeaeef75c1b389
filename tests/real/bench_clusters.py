#!/usr/bin/python3
"""bench_clusters - one N-job cluster through HTCondor 9.0's grid type
`boinc` and the same cluster through HTCondor 25.0's `grid_resource =
batch boinc`, one after the other, on the same emulator (the pools'
boinc_emu, each job "running" 20 s), with the pools of `make check-real`
(run that first; as root).  Prints, for each: the time from
condor_submit until every job has left the queue with its output checked,
the BOINC batches it made, and the ratio.  Both pools poll with
GRIDMANAGER_JOB_PROBE_INTERVAL = 5 s (as check-real sets them up).  The
25.0 grid manager also spaces one job's status probes by at least
jobs / GRIDMANAGER_JOB_PROBE_RATE seconds (default 5 probes a second, 200 s
for 1,000 jobs: baseresource.cpp, SetJobPollInterval), a throttle 9.0's
boinc type does not meet (it asks about a whole batch at once);
`--probe-rate N` runs the 25.0 cluster again with that knob raised to N
(written to the 25.0 pool's configuration for the run, condor_reconfig'd,
then removed) and prints its ratio to 9.0 too; `--no-default` leaves out
the 25.0 run with the default rate; `--status-interval S` sets
boinc_gahp's blah_status_interval (default 30 s: how often the BLAH
scheduler asks the project) for the 25.0 runs, e.g. 5 to match the
9.0 grid manager's GRIDMANAGER_JOB_PROBE_INTERVAL of these pools.
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
    ap.add_argument("--probe-rate", type=int, default=0)
    ap.add_argument("--skip-9", action="store_true")
    ap.add_argument("--status-interval", type=float, default=0,
                    help="boinc_gahp's blah_status_interval for the 25.0 runs")
    ap.add_argument("--no-default", action="store_true",
                    help="with --probe-rate: only the 25.0 run at that rate")
    args = ap.parse_args()
    if not realsys25.available():
        sys.exit("no HTCondor 25.0 pool: run make check-real first")
    emu = realsys.EmuProject()
    print("bench_clusters: %d jobs each, load %s" % (args.jobs, open("/proc/loadavg").read().split()[0]))

    t9 = None
    if not args.skip_9:
        realsys.ensure_queue_empty()
        s9 = realsys.Scenario("bench%d" % args.jobs, emu)
        t9 = run("9.0", s9, args.jobs, args.timeout)
        batches9 = len(set(re.findall(r"BOINC_SUBMIT \d+ (\S+)", s9.gm.text())))
        s9.cleanup()
        print("  HTCondor 9.0.19, grid_resource = boinc: %.0f s, %d batch(es)" % (t9, batches9))
        print("FIGURE\tclusters.boinc9_s\t%.1f\ts" % t9)
    t25 = None
    if not (args.no_default and args.probe_rate > 0):
        t25 = run25(args, "default")
    if t9 and t25:
        print("  ratio 25.0 (default knobs) / 9.0: %.2f" % (t25 / t9))
    if args.probe_rate > 0:
        conf = realsys25.rs.PREFIX / "etc/condor_config"
        text = conf.read_text()
        conf.write_text(text + "\nGRIDMANAGER_JOB_PROBE_RATE = %d\n" % args.probe_rate)
        try:
            # a running grid manager reads the knob again on reconfig
            realsys25.rs.condor(["condor_reconfig"])
            tr = run25(args, "GRIDMANAGER_JOB_PROBE_RATE = %d" % args.probe_rate)
        finally:
            conf.write_text(text)
            realsys25.rs.condor(["condor_reconfig"], check=False)
        if t9:
            print("  ratio 25.0 (GRIDMANAGER_JOB_PROBE_RATE = %d) / 9.0: %.2f"
                  % (args.probe_rate, tr / t9))


def run25(args, label):
    p25 = realsys25.emu_project()
    extra = "log_file = %s\n" % realsys25.rs.GAHP_LOG
    if args.status_interval > 0:
        extra += "blah_status_interval = %g\n" % args.status_interval
    realsys25.use_project(p25, extra)
    s25 = realsys25.Scenario("bench%d" % args.jobs, p25)
    t25 = run("25.0", s25, args.jobs, args.timeout)
    closed = re.findall(r"closed with (\d+) job", s25.gahp.text())
    s25.cleanup()
    print("  HTCondor 25.0.13, grid_resource = batch boinc (%s): %.0f s, %d batch(es) (%s jobs)"
          % (label, t25, len(closed), "+".join(closed)))
    print("FIGURE\tclusters.batch25_%s_s\t%.1f\ts" % (label.split()[0].lower(), t25))
    return t25


if __name__ == "__main__":
    main()
