#!/usr/bin/python3
"""bench_submit - BOINC_SUBMIT throughput against the emulator (issue 4).

1. A 10,000-job batch of app `twoinout`, each job with one distinct 1 KB
   input plus one shared input (--shared-kb, default 1 MB, within a stock
   server's 2M upload_max_filesize): wall time from the request line to
   its result, RPCs by kind, files and bytes uploaded (the shared file
   exactly once).
2. The same inputs again in a new batch: files read for hashing (from the
   server's log) and bytes uploaded (from the emulator's counters): both
   should be zero.
Prints numbers; asserts only correctness (a wrong result is not a number).
"""
import argparse
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e_submit"))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--php-limits", default=None,
                    help="emulator PHP limits (default: its stock 20 files/8M/2M)")
    ap.add_argument("--shared-kb", type=int, default=1024,
                    help="size of the shared input (a stock server takes up to 2048)")
    ap.add_argument("--gahp-arg", action="append", default=[],
                    help="extra boinc_gahp option, e.g. --gahp-arg=--upload-chunk-files=200")
    args = ap.parse_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    os.environ["BOINC_EMU"] = os.path.abspath(args.emu)
    from submit_client import Client, Gahp, emu_mod

    with tempfile.TemporaryDirectory(prefix="bench_submit.") as tmp:
        inputs = os.path.join(tmp, "inputs")
        os.mkdir(inputs)
        shared = os.path.join(inputs, "shared.bin")
        with open(shared, "wb") as f:
            f.write(os.urandom(args.shared_kb * 1024))
        distinct = []
        for i in range(args.jobs):
            p = os.path.join(inputs, "in%05d.dat" % i)
            with open(p, "wb") as f:
                f.write(os.urandom(1024))
            distinct.append(p)
        emu = emu_mod.Emulator(os.path.join(tmp, "emu"), hosts=2, php_limits=args.php_limits)
        emu.start()
        gahp = Gahp(os.path.join(tmp, "journal.db"), args=["--retry-budget", "30"] + args.gahp_arg)
        try:
            client = Client(gahp, emu)

            def submit(batch):
                jobs = [("%s#%d" % (batch, i), [], [(distinct[i], "a"), (shared, "b")])
                        for i in range(args.jobs)]
                t0 = time.monotonic()
                rid = client.submit(batch, "twoinout", jobs)
                res = client.wait(rid, timeout=600)
                return time.monotonic() - t0, res

            before = emu.counters()
            wall, res = submit("bench1")
            assert res == ["NULL"], res
            c = emu.counters()
            rpcs = {k: v - before["rpc"].get(k, 0) for k, v in c["rpc"].items()
                    if v - before["rpc"].get(k, 0)}
            shared_uploads = [v for k, v in c["uploads_by_name"].items()
                              if k.endswith(".bin")]
            print("submit of %d jobs (1 KB distinct + %d KB shared input each): %.2f s"
                  % (args.jobs, args.shared_kb, wall))
            print("  RPCs: %s (total %d)" % (rpcs, sum(rpcs.values())))
            print("  files uploaded: %d, bytes uploaded: %d, shared file uploads: %s"
                  % (c["files_uploaded"], c["bytes_uploaded"], shared_uploads))
            assert shared_uploads == [1]

            wall2, res2 = submit("bench2")
            assert res2 == ["NULL"], res2
            c2 = emu.counters()
            reads = re.findall(r"submit bench2: \d+ inputs, (\d+) files read for hashing",
                               gahp.stderr_text())
            print("resubmit of the same inputs in a new batch: %.2f s, files read for "
                  "hashing: %s, bytes uploaded: %d"
                  % (wall2, reads[0] if reads else "?", c2["bytes_uploaded"] - c["bytes_uploaded"]))
            gahp.quit()
        finally:
            gahp.kill()
            emu.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
