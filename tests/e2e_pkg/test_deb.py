"""`make deb` builds boinc-gahp_<version>_<arch>.deb with dpkg-buildpackage
from debian/; the package extracts into a scratch root (dpkg -x: safe on a
developer machine, nothing is installed into the system) and the binary in
it reports the version of src/base/version.h; lintian finds no error; the work
tree is left as it was."""
import os
import re
import subprocess

import pytest

from pkg_helpers import REPO, make, version_h

# runs make on the source tree and the build directory (doc/testing.md, "Parallel")
pytestmark = pytest.mark.serial


def git_status():
    p = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--ignored=no"],
                       capture_output=True, timeout=60)
    return p.stdout if p.returncode == 0 else None


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    """Build the package once, in its own build directory."""
    build = tmp_path_factory.mktemp("debbuild")
    before = git_status()
    make("deb", "BUILD=%s" % build, timeout=1200)
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                          check=True).stdout.decode().strip()
    path = build / ("boinc-gahp_%s_%s.deb" % (version_h()[0], arch))
    assert path.exists(), sorted(os.listdir(build))
    return path, before


def field(deb_path, name):
    return subprocess.run(["dpkg-deb", "-f", str(deb_path), name], capture_output=True,
                          check=True).stdout.decode().strip()


def test_package_runs_from_a_scratch_root(deb, tmp_path):
    path, _ = deb
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(path), str(root)], check=True, timeout=60)
    binary = root / "usr/sbin/boinc_gahp"
    p = subprocess.run([str(binary), "--version"], capture_output=True, timeout=30)
    v, d = version_h()
    assert p.returncode == 0
    assert p.stdout.decode().startswith("$GahpVersion: %s %s " % (v, d)), p.stdout
    # the build's identity is the package version (mk/build_id.sh), and
    # the commit make deb ran in
    commit = subprocess.run(["sh", "mk/build_id.sh", "--commit"], cwd=REPO, capture_output=True,
                            check=True, timeout=60).stdout.decode().strip()
    assert ("package\\ %s\\ git\\ %s)" % (v, commit)) in p.stdout.decode(), p.stdout
    assert field(path, "Version") == v and field(path, "Package") == "boinc-gahp"
    # dependencies computed by dh_shlibdeps from what the binary links
    depends = field(path, "Depends")
    for lib in ("libsqlite3-0", "libcurl4", "libxml2", "libzip4", "libc6"):
        assert lib in depends, depends
    assert (root / "usr/share/man/man1/boinc_gahp.1.gz").exists()
    assert (root / "usr/share/doc/boinc-gahp/copyright").exists()
    assert (root / "usr/share/doc/boinc-gahp/examples/condor_config.d-boinc_gahp").exists()
    assert (root / "usr/share/doc/boinc-gahp/examples/condor_config.d-boinc-job-router").exists()
    assert (root / "usr/share/boinc_gahp/schema.sql").exists()
    assert not (root / "usr/bin/boinc_emu").exists()


def test_lintian_reports_no_error(deb):
    path, _ = deb
    p = subprocess.run(["lintian", "--fail-on", "error", str(path)], capture_output=True,
                       timeout=300)
    errors = [l for l in p.stdout.decode().splitlines() if l.startswith("E:")]
    assert p.returncode == 0 and errors == [], p.stdout.decode() + p.stderr.decode()


def test_changelog_agrees_with_version_h():
    v, d = version_h()
    out = subprocess.run(["dpkg-parsechangelog", "-l", os.path.join(REPO, "debian/changelog")],
                         capture_output=True, check=True).stdout.decode()
    assert re.search(r"^Version: %s$" % re.escape(v), out, re.M), out
    date = re.search(r"^Date: (.*)$", out, re.M).group(1)
    shown = subprocess.run(["date", "-u", "-d", date, "+%b %-d %Y"], capture_output=True,
                           check=True, env={"LC_ALL": "C"}).stdout.decode().strip()
    assert shown == d


def test_build_leaves_the_work_tree_clean(deb):
    _, before = deb
    if before is None:
        pytest.skip("not a git work tree")
    assert git_status() == before
