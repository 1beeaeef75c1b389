#!/usr/bin/python3
"""run_all - `make bench`: measure this machine's limits (bench_limits.py),
then run every tests/bench/bench_*.py with the same --gahp/--emu arguments
one after the other, collect the FIGURE lines they print (figures.py) and
end with a summary table of every figure of issue 12 next to its limit or
target and the ratio.

  --big               also run bench_big.py (the 100,000-job batch; a few minutes)
  --big-submit-only   also run bench_big.py, its submit only (~2 minutes)
  --emu-arg A         extra boinc_emu option (repeatable), e.g. --php-limits
  --gahp-arg A        extra boinc_gahp option (repeatable)
  --repeat N          repetitions inside the benches that take medians
  --only a,b          run only these benches (names without bench_ / .py)

(bench_blah_status.py, issue 39: BLAH_JOB_STATUS from the journal over 10,000
live jobs, project reachable and unreachable; about 4 minutes.)
"""
import argparse
import glob
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from figures import load_average  # noqa: E402


def run_bench(script, args, extra):
    """Run one bench, echo its output, return ({key: (value, unit)}, ok)."""
    cmd = [sys.executable, script, "--gahp", os.path.abspath(args.gahp),
           "--emu", os.path.abspath(args.emu)] + extra
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    figs = {}
    for line in p.stdout:
        if line.startswith("FIGURE\t"):
            _, key, value, unit = line.rstrip("\n").split("\t")
            figs[key] = (None if value == "n/a" else float(value), unit)
        else:
            print(line, end="", flush=True)
    return figs, p.wait() == 0


def fmt(v, unit):
    if v is None:
        return "n/a"
    if unit in ("s", "ms", "MB", "MB/s"):
        return "%.3g %s" % (v, unit)
    return "%.0f %s" % (v, unit)


# BOINC's sample GAHP, measured side by side with boinc_gahp against the
# same emulator when issue 12 was filed (it is not built here: C++ against
# BOINC's own libraries); shown next to each figure it was measured for.
PEER = {"submit": 1.79, "resubmit": 0.65, "query": 0.24, "latency": 0.17}


def rows(f):
    """(figure, value, unit, limit or target, what the limit is, goal ratio,
    the peer's figure) for the summary table."""
    g = lambda k: f.get(k, (None, ""))[0]  # noqa: E731
    md5 = g("limit.md5_submit_s")
    out = []
    for case, per in (("stock", "20"), ("none", "200")):
        # The limit of a submit is hashing its bytes plus posting its files
        # to the server that stores them: the same files posted from
        # Python to the same emulator, with the same limits.
        post = g("limit.emu_post%s_s" % per)
        lim = md5 + post if md5 is not None and post is not None else None
        out.append(("10,000-job submit, limits %s" % case, g("submit.%s_s" % case), "s",
                    lim, "MD5 + POST to the emulator", 1.5, PEER["submit"]))
        out.append(("  emulator CPU for those POSTs", g("limit.emu_cpu%s_s" % per), "s",
                    None, "", None, None))
        out.append(("  same POSTs to a trivial sink", g("limit.post%s_s" % per), "s",
                    None, "%s files per request" % per, None, None))
        out.append(("  server CPU of that submit", g("submit.%s_cpu_s" % case), "s",
                    None, "", None, None))
        out.append(("  emulator CPU of that submit", g("submit.%s_emu_cpu_s" % case), "s",
                    None, "", None, None))
        out.append(("  hashing throughput (wall)", g("submit.%s_hash_mbps" % case), "MB/s",
                    g("limit.md5_mbps"), "MD5 (hashlib) MB/s", None, None))
        out.append(("  input planning (stat+hash+journal)", g("submit.%s_plan_s" % case), "s",
                    None, "", None, None))
        out.append(("resubmit same inputs, %s" % case, g("resubmit.%s_s" % case), "s",
                    0.3, "target 0.3 s", 1.0, PEER["resubmit"]))
        out.append(("  input planning of the resubmit", g("resubmit.%s_plan_s" % case), "s",
                    None, "", None, None))
        out.append(("  files read / bytes uploaded", g("resubmit.%s_files_read" % case), "files",
                    None, "bytes %s" % fmt(g("resubmit.%s_bytes_uploaded" % case), ""), None,
                    None))
    out.append(("BOINC_QUERY_BATCHES 10 x 10,000", g("query.10x10000_s"), "s", 0.15,
                "target 0.15 s", 1.0, PEER["query"]))
    out.append(("  server peak RSS during queries", g("query.peak_rss_mb"), "MB", None, "", None,
                None))
    out.append(("poll of a known 100,000-job batch", g("query_load.poll_s"), "s", None, "",
                None, None))
    out.append(("  job lines the server listed per poll", g("query_load.server_job_lines"),
                "lines", None, "", None, None))
    out.append(("12 slow uploads (200 ms), 1 connection", g("uploads.slow_server_1conn_s"), "s",
                None, "", None, None))
    out.append(("  same, 3 connections", g("uploads.slow_server_3conn_s"), "s",
                g("uploads.slow_server_1conn_s"), "1 connection", None, None))
    # bench_core measures fdatasync in its own directory in the same run
    fs = g("core.latency_fdatasync_ms") or g("limit.fdatasync_ms")
    out.append(("isolated request p50", g("core.latency_p50_ms"), "ms",
                3 * fs if fs is not None else None, "3 x fdatasync", 1.0, PEER["latency"]))
    out.append(("  p99", g("core.latency_p99_ms"), "ms", None, "", None, None))
    out.append(("100,000-job batch: submit", g("big.submit_s"), "s", None, "", None, None))
    out.append(("  input planning of that submit", g("big.submit_plan_s"), "s", None, "", None,
                None))
    out.append(("  peak RSS after the submit", g("big.submit_peak_rss_mb"), "MB", 250,
                "target 250 MB", 1.0, None))
    out.append(("  query", g("big.query_s"), "s", None, "", None, None))
    out.append(("  fetch of 1,000 outputs", g("big.fetch_s"), "s", None, "", None, None))
    out.append(("  peak RSS", g("big.peak_rss_mb"), "MB", 250, "target 250 MB", 1.0, None))
    out.append(("  RPCs", g("big.rpcs"), "RPCs", None, "", None, None))
    out.append(("ack rate (pipelined pings)", g("core.ack_rate"), "req/s", None, "", None, None))
    out.append(("RSS, 100,000 undelivered", g("core.rss_undelivered_mb"), "MB", None, "", None,
                None))
    out.append(("RESULTS delivering 100,000", g("core.results_delivery_s"), "s", None, "", None,
                None))
    out.append(("output fetch (300, pipelined)", g("fetch.outputs_s"), "s", None, "", None, None))
    out.append(("start-up, 100,000 journaled", g("recovery.startup_s"), "s", None, "", None,
                None))
    # issue 39: BLAH_JOB_STATUS from the journal, 10,000 live jobs
    for key, what in (("up", "project reachable"), ("down", "project unreachable")):
        out.append(("BLAH_JOB_STATUS, %s" % what, g("blah_status.%s_per_s" % key),
                    "statuses/s", 10000, "target >= 10,000/s", None, None))
        out.append(("  p99 latency (2,000 in flight)", g("blah_status.%s_p99_ms" % key), "ms",
                    None, "", None, None))
    return out


