"""Fixtures shared by every suite (doc/testing.md): a journal path, the
real boinc_emu, local input files, and GAHP sessions the way HTCondor runs
them (tests/lib/submit_client.py).  Suite-specific fixtures stay in each
suite's conftest.py.

Every server a suite starts runs on the test clock (gahp_client.TEST_CLOCK,
BOINC_GAHP_TEST_TIME_SCALE=0.01) unless the test passes REAL_CLOCK or the
environment sets BOINC_GAHP_TEST_TIME_SCALE."""
import pytest

import emu
import gahp_client
from gahp_client import Gahp
from submit_client import Client

gahp_client.DEFAULTS.update(gahp_client.TEST_CLOCK)


@pytest.fixture(autouse=True)
def scratch_home(tmp_path, monkeypatch):
    """Every test, and every server or tool it starts, gets a HOME of its
    own and no XDG_* directories (issue 41): a server whose journal or
    log cannot be used falls back to ~/.local/state/boinc_gahp, which must
    never be the invoking user's real one.  A test that wants a HOME of
    its own still sets one in the server's environment."""
    home = tmp_path / ".scratch-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for k in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    return home


@pytest.fixture
def journal(tmp_path):
    """Path of this test's journal (not created)."""
    return str(tmp_path / "journal.db")


@pytest.fixture
def emulator(tmp_path):
    """A boinc_emu with 2 hosts and the manual virtual clock."""
    e = emu.Emulator(tmp_path / "emu", hosts=2)
    e.start()
    yield e
    e.stop()


@pytest.fixture
def make_client(journal, emulator):
    """Factory: make_client(args=..., env=..., path=..., auth=..., emu=...)
    starts boinc_gahp and returns a submit_client.Client on it (prefix,
    async mode, the emulator's project selected); killed at teardown."""
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
