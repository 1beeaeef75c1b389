"""A passing `make check` prints no [error] line that its test did not
provoke and say so (issue 41): every unit test binary that logs an
[error] line also prints, before it, a note saying which errors are
expected there ("... expected here ..."), as the refusal tests of
test_journal, test_query_seam and test_submit_engine do.  The binaries
are make unit-bins' (build/unit); each runs with a scratch HOME.  The
unit run of make check (build/unit.log) printed 11 [error] lines, 8 of
test_journal's unannounced: all of them refusals its tests provoke
(a write outside a transaction, a wrong bind count, a nested
transaction, rows under a missing batch), not faults of src/journal."""
import os
import re
import subprocess

import pytest

from gahp_client import gahp_binary

UNIT = os.path.join(os.path.dirname(os.path.abspath(gahp_binary())), "unit")
ERROR = re.compile(r"\[error\]")
NOTE = re.compile(r"expected here")


# The unit test binaries whose tests provoke [error] lines on purpose
# (refusals and injected faults).  Running every binary again here would
# double make check's unit run; these four take seconds.
PROVOKING = ["test_journal", "test_query_seam", "test_submit_engine", "test_blah_state"]


def unit_binaries():
    return [n for n in PROVOKING if os.access(os.path.join(UNIT, n), os.X_OK)]


@pytest.mark.parametrize("name", unit_binaries() or ["(none built)"])
def test_every_error_line_of_a_unit_test_is_announced(name, tmp_path):
    if name == "(none built)":
        pytest.skip("no unit test binaries in %s (make unit-bins)" % UNIT)
    env = dict(os.environ, HOME=str(tmp_path))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([os.path.join(UNIT, name)], cwd=root, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1800)
    out = p.stdout.decode("utf-8", "replace")
    assert p.returncode == 0, out[-4000:]
    lines = out.splitlines()
    first_error = next((i for i, l in enumerate(lines) if ERROR.search(l)), None)
    if first_error is None:
        return
    assert any(NOTE.search(l) for l in lines[:first_error]), \
        "%s logs an [error] line no note announced:\n%s" % (name, lines[first_error])
