"""Issue 10 #2: the single-server lock follows the database file itself:
a second server is refused whichever path leads to the same journal (hard
link, symlink) and whatever happened to any lock file."""
import os
import sqlite3

import pytest

from hostile_helpers import Client, LimitedGahp


def refused(path):
    """Start a second server on path; it must exit 1 without a banner."""
    g = LimitedGahp(path, args=["--retry-budget", "1"], read_banner=False)
    try:
        rc = g.wait(timeout=30)
    finally:
        g.kill()
    assert rc == 1, g.stderr_text()[-2000:]
    assert "in use by another boinc_gahp process" in g.stderr_text()
    assert g.read_raw(timeout=5) is None        # nothing on stdout


@pytest.mark.parametrize("how", ["same path", "hard link", "symlink", "lock file deleted",
                                 "renamed directory path"])
def test_second_server_on_same_journal_is_refused(how, server, make_gahp, tmp_path):
    d = tmp_path / "state"
    d.mkdir()
    journal = str(d / "journal.sqlite")
    first = make_gahp(journal_path=journal)
    c = Client(first, server.url)
    assert c.call("BOINC_PING") == ["NULL"]
    if how == "same path":
        other = journal
    elif how == "hard link":
        other = str(tmp_path / "hard.sqlite")
        os.link(journal, other)
    elif how == "symlink":
        other = str(tmp_path / "sym.sqlite")
        os.symlink(journal, other)
    elif how == "lock file deleted":
        for name in os.listdir(str(d)):
            if name.endswith(".lock"):
                os.unlink(str(d / name))
        other = journal
    else:
        other = str(tmp_path / "alias")
        os.symlink(str(d), other)
        other = os.path.join(other, "journal.sqlite")
    refused(other)
    # the first server is unharmed and its journal intact
    assert c.call("BOINC_PING") == ["NULL"]
    db = sqlite3.connect(journal)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT count(*) FROM requests").fetchone()[0] == 2
    db.close()


def test_lock_released_when_the_server_dies(server, make_gahp, tmp_path):
    journal = str(tmp_path / "j.sqlite")
    first = make_gahp(journal_path=journal)
    first.kill()                                 # SIGKILL
    second = make_gahp(journal_path=journal)
    assert Client(second, server.url).call("BOINC_PING") == ["NULL"]
