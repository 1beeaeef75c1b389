"""Fixtures for the crash tests: the real boinc_gahp killed with SIGKILL
(at injected crash points or at random instants) and restarted on the same
journal, against the real boinc_emu whose counters prove the invariants.
The fixtures are the submit suite's (tests/e2e_submit/submit_client.py)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "e2e_submit"))

from submit_client import emulator, inputs, journal, make_client  # noqa: E402,F401
