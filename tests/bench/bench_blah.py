#!/usr/bin/python3
"""bench_blah - the BLAH dialect at scale (issue 32), through the real
binary against the real emulator, driven by the model of the HTCondor 25.0
grid manager (tests/lib/blah_client.py): N BLAH_JOB_SUBMITs (one per job,
up to --in-flight outstanding, as the grid manager sends a cluster), then
poll rounds of N BLAH_JOB_STATUS requests (one per job, as the grid
manager polls).  Reports the submit's wall time, the BOINC batches it
made, and the project RPCs each poll round cost (the emulator's own
counters), the round's wall time, and the server's peak RSS.  Prints
numbers; asserts only correctness (one BOINC job per job)."""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from figures import emu_state_dir, figure, load_average, rss_kib  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gahp", required=True)
    ap.add_argument("--emu", required=True)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--in-flight", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--status-interval", default="30")
    ap.add_argument("--emu-arg", action="append", default=[])
    args, _ = ap.parse_known_args()
    os.environ["BOINC_GAHP"] = args.gahp
    os.environ["BOINC_EMU"] = args.emu
    import gahp_client
    gahp_client.DEFAULTS.clear()            # real time
    from blah_client import BlahClient, submit_ad
    from cmds_helpers import Emu

    tmp = tempfile.mkdtemp(prefix="bench_blah.")
    emu = Emu(emu_state_dir("blah"), php_limits="none")
    try:
        auth = os.path.join(tmp, "auth")
        with open(auth, "w") as f:
            f.write(emu.auth + "\n")
        os.chmod(auth, 0o600)
        cfg = os.path.join(tmp, "boinc_gahp.conf")
        with open(cfg, "w") as f:
            f.write("project_url = %s\nauthenticator_file = %s\n" % (emu.url, auth))
        os.chmod(cfg, 0o600)
        iwd = os.path.join(tmp, "iwd")
        os.mkdir(iwd)
        for i in range(args.jobs):
            with open(os.path.join(iwd, "in.%d" % i), "w") as f:
                f.write("job %d\n" % i)
        c = BlahClient(os.path.join(tmp, "journal.db"),
                       args=["--blah-status-interval", args.status_interval],
                       env={"BOINC_GAHP_CONFIG": cfg})
        assert c.start_up() == ["0", "NULL"]
        pid = c.gahp.proc.pid
        print("bench_blah: %d jobs, load %s" % (args.jobs, load_average()))

        t0 = time.monotonic()
        pending, jobs = [], []
        for i in range(args.jobs):
            ad = submit_ad(iwd, "home_bl_bench_%d.0_1" % i, transfer_input="in.%d" % i,
                           transfer_output="out", remaps="out = out.%d" % i,
                           out="out.txt.%d" % i, err="err.txt.%d" % i)
            pending.append(c.start("BLAH_JOB_SUBMIT", ad))
            while len(pending) >= args.in_flight:
                rc, err, job = c.wait(pending.pop(0), timeout=600)
                assert rc == "0", err
                jobs.append(job)
        for rid in pending:
            rc, err, job = c.wait(rid, timeout=600)
            assert rc == "0", err
            jobs.append(job)
        answered = time.monotonic() - t0
        # until every job's batch is on the server
        while len(emu.counters()["jobs_by_name"]) < args.jobs:
            time.sleep(0.2)
        on_server = time.monotonic() - t0
        counts = emu.counters()
        assert set(counts["jobs_by_name"].values()) == {1}
        batches = counts["rpc"]["create_batch"]
        print("  submit: %d ids in %.1f s, all on the server after %.1f s, in %d batch(es)"
              % (len(jobs), answered, on_server, batches))
        figure("blah.submit_answered_s", answered, "s")
        figure("blah.submit_on_server_s", on_server, "s")
        figure("blah.batches", batches, "batches")

        for r in range(args.rounds):
            before = emu.counters()["rpc"]
            t1 = time.monotonic()
            pending = []
            for j in jobs:
                pending.append(c.start("BLAH_JOB_STATUS", j))
                while len(pending) >= args.in_flight:
                    rc, err, st, ad = c.wait(pending.pop(0), timeout=600)
                    assert rc == "0", err
            for rid in pending:
                rc, err, st, ad = c.wait(rid, timeout=600)
                assert rc == "0", err
            secs = time.monotonic() - t1
            after = emu.counters()["rpc"]
            rpcs = {k: after[k] - before[k] for k in after if after[k] != before[k]}
            n = sum(rpcs.values())
            print("  poll round %d: %d statuses in %.1f s, %d RPC(s) %s" % (
                r + 1, len(jobs), secs, n, rpcs))
            figure("blah.round%d_rpcs" % (r + 1), n, "RPCs")
            figure("blah.round%d_s" % (r + 1), secs, "s")
        peak = rss_kib(pid, "VmHWM") / 1024.0
        print("  server peak RSS %.1f MB" % peak)
        figure("blah.peak_rss_mb", peak, "MB")
        c.stop()
    finally:
        emu.stop()


if __name__ == "__main__":
    main()
