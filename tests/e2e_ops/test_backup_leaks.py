"""`boinc_gahp journal backup` under valgrind's leak checker (issue 42,
sampled mutation: the copy's SQLite connection never closed - its memory
and descriptor lost - passed every net, the copy itself being complete).
The real binary on a real journal."""
import os
import sqlite3
import subprocess


from gahp_client import Gahp, gahp_binary
from ops_helpers import clean_env
from valgrind_leaks import needs_valgrind, valgrind_command


pytestmark = needs_valgrind


def test_a_backup_loses_no_memory(journal, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    g = Gahp(journal)
    assert g.command("BOINC_SELECT_PROJECT http://127.0.0.1:9/p/ a") == "S"
    assert g.quit() == 0
    copy = tmp_path / "backup.db"
    log = tmp_path / "vg.log"
    p = subprocess.run(valgrind_command(log) + [
                           os.path.abspath(gahp_binary()),
                           "--journal", journal, "journal", "backup", str(copy)],
                       capture_output=True, env=clean_env(home, None), timeout=300)
    report = log.read_text() if log.exists() else ""
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:], report)
    assert "definitely lost" not in report, report
    db = sqlite3.connect(str(copy))
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
