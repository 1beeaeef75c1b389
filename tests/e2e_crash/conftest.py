"""Fixtures for the crash tests: the real boinc_gahp killed with SIGKILL
(at injected crash points or at random instants) and restarted on the same
journal, against the real boinc_emu whose counters prove the invariants."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "e2e_submit"))

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

    def make(env=None, args=("--retry-budget", "5")):
        g = Gahp(journal, args=list(args), env=env)
        started.append(g)
        return Client(g, emulator)

    yield make
    for g in started:
        g.kill()


@pytest.fixture
def inputs(tmp_path):
    d = tmp_path / "inputs"
    d.mkdir()

    def make(name, content):
        p = d / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        return str(p)

    return make
