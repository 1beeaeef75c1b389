"""Thousands of requests accepted and not yet delivered at once (issue 42,
sampled mutation: the table of undelivered request ids grown to a size
that is not a power of two - its probes then reach a part of it only -
passed every net, which never held more than a few hundred).  The real
boinc_gahp over pipes; the project selected is unusable, so each request
completes at once with its error and no request leaves the machine."""
import time

N = 2500


def test_thousands_of_undelivered_requests(gahp):
    g = gahp()
    assert g.command("BOINC_SELECT_PROJECT ftp://127.0.0.1/x a") == "S"
    t0 = time.monotonic()
    for rid in range(1, N + 1):
        assert g.command("BOINC_PING %d" % rid, timeout=30) == "S", rid
    # an id still undelivered cannot be used again
    assert g.command("BOINC_PING 17") == "E"
    got = g.wait_results(N, timeout=300)
    assert sorted(int(line.split(" ", 1)[0]) for line in got) == list(range(1, N + 1))
    assert time.monotonic() - t0 < 300
