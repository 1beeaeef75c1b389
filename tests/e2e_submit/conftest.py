"""Fixtures for the BOINC_SUBMIT end-to-end tests: the real boinc_gahp
(over pipes, via the core suite's gahp_client) against the real boinc_emu
(via the emulator suite's emu.py), each test in its own directories.  The
shared fixtures live in submit_client.py."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from submit_client import emulator, inputs, journal, make_client  # noqa: E402,F401


@pytest.fixture
def client(make_client):
    return make_client()
