"""The site set-up for many users and the operator's read-only checks
(issue 41): authenticator_file with %u, so that one system-wide file
serves every user; --check-config --user NAME, run as root, names the
user who cannot start; --check-config, journal status and journal verify
refuse a journal the server refuses (exit 1, the server's words) and
create nothing beside a journal they only read; the harness gives every
server a scratch HOME.  The real binary and the emulator on 127.0.0.1;
the multi-user cases with real local users (root only)."""
import grp
import os
import pwd
import shutil
import sqlite3
import subprocess
import tempfile
import uuid

import pytest

from blah_client import FAST_ARGS, BlahClient
from cmds_helpers import Emu
from gahp_client import Gahp, escape, gahp_binary
from ops_helpers import run

DAMAGED = "which no boinc_gahp writes: the file is damaged"


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


def made_journal(home, path):
    p = run(home, "--journal", str(path), stdin=b"QUIT\n")
    assert p.returncode == 0, p.stderr
    return path


def names_beside(path):
    return sorted(os.listdir(os.path.dirname(str(path))))


# ---- the operator's checks on a damaged journal ---------------------------

def test_every_operator_check_refuses_a_damaged_journal_as_the_server_does(home, tmp_path):
    j = made_journal(home, tmp_path / "var" / "j.db")
    db = sqlite3.connect(str(j))
    db.execute("PRAGMA user_version = -3")
    db.commit()
    db.close()
    server = run(home, "--journal", str(j), stdin=b"QUIT\n")
    assert server.returncode == 1 and DAMAGED.encode() in server.stderr, server.stderr
    for args in (["--check-config"], ["journal", "verify"], ["journal", "status"]):
        p = run(home, "--journal", str(j), *args)
        assert p.returncode == 1, (args, p.stdout, p.stderr)
        assert DAMAGED.encode() in p.stderr, (args, p.stderr)
        assert b"configuration OK" not in p.stdout
        assert b"integrity and foreign keys OK" not in p.stdout


def test_read_only_checks_create_nothing_beside_the_journal(home, tmp_path):
    j = made_journal(home, tmp_path / "var" / "j.db")
    before = names_beside(j)
    assert before == ["j.db", "j.log"], before          # a clean stop leaves no -wal
    for args in (["--check-config"], ["journal", "status"], ["journal", "verify"]):
        p = run(home, "--journal", str(j), *args)
        assert p.returncode == 0, (args, p.stderr)
        assert names_beside(j) == before, args


# ---- what --check-config shows ---------------------------------------------

def test_check_config_shows_the_authenticator_files_never_their_content(home, tmp_path):
    auth = tmp_path / "auth"
    auth.mkdir()
    whoami = pwd.getpwuid(os.geteuid()).pw_name
    (auth / whoami).write_text("SECRET-main-4711\n")
    (auth / "climate").write_text("SECRET-climate-0815\n")
    os.chmod(str(auth / whoami), 0o600)
    os.chmod(str(auth / "climate"), 0o640)
    conf = tmp_path / "g.conf"
    conf.write_text("project_url = http://127.0.0.1:9/main/\n"
                    "authenticator_file = %s/%%u\n"
                    "project_url.climate = http://127.0.0.1:9/climate/\n"
                    "authenticator_file.climate = %s/climate\n"
                    "project_url.bio = http://user:SECRET-pw@127.0.0.1:9/bio/\n"
                    "authenticator_file.bio = %s/climate\n" % (auth, auth, auth))
    p = run(home, "--journal", str(tmp_path / "j.db"), "--check-config",
            env={"BOINC_GAHP_CONFIG": str(conf)})
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert "SECRET" not in out + p.stderr.decode()
    assert "authenticator_file = %s/%s  (%s:2)" % (auth, whoami, conf) in out, out
    assert ("project climate = http://127.0.0.1:9/climate/  (authenticator_file.climate"
            " = %s/climate)" % auth) in out
    assert "project bio = http://user:***@127.0.0.1:9/bio/" in out     # a URL's password
    assert out.index("project climate") < out.index("project bio")   # the file's order
    # a file every local user may read is a problem (the server still reads it)
    os.chmod(str(auth / "climate"), 0o644)
    p = run(home, "--journal", str(tmp_path / "j.db"), "--check-config",
            env={"BOINC_GAHP_CONFIG": str(conf)})
    assert p.returncode == 1, p.stderr
    assert ("authenticator_file.climate %s/climate is readable by every local user "
            "(mode 0644)" % auth).encode() in p.stderr, p.stderr


@pytest.mark.parametrize("escape_", ["%d", "%", "%U"])
def test_an_unknown_escape_in_authenticator_file_is_a_configuration_error(home, tmp_path,
                                                                          escape_):
    conf = tmp_path / "g.conf"
    conf.write_text("project_url = http://127.0.0.1:9/p/\n"
                    "authenticator_file = %s/auth/%s\n" % (tmp_path, escape_))
    p = run(home, "--journal", str(tmp_path / "j.db"), stdin=b"QUIT\n",
            env={"BOINC_GAHP_CONFIG": str(conf)})
    assert p.returncode == 2 and p.stdout == b""
    assert b"unknown escape" in p.stderr and b"authenticator_file" in p.stderr, p.stderr


