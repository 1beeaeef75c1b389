#!/usr/bin/python3
"""run_all - run every tests/bench/bench_*.py with the same --gahp/--emu
arguments, one after the other, and report which failed to run."""
import argparse
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    args = ap.parse_args()
    failed = []
    for script in sorted(glob.glob(os.path.join(HERE, "bench_*.py"))):
        name = os.path.basename(script)
        print("==== %s" % name, flush=True)
        rc = subprocess.call([sys.executable, script, "--gahp", os.path.abspath(args.gahp),
                              "--emu", os.path.abspath(args.emu)])
        if rc != 0:
            failed.append(name)
    if failed:
        print("benchmarks that did not run to the end: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
