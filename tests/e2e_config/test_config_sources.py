"""Settings without arguments (issue 8 point 9): every option from the
environment and from a configuration file found at a default place, with
precedence command line > environment > file > default, and every bad value
reported with its source and exit status 2.  Runs the real binary; what a
setting did is read from the server's own log (the start-up line names the
worker count and the configuration file) and from the files it creates."""
import http.server
import os
import re
import subprocess
import threading

import pytest

DEAD_PROXY = "http://127.0.0.1:9"
SYSTEM_CONFIG = "/etc/boinc_gahp/boinc_gahp.conf"


def gahp_binary():
    path = os.environ.get("BOINC_GAHP") or os.path.join(
        os.path.dirname(__file__), "..", "..", "build", "boinc_gahp")
    return os.path.abspath(path)


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


def clean_env(home, extra=None):
    """The caller's environment minus every BOINC_GAHP_* setting and XDG
    config variable, HOME in a temp dir, proxies dead."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BOINC_GAHP_") and not k.startswith("XDG_")}
    env["HOME"] = str(home)
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env[k] = DEAD_PROXY
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1"
    env.update(extra or {})
    return env


def run(home, *args, env=None, stdin=b""):
    return subprocess.run([gahp_binary()] + list(args), input=stdin, capture_output=True,
                          env=clean_env(home, env), timeout=60)


def started(home, *args, env=None, stdin=b""):
    """Run until EOF on stdin with a log file; return (workers, config file, log)."""
    log = home / "gahp.log"
    if log.exists():
        log.unlink()
    env = dict(env or {})
    env.setdefault("BOINC_GAHP_LOG_FILE", str(log))
    p = run(home, *args, env=env, stdin=stdin)
    assert p.returncode == 0, p.stderr
    text = log.read_text()
    m = re.search(r"started \(session \d+, journal (.*), (\d+) workers\)", text)
    c = re.search(r"configuration file: (.*)", text)
    assert m and c, text
    return int(m.group(2)), c.group(1), text


def write_conf(path, text, mode=0o600):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, mode)
    return path


def user_conf(home):
    return home / ".config" / "boinc_gahp" / "boinc_gahp.conf"


@pytest.fixture
def no_system_config():
    if os.path.exists(SYSTEM_CONFIG):
        pytest.skip("%s exists on this machine and would be read" % SYSTEM_CONFIG)


def test_each_source_sets_the_worker_count(home, no_system_config):
    assert started(home)[:2] == (8, "none")                       # default
    assert started(home, "--workers", "3")[0] == 3                # command line
    assert started(home, env={"BOINC_GAHP_WORKERS": "4"})[0] == 4  # environment
    conf = write_conf(user_conf(home), "# comment\n\nworkers = 5\n")
    assert started(home)[:2] == (5, str(conf))                     # default user file


def test_every_setting_is_read_from_environment_and_file(home, tmp_path, no_system_config):
    """The journal, the log file and the log level from each source: the
    journal file appears where asked, debug lines only at level debug."""
    j_env, j_file = tmp_path / "env.db", tmp_path / "file.db"
    elog = tmp_path / "env.log"
    p = run(home, env={"BOINC_GAHP_JOURNAL": str(j_env), "BOINC_GAHP_LOG_FILE": str(elog),
                       "BOINC_GAHP_LOG_LEVEL": "error"})
    assert p.returncode == 0, p.stderr
    assert j_env.exists() and elog.exists() and "started" not in elog.read_text()
    flog = tmp_path / "file.log"
    write_conf(user_conf(home), "journal = %s\nlog_file = %s\nlog_level = warn\n"
               "sync = normal\nretention_days = 0.5\nbusy_timeout = 100\n"
               "http_timeout = 5\nconnect_timeout = 2\nretry_budget = 0\n"
               "requeue_undelivered = yes\nca_file = /dev/null\nca_path = /tmp\n"
               "max_reply_bytes = 65536\nmax_output_bytes = 1000\n"
               "max_fetch_bytes = 2000\nmax_unzip_bytes = 3000\n"
               "max_unzip_ratio = 10\nproject_workers = 1\n"
               % (j_file, flog))
    p = run(home)
    assert p.returncode == 0, p.stderr
    assert j_file.exists()
    assert flog.exists() and "started" not in flog.read_text()   # warn hides info


def test_precedence_command_line_environment_file_default(home, no_system_config):
    write_conf(user_conf(home), "workers = 3\n")
    env = {"BOINC_GAHP_WORKERS": "5"}
    assert started(home, "--workers", "7", env=env)[0] == 7
    assert started(home, env=env)[0] == 5
    assert started(home)[0] == 3
    user_conf(home).unlink()
    assert started(home)[0] == 8


def test_empty_environment_variable_counts_as_unset(home, no_system_config):
    write_conf(user_conf(home), "workers = 3\n")
    assert started(home, env={"BOINC_GAHP_WORKERS": ""})[0] == 3


def test_config_file_search_order(home, tmp_path, no_system_config):
    user = write_conf(user_conf(home), "workers = 2\n")
    xdg = write_conf(tmp_path / "xdg" / "boinc_gahp" / "boinc_gahp.conf", "workers = 3\n")
    named = write_conf(tmp_path / "named.conf", "workers = 4\n")
    cli = write_conf(tmp_path / "cli.conf", "workers = 6\n")
    assert started(home)[:2] == (2, str(user))
    # XDG_CONFIG_HOME replaces ~/.config; a relative value is ignored (XDG spec)
    assert started(home, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})[:2] == (3, str(xdg))
    assert started(home, env={"XDG_CONFIG_HOME": "relative/dir"})[:2] == (2, str(user))
    assert started(home, env={"XDG_CONFIG_HOME": str(tmp_path / "empty")})[:2] == (8, "none")
    env = {"BOINC_GAHP_CONFIG": str(named), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert started(home, env=env)[:2] == (4, str(named))
    assert started(home, "--config", str(cli), env=env)[:2] == (6, str(cli))


def test_named_config_file_must_exist(home, tmp_path):
    for args, env in (([], {"BOINC_GAHP_CONFIG": str(tmp_path / "missing.conf")}),
                      (["--config", str(tmp_path / "missing.conf")], {})):
        p = run(home, *args, env=env)
        assert p.returncode == 2 and b"missing.conf" in p.stderr, p.stderr
        assert p.stdout == b""


@pytest.mark.parametrize("name,value,expect", [
    ("WORKERS", "0", b"1..256"), ("WORKERS", "x", b"1..256"), ("WORKERS", "257", b"1..256"),
    ("HTTP_TIMEOUT", "0", b"1..86400"), ("CONNECT_TIMEOUT", "9999", b"1..3600"),
    ("RETRY_BUDGET", "-1", b"0..86400"), ("RETENTION_DAYS", "-1", b"0..36500"),
    ("RETENTION_DAYS", "inf", b"0..36500"), ("BUSY_TIMEOUT", "1e3", b"0..600000"),
    ("SYNC", "sometimes", b"normal, full"), ("LOG_LEVEL", "loud", b"error, warn"),
    ("REQUEUE_UNDELIVERED", "maybe", b"yes, no"),
    ("MAX_REPLY_BYTES", "4095", b"4096..1125899906842624"),
    ("MAX_OUTPUT_BYTES", "1125899906842625", b"1..1125899906842624"),
    ("MAX_FETCH_BYTES", "0", b"1..1125899906842624"),
    ("MAX_UNZIP_BYTES", "1k", b"1..1125899906842624"),
    ("MAX_UNZIP_RATIO", "0", b"1..1000000"), ("PROJECT_WORKERS", "0", b"1..256"),
])
def test_bad_environment_value_names_the_variable(home, name, value, expect):
    var = "BOINC_GAHP_" + name
    p = run(home, env={var: value})
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(b"boinc_gahp: " + var.encode() + b": '" + value.encode() + b"'")
    assert expect in p.stderr and p.stdout == b""


def test_bad_file_value_names_file_line_and_key(home, tmp_path):
    conf = write_conf(tmp_path / "c.conf", "# one\nworkers = 4\nsync = maybe\n")
    p = run(home, env={"BOINC_GAHP_CONFIG": str(conf)})
    assert p.returncode == 2
    assert p.stderr.startswith(("boinc_gahp: %s:3: sync: 'maybe'" % conf).encode()), p.stderr
    # An unknown key is a warning since issue 19 (tests/e2e_ops/test_check_config.py)
    for text, msg in (("workers\n", ":1: expected key = value"),
                      ("log_file =\n", ":1: log_file needs a non-empty value"),
                      ("project_url = ftp://x/\nauthenticator_file = /dev/null\n",
                       ":1: project_url: bad project URL")):
        write_conf(conf, text)
        p = run(home, "--config", str(conf))
        assert p.returncode == 2 and (str(conf) + msg).encode() in p.stderr, (text, p.stderr)


def test_bad_command_line_value_names_the_option(home, tmp_path):
    for args, msg in ((["--workers", "0"], b"--workers: '0'"),
                      (["--sync", "x"], b"--sync: 'x'"),
                      (["--requeue-undelivered=yes"], b"--requeue-undelivered"),
                      (["--bogus"], b"unknown option: --bogus"),
                      (["--journal"], b"missing value for option: --journal"),
                      (["extra"], b"unexpected argument: extra")):
        p = run(home, "--journal", str(tmp_path / "j.db"), *args)
        assert p.returncode == 2 and msg in p.stderr, (args, p.stderr)
        assert p.stdout == b""


def test_bad_lower_source_is_an_error_even_if_a_higher_one_overrides(home):
    """A broken file or variable is reported, never silently shadowed."""
    p = run(home, "--workers", "3", env={"BOINC_GAHP_WORKERS": "zero"})
    assert p.returncode == 2 and b"BOINC_GAHP_WORKERS" in p.stderr


def test_help_and_version_work_despite_bad_settings(home):
    env = {"BOINC_GAHP_WORKERS": "0", "BOINC_GAHP_CONFIG": "/nonexistent"}
    p = run(home, "--help", env=env)
    assert p.returncode == 0 and b"BOINC_GAHP_WORKERS" in p.stdout
    p = run(home, "--version", env=env)
    assert p.returncode == 0 and p.stdout.startswith(b"$GahpVersion: ")


class PingHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.bodies.append(self.path)
        body = b'<?xml version="1.0" ?>\n<ping>\n<success>1</success>\n</ping>\n'
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def ping_server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PingHandler)
    srv.bodies = []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    srv.base = "http://127.0.0.1:%d" % srv.server_address[1]
    yield srv
    srv.shutdown()
    srv.server_close()


def test_default_user_file_preselects_a_project(home, tmp_path, ping_server, no_system_config):
    """The old --config feature, now without arguments; the secret-in-file
    rule still holds for a file found at the default place."""
    conf = write_conf(user_conf(home), "project_url = %s/test\nauthenticator = k3y\n"
                      % ping_server.base, mode=0o644)
    p = run(home)
    assert p.returncode == 2 and b"group/others" in p.stderr and str(conf).encode() in p.stderr
    os.chmod(conf, 0o600)
    g = subprocess.Popen([gahp_binary()], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=clean_env(home))
    try:
        assert g.stdout.readline().startswith(b"$GahpVersion")
        g.stdin.write(b"BOINC_PING 3\r\n")
        g.stdin.flush()
        assert g.stdout.readline() == b"S\n"
        for _ in range(200):
            g.stdin.write(b"RESULTS\r\n")
            g.stdin.flush()
            head = g.stdout.readline()
            lines = [g.stdout.readline() for _ in range(int(head.split()[1]))]
            if lines:
                break
            threading.Event().wait(0.05)
        assert lines == [b"3 NULL\n"]
        assert ping_server.bodies and ping_server.bodies[0].startswith("/test/")
    finally:
        g.stdin.close()
        assert g.wait(timeout=30) == 0


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="module")
def relocated_gahp(tmp_path_factory):
    """A build of the same sources whose system-wide file is in a temp dir
    (GAHP_SYSTEM_CONFIG), so the last step of the search can be tested
    without touching /etc."""
    tmp = tmp_path_factory.mktemp("sysconf")
    system = tmp / "etc" / "boinc_gahp.conf"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    p = subprocess.run(["make", "-C", REPO, "-j2", "--no-print-directory", "BUILD=%s" % (tmp / "b"),
                        "OPT=-O0 -g -DGAHP_SYSTEM_CONFIG='\"%s\"'" % system,
                        str(tmp / "b" / "boinc_gahp")], capture_output=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    return str(tmp / "b" / "boinc_gahp"), system


def test_system_wide_file_is_the_last_resort(home, tmp_path, relocated_gahp):
    binary, system = relocated_gahp
    log = tmp_path / "g.log"

    def workers_and_file(env=None):
        if log.exists():
            log.unlink()
        e = clean_env(home, dict(env or {}, BOINC_GAHP_LOG_FILE=str(log)))
        p = subprocess.run([binary], input=b"", capture_output=True, env=e, timeout=60)
        assert p.returncode == 0, p.stderr
        m = re.search(r"(\d+) workers\)\n.*configuration file: (.*)\n", log.read_text())
        return int(m.group(1)), m.group(2)

    assert workers_and_file() == (8, "none")
    write_conf(system, "workers = 9\n", mode=0o644)        # readable by all: no secret in it
    assert workers_and_file() == (9, str(system))
    assert workers_and_file({"BOINC_GAHP_WORKERS": "10"}) == (10, str(system))
    user = write_conf(user_conf(home), "workers = 11\n")   # replaces it entirely
    assert workers_and_file() == (11, str(user))
    user.unlink()
    write_conf(system, "project_url = http://127.0.0.1:9/x/\nauthenticator = k\n", mode=0o644)
    e = clean_env(home)
    p = subprocess.run([binary], input=b"", capture_output=True, env=e, timeout=60)
    assert p.returncode == 2 and b"group/others" in p.stderr
