"""Fixtures for the BOINC_SUBMIT end-to-end tests: the real boinc_gahp
(over pipes, via the core suite's gahp_client) against the real boinc_emu
(via the emulator suite's emu.py), each test in its own directories."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from submit_client import Client, Gahp, emu_mod  # noqa: E402


@pytest.fixture
def emulator(tmp_path):
    e = emu_mod.Emulator(tmp_path / "emu", hosts=2)
    e.start()
    yield e
    e.stop()


@pytest.fixture
def journal(tmp_path):
    return str(tmp_path / "journal.db")


@pytest.fixture
def make_client(journal, emulator):
    started = []

    def make(args=("--retry-budget", "5"), env=None, path=None, auth=None, emu=None):
        g = Gahp(path or journal, args=list(args), env=env)
        started.append(g)
        return Client(g, emu or emulator, auth=auth)

    yield make
    for g in started:
        g.kill()


@pytest.fixture
def client(make_client):
    return make_client()


@pytest.fixture
def inputs(tmp_path):
    """Factory: inputs(name, content) writes a local input file, returns its path."""
    d = tmp_path / "in put"
    d.mkdir()

    def make(name, content):
        p = d / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        return str(p)

    return make
