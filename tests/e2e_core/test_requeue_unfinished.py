"""--requeue-undelivered with a request the earlier run had not finished
(issue 42, sampled mutation: recovery taking a successful re-queue for a
failure passed every net; the tests of the option had only completed
requests).  The real boinc_gahp over pipes; its ping goes to a real HTTP
server on 127.0.0.1 that holds the first run's until it is gone."""
import sqlite3
import time

from gahp_client import split_tokens


def test_a_request_unfinished_at_a_sigkill_runs_again_under_its_id(gahp, ping_server, journal):
    g1 = gahp()
    assert g1.command("BOINC_SELECT_PROJECT %s/gate/ a" % ping_server.base) == "S"
    assert g1.command("BOINC_PING 7") == "S"
    deadline = time.monotonic() + 30
    while ping_server.hits == 0:                # held at the server: unfinished
        assert time.monotonic() < deadline
        time.sleep(0.05)
    g1.kill()
    db = sqlite3.connect(journal)
    assert db.execute("SELECT state FROM requests WHERE client_id = 7").fetchone()[0] \
        != "completed"
    db.close()
    ping_server.gate.set()
    g2 = gahp(args=["--requeue-undelivered"])
    got = [split_tokens(line) for line in g2.wait_results(1, timeout=60)]
    assert got == [["7", "NULL"]]
    assert "recovery failed" not in g2.stderr_text()
    assert ping_server.hits == 2
