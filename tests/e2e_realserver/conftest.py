"""Fixtures for the real-server suite: the real boinc_gahp against the
real boinc_emu with its defaults, i.e. a stock server's PHP limits
(max_file_uploads 20, post_max_size 8M, upload_max_filesize 2M) and
create_work's argument rules.  Shared fixtures: tests/e2e_submit."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "e2e_submit"))

from submit_client import emu_mod, emulator, inputs, journal, make_client  # noqa: E402,F401

import pytest  # noqa: E402


@pytest.fixture
def client(make_client):
    return make_client()
