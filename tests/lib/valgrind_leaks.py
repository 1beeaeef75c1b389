"""What the leak tests share (issue 42's sampled mutants that drop a
free(): the memory is lost, not misused, so nothing else sees it): the
real boinc_gahp run under valgrind's leak checker.

* `needs_valgrind`: the skip mark (no valgrind installed, or an ASan/TSan
  build, which does not run under valgrind: make check-asan and
  check-tsan check those builds their own way);
* `VALGRIND` + `LEAKED`: the command line before the binary, with
  valgrind's own exit status when a block is definitely lost;
* `valgrind_wrapper`: a script standing in for the binary (BOINC_GAHP)
  for the tests that start the server through the usual harness."""
import os
import shutil

import pytest

from gahp_client import gahp_binary

LEAKED = 99


def _sanitizer_build():
    try:
        with open(gahp_binary(), "rb") as f:
            data = f.read()
    except OSError:
        return False
    return b"__asan_init" in data or b"__tsan_init" in data


needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or _sanitizer_build(),
                                    reason="no valgrind, or a sanitizer build")


def valgrind_command(log):
    """valgrind's arguments, its report going to log."""
    return ["valgrind", "-q", "--leak-check=full", "--show-leak-kinds=definite",
            "--errors-for-leak-kinds=definite", "--error-exitcode=%d" % LEAKED,
            "--log-file=%s" % log]


def valgrind_wrapper(tmp_path, monkeypatch):
    """BOINC_GAHP becomes a script that runs the server under valgrind;
    returns the path of its report."""
    log = tmp_path / "vg.log"
    wrapper = tmp_path / "boinc_gahp_under_valgrind"
    wrapper.write_text("#!/bin/sh\nexec %s %s \"$@\"\n"
                       % (" ".join(valgrind_command(log)), os.path.abspath(gahp_binary())))
    wrapper.chmod(0o755)
    monkeypatch.setenv("BOINC_GAHP", str(wrapper))
    return log