def test_user_is_for_check_config_only(home, tmp_path):
    p = run(home, "--journal", str(tmp_path / "j.db"), "--user", "root")
    assert p.returncode == 2 and b"--user is for --check-config only" in p.stderr


def test_an_unknown_user_is_a_bad_option_and_writes_no_log(home, tmp_path):
    p = run(home, "--check-config", "--user", "no-such-user-41")
    assert p.returncode == 2 and b"no user called 'no-such-user-41'" in p.stderr
    assert os.listdir(str(home)) == []


# ---- the harness: no server writes into the real HOME ---------------------

def test_a_server_started_by_the_harness_logs_into_a_scratch_home(tmp_path, journal):
    """Every server the suites start gets the per-test scratch HOME of
    tests/conftest.py: a server that must fall back to the per-user log
    (here: a link where its log goes) writes it there, never into the
    invoking user's real ~/.local/state/boinc_gahp."""
    real_home = pwd.getpwuid(os.geteuid()).pw_dir
    assert os.environ["HOME"] != real_home
    os.symlink(str(tmp_path / "elsewhere"), str(tmp_path / "journal.log"))
    g = Gahp(journal)
    g.stop_cleanly()
    scratch = os.path.join(os.environ["HOME"], ".local", "state", "boinc_gahp",
                           "boinc_gahp.log")
    assert "journal %s" % journal in open(scratch).read()
    real = os.path.join(real_home, ".local", "state", "boinc_gahp", "boinc_gahp.log")
    if os.path.exists(real):            # other runs may write there; never this one
        with open(real, errors="replace") as f:
            assert journal not in f.read()


# ---- many users on one host (root only) -------------------------------------

