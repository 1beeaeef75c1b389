#!/usr/bin/python3
"""bench_uploads - concurrent upload chunks against a server that takes
its time (issue 12): 48 inputs in 12 upload_files requests of 4 files,
each request held 200 ms by the emulator (a remote server's round trip
and PHP's work), submitted with --upload-connections 1 and 3,
alternating.  Reports the median submit time of each.  Prints numbers;
asserts only correctness (every file uploaded once)."""
import argparse
import os
import pathlib
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from figures import figure, load_average, median  # noqa: E402


def one_submit(sc, d, conns, delay_ms):
    import emu
    import gahp_client
    e = emu.Emulator(d / "emu", hosts=2)
    e.start()
    g = None
    try:
        e.fault("upload_files", "delay", count=1000, delay_ms=delay_ms)
        g = sc.Gahp(str(d / "journal.sqlite"),
                    args=["--upload-chunk-files", "4", "--upload-connections", str(conns)],
                    env=dict(gahp_client.TEST_CLOCK))
        c = sc.Client(g, e)
        jobs = []
        for i in range(48):
            p = d / ("in%02d.txt" % i)
            p.write_bytes(b"upload bench %d\n" % i)
            jobs.append(("ub#%d" % i, [], [(str(p), "in")]))
        t0 = time.monotonic()
        assert c.wait(c.submit("ub", "uppercase", jobs), timeout=300) == ["NULL"]
        secs = time.monotonic() - t0
        cnt = e.counters()
        assert cnt["files_uploaded"] == 48
        assert all(v == 1 for v in cnt["uploads_by_name"].values())
        assert cnt["rpc"]["upload_files"] == 12
        return secs
    finally:
        if g is not None:
            g.kill()
        e.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--delay-ms", type=int, default=200)
    ap.add_argument("--emu-arg", action="append", default=[])
    ap.add_argument("--gahp-arg", action="append", default=[])
    args, _ = ap.parse_known_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    os.environ["BOINC_EMU"] = os.path.abspath(args.emu)
    import submit_client as sc
    times = {1: [], 3: []}
    for _ in range(args.repeat):
        for conns in (1, 3):
            with tempfile.TemporaryDirectory(prefix="bench_uploads.") as d:
                times[conns].append(one_submit(sc, pathlib.Path(d), conns, args.delay_ms))
    for conns, t in times.items():
        print("[load %s] 12 upload requests held %d ms each, %d connection(s): submit "
              "median %.2f s of %d" % (load_average(), args.delay_ms, conns, median(t), len(t)))
        figure("uploads.slow_server_%dconn_s" % conns, median(t), "s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