def summary(f, load0):
    print()
    print("==== summary (load average at start %s, at end %s; %d CPUs)"
          % (load0, load_average(), os.cpu_count()))
    print("machine limits: fdatasync %s, MD5 %s, MD5 of the submit's bytes %s, loopback "
          "POST of the submit's 10,001 files to a sink %s (20/request) / %s (200/request), "
          "to the emulator %s / %s"
          % tuple(fmt(*f.get(k, (None, ""))) for k in (
              "limit.fdatasync_ms", "limit.md5_mbps", "limit.md5_submit_s",
              "limit.post20_s", "limit.post200_s", "limit.emu_post20_s", "limit.emu_post200_s")))
    print("peer: BOINC's sample GAHP as measured for issue 12 (not re-run here)")
    print("%-38s %12s %12s  %-27s %-22s %s" % ("figure", "value", "limit", "limit is", "ratio",
                                                "peer"))
    for name, v, unit, lim, what, goal, peer in rows(f):
        ratio = "%.2f" % (v / lim) if v is not None and lim else ""
        if ratio and goal is not None:
            ratio += " (goal <= %g)" % goal
        print("%-38s %12s %12s  %-27s %-22s %s" % (name, fmt(v, unit),
                                                   fmt(lim, unit) if lim is not None else "",
                                                   what, ratio,
                                                   fmt(peer, unit) if peer is not None else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--big-submit-only", action="store_true")
    ap.add_argument("--emu-arg", action="append", default=[])
    ap.add_argument("--gahp-arg", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    extra = [x for a in args.emu_arg for x in ("--emu-arg", a)]
    extra += [x for a in args.gahp_arg for x in ("--gahp-arg", a)]
    if args.repeat:
        extra += ["--repeat", str(args.repeat)]
    only = {n for n in args.only.split(",") if n}
    scripts = [os.path.join(HERE, "bench_limits.py")]
    scripts += [s for s in sorted(glob.glob(os.path.join(HERE, "bench_*.py")))
                if not s.endswith("bench_limits.py")]
    load0 = load_average()
    failed, figs, t0 = [], {}, time.monotonic()
    for script in scripts:
        name = os.path.basename(script)[len("bench_"):-len(".py")]
        want_big = args.big or args.big_submit_only or "big" in only
        if (only and name not in only) or (name == "big" and not want_big):
            continue
        if name == "big" and args.big_submit_only:
            f, ok = run_bench(script, args, extra + ["--submit-only"])
            figs.update(f)
            if not ok:
                failed.append(name)
            continue
        print("==== %s" % os.path.basename(script), flush=True)
        more = []
        if name == "plain":     # its 100,000-job case only with the big batch
            more = ["--jobs", "10000,100000" if want_big else "10000"]
        f, ok = run_bench(script, args, extra + more)
        figs.update(f)
        if not ok:
            failed.append(name)
    summary(figs, load0)
    print("total bench time %.0f s" % (time.monotonic() - t0))
    if not args.big:
        print("(the 100,000-job batch was not run to the end: make bench BENCH_ARGS=--big)")
    if failed:
        print("benchmarks that did not run to the end: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