@pytest.fixture
def site():
    """Three throw-away local users (a, b in a new group, c not), a shared
    journal directory and /etc-like configuration directory, removed after."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create local users (useradd)")
    if shutil.which("useradd") is None or shutil.which("groupadd") is None:
        pytest.skip("no useradd/groupadd on this machine")
    top = tempfile.mkdtemp(prefix="gahp-site-", dir="/tmp")
    os.chmod(top, 0o755)
    tag = uuid.uuid4().hex[:6]
    group = "g41%s" % tag
    names = ["u41%s%s" % (tag, c) for c in "abc"]
    made, group_made = [], False
    try:
        subprocess.run(["groupadd", group], check=True, capture_output=True)
        group_made = True
        for n in names:
            extra = ["-G", group] if n != names[2] else []
            subprocess.run(["useradd", "-M", "-d", os.path.join(top, n), "-s",
                            "/usr/sbin/nologin"] + extra + [n], check=True,
                           capture_output=True)
            made.append(n)
            pw = pwd.getpwnam(n)
            os.mkdir(os.path.join(top, n), 0o700)
            os.chown(os.path.join(top, n), pw.pw_uid, pw.pw_gid)
        etc = os.path.join(top, "etc")
        os.makedirs(os.path.join(etc, "auth"))
        os.chmod(etc, 0o755)
        os.chmod(os.path.join(etc, "auth"), 0o755)
        shared = os.path.join(top, "var-lib-boinc_gahp")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        yield top, etc, shared, group, names
    finally:
        for n in made:
            subprocess.run(["userdel", n], capture_output=True)
        if group_made:
            subprocess.run(["groupdel", group], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


def as_user(name):
    pw = pwd.getpwnam(name)

    def drop():
        os.setgid(pw.pw_gid)
        os.initgroups(name, pw.pw_gid)
        os.setuid(pw.pw_uid)
    return drop


def per_user_auth(etc, name, secret):
    """/etc/boinc_gahp/auth/NAME as documented: owned by NAME, mode 0600."""
    path = os.path.join(etc, "auth", name)
    with open(path, "w") as f:
        f.write(secret + "\n")
    os.chown(path, pwd.getpwnam(name).pw_uid, -1)
    os.chmod(path, 0o600)
    return path


def write_site_conf(etc, url, auth_line):
    conf = os.path.join(etc, "boinc_gahp.conf")
    with open(conf, "w") as f:
        f.write("project_url = %s\n%s\n" % (url, auth_line))
    os.chmod(conf, 0o644)
    return conf


def check_as_root(conf, top, user):
    """--check-config --user USER, run as root."""
    p = run(os.path.join(top, "root-home"), "--check-config", "--user", user,
            env={"BOINC_GAHP_CONFIG": conf})
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_two_users_both_start_with_the_documented_per_user_files(site, tmp_path):
    top, etc, shared, group, (a, b, c) = site
    emu = Emu(tmp_path / "emu")
    try:
        for n in (a, b):
            per_user_auth(etc, n, emu.auth)
        conf = write_site_conf(etc, emu.url,
                               "authenticator_file = %s/auth/%%u" % etc)
        for n in (a, b):
            rc, out, err = check_as_root(conf, top, n)
            assert rc == 0, err
            assert "authenticator_file = %s/auth/%s" % (etc, n) in out, out
            env = {"BOINC_GAHP_CONFIG": conf, "HOME": os.path.join(top, n)}
            journal = os.path.join(shared, n + ".db")
            # HTCondor 10.0-25.x: grid_resource = batch boinc
            blah = BlahClient(journal, args=FAST_ARGS, env=env, preexec_fn=as_user(n),
                              stderr_path=str(tmp_path / (n + ".blah.stderr")))
            try:
                assert blah.start_up() == ["0", "NULL"]
            finally:
                blah.stop()
            # HTCondor 9.0: grid_resource = boinc URL, its own authenticator
            g = Gahp(journal, env=env, preexec_fn=as_user(n),
                     stderr_path=str(tmp_path / (n + ".boinc.stderr")))
            try:
                assert "BOINC_PING" in g.command("COMMANDS")
                assert g.command("BOINC_SELECT_PROJECT %s %s" % (
                    escape(emu.url), escape(emu.auth))) == "S"
                assert g.command("BOINC_PING 3") == "S"
                (line,) = g.wait_results(1)
                assert line == "3 NULL", line
            finally:
                g.stop_cleanly()
            assert os.stat(journal).st_uid == pwd.getpwnam(n).pw_uid
        # the third user has no file: root's check names them
        rc, out, err = check_as_root(conf, top, c)
        assert rc == 2, (out, err)
        assert "%s/auth/%s" % (etc, c) in err and "No such file" in err, err
    finally:
        emu.stop()


def test_check_config_user_names_the_user_who_cannot_read_the_file(site):
    top, etc, shared, group, (a, b, c) = site
    conf = write_site_conf(etc, "http://127.0.0.1:9/p/",
                           "authenticator_file = %s/auth/%%u" % etc)
    per_user_auth(etc, a, "key-a")
    per_user_auth(etc, b, "key-b")
    os.chown(os.path.join(etc, "auth", b), 0, 0)      # root's own 0600 file
    rc, out, err = check_as_root(conf, top, a)
    assert rc == 0, err
    assert "checked for user: %s" % a in out and "note: checked as root" not in out
    per_user_auth(etc, "root", "key-root")
    p = run(os.path.join(top, "root-home"), "--check-config", "--journal",
            os.path.join(top, "root.db"), env={"BOINC_GAHP_CONFIG": conf})
    assert "note: checked as root" in p.stdout.decode() and "--user NAME" in p.stdout.decode()
    rc, out, err = check_as_root(conf, top, b)
    assert rc == 2, (out, err)
    assert "user %s cannot start" % b in err and "mode 0600" in err, err
    assert "key-" not in out + err
    # the server agrees: b's own start fails the same way
    p = subprocess.run([gahp_binary(), "--journal",
                        os.path.join(shared, b + ".db")], input=b"QUIT\n",
                       capture_output=True, preexec_fn=as_user(b), timeout=60,
                       env={"HOME": os.path.join(top, b), "BOINC_GAHP_CONFIG": conf,
                            "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert p.returncode == 2 and b"Permission denied" in p.stderr, p.stderr


def test_a_group_readable_file_serves_the_group_and_names_who_is_not_in_it(site):
    top, etc, shared, group, (a, b, c) = site
    path = os.path.join(etc, "shared.auth")
    with open(path, "w") as f:
        f.write("group-key\n")
    os.chown(path, 0, grp.getgrnam(group).gr_gid)
    os.chmod(path, 0o640)
    conf = write_site_conf(etc, "http://127.0.0.1:9/p/", "authenticator_file = %s" % path)
    for n in (a, b):
        rc, out, err = check_as_root(conf, top, n)
        assert rc == 0, (n, err)
    rc, out, err = check_as_root(conf, top, c)
    assert rc == 2 and "user %s cannot start" % c in err, err
    assert "group %s, mode 0640" % group in err, err


def test_check_config_user_names_a_journal_directory_the_user_cannot_write(site):
    top, etc, shared, group, (a, b, c) = site
    per_user_auth(etc, a, "key-a")
    locked = os.path.join(top, "locked")
    os.mkdir(locked, 0o755)                          # root's, not the user's
    conf = os.path.join(etc, "boinc_gahp.conf")
    with open(conf, "w") as f:
        f.write("project_url = http://127.0.0.1:9/p/\n"
                "authenticator_file = %s/auth/%%u\njournal = %s/%%u.db\n" % (etc, locked))
    os.chmod(conf, 0o644)
    rc, out, err = check_as_root(conf, top, a)
    assert rc == 1, (out, err)
    assert "journal directory %s: user %s cannot start" % (locked, a) in err, err
