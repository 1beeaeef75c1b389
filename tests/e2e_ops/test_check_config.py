"""boinc_gahp --check-config and --example-config (issue 19): each
effective setting with its source, authenticators as ***, the journal
looked at read-only, exit statuses; the configuration file's forgiving
syntax (unknown key = warning, inline comments, any case, ~/)."""
import os
import sqlite3

import pytest

from gahp_client import Gahp, gahp_binary
from ops_helpers import run

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


def settings(out):
    """{key: (value, source)} from --check-config's output."""
    res = {}
    for line in out.decode().splitlines():
        if " = " in line and line.endswith(")"):
            key, rest = line.split(" = ", 1)
            value, src = rest.rsplit("  (", 1)
            res[key] = (value, src[:-1])
    return res


def test_sources_of_each_setting(home, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("# comment\nworkers = 4   # four\nsync = NORMAL\n"
                    "requeue_undelivered = TRUE\nhttp_timeout = 100\n")
    j = tmp_path / "j.db"
    p = run(home, "--check-config", "--config", str(conf), "--http-timeout", "50",
            env={"BOINC_GAHP_RETRY_BUDGET": "9", "BOINC_GAHP_JOURNAL": str(j)})
    assert p.returncode == 0, p.stderr
    s = settings(p.stdout)
    assert s["workers"] == ("4", "%s:2" % conf)
    assert s["sync"] == ("normal", "%s:3" % conf)
    assert s["requeue_undelivered"] == ("yes", "%s:4" % conf)
    assert s["http_timeout"] == ("50", "--http-timeout")
    assert s["retry_budget"] == ("9", "BOINC_GAHP_RETRY_BUDGET")
    assert s["connect_timeout"] == ("10", "default")
    assert s["journal"] == (str(j), "BOINC_GAHP_JOURNAL")
    assert b"does not exist yet" in p.stdout and b"configuration OK" in p.stdout
    assert not j.exists()                      # never created by a check


def test_authenticator_is_never_printed(home, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("project_url = http://127.0.0.1/p/\nauthenticator = s3cr3tkey\n")
    os.chmod(str(conf), 0o600)
    p = run(home, "--check-config", "--config", str(conf),
            "--journal", str(tmp_path / "j.db"))
    assert p.returncode == 0, p.stderr
    assert b"s3cr3tkey" not in p.stdout + p.stderr
    assert settings(p.stdout)["authenticator"] == ("***", "%s:2" % conf)


def test_unknown_key_is_a_warning_and_the_server_starts(home, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("workres = 4\nworkers = 2\n")
    p = run(home, "--check-config", "--config", str(conf), "--journal", str(tmp_path / "j.db"))
    assert p.returncode == 0
    assert ("warning: %s:1: unknown key 'workres' ignored" % conf).encode() in p.stdout
    p = run(home, "--config", str(conf), "--journal", str(tmp_path / "j.db"), stdin=b"QUIT\n")
    assert p.returncode == 0 and p.stdout.startswith(b"$GahpVersion")
    assert b"unknown key 'workres' ignored" in p.stderr
    assert "unknown key 'workres'" in (tmp_path / "j.log").read_text()


def test_tilde_expanded_relative_refused(home, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("journal = ~/gahp/j.db\n")
    p = run(home, "--check-config", "--config", str(conf))
    assert p.returncode == 0, p.stderr
    assert settings(p.stdout)["journal"][0] == "%s/gahp/j.db" % home
    conf.write_text("journal = gahp/j.db\n")
    p = run(home, "--check-config", "--config", str(conf))
    assert p.returncode == 2 and b"not an absolute path" in p.stderr
    p = run(home, "--check-config", env={"BOINC_GAHP_LOG_FILE": "x.log"})
    assert p.returncode == 2 and b"BOINC_GAHP_LOG_FILE: 'x.log' is not an absolute path" in p.stderr


def test_bad_value_exit_2_names_it(home, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("sync = sometimes\n")
    p = run(home, "--check-config", "--config", str(conf))
    assert p.returncode == 2
    assert ("%s:1: sync: 'sometimes'" % conf).encode() in p.stderr
    assert p.stderr.count(b"sometimes") == 1


def test_newer_journal_is_exit_1(home, tmp_path):
    j = tmp_path / "j.db"
    db = sqlite3.connect(str(j))
    db.execute("PRAGMA user_version=999")
    db.close()
    p = run(home, "--check-config", "--journal", str(j))
    assert p.returncode == 1
    assert b"but this boinc_gahp knows schema versions up to" in p.stderr and b"schema version: 999" in p.stdout


def test_journal_in_use_by_a_server(home, tmp_path):
    j = str(tmp_path / "j.db")
    g = Gahp(j)
    try:
        p = run(home, "--check-config", "--journal", j)
        assert p.returncode == 0, p.stderr
        assert ("server: running, pid %d" % g.proc.pid).encode() in p.stdout, p.stdout
    finally:
        g.quit()
        g.wait()
    p = run(home, "--check-config", "--journal", j)
    assert b"server: not running" in p.stdout


def test_example_config_equals_generated_output(home):
    p = run(home, "--example-config")
    assert p.returncode == 0 and p.stderr == b""
    with open(os.path.join(REPO, "examples", "boinc_gahp.conf"), "rb") as f:
        assert f.read() == p.stdout, "regenerate: build/boinc_gahp --example-config > examples/boinc_gahp.conf"


def test_example_config_lists_every_key_and_is_valid(home, tmp_path):
    text = run(home, "--example-config").stdout.decode()
    keys = {l[1:].split(" =")[0] for l in text.splitlines() if l.startswith("#") and " =" in l
            and not l.startswith("# ")}
    assert {"journal", "workers", "log_file", "log_max_bytes", "busy_timeout",
            "submit_deadline", "upload_connections", "project_url",
            "authenticator_file"} <= keys
    assert "#busy_timeout = 60000\n" in text
    # Uncommenting every line that has a default gives a valid file.
    conf = tmp_path / "c.conf"
    conf.write_text("\n".join(l[1:] for l in text.splitlines()
                              if l.startswith("#") and " = " in l and not l.startswith("# ")))
    p = run(home, "--check-config", "--config", str(conf), "--journal", str(tmp_path / "j.db"))
    assert p.returncode == 0, p.stderr
    assert b"warning" not in p.stdout


# ---- what the server needs, checked without writing (issue 28) ----

def as_nobody_or_readonly(path):
    """Make path unwritable for the checking process: run it as nobody
    when root (root writes anywhere), else chmod."""
    if os.geteuid() == 0:
        def drop():
            os.setgid(65534)
            os.setuid(65534)
        return drop
    os.chmod(str(path), 0o555 if os.path.isdir(str(path)) else 0o444)
    return None


def run_check(home, *args, preexec=None):
    import subprocess
    from ops_helpers import clean_env
    return subprocess.run([gahp_binary(), "--check-config"] + list(args), input=b"",
                          capture_output=True, env=clean_env(home), preexec_fn=preexec,
                          timeout=60)


@pytest.fixture
def open_top():
    """A directory every user may enter (pytest's tmp is 0700 root)."""
    import shutil
    import tempfile
    top = tempfile.mkdtemp(dir="/tmp")
    os.chmod(top, 0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def test_missing_journal_directory_that_a_server_makes_is_ok(home, tmp_path):
    j = tmp_path / "new" / "dir" / "j.db"
    p = run(home, "--check-config", "--journal", str(j))
    assert p.returncode == 0, p.stderr
    assert ("journal directory: %s (missing: a server makes it)" % j.parent).encode() in p.stdout
    assert ("log: %s/j.log and stderr" % j.parent).encode() in p.stdout
    assert not (tmp_path / "new").exists()            # nothing made by a check


def test_journal_directory_that_cannot_be_made_is_a_problem(home, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    p = run(home, "--check-config", "--journal", str(blocker / "j.db"))
    assert p.returncode == 1
    assert ("journal directory %s is not a writable directory (not a directory)"
            % blocker).encode() in p.stderr, p.stderr
    p = run(home, "--check-config", "--journal", str(blocker / "sub" / "j.db"))
    assert p.returncode == 1
    assert ("journal directory %s/sub does not exist and cannot be made (Not a directory)"
            % blocker).encode() in p.stderr, p.stderr
    assert b"configuration OK" not in p.stdout


def test_unwritable_journal_directory_is_a_problem(open_top):
    home = os.path.join(open_top, "home")
    os.mkdir(home)
    os.chmod(home, 0o777)
    d = os.path.join(open_top, "root-owned")
    os.mkdir(d, 0o755)
    p = run_check(home, "--journal", os.path.join(d, "j.db"), preexec=as_nobody_or_readonly(d))
    assert p.returncode == 1
    assert ("journal directory %s is not a writable directory" % d).encode() in p.stderr, p.stderr
    assert b"configuration OK" not in p.stdout


def test_unwritable_journal_file_is_a_problem(open_top):
    home = os.path.join(open_top, "home")
    os.mkdir(home)
    os.chmod(home, 0o777)
    d = os.path.join(open_top, "shared")
    os.mkdir(d)
    os.chmod(d, 0o1777)
    j = os.path.join(d, "j.db")
    db = sqlite3.connect(j)
    db.execute("CREATE TABLE t(x)")
    db.close()
    os.chmod(j, 0o644)
    p = run_check(home, "--journal", j, preexec=as_nobody_or_readonly(j))
    assert p.returncode == 1
    assert ("journal file %s is not writable" % j).encode() in p.stderr, p.stderr


def test_log_that_would_be_refused_is_a_problem(home, tmp_path):
    log = tmp_path / "j.log"
    log.write_text("")
    os.chmod(str(log), 0o666)
    p = run(home, "--check-config", "--journal", str(tmp_path / "j.db"))
    assert p.returncode == 1
    assert ("log file %s cannot be used (writable by other users)" % log).encode() in p.stderr
    state = home / ".local" / "state" / "boinc_gahp" / "boinc_gahp.log"
    assert ("log: %s and stderr" % state).encode() in p.stdout
    assert not state.parent.exists()


def test_a_check_with_a_bad_value_writes_nothing(home, tmp_path):
    """Not even the '[error] not started' line a server would log."""
    conf = tmp_path / "c.conf"
    conf.write_text("workers = abc\n")
    p = run(home, "--check-config", "--config", str(conf))
    assert p.returncode == 2 and b"workers: 'abc'" in p.stderr
    assert list(home.iterdir()) == []                 # no state directory made
    assert run(home, stdin=b"QUIT\n").returncode == 0
    log = home / ".local" / "state" / "boinc_gahp" / "boinc_gahp.log"
    before = log.read_text()
    p = run(home, "--check-config", "--config", str(conf))
    assert p.returncode == 2
    assert log.read_text() == before


def test_help_lists_the_operator_commands(home):
    """Issue 28: only the man page named them."""
    p = run(home, "--help")
    assert p.returncode == 0
    for sub in (b"--check-config", b"journal status", b"journal backup FILE",
                b"journal verify", b"journal prune"):
        assert sub in p.stdout.split(b"Operator commands")[1], sub


def test_project_workers_prints_its_effective_value(home, tmp_path):
    p = run(home, "--check-config", "--journal", str(tmp_path / "j.db"), "--workers", "9")
    assert p.returncode == 0, p.stderr
    assert settings(p.stdout)["project_workers"] == ("4", "not set: half the workers, at least 1")
    p = run(home, "--check-config", "--journal", str(tmp_path / "j.db"), "--project-workers", "3")
    assert settings(p.stdout)["project_workers"] == ("3", "--project-workers")
