"""The version banner carries the build's identity (issue 28, point 6): two
builds with different identities print different banners, each still in
the form HTCondor parses and within its 149-character read; --version,
--check-config and the journal's sessions row say the same.

Each build is a copy of the build directory under test (so only config.o,
the one object that includes build/gen/build_id.h, is compiled again) made
with make's GAHP_BUILD_ID, GIT or GAHP_PKG_VERSION (mk/build_id.sh)."""
import os
import shutil
import sqlite3
import subprocess

import pytest

from gahp_client import Gahp, gahp_env
from pkg_helpers import REPO, build_dir, make

# runs make on the source tree (doc/testing.md, "Parallel")
pytestmark = pytest.mark.serial


def build(tmp_path, name, *make_args):
    """A boinc_gahp built into tmp_path/name from a copy of the build
    directory's objects; returns its path."""
    out = tmp_path / name
    out.mkdir()
    # The plain build's objects (make all), whatever build is under test:
    # a sanitizer build's objects need its flags at link time, which this
    # make, free of the outer make's variables, does not have.
    plain = os.path.join(REPO, "build")
    if not os.path.isdir(os.path.join(plain, "src")):
        plain = build_dir()
    for sub in ("src", "gen"):
        shutil.copytree(os.path.join(plain, sub), out / sub, symlinks=True)
    make("BUILD=%s" % out, *make_args, "%s/boinc_gahp" % out)
    return str(out / "boinc_gahp")


def banner(binary):
    p = subprocess.run([binary, "--version"], capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr
    line = p.stdout.decode().rstrip("\n")
    assert "\n" not in line
    return line


def session_version(binary, journal):
    """The sessions row a real start writes, and the banner it printed."""
    p = subprocess.run([binary, "--journal", journal], input=b"QUIT\n", capture_output=True,
                       env=gahp_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    con = sqlite3.connect(journal)
    try:
        return con.execute("SELECT version FROM sessions").fetchone()[0], \
            p.stdout.decode().splitlines()[0]
    finally:
        con.close()


def head_commit():
    return subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                          capture_output=True, check=True, timeout=30).stdout.decode().strip()


def test_two_identities_print_two_banners(tmp_path):
    alpha = build(tmp_path, "alpha", "GAHP_BUILD_ID=alpha 1")
    beta = build(tmp_path, "beta", "GAHP_BUILD_ID=beta 2")
    a, b = banner(alpha), banner(beta)
    assert a != b
    assert "alpha\\ 1" in a and "beta\\ 2" in b
    for line in (a, b):
        assert Gahp.BANNER_RE.match(line), line
        assert len(line) <= 149
    # the same identity in the sessions row and --check-config
    version, started = session_version(alpha, str(tmp_path / "a.db"))
    assert started == a
    assert version.endswith("(alpha 1)"), version
    p = subprocess.run([beta, "--journal", str(tmp_path / "b.db"), "--check-config"],
                       capture_output=True, env=gahp_env(), timeout=30)
    assert "version: " in p.stdout.decode() and "(beta 2)" in p.stdout.decode(), p.stdout


def test_git_commit_package_version_or_unknown(tmp_path):
    from_git = banner(build(tmp_path, "git"))
    assert "git\\ " + head_commit() in from_git, from_git
    # no git program: the package version when one is given, else said so
    pkg = banner(build(tmp_path, "pkg", "GIT=false", "GAHP_PKG_VERSION=1.2.3-4"))
    assert "package\\ 1.2.3-4)" in pkg, pkg
    unknown = banner(build(tmp_path, "none", "GIT=false"))
    assert "unknown\\ build)" in unknown, unknown
    for line in (from_git, pkg, unknown):
        assert Gahp.BANNER_RE.match(line), line


def test_an_identity_of_any_text_keeps_the_banner_parseable(tmp_path):
    # quotes, backslashes, a dollar, runs of spaces and a long text: the
    # banner stays one parseable line within HTCondor's read
    line = banner(build(tmp_path, "odd", "GAHP_BUILD_ID=" + 'a"b\\c $x' + " " * 30 + "y" * 80))
    assert Gahp.BANNER_RE.match(line), line
    assert len(line) <= 149, len(line)
    assert line.count("$") == 2 and '"' not in line
