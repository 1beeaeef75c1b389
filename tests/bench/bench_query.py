#!/usr/bin/python3
"""bench_query - BOINC_QUERY_BATCHES of 10 batches x 10,000 jobs and
BOINC_FETCH_OUTPUT of many small outputs, through the real binary against
the real emulator (issue 12).  The batches are created straight on the
emulator (unknown to the journal, as after a resubmit from another
schedd).  Reports the median of --repeat queries, the server's RSS after
them, and the time to fetch --fetch outputs one request each (HTCondor's
way), pipelined.  Prints numbers; asserts only correctness."""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from figures import emu_state_dir, figure, load_average, median, rss_kib  # noqa: E402


def bench_fetch(s, emu, tmp, n):
    names = ["fo#%05d" % i for i in range(n)]
    emu.submit("fo", "uppercase", [(nm, [b"x %d\n" % i], None) for i, nm in enumerate(names)])
    emu.run(3600)
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    t0 = time.monotonic()
    rids = [s.start("BOINC_FETCH_OUTPUT", nm, out, "err_%s.txt" % nm.replace("#", "_"),
                    "SOME", 1, "out", "out_%s" % nm.replace("#", "_")) for nm in names]
    got = {}
    from cmds_helpers import split_tokens
    while len(got) < len(rids):
        for line in s.gahp.wait_results(1, timeout=300):
            toks = split_tokens(line)
            got[int(toks[0])] = toks[1:]
    secs = time.monotonic() - t0
    bad = [r for r in got.values() if r[0] != "NULL"]
    assert not bad, bad[:3]
    with open(os.path.join(out, "out_fo_00007")) as f:
        assert f.read() == "X 7\n"
    return secs


def timed_query(s, batches):
    """BOINC_QUERY_BATCHES once: (seconds until its result line is read,
    tokens).  RESULTS is polled every millisecond (the helpers' 50 ms
    polling and per-character tokenizer would be most of the figure)."""
    from cmds_helpers import split_tokens
    t0 = time.monotonic()
    rid = s.start("BOINC_QUERY_BATCHES", "0", len(batches), *batches)
    while True:
        lines = s.gahp.results()
        if lines:
            break
        time.sleep(0.001)
    secs = time.monotonic() - t0
    line = lines[0]
    # No escape in the line: a plain split gives split_tokens' answer.
    toks = line.split(" ") if "\\" not in line else split_tokens(line)
    assert toks[0] == str(rid), line[:200]
    return secs, toks[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fetch", type=int, default=300)
    ap.add_argument("--emu-arg", action="append", default=[])
    ap.add_argument("--gahp-arg", action="append", default=[])
    args, _ = ap.parse_known_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    os.environ["BOINC_EMU"] = os.path.abspath(args.emu)
    from cmds_helpers import Emu, Gahp, Session, parse_query
    with tempfile.TemporaryDirectory(prefix="bench_query.") as d:
        emu = Emu(os.path.join(emu_state_dir("query"), "emu"))
        g = Gahp(os.path.join(d, "journal.sqlite"), args=args.gahp_arg)
        try:
            s = Session(g, emu)
            secs = bench_fetch(s, emu, d, args.fetch)
            print("fetch of %d outputs (one BOINC_FETCH_OUTPUT each, pipelined): %.3f s"
                  % (args.fetch, secs))
            figure("fetch.outputs_s", secs, "s")
            batches = ["qb%d" % b for b in range(args.batches)]
            t0 = time.monotonic()
            for b in batches:
                emu.submit(b, "uppercase", [("%s#%06d" % (b, i), [b"x"], None)
                                            for i in range(args.jobs)])
            print("setup: %d x %d jobs created on the emulator in %.1f s"
                  % (args.batches, args.jobs, time.monotonic() - t0))
            times = []
            for _ in range(args.repeat):
                secs, toks = timed_query(s, batches)
                times.append(secs)
                _, jobs = parse_query(toks, len(batches))
                assert [len(j) for j in jobs] == [args.jobs] * len(batches)
            rss = rss_kib(g.proc.pid, "VmHWM") / 1024.0
            print("[load %s] BOINC_QUERY_BATCHES, %d x %d jobs: median %.3f s of %d "
                  "(min %.3f, max %.3f); server peak RSS %.1f MB"
                  % (load_average(), args.batches, args.jobs, median(times), len(times),
                     min(times), max(times), rss))
            figure("query.10x10000_s", median(times), "s")
            figure("query.peak_rss_mb", rss, "MB")
        finally:
            g.quit()
            emu.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
