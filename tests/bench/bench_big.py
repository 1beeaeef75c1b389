#!/usr/bin/python3
"""bench_big - one 100,000-job batch (issue 12): 100,000 distinct 1 KB
inputs + one shared 10 MB input, app `twoinout`, through BOINC_SUBMIT;
then the emulator runs the first --fetch jobs (run?max_runs=N; the rest
stay in progress or unsent), BOINC_QUERY_BATCHES of the batch (every job,
a mix of states), and BOINC_FETCH_OUTPUT of those --fetch outputs
(pipelined, one request each).  Reports the wall time of each step, the
server's peak RSS (VmHWM) and the RPC counts.  Takes a few minutes on a
2-CPU machine, most of it the submit: run_all.py runs it only with --big
(`make bench BENCH_ARGS=--big`); --submit-only stops after the submit;
--run-all has the emulator run all the jobs first (about 9 more minutes
for 100,000).  Prints numbers; asserts correctness."""
import argparse
import os
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from figures import cpu_seconds, emu_state_dir, figure, load_average, rss_kib  # noqa: E402
from bench_submit import CASES, make_inputs, planned  # noqa: E402


def count_states(pairs, njobs):
    """{status: count} of a BOINC_QUERY_BATCHES group's job/status pairs."""
    assert len(pairs) == 2 * njobs, len(pairs)
    states = {}
    for status in pairs[1::2]:
        states[status] = states.get(status, 0) + 1
    return states


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--jobs", type=int, default=100000)
    ap.add_argument("--fetch", type=int, default=1000)
    ap.add_argument("--submit-only", action="store_true",
                    help="stop after the submit (the emulator's run of 100,000 jobs, "
                    "not timed, takes most of this bench's time)")
    ap.add_argument("--run-all", action="store_true",
                    help="have the emulator run every job, not only the --fetch "
                    "ones the bench fetches (many minutes for 100,000 jobs)")
    ap.add_argument("--case", choices=sorted(CASES), default="stock",
                    help="the server's upload limits, as in bench_submit.py (stock: "
                    "20 files and 64 MB per request)")
    ap.add_argument("--emu-arg", action="append", default=[])
    ap.add_argument("--gahp-arg", action="append", default=[])
    args, _ = ap.parse_known_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    os.environ["BOINC_EMU"] = os.path.abspath(args.emu)
    import emu as emu_mod
    from submit_client import Client, Gahp, split_tokens
    with tempfile.TemporaryDirectory(prefix="bench_big.") as tmp:
        shared, distinct = make_inputs(tmp, args.jobs)
        emu_args, gahp_args = CASES[args.case]
        emu = emu_mod.Emulator(os.path.join(emu_state_dir("big"), "emu"), hosts=4,
                               extra_args=emu_args + args.emu_arg)
        emu.start()
        gahp = Gahp(os.path.join(tmp, "journal.db"),
                    args=["--retry-budget", "60", "--http-timeout", "3600"] + gahp_args
                    + args.gahp_arg)
        try:
            c = Client(gahp, emu)
            jobs = [("big#%06d" % i, [], [(distinct[i], "a"), (shared, "b")])
                    for i in range(args.jobs)]
            t0 = time.monotonic()
            res = c.wait(c.submit("big", "twoinout", jobs), timeout=3600)
            t_submit = time.monotonic() - t0
            assert res == ["NULL"], res
            print("[load %s] submit of %d jobs: %.2f s, server peak RSS so far %.1f MB"
                  % (load_average(), args.jobs, t_submit,
                     rss_kib(gahp.proc.pid, "VmHWM") / 1024.0), flush=True)
            figure("big.submit_s", t_submit, "s")
            plan_s, mbps = planned(gahp, "big")
            print("  input planning %s s, hashing %s MB/s, server CPU %.2f s"
                  % (plan_s, "%.0f" % mbps if mbps else "?", cpu_seconds(gahp.proc.pid)), flush=True)
            figure("big.submit_plan_s", plan_s, "s")
            figure("big.submit_peak_rss_mb", rss_kib(gahp.proc.pid, "VmHWM") / 1024.0, "MB")
            if args.submit_only:
                gahp.quit()
                return 0
            # The emulator runs only the jobs fetched below (not timed: it is
            # not the server's work); the others stay sent or unsent, so the
            # query reports a mix of states.  --run-all runs all of them
            # (many minutes for 100,000 jobs).
            t0 = time.monotonic()
            path = urllib.parse.urlsplit(emu.control_url).path + "run?max_seconds=%d" % (10 * 86400)
            if not args.run_all:
                path += "&max_runs=%d" % args.fetch
            r = emu.request("POST", path, body=b"", timeout=3600)
            assert r.status == 200, r
            print("emulator ran %s jobs in %.1f s"
                  % ("all" if args.run_all else args.fetch, time.monotonic() - t0), flush=True)
            t0 = time.monotonic()
            toks = c.call("BOINC_QUERY_BATCHES", 0, 1, "big", timeout=3600)
            t_query = time.monotonic() - t0
            assert toks[0] == "NULL" and int(toks[2]) == args.jobs, toks[:3]
            states = count_states(toks[3:], args.jobs)
            assert states.get("DONE", 0) >= args.fetch, states
            print("  query: %.2f s, jobs by state %s, server peak RSS so far %.1f MB"
                  % (t_query, states, rss_kib(gahp.proc.pid, "VmHWM") / 1024.0), flush=True)
            out = os.path.join(tmp, "out")
            os.mkdir(out)
            t0 = time.monotonic()
            cpu0 = cpu_seconds(gahp.proc.pid), cpu_seconds(emu.proc.pid)
            rids = {c.start("BOINC_FETCH_OUTPUT", "big#%06d" % i, out, "err%d" % i, "ALL", 0)
                    for i in range(args.fetch)}
            while rids:
                for line in gahp.wait_results(1, timeout=600):
                    t = split_tokens(line)
                    assert t[1] == "NULL", t
                    rids.discard(int(t[0]))
            t_fetch = time.monotonic() - t0
            print("  fetch: %.2f s, CPU of the server %.2f s, of the emulator %.2f s"
                  % (t_fetch, cpu_seconds(gahp.proc.pid) - cpu0[0],
                     cpu_seconds(emu.proc.pid) - cpu0[1]), flush=True)
            peak = rss_kib(gahp.proc.pid, "VmHWM") / 1024.0
            rpcs = emu.counters()["rpc"]
            print("[load %s] %d-job batch: submit %.2f s, query %.2f s, fetch of %d outputs "
                  "%.2f s; server peak RSS %.1f MB; RPCs %s (total %d)"
                  % (load_average(), args.jobs, t_submit, t_query, args.fetch, t_fetch, peak,
                     rpcs, sum(rpcs.values())))
            figure("big.query_s", t_query, "s")
            figure("big.fetch_s", t_fetch, "s")
            figure("big.peak_rss_mb", peak, "MB")
            figure("big.rpcs", sum(rpcs.values()), "RPCs")
            gahp.quit()
        finally:
            gahp.kill()
            emu.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
