#!/usr/bin/python3
"""bench_submit - BOINC_SUBMIT throughput against the emulator (issues 4, 12).

For each upload-limit case (default: `stock` = a stock server's 20 files
per request with the request size raised to 64 MB, and `none` = no limits):
  1. a 10,000-job batch of app `twoinout`, each job with one distinct 1 KB
     input plus one shared 10 MB input: wall time from the request line to
     its result, the server's CPU time, RPCs by kind, files and bytes
     uploaded (the shared file exactly once);
  2. the same inputs again in a new batch of the same server: wall time,
     files read for hashing (from the server's log) and bytes uploaded
     (from the emulator's counters): both should be zero.
Cases need the emulator's --php-limits option (the real-server lane); an
emulator without it runs the `none` case only and reports `stock` as n/a.
--emu-arg / --gahp-arg pass extra options through.  --repeat N runs every
case N times, alternating, and reports medians.
Prints numbers; asserts only correctness (a wrong result is not a number)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from figures import cpu_seconds, emu_state_dir, figure, load_average, median  # noqa: E402

# (emulator options, boinc_gahp options) of each case: the GAHP is told the
# server's limits, as a site would configure it.
CASES = {"stock": (["--php-limits", "max_file_uploads=20,post_max_size=64M,"
                    "upload_max_filesize=64M"],
                   ["--upload-chunk-bytes", "64000000"]),
         "none": (["--php-limits", "none"],
                  ["--upload-chunk-files", "200", "--upload-chunk-bytes", "33554432"])}


def emu_supports_php_limits(emu):
    out = subprocess.run([emu, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return b"--php-limits" in out.stdout


def make_inputs(tmp, njobs):
    inputs = os.path.join(tmp, "inputs")
    os.mkdir(inputs)
    shared = os.path.join(inputs, "shared.bin")
    with open(shared, "wb") as f:
        f.write(os.urandom(10 * 1024 * 1024))
    distinct = []
    for i in range(njobs):
        p = os.path.join(inputs, "in%06d.dat" % i)
        with open(p, "wb") as f:
            f.write(os.urandom(1024))
        distinct.append(p)
    return shared, distinct


def planned(gahp, batch):
    """(planning seconds, hashing MB/s) from the server's log, or Nones
    (a server without that log line)."""
    m = re.search(r"submit %s: inputs planned in ([0-9.]+) s: \d+ distinct files, hashed \d+ "
                  r"files, (\d+) bytes in ([0-9.]+) s" % batch, gahp.stderr_text())
    if not m:
        return None, None
    mbps = int(m.group(2)) / 1e6 / float(m.group(3)) if float(m.group(3)) > 0 else None
    return float(m.group(1)), mbps


def run_case(args, tmp, run, case_args, shared, distinct):
    """One fresh emulator + journal: submit, then resubmit.  Returns a dict."""
    import emu as emu_mod
    from submit_client import Client, Gahp
    d = os.path.join(tmp, "run%d" % run)
    os.mkdir(d)
    emu_args, gahp_args = case_args
    emu = emu_mod.Emulator(os.path.join(emu_state_dir("submit"), "emu"), hosts=2,
                           extra_args=emu_args + args.emu_arg)
    emu.start()
    gahp = Gahp(os.path.join(d, "journal.db"),
                args=["--retry-budget", "30"] + gahp_args + args.gahp_arg)
    gahp.enable_async()     # woken by R, as HTCondor is: no poll rounding
    out = {}
    try:
        client = Client(gahp, emu)

        def submit(batch):
            jobs = [("%s#%d" % (batch, i), [], [(distinct[i], "a"), (shared, "b")])
                    for i in range(len(distinct))]
            # the line is built before the clock starts: HTCondor's C++
            # builds it in far less time than Python (a 10,000-job line,
            # 60,000 escaped tokens, takes Python tens of milliseconds)
            tb = time.monotonic()
            rid, line = client.submit_line(batch, "twoinout", jobs)
            out[batch + "_line_build_s"] = time.monotonic() - tb
            cpu0 = cpu_seconds(gahp.proc.pid)
            ecpu0 = cpu_seconds(emu.proc.pid)
            t0 = time.monotonic()
            client.send(line)
            res = client.wait(rid, timeout=900)
            wall = time.monotonic() - t0
            assert res == ["NULL"], res
            out[batch + "_emu_cpu_s"] = cpu_seconds(emu.proc.pid) - ecpu0
            return wall, cpu_seconds(gahp.proc.pid) - cpu0

        before = emu.counters()
        out["submit_s"], out["submit_cpu_s"] = submit("bench1")
        c = emu.counters()
        out["rpcs"] = {k: v - before["rpc"].get(k, 0) for k, v in c["rpc"].items()
                       if v - before["rpc"].get(k, 0)}
        out["files_uploaded"] = c["files_uploaded"]
        out["bytes_uploaded"] = c["bytes_uploaded"]
        shared_uploads = [v for k, v in c["uploads_by_name"].items() if k.endswith(".bin")]
        assert shared_uploads == [1], shared_uploads

        out["plan_s"], out["hash_mbps"] = planned(gahp, "bench1")
        out["resubmit_s"], out["resubmit_cpu_s"] = submit("bench2")
        c2 = emu.counters()
        reads = re.findall(r"submit bench2: \d+ inputs, (\d+) files read for hashing",
                           gahp.stderr_text())
        out["resubmit_read"] = int(reads[0]) if reads else None
        out["resubmit_plan_s"], _ = planned(gahp, "bench2")
        out["resubmit_bytes"] = c2["bytes_uploaded"] - c["bytes_uploaded"]
        if args.save_log:
            with open(args.save_log, "w") as f:
                f.write(gahp.stderr_text())
        gahp.quit()
    finally:
        gahp.kill()
        emu.stop()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cases", default="stock,none")
    ap.add_argument("--save-log", metavar="FILE", help="the last run's server log (use with "
                    "--gahp-arg=--log-level --gahp-arg=debug to see where the time goes)")
    ap.add_argument("--emu-arg", action="append", default=[])
    ap.add_argument("--gahp-arg", action="append", default=[])
    args, _ = ap.parse_known_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    os.environ["BOINC_EMU"] = os.path.abspath(args.emu)
    limits_ok = emu_supports_php_limits(args.emu)
    cases = [c for c in args.cases.split(",") if c]
    results = {c: [] for c in cases}
    with tempfile.TemporaryDirectory(prefix="bench_submit.") as tmp:
        shared, distinct = make_inputs(tmp, args.jobs)
        run = 0
        for rep in range(args.repeat):
            for case in cases:
                if not limits_ok and case != "none":
                    continue
                run += 1
                r = run_case(args, tmp, run, CASES[case] if limits_ok else ([], []), shared,
                             distinct)
                results[case].append(r)
                print("[%s #%d, load %s] submit %d jobs (1 KB distinct + 10 MB shared): "
                      "%.3f s (server CPU %.2f s, input planning %s s, hashing %s MB/s); resubmit: "
                      "%.3f s (CPU %.2f s, input planning %s s), "
                      "files read %s, bytes uploaded %d"
                      % (case, rep + 1, load_average(), args.jobs, r["submit_s"],
                         r["submit_cpu_s"], r["plan_s"],
                         "%.0f" % r["hash_mbps"] if r["hash_mbps"] else "?", r["resubmit_s"],
                         r["resubmit_cpu_s"], r["resubmit_plan_s"],
                         r["resubmit_read"], r["resubmit_bytes"]), flush=True)
                print("  RPCs: %s (total %d); files uploaded %d, bytes %d; emulator CPU "
                      "%.2f s (submit), %.2f s (resubmit); the client's Python built the "
                      "request line in %.3f s (not counted)"
                      % (r["rpcs"], sum(r["rpcs"].values()), r["files_uploaded"],
                         r["bytes_uploaded"], r["bench1_emu_cpu_s"], r["bench2_emu_cpu_s"],
                         r["bench1_line_build_s"]),
                      flush=True)
    if not limits_ok:
        print("this emulator has no --php-limits: the `stock` case (20 files per "
              "request) is not measured; `none` ran against the emulator's defaults")
    for case in cases:
        rs = results[case]
        figure("submit.%s_s" % case, median([r["submit_s"] for r in rs]), "s")
        figure("submit.%s_cpu_s" % case, median([r["submit_cpu_s"] for r in rs]), "s")
        figure("submit.%s_emu_cpu_s" % case, median([r["bench1_emu_cpu_s"] for r in rs]), "s")
        figure("submit.%s_hash_mbps" % case,
               median([r["hash_mbps"] for r in rs if r["hash_mbps"] is not None]), "MB/s")
        figure("submit.%s_upload_rpcs" % case,
               median([r["rpcs"].get("upload_files", 0) for r in rs]), "RPCs")
        figure("submit.%s_plan_s" % case,
               median([r["plan_s"] for r in rs if r["plan_s"] is not None]), "s")
        figure("resubmit.%s_s" % case, median([r["resubmit_s"] for r in rs]), "s")
        figure("resubmit.%s_plan_s" % case,
               median([r["resubmit_plan_s"] for r in rs if r["resubmit_plan_s"] is not None]),
               "s")
        figure("resubmit.%s_files_read" % case,
               median([r["resubmit_read"] for r in rs if r["resubmit_read"] is not None]),
               "files")
        figure("resubmit.%s_bytes_uploaded" % case,
               median([r["resubmit_bytes"] for r in rs]), "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
