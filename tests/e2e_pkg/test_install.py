"""`make install DESTDIR=... PREFIX=/usr` lays out the tree of issue 13,
the installed binary runs, `make uninstall` removes every file again, and
the emulator is installed only by install-emulator."""
import filecmp
import glob
import os
import subprocess

import pytest

from pkg_helpers import REPO, build_dir, make, version_h

# runs make on the source tree and the build directory (doc/testing.md, "Parallel")
pytestmark = pytest.mark.serial

EXPECTED = [
    "usr/sbin/boinc_gahp",
    "usr/share/man/man1/boinc_gahp.1",
    "usr/share/boinc_gahp/schema.sql",
    "usr/share/doc/boinc_gahp/README.md",
    "usr/share/doc/boinc_gahp/configuration.md",
    "usr/share/doc/boinc_gahp/htcondor.md",
    "usr/share/doc/boinc_gahp/examples/boinc_gahp.conf.example",
    "usr/share/doc/boinc_gahp/examples/condor_config.d-boinc_gahp",
    "usr/share/doc/boinc_gahp/examples/boinc_gahp_wrapper.example",
    "usr/share/doc/boinc_gahp/examples/condor_config.d-boinc-job-router",
]


def files_under(root):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(out)


def test_install_layout_and_uninstall(tmp_path):
    root = tmp_path / "root"
    make("install", "DESTDIR=%s" % root, "PREFIX=/usr", "BUILD=%s" % build_dir())
    have = files_under(root)
    for f in EXPECTED:
        assert f in have, (f, have)
    assert os.access(root / "usr/sbin/boinc_gahp", os.X_OK)
    assert not any("boinc_emu" in f for f in have)          # a test tool: not by default
    # schema and every migration, verbatim, as reference
    assert filecmp.cmp(root / "usr/share/boinc_gahp/schema.sql",
                       os.path.join(REPO, "schema/schema.sql"), shallow=False)
    migrations = sorted(glob.glob(os.path.join(REPO, "migrations", "*.sql")))
    assert migrations
    for m in migrations:
        assert filecmp.cmp(root / "usr/share/boinc_gahp/migrations" / os.path.basename(m), m,
                           shallow=False)
    for doc in glob.glob(os.path.join(REPO, "doc", "*.md")):
        assert "usr/share/doc/boinc_gahp/" + os.path.basename(doc) in have
    # the HTCondor snippet and the wrapper name the installed binary
    snippet = (root / "usr/share/doc/boinc_gahp/examples/condor_config.d-boinc_gahp").read_text()
    assert "\nBOINC_GAHP = /usr/sbin/boinc_gahp\n" in snippet
    assert "BOINC_GAHP_ARGS =" not in snippet
    wrapper = (root / "usr/share/doc/boinc_gahp/examples/boinc_gahp_wrapper.example").read_text()
    assert "exec /usr/sbin/boinc_gahp" in wrapper
    # the installed binary runs and is this version
    p = subprocess.run([str(root / "usr/sbin/boinc_gahp"), "--version"], capture_output=True,
                       timeout=30)
    v, d = version_h()
    assert p.returncode == 0 and p.stdout.decode().startswith("$GahpVersion: %s %s " % (v, d))
    make("uninstall", "DESTDIR=%s" % root, "PREFIX=/usr")
    assert files_under(root) == []


def test_default_prefix_is_usr_local_and_emulator_is_optional(tmp_path):
    root = tmp_path / "root"
    make("install", "install-emulator", "DESTDIR=%s" % root, "BUILD=%s" % build_dir())
    have = files_under(root)
    assert "usr/local/sbin/boinc_gahp" in have
    assert "usr/local/bin/boinc_emu" in have
    assert "usr/local/share/man/man1/boinc_emu.1" in have
    snippet = (root / "usr/local/share/doc/boinc_gahp/examples/condor_config.d-boinc_gahp")
    assert "BOINC_GAHP = /usr/local/sbin/boinc_gahp" in snippet.read_text()
    p = subprocess.run([str(root / "usr/local/bin/boinc_emu"), "--help"], capture_output=True,
                       timeout=30)
    assert p.returncode == 0 and b"--state-dir" in p.stdout
    make("uninstall", "DESTDIR=%s" % root)
    assert files_under(root) == []
