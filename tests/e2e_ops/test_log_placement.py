"""Where the log goes, and whose it is (issue 28): the default log is
named after the journal (one per journal), made with its directory,
opened without following links, and refused when another user owns it or
may write it; then the per-user log in the state directory, then stderr.
Every reason not to start lands in one of them.  The real binary; the
multi-user cases with real local users (root only)."""
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
import uuid

import pytest

from gahp_client import gahp_binary
from ops_helpers import clean_env, run


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


def user_log(home):
    return home / ".local" / "state" / "boinc_gahp" / "boinc_gahp.log"


def test_the_log_is_named_after_the_journal(home, tmp_path):
    for name in ("alice", "bob"):
        p = run(home, "--journal", str(tmp_path / (name + ".db")), stdin=b"QUIT\n")
        assert p.returncode == 0, p.stderr
    for name in ("alice", "bob"):
        text = (tmp_path / (name + ".log")).read_text()
        assert "journal %s/%s.db" % (tmp_path, name) in text, text
        other = "bob" if name == "alice" else "alice"
        assert "%s.db" % other not in text
    assert not (tmp_path / "boinc_gahp.log").exists()


def test_missing_journal_directory_is_made_with_its_log(home, tmp_path):
    j = tmp_path / "var" / "gahp" / "j.db"
    p = run(home, "--journal", str(j), stdin=b"QUIT\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(b"$GahpVersion")
    assert "started (session 1" in (j.parent / "j.log").read_text()
    assert stat.S_IMODE(os.stat(str(j.parent)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(str(j.parent / "j.log")).st_mode) == 0o600


def test_a_link_where_the_log_goes_is_not_followed(home, tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("")
    os.symlink(str(target), str(tmp_path / "j.log"))
    p = run(home, "--journal", str(tmp_path / "j.db"), stdin=b"QUIT\n")
    assert p.returncode == 0, p.stderr
    assert target.read_text() == ""
    text = user_log(home).read_text()
    assert "cannot use log file %s/j.log: a symbolic link" % tmp_path in text, text
    assert "stopped (clean)" in text


# 0o620: only the group may write it (issue 42: refused like 0o666)
@pytest.mark.parametrize("mode", [0o666, 0o602, 0o620])
def test_a_log_others_may_write_is_refused(home, tmp_path, mode):
    log = tmp_path / "j.log"
    log.write_text("")
    os.chmod(str(log), mode)
    p = run(home, "--journal", str(tmp_path / "j.db"), stdin=b"QUIT\n")
    assert p.returncode == 0, p.stderr
    assert log.read_text() == ""
    assert "writable by other users" in user_log(home).read_text()


def test_bad_value_on_a_first_start_lands_in_a_new_log(home, tmp_path):
    """The user's first job: no state directory yet."""
    conf = tmp_path / "c.conf"
    conf.write_text("workers = abc\n")
    p = run(home, env={"BOINC_GAHP_CONFIG": str(conf)})
    assert p.returncode == 2 and p.stdout == b""
    assert b"workers: 'abc'" in p.stderr
    assert "[error] not started: %s:1: workers: 'abc'" % conf in user_log(home).read_text()


def test_journal_directory_that_cannot_be_made_is_in_the_user_log(home, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    p = run(home, "--journal", str(blocker / "j.db"), stdin=b"QUIT\n")
    assert p.returncode == 1 and p.stdout == b""
    assert p.stderr.count(b"cannot create the journal directory") == 1, p.stderr
    text = user_log(home).read_text()
    assert "cannot use log file %s/j.log" % blocker in text
    assert "[error] not started: cannot create the journal directory %s" % blocker in text


def test_no_log_file_at_all_still_says_why_on_stderr(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {"HOME": str(blocker)}                     # no state directory possible
    p = subprocess.run([gahp_binary(), "--journal", str(blocker / "j.db")], input=b"",
                       capture_output=True, env=clean_env(blocker, env), timeout=60)
    assert p.returncode == 1
    assert b"logging to stderr only" in p.stderr
    assert b"cannot create the journal directory" in p.stderr


# ---- two real users, one journal directory (doc/operating.md's layout) ----

@pytest.fixture
def two_users():
    """Two throw-away local users with homes of their own, removed after."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create local users (useradd)")
    if shutil.which("useradd") is None:
        pytest.skip("no useradd on this machine")
    top = tempfile.mkdtemp(prefix="gahp-users-", dir="/tmp")
    os.chmod(top, 0o755)
    names = ["g28%s%d" % (uuid.uuid4().hex[:6], i) for i in (1, 2)]
    made = []
    try:
        for n in names:
            subprocess.run(["useradd", "-M", "-d", os.path.join(top, n), "-s",
                            "/usr/sbin/nologin", n], check=True, capture_output=True)
            made.append(n)
            pw = pwd.getpwnam(n)
            os.mkdir(os.path.join(top, n), 0o700)
            os.chown(os.path.join(top, n), pw.pw_uid, pw.pw_gid)
        shared = os.path.join(top, "var-lib-boinc_gahp")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)                   # install -d -m 1777, as documented
        yield top, shared, names
    finally:
        for n in made:
            subprocess.run(["userdel", n], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


def as_user(name, top, *args, conf, stdin=b"QUIT\n"):
    pw = pwd.getpwnam(name)

    def drop():
        os.setgid(pw.pw_gid)
        os.setgroups([])
        os.setuid(pw.pw_uid)
    env = clean_env(os.path.join(top, name), {"BOINC_GAHP_CONFIG": conf})
    return subprocess.run([gahp_binary()] + list(args), input=stdin,
                          capture_output=True, env=env, preexec_fn=drop, timeout=60)


def test_two_users_one_journal_directory_each_their_own_log(two_users):
    top, shared, (a, b) = two_users
    conf = os.path.join(top, "boinc_gahp.conf")
    with open(conf, "w") as f:
        f.write("journal = %s/%%u.db\n" % shared)
    os.chmod(conf, 0o644)
    # b plants a world-writable file where a's log goes, before a's first job
    planted = os.path.join(shared, a + ".log")
    with open(planted, "w"):
        pass
    os.chown(planted, pwd.getpwnam(b).pw_uid, -1)
    os.chmod(planted, 0o666)
    # a's first start fails on a bad value: the reason is in a's own log
    bad = os.path.join(top, "bad.conf")
    with open(bad, "w") as f:
        f.write("journal = %s/%%u.db\nworkers = abc\n" % shared)
    os.chmod(bad, 0o644)
    p = as_user(a, top, conf=bad)
    assert p.returncode == 2
    for n in (a, b):
        p = as_user(n, top, conf=conf)
        assert p.returncode == 0, p.stderr
    assert os.path.getsize(planted) == 0            # nothing of a's in b's file
    a_log = os.path.join(top, a, ".local", "state", "boinc_gahp", "boinc_gahp.log")
    b_log = os.path.join(shared, b + ".log")
    for n, log in ((a, a_log), (b, b_log)):
        st = os.stat(log)
        assert st.st_uid == pwd.getpwnam(n).pw_uid and stat.S_IMODE(st.st_mode) == 0o600
    a_text, b_text = open(a_log).read(), open(b_log).read()
    assert "not started: %s:2: workers: 'abc'" % bad in a_text, a_text
    assert "cannot use log file %s: owned by another user" % planted in a_text
    assert "journal %s/%s.db" % (shared, a) in a_text
    assert "journal %s/%s.db" % (shared, b) in b_text
    assert a not in b_text and b not in a_text.replace(planted, "")
