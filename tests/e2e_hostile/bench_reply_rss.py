"""Peak RSS of boinc_gahp answering one large BOINC_QUERY_BATCHES (the
query_batch2 reply of an N-job batch from a local server), for issue 10 #1.

    BOINC_GAHP=build/boinc_gahp /usr/bin/python3 tests/e2e_hostile/bench_reply_rss.py 100000 500000

Prints reply bytes and the process's VmHWM (peak RSS) after the query,
minus its VmHWM after a ping (the baseline), in MB."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

from hostile_helpers import Client, HostileServer, LimitedGahp, query_batch2_reply  # noqa: E402


def hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def limit_args():
    """Raise the reply limit out of the way (older builds have no option)."""
    import subprocess
    from gahp_client import gahp_binary
    out = subprocess.run([gahp_binary(), "--help"], capture_output=True, text=True).stdout
    return ["--max-reply-bytes", str(1 << 30)] if "--max-reply-bytes" in out else []


def measure(njobs):
    body = query_batch2_reply(njobs)
    srv = HostileServer({"post": lambda req: body})
    with tempfile.TemporaryDirectory() as d:
        g = LimitedGahp(os.path.join(d, "j.sqlite"),
                        args=["--workers", "2"] + limit_args())
        c = Client(g, srv.url)
        srv.cfg["post"] = "ok"
        assert c.call("BOINC_PING") == ["NULL"]
        base = hwm_kb(g.proc.pid)
        srv.cfg["post"] = lambda req: body
        toks = c.call("BOINC_QUERY_BATCHES", 0, 1, "big", timeout=600)
        assert toks[0] == "NULL" and int(toks[2]) == njobs, toks[:3]
        peak = hwm_kb(g.proc.pid)
        g.quit()
    srv.stop()
    return len(body), base, peak


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [100000]:
        size, base, peak = measure(n)
        print("jobs=%d reply=%.1f MB baseline=%.1f MB peak=%.1f MB extra=%.1f MB (%.1fx reply)"
              % (n, size / 1e6, base / 1024, peak / 1024, (peak - base) / 1024,
                 (peak - base) * 1024 / size))
