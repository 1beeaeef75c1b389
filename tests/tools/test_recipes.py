"""The recipes of `make check-real` (tests/real/recipes/, issue 41), without
building anything: they parse (bash -n, and shellcheck when it is
installed), get a pinned tag or commit from a local mirror or by fetching
it from an upstream URL (here a file:// repository made by the test),
say which variable to set when they cannot, refuse an unknown phase, and
keep the directories, users and ports that tests/real expects (an
existing build is then found and reused)."""
import os
import re
import shutil
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECIPES = os.path.join(REPO, "tests", "real", "recipes")
SCRIPTS = [os.path.join(RECIPES, f) for f in sorted(os.listdir(RECIPES)) if f.endswith(".sh")] + \
    [os.path.join(REPO, "tests", "real", "setup_real.sh")]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"]


def test_scripts_parse():
    for s in SCRIPTS:
        r = subprocess.run(["bash", "-n", s], capture_output=True, text=True)
        assert r.returncode == 0, (s, r.stderr)


def test_shellcheck_clean():
    if not shutil.which("shellcheck"):
        pytest.skip("no shellcheck (apt-get install shellcheck)")
    r = subprocess.run(["shellcheck", "-x"] + [os.path.relpath(s, REPO) for s in SCRIPTS],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def upstream(tmp_path):
    """A repository with tag V1 (and a later commit) standing in for upstream."""
    up = tmp_path / "up"
    subprocess.run(GIT + ["init", "-q", str(up)], check=True)
    (up / "src" / "classad").mkdir(parents=True)
    (up / "src" / "classad" / "parse_classad_testdata.hpp").write_text("big\n")
    (up / "first.txt").write_text("1\n")
    subprocess.run(GIT + ["-C", str(up), "add", "."], check=True)
    subprocess.run(GIT + ["-C", str(up), "commit", "-qm", "one"], check=True)
    subprocess.run(GIT + ["-C", str(up), "tag", "V1"], check=True)
    first = subprocess.run(["git", "-C", str(up), "rev-parse", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.strip()
    (up / "second.txt").write_text("2\n")
    subprocess.run(GIT + ["-C", str(up), "add", "."], check=True)
    subprocess.run(GIT + ["-C", str(up), "commit", "-qm", "two"], check=True)
    return up, first


def get_source(url, mirror, ref, cache, dest, *exclude):
    script = ('set -euo pipefail; RECIPE=t; . "$0"; HTC_MIRROR="$1"; shift; '
              'get_source "$1" HTC_MIRROR "$2" "$3" "$4" "${@:5}"')
    return subprocess.run(["bash", "-c", script, os.path.join(RECIPES, "lib.sh"), mirror, url,
                           ref, str(cache), str(dest)] + list(exclude),
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1"))


def test_source_from_a_mirror_and_from_upstream(tmp_path):
    up, first = upstream(tmp_path)
    # a local mirror: the tag, with the excluded file left out; nothing cached
    r = get_source("file:///nowhere", str(up), "V1", tmp_path / "cache0", tmp_path / "d0",
                   "src/classad/parse_classad_testdata.hpp")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "d0")) == ["first.txt"]
    assert not (tmp_path / "cache0").exists()
    # no mirror: only the tag (depth 1) is fetched into the cache, once
    r = get_source("file://%s" % up, "", "V1", tmp_path / "cache", tmp_path / "d1")
    assert r.returncode == 0, r.stderr
    assert "fetching V1" in r.stdout and (tmp_path / "d1" / "first.txt").exists()
    assert not (tmp_path / "d1" / "second.txt").exists()
    r = get_source("file:///nowhere", "", "V1", tmp_path / "cache", tmp_path / "d2")
    assert r.returncode == 0 and "fetching" not in r.stdout, r.stdout + r.stderr
    # a full commit id, as the BOINC recipe pins
    r = get_source("file://%s" % up, "", first, tmp_path / "cache2", tmp_path / "d3")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "d3")) == ["first.txt", "src"]


