"""The man pages are complete and well-formed.  The lists of options,
environment variables and configuration keys are taken from the binaries'
own --help, so an option added later fails here until it is documented in
the man page and in doc/configuration.md (doc/emulator.md for boinc_emu)."""
import os
import re
import subprocess

import pytest

from pkg_helpers import REPO, build_dir, emu_binary, gahp_binary, make, version_h

# runs make on the source tree and the build directory (doc/testing.md, "Parallel")
pytestmark = pytest.mark.serial


def help_text(binary):
    p = subprocess.run([binary, "--help"], capture_output=True, timeout=30,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert p.returncode == 0
    return p.stdout.decode()


def gahp_names():
    """(options, environment variables, config-file keys) boinc_gahp accepts."""
    text = help_text(gahp_binary())
    options = re.findall(r"^  (--[a-z][a-z-]*)", text, re.M)
    env = re.findall(r"\b(BOINC_GAHP_[A-Z_]+)\b", text)
    keys = re.findall(r"config file key ([a-z_]+)", text) + re.findall(r"^  ([a-z_]+) =", text, re.M)
    assert "--workers" in options and "BOINC_GAHP_WORKERS" in env and "project_url" in keys
    return sorted(set(options)), sorted(set(env)), sorted(set(keys))


@pytest.fixture(scope="module")
def pages():
    make("man", "BUILD=%s" % build_dir())
    return {name: os.path.join(build_dir(), "man", name + ".1") for name in ("boinc_gahp", "boinc_emu")}


def render(page):
    """man -l as a user would see it, wide enough that nothing is hyphenated."""
    env = dict(os.environ, LC_ALL="C", MANWIDTH="250", MANPAGER="cat", PAGER="cat")
    p = subprocess.run(["man", "-l", page], capture_output=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.decode()


def mentioned(name, text):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), text) is not None


@pytest.mark.parametrize("name", ["boinc_gahp", "boinc_emu"])
def test_man_renders_without_warnings(pages, name):
    """What lintian checks: man --warnings on the page prints nothing."""
    env = dict(os.environ, LC_ALL="C.UTF-8", MANROFFSEQ="", MANWIDTH="80")
    p = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", pages[name]],
                       capture_output=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    text = render(pages[name])
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SIGNALS",
                    "EXAMPLES", "SEE ALSO"):
        assert re.search(r"^%s$" % section, text, re.M), section


@pytest.mark.parametrize("name", ["boinc_gahp", "boinc_emu"])
def test_man_header_carries_version_and_release_date(pages, name):
    v, d = version_h()
    lines = render(pages[name]).strip().splitlines()
    first, last = lines[0], lines[-1]
    assert name.upper() + "(1)" in first
    assert "boinc_gahp " + v in last and d in last, last
    banner = subprocess.run([gahp_binary(), "--version"], capture_output=True, timeout=30).stdout
    assert banner.decode().startswith("$GahpVersion: %s %s " % (v, d))


def test_every_gahp_setting_is_in_man_page_and_configuration_md(pages):
    man = render(pages["boinc_gahp"])
    doc = open(os.path.join(REPO, "doc", "configuration.md")).read()
    options, env, keys = gahp_names()
    for where, text in (("boinc_gahp(1)", man), ("doc/configuration.md", doc)):
        missing = [n for n in options + env + keys if not mentioned(n, text)]
        assert missing == [], "%s does not document %s" % (where, missing)
    for section in ("ENVIRONMENT", "FILES", "CONFIGURATION FILE"):
        assert re.search(r"^%s$" % section, man, re.M), section
    for path in ("/etc/boinc_gahp/boinc_gahp.conf", "~/.config/boinc_gahp/boinc_gahp.conf"):
        assert path in man and path in doc


def test_every_emulator_option_is_in_its_man_page_and_emulator_md(pages):
    options = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", help_text(emu_binary()))))
    assert "--state-dir" in options
    man = render(pages["boinc_emu"])
    doc = open(os.path.join(REPO, "doc", "emulator.md")).read()
    for where, text in (("boinc_emu(1)", man), ("doc/emulator.md", doc)):
        missing = [o for o in options if not mentioned(o, text)]
        assert missing == [], "%s does not document %s" % (where, missing)
