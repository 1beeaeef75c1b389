"""Issue 10 #4: only LF-terminated lines are requests (a fragment cut by
the client's death is logged and dropped, never journaled or run);
#9: the log file is created 0600 whatever the umask."""
import os
import sqlite3
import stat

from hostile_helpers import Client, escape


def test_fragment_at_eof_is_dropped(server, make_gahp, journal):
    g = make_gahp()
    c = Client(g, server.url)
    assert c.call("BOINC_PING") == ["NULL"]
    # The client dies while writing a request: no LF.
    g.send_raw(b"BOINC_SET_LEASE 5 sb1 18")
    g.close_stdin()
    assert g.read_raw(timeout=30) is None       # no "S" (nor "E") for it
    assert g.wait(timeout=30) == 0
    assert "stdin closed in the middle of a line" in g.stderr_text()
    db = sqlite3.connect(journal)
    cmds = [r[0] for r in db.execute("SELECT command FROM requests ORDER BY id")]
    db.close()
    assert cmds == ["BOINC_PING"]
    # a restart has nothing of it to resume or replay
    g2 = make_gahp()
    c2 = Client(g2, server.url)
    assert c2.call("BOINC_PING") == ["NULL"]
    assert len(server.posts()) == 2                 # the two pings, no lease RPC


def test_complete_last_line_still_runs(server, make_gahp, journal):
    g = make_gahp()
    assert g.command("BOINC_SELECT_PROJECT %s %s" % (escape(server.url), "abc")) == "S"
    g.send_raw(b"BOINC_PING 1\n")
    assert g.read_line() == "S"
    g.close_stdin()
    g.wait(timeout=60)
    db = sqlite3.connect(journal)
    assert [r[0] for r in db.execute("SELECT command FROM requests")] == ["BOINC_PING"]
    db.close()


def test_log_file_is_private_under_umask_000(server, make_gahp, tmp_path):
    log = tmp_path / "gahp.log"
    g = make_gahp(("--log-file", str(log), "--log-level", "debug"), umask=0)
    assert Client(g, server.url).call("BOINC_PING") == ["NULL"]
    assert stat.S_IMODE(os.stat(str(log)).st_mode) == 0o600
    assert "ping" in log.read_text()


def test_existing_wide_log_file_is_refused(server, make_gahp, tmp_path, journal):
    """A log file others may write (and so may have opened to read) is
    not used, even one of our own (issue 28): the log beside the journal
    takes the lines, with a warning naming the refused file."""
    log = tmp_path / "gahp.log"
    log.write_text("old\n")
    os.chmod(str(log), 0o666)
    g = make_gahp(("--log-file", str(log)), umask=0)
    assert Client(g, server.url).call("BOINC_PING") == ["NULL"]
    assert log.read_text() == "old\n"
    assert stat.S_IMODE(os.stat(str(log)).st_mode) == 0o666
    beside = os.path.splitext(journal)[0] + ".log"
    text = open(beside).read()
    assert str(log) in text and "writable by other users" in text
    assert stat.S_IMODE(os.stat(beside).st_mode) == 0o600