def test_source_failures_name_the_variable(tmp_path):
    up, _ = upstream(tmp_path)
    r = get_source("file:///nowhere", str(up), "V9", tmp_path / "c", tmp_path / "d")
    assert r.returncode == 2 and "HTC_MIRROR=%s has no V9" % up in r.stderr, r.stderr
    r = get_source("file:///nowhere", str(tmp_path), "V1", tmp_path / "c", tmp_path / "d")
    assert r.returncode == 2 and "is not a git repository" in r.stderr, r.stderr
    r = get_source("file://%s/missing" % tmp_path, "", "V1", tmp_path / "c", tmp_path / "d")
    assert r.returncode == 2 and "set HTC_MIRROR" in r.stderr, r.stderr
    for out in (r.stdout, r.stderr):
        assert "fetch " + "github" not in out and "/" + "work/" not in out


def test_unknown_phase_is_refused(tmp_path):
    for recipe, args in (("htcondor9.sh", ["nope"]), ("htcondor25.sh", ["nope"]),
                         ("boinc_server.sh", [str(tmp_path / "src"), "nope"])):
        r = subprocess.run([os.path.join(RECIPES, recipe)] + args, capture_output=True, text=True,
                           env=dict(os.environ, STATE_DIR=str(tmp_path / "state")), timeout=60)
        assert r.returncode == 2 and "no phase 'nope'" in r.stderr, (recipe, r.stderr)
    assert not (tmp_path / "state").exists()


def default(recipe, var):
    with open(os.path.join(RECIPES, recipe)) as f:
        m = re.search(r"^%s=\$\{%s:-([^}]*)\}" % (var, var), f.read(), re.M)
    assert m, (recipe, var)
    return m.group(1)


def test_the_places_tests_real_expects():
    """Same caches, users and ports as the systems tests/real drives (and as
    systems built before the recipes moved into the tree)."""
    expect = {
        "htcondor9.sh": {"HTC_TAG": "V9_0_19", "SRC_DIR": "/opt/htcondor-src",
                         "BUILD_DIR": "/opt/htcondor-build", "PREFIX": "/opt/condor9",
                         "LOCAL_DIR": "/var/lib/condor9", "CONDOR_USER": "htcgrid",
                         "COLLECTOR_PORT": "29618", "EMU_PORT": "18480",
                         "EMU_DIR": "/var/lib/boinc-emu-htc"},
        "htcondor25.sh": {"HTC_TAG": "v25.0.13", "SRC_DIR": "/opt/htcondor25-src",
                          "BUILD_DIR": "/opt/htcondor25-build", "PREFIX": "/opt/condor25",
                          "LOCAL_DIR": "/var/lib/condor25", "CONDOR_USER": "htcgrid25",
                          "COLLECTOR_PORT": "29625"},
        "boinc_server.sh": {"PORT": "18181", "PROJECT": "rstest",
                            "PROJECTS_DIR": "/opt/boinc-projects", "PEER_DIR": "/opt/peer",
                            "STATE_DIR": "/var/lib/rs-boinc-state",
                            "CLIENT_DIR": "/var/lib/rs-boinc-client"},
    }
    for recipe, values in expect.items():
        for var, value in values.items():
            assert default(recipe, var) == value, (recipe, var)
    assert default("boinc_server.sh", "BOINC_COMMIT").startswith("c5c6cb79")
    with open(os.path.join(REPO, "tests", "real", "realsys.py")) as f:
        realsys = f.read()
    for value in ("/opt/condor9", "/var/lib/condor9", '"htcgrid"', "/var/lib/boinc-emu-htc",
                  "/var/lib/rs-boinc-state"):
        assert value in realsys, value
    with open(os.path.join(RECIPES, "condor_pool.sh")) as f:
        pool = f.read()
    assert "$BUILD_DIR/.phase-$1" in pool          # the phase markers' names
