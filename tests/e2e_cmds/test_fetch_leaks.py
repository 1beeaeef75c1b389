"""A start-up that cleans up after a fetch a SIGKILL interrupted, under
valgrind's leak checker (issue 42, sampled mutation: recovery's request
for the leftovers' removal not freed passed every net).  The real
boinc_gahp over pipes against the real emulator on 127.0.0.1."""
import os
import signal


from cmds_helpers import Gahp, Session
from valgrind_leaks import LEAKED, needs_valgrind, valgrind_wrapper


pytestmark = needs_valgrind


def test_start_up_after_an_interrupted_fetch_loses_no_memory(journal, emu, iwd, tmp_path,
                                                             monkeypatch):
    emu.submit("t", "twoinout", [("t#1", [b"1 2 3\n", b"10 20\n"], None)])
    emu.run()
    crashing = Session(Gahp(journal, args=["--retry-budget", "5"],
                            env={"BOINC_GAHP_TEST_CRASH_AT": "fetch.downloaded"}), emu)
    crashing.start("BOINC_FETCH_OUTPUT", "t#1", str(iwd), "job.err", "ALL", 0)
    assert crashing.gahp.proc.wait(timeout=60) == -signal.SIGKILL
    crashing.gahp.kill()
    assert [n for n in os.listdir(iwd) if n.startswith(".")]    # its temporaries

    log = valgrind_wrapper(tmp_path, monkeypatch)
    g = Gahp(journal, args=["--retry-budget", "5"])
    g.wait_stderr("removed stale temporary", timeout=120)
    assert not [n for n in os.listdir(iwd) if n.startswith(".")]
    rc = g.quit(timeout=120)
    report = log.read_text() if log.exists() else ""
    assert rc == 0, "exit status %s (%d: valgrind found a leak):\n%s" % (rc, LEAKED, report)
    assert "definitely lost" not in report, report
