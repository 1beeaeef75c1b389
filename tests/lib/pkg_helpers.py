"""Shared helpers of the packaging tests: where the source tree and the
build directory are, and what src/base/version.h says."""
import os
import re
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def build_dir():
    """The build directory of the binaries under test (BOINC_GAHP's), so
    that make reuses them instead of compiling again."""
    gahp = os.environ.get("BOINC_GAHP")
    return os.path.dirname(os.path.abspath(gahp)) if gahp else os.path.join(REPO, "build")


def gahp_binary():
    return os.path.join(build_dir(), "boinc_gahp")


def emu_binary():
    emu = os.environ.get("BOINC_EMU")
    return os.path.abspath(emu) if emu else os.path.join(build_dir(), "boinc_emu")


def version_h():
    """(version, release date) from src/base/version.h, the one place."""
    text = open(os.path.join(REPO, "src", "base", "version.h")).read()
    v = re.search(r'^#define GAHP_VERSION "([^"]+)"$', text, re.M).group(1)
    d = re.search(r'^#define GAHP_RELEASE_DATE "([^"]+)"$', text, re.M).group(1)
    return v, d


def make(*args, timeout=600):
    """Run make in the source tree; no MAKEFLAGS from an outer make."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    p = subprocess.run(["make", "-C", REPO, "--no-print-directory"] + list(args),
                       capture_output=True, env=env, timeout=timeout)
    assert p.returncode == 0, (args, p.stdout.decode()[-3000:], p.stderr.decode()[-3000:])
    return p
