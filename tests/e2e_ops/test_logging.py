"""The default log file (issues 19 and 28): with no log_file, boinc_gahp
logs to a file named after its journal, beside it (0600; boinc_gahp.log
for the default journal), as well as to stderr, rotates it at
log_max_bytes, writes every reason it stops before the banner there (and
once on stderr), and falls back to the next log (the default one, the
per-user one, stderr) when a log file cannot be used.  The real binary,
run as the grid manager runs it."""
import os
import stat

import pytest

from ops_helpers import run


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


def default_dir(home):
    return home / ".local" / "state" / "boinc_gahp"


def test_default_log_file_beside_the_journal_is_private(home):
    os.umask(0)
    try:
        p = run(home, stdin=b"QUIT\n")
    finally:
        os.umask(0o022)
    assert p.returncode == 0, p.stderr
    log = default_dir(home) / "boinc_gahp.log"
    assert stat.S_IMODE(os.stat(str(log)).st_mode) == 0o600
    text = log.read_text()
    assert "started (session 1" in text and "stopped (clean)" in text
    assert b"started (session 1" in p.stderr          # and stderr too


def test_explicit_journal_puts_the_log_beside_it(home, tmp_path):
    j = tmp_path / "jd" / "j.db"
    j.parent.mkdir()
    p = run(home, "--journal", str(j), stdin=b"QUIT\n")
    assert p.returncode == 0
    assert "started" in (j.parent / "j.log").read_text()       # named after it
    assert not (j.parent / "boinc_gahp.log").exists()


def test_one_line_per_finished_request(tmp_path):
    from gahp_client import Gahp
    j = str(tmp_path / "j.db")
    g = Gahp(j, args=["--log-level", "info"])
    try:
        assert g.command("BOINC_PING 7") == "S"      # no project selected: an error result
        g.wait_results(1)
        g.quit()
    finally:
        g.kill()
    text = (tmp_path / "j.log").read_text()
    assert "BOINC_PING 7 finished: error in" in text and " ms" in text, text


def test_rotation_at_the_size_limit(home, tmp_path):
    j = tmp_path / "j.db"
    log = tmp_path / "j.log"
    for _ in range(6):
        p = run(home, "--journal", str(j), "--log-max-bytes", "1500", stdin=b"QUIT\n")
        assert p.returncode == 0, p.stderr
    old = tmp_path / "j.log.old"
    assert old.exists() and log.exists()
    assert os.path.getsize(str(log)) < 1500 + 400     # at most one line past the limit
    assert stat.S_IMODE(os.stat(str(log)).st_mode) == 0o600
    assert "boinc_gahp stopped" in old.read_text()


def test_pre_banner_failure_lands_in_the_log_once_on_stderr(home, tmp_path):
    """As the grid manager runs it (no arguments), after an earlier run
    made the state directory: a bad value in the file is in the log."""
    assert run(home, stdin=b"QUIT\n").returncode == 0
    conf = tmp_path / "c.conf"
    conf.write_text("workers = many\n")
    p = run(home, env={"BOINC_GAHP_CONFIG": str(conf)})
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.count(b"'many' is not an integer") == 1, p.stderr
    assert p.stderr.startswith(b"boinc_gahp: ")
    log = default_dir(home) / "boinc_gahp.log"
    assert "[error] not started: %s:1: workers: 'many'" % conf in log.read_text()


# --log-level error: the reason not to start is an error, logged at the
# quietest level too (a sampled mutant of issue 42 dropped it there)
@pytest.mark.parametrize("level", [[], ["--log-level", "error"]])
def test_newer_journal_reason_in_the_log(home, tmp_path, level):
    import sqlite3
    j = tmp_path / "j.db"
    db = sqlite3.connect(str(j))
    db.execute("PRAGMA user_version=999")
    db.close()
    p = run(home, "--journal", str(j), *level, stdin=b"QUIT\n")
    assert p.returncode == 1 and p.stdout == b""
    assert p.stderr.count(b"a newer boinc_gahp wrote it") == 1, p.stderr
    text = (tmp_path / "j.log").read_text()
    assert "not started: journal" in text and "a newer boinc_gahp wrote it" in text \
        and ".bak" in text, text


def test_unwritable_home_is_status_1_and_says_journal(home, tmp_path):
    if os.geteuid() == 0:
        ro = tmp_path / "file-not-dir"          # root writes anywhere: use a file
        ro.write_text("")
        env = {"XDG_STATE_HOME": str(ro)}
    else:
        os.chmod(str(home), 0o500)
        env = None
    p = run(home, env=env, stdin=b"QUIT\n")
    assert p.returncode == 1, p.stderr
    assert b"default journal directory" in p.stderr and b"BOINC_GAHP_JOURNAL" in p.stderr
    assert p.stderr.count(b"default journal directory") == 1


def test_unusable_log_file_falls_back_to_the_default_log(home, tmp_path):
    """Issue 28: not to stderr only (which HTCondor hides)."""
    j = tmp_path / "j.db"
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    p = run(home, "--journal", str(j), "--log-file", str(blocker / "x.log"),
            stdin=b"QUIT\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(b"$GahpVersion")
    text = (tmp_path / "j.log").read_text()
    assert "cannot use log file %s/x.log" % blocker in text, text
    assert "logging to %s" % (tmp_path / "j.log") in text and "stopped (clean)" in text
    assert b"stopped (clean)" in p.stderr            # the default log tees to stderr


def test_shared_log_file_of_another_owner_is_refused(home, tmp_path):
    """A root-created 0666 file every user's GAHP would append to: each
    user could read the others' lines (issue 28), so it is refused and the
    user's own default log beside the journal is used instead."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a file of another owner")
    import tempfile
    top = tempfile.mkdtemp(dir="/tmp")          # pytest's tmp is 0700 root
    os.chmod(top, 0o755)
    log = os.path.join(top, "shared.log")
    with open(log, "w"):
        pass
    os.chmod(log, 0o666)
    user = os.path.join(top, "u")
    os.mkdir(user)
    os.chown(user, 65534, 65534)
    j = os.path.join(user, "j.db")

    def as_nobody():
        os.setgid(65534)
        os.setuid(65534)
    import subprocess
    from ops_helpers import clean_env
    from gahp_client import gahp_binary
    try:
        p = subprocess.run([gahp_binary(), "--journal", j, "--log-file", log],
                           input=b"QUIT\n", capture_output=True, env=clean_env(user),
                           preexec_fn=as_nobody, timeout=60)
        assert p.returncode == 0, p.stderr
        assert os.path.getsize(log) == 0
        own = open(os.path.join(user, "j.log")).read()
        assert "cannot use log file %s: owned by another user" % log in own, own
        assert "stopped (clean)" in own
    finally:
        import shutil
        shutil.rmtree(top)
