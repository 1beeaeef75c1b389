"""Throughput cost of the per-project worker cap (issue 10 #10): N pings to
the real emulator with 8 workers, alternately with --project-workers 8 (no
cap in effect) and the default cap (4).

    BOINC_GAHP=build/boinc_gahp BOINC_EMU=build/boinc_emu \
        /usr/bin/python3 tests/e2e_hostile/bench_project_cap.py 2000
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

import emu  # noqa: E402
from hostile_helpers import Client, LimitedGahp  # noqa: E402


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as d:
        e = emu.Emulator(os.path.join(d, "emu"), hosts=2)
        e.start()
        for k, args in enumerate((["--project-workers", "8"], [], ["--project-workers", "8"], [])):
            g = LimitedGahp(os.path.join(d, "j%d.db" % k), args=args)
            c = Client(g, e.url, e.authenticator)
            t0 = time.perf_counter()
            for _ in range(n):
                c.start("BOINC_PING")
            g.wait_results(n, timeout=600)
            print("%-26s %d pings in %.2f s" % (" ".join(args) or "default cap (4)", n,
                                                time.perf_counter() - t0))
            g.quit()
        e.stop()


if __name__ == "__main__":
    main()
