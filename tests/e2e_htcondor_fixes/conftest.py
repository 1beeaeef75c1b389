"""Fixtures for the issue-8 fixes: the real boinc_gahp over pipes against
the real boinc_emu, driven like HTCondor 9.0's grid manager really drives
it (ids from 2, jobs in arbitrary order, 20 s per return line).  The
emulator and journal fixtures are the submit suite's."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "e2e_submit"))

from submit_client import emulator, inputs, journal  # noqa: E402,F401
from htc import make_gm  # noqa: E402,F401
