"""Several grid managers of one user (issue 19; doc/operating.md, "Several
grid managers per user"): under GRIDMANAGER_SELECTION_EXPR the schedd starts
one condor_gridmanager per selection value, with "-A <value>" on its command
line, and each starts a boinc_gahp.  Each GAHP must get its own journal (and
default log), the same one again when its grid manager is started anew,
and run beside the others.

The grid manager here is a real process whose argv[0] is condor_gridmanager
(Python, started under that name), which starts the real boinc_gahp through
a /bin/sh wrapper, as an HTCondor site's BOINC_GAHP wrapper does, with its
stdin and stdout as the GAHP's pipes.  tests/real/test_20_gridmanagers.py
does the same with the real HTCondor 9.0.19 schedd."""
import os
import pwd
import sqlite3
import subprocess
import sys

import pytest

from gahp_client import gahp_binary
from ops_helpers import clean_env, run

FAKE_GM = r"""
import os, sys
# condor_gridmanager -f [-A value] -C constraint -o owner: start the GAHP
# through a wrapper and wait for it.
wrapper, gahp = sys.argv[1], sys.argv[2]
rc = os.spawnv(os.P_WAIT, "/bin/sh", ["sh", wrapper, gahp])
sys.exit(rc)
"""

WRAPPER = """#!/bin/sh
# like an HTCondor site's BOINC_GAHP wrapper: not exec'd, so the GAHP's
# parent is this shell and the grid manager its grandparent
"$1"
"""


@pytest.fixture
def setup(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "gm.py").write_text(FAKE_GM)
    (tmp_path / "wrapper.sh").write_text(WRAPPER)
    return tmp_path, home


def start_gm(tmp_path, home, value=None, env=None):
    """A grid manager process (argv[0] condor_gridmanager) running the GAHP."""
    argv = ["condor_gridmanager", str(tmp_path / "gm.py"), str(tmp_path / "wrapper.sh"),
            gahp_binary(), "-f"]
    if value is not None:
        argv += ["-A", value]
    argv += ["-C", '(Owner=?="u")', "-o", "u@example"]
    return subprocess.Popen(argv, executable=sys.executable, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=clean_env(home, env))


def banner(p):
    line = p.stdout.readline()
    assert line.startswith(b"$GahpVersion"), (line, p.stderr.read() if p.poll() is not None else b"")


def quit_gm(p):
    p.stdin.write(b"QUIT\n")
    p.stdin.flush()
    assert p.stdout.readline() == b"S\n"
    assert p.wait(timeout=60) == 0, p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    p.stdin.close()


def state(home):
    return home / ".local" / "state" / "boinc_gahp"


def journals(home):
    return sorted(p.name for p in state(home).glob("journal*.db"))


def sessions(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return con.execute("SELECT count(*) FROM sessions").fetchone()[0]
    finally:
        con.close()


def test_each_grid_manager_has_its_own_journal_and_finds_it_again(setup):
    tmp_path, home = setup
    a = start_gm(tmp_path, home, "alpha")
    b = start_gm(tmp_path, home, "beta gamma")
    banner(a)
    banner(b)                      # both run at once: no "in use" refusal
    quit_gm(a)
    quit_gm(b)
    names = journals(home)
    assert len(names) == 2, names
    alpha = [n for n in names if n.startswith("journal.alpha-")]
    beta = [n for n in names if n.startswith("journal.beta_gamma-")]
    assert len(alpha) == 1 and len(beta) == 1, names
    logs = sorted(p.name for p in state(home).glob("boinc_gahp*.log"))
    assert logs == sorted("boinc_gahp.%s.log" % n[len("journal."):-len(".db")]
                          for n in names), logs
    assert "selection value" in (state(home) / logs[0]).read_text()

    # alpha's grid manager is started again: same journal, a second session
    a2 = start_gm(tmp_path, home, "alpha")
    banner(a2)
    quit_gm(a2)
    assert journals(home) == names
    assert sessions(state(home) / alpha[0]) == 2
    assert sessions(state(home) / beta[0]) == 1


def test_no_selection_value_keeps_the_one_default_journal(setup):
    tmp_path, home = setup
    p = start_gm(tmp_path, home)
    banner(p)
    quit_gm(p)
    assert journals(home) == ["journal.db"]


def run_under_gm(home, gahp_args, value="alpha", stdin=None):
    """The GAHP with gahp_args, started by a python -c grid manager whose
    own argv carries -A value."""
    code = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:%d]))" % (
        2 + len(gahp_args))
    argv = ["condor_gridmanager", "-c", code, gahp_binary()] + gahp_args + ["-A", value]
    return subprocess.Popen(argv, executable=sys.executable, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=clean_env(home))


def test_a_journal_named_on_the_command_line_is_taken_as_it_is(setup, tmp_path):
    _, home = setup
    j = tmp_path / "mine.db"
    p = run_under_gm(home, ["--journal", str(j)])
    banner(p)
    quit_gm(p)
    assert j.exists()
    assert not list(tmp_path.glob("mine.alpha-*.db"))


def test_the_environment_journal_gets_the_suffix_and_percent_u(setup, tmp_path):
    tmp_path_, home = setup
    d = tmp_path / "journals"
    d.mkdir()
    user = pwd.getpwuid(os.geteuid()).pw_name
    p = start_gm(tmp_path_, home, "alpha", env={"BOINC_GAHP_JOURNAL": str(d / "%u.db")})
    banner(p)
    quit_gm(p)
    made = sorted(x.name for x in d.glob("*.db"))
    assert len(made) == 1 and made[0].startswith(user + ".alpha-"), made


def test_percent_u_without_a_grid_manager(setup, tmp_path):
    _, home = setup
    user = pwd.getpwuid(os.geteuid()).pw_name
    d = tmp_path / "j"
    d.mkdir()
    r = run(home, stdin=b"QUIT\n", env={"BOINC_GAHP_JOURNAL": str(d / "%u-100%%.db")})
    assert r.returncode == 0, r.stderr
    assert (d / ("%s-100%%.db" % user)).exists()


def test_check_config_names_the_suffix(setup):
    _, home = setup
    p = run_under_gm(home, ["--check-config"])
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    out = out.decode()
    assert "grid manager:" in out and "alpha-" in out, out
    assert "journal: %s/journal.alpha-" % state(home) in out, out
