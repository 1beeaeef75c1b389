"""The repository stands on its own (issue 41): no file it tracks names a
path of one machine (a developer's work tree, a sibling checkout beside
it, root's or a real user's home, a local git mirror) or a tool that is
not part of the project.  Whoever clones it has only the repository: the
real-system recipes are tests/real/recipes/, the side-by-side benchmark
is tests/bench/peer_vs_gahp.py.

Example home directories in the docs and test fixtures are fine when
they are obviously examples: /home/alice, /home/u, and the pool users
the recipes create (htcgrid, htcgrid25)."""
import os
import re
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SELF = os.path.relpath(os.path.abspath(__file__), REPO)

# (pattern, why it is not allowed); built from pieces so that this file
# would not match itself even if it were checked
FORBIDDEN = [
    ("/" + "work/", "a path of one machine's work area"),
    (r"\.\./" + "shared", "a sibling directory of the checkout"),
    (r"\bshared/(real|bench|reference)/", "files kept outside the repository"),
    ("/" + r"root/", "root's home directory"),
    (r"\." + r"mirror\b", "a local git mirror of one machine"),
    ("fetch " + "tool", "a tool that is not part of the project"),
    ("search " + "library", "a tool that is not part of the project"),
    (r"\bfetch " + r"github:", "a tool that is not part of the project"),
]
EXAMPLE_HOMES = {"alice", "bob", "u", "user", "htcgrid", "htcgrid25"}
HOME = re.compile(r"/home/([A-Za-z0-9_.-]+)")


def tracked_files():
    try:
        out = subprocess.run(["git", "-C", REPO, "ls-files", "-z"], check=True,
                             capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: nothing to list")
    return [f for f in out.decode().split("\0") if f and f != SELF]


def offending_lines(files):
    pats = [(re.compile(p), why) for p, why in FORBIDDEN]
    own_home = os.path.expanduser("~")
    for rel in files:
        path = os.path.join(REPO, rel)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            continue                       # binary
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            for pat, why in pats:
                if pat.search(line):
                    yield "%s:%d: %s (%s)" % (rel, n, line.strip()[:120], why)
            for m in HOME.finditer(line):
                if m.group(1) not in EXAMPLE_HOMES:
                    yield "%s:%d: %s (a real user's home directory)" % (rel, n, m.group(0))
            if len(own_home) > 1 and own_home not in ("/root",) and \
                    os.path.basename(own_home) not in EXAMPLE_HOMES and own_home in line:
                yield "%s:%d: %s (this machine's $HOME)" % (rel, n, own_home)


def test_no_path_of_one_machine_and_no_outside_tool():
    bad = list(offending_lines(tracked_files()))
    assert bad == [], "the tree names things outside itself:\n" + "\n".join(bad)


def test_the_check_finds_what_it_should(tmp_path):
    """Each kind of reference the issue found is caught; examples are not."""
    sample = tmp_path / "sample.md"
    sample.write_text("\n".join([
        "PVG ?= /" + "work/shared/bench/peer_vs_gahp.py",
        "see ../" + "shared/real/htcondor25/README.md",
        "HTC_MIRROR=/x/." + "mirror/htcondor+htcondor/repo",
        "get one with the fetch " + "tool",
        "log in /home/" + "carol/x",
        "ok: /home/alice/.boinc_auth and /home/htcgrid25/jobs",
    ]) + "\n")
    global REPO
    saved, REPO = REPO, str(tmp_path)
    try:
        bad = list(offending_lines(["sample.md"]))
    finally:
        REPO = saved
    assert [b.split(":")[1] for b in bad] == ["1", "1", "2", "2", "3", "4", "5"], bad


def test_make_targets_need_nothing_outside():
    """`make check-real` and `make bench` take their scripts from the tree."""
    with open(os.path.join(REPO, "Makefile")) as f:
        makefile = f.read()
    with open(os.path.join(REPO, "mk", "real.mk")) as f:
        real = f.read()
    assert re.search(r"^PVG\s*\?=\s*tests/bench/peer_vs_gahp\.py\s*$", makefile, re.M)
    assert os.path.isfile(os.path.join(REPO, "tests", "bench", "peer_vs_gahp.py"))
    assert "SHARED_REAL" not in real
    for recipe in ("htcondor9.sh", "htcondor25.sh", "boinc_server.sh"):
        path = os.path.join(REPO, "tests", "real", "recipes", recipe)
        assert os.access(path, os.X_OK), path
