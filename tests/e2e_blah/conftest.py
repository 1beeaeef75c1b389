"""Fixtures of the BLAH dialect's end-to-end tests: the real boinc_gahp,
configured as a site configures it for HTCondor 10.0-25.x (project_url
and authenticator_file in its configuration file: the BLAH commands name
no project), driven by the model of the 25.0 grid manager
(tests/lib/blah_client.py) against the real emulator on 127.0.0.1."""
import pytest

from blah_client import FAST_ARGS as FAST, BlahClient, write_config
from cmds_helpers import Emu


@pytest.fixture
def emu(tmp_path):
    e = Emu(tmp_path / "emu")
    yield e
    e.stop()


@pytest.fixture
def config(tmp_path, emu):
    return write_config(tmp_path / "boinc_gahp.conf", emu)


@pytest.fixture
def make_client(journal, config):
    started = []

    def make(args=FAST, cfg=None, env=None, start=True):
        e = {"BOINC_GAHP_CONFIG": str(cfg or config)}
        e.update(env or {})
        c = BlahClient(journal, args=list(args), env=e)
        started.append(c)
        if start:
            assert c.start_up() == ["0", "NULL"]
        return c

    yield make
    for c in started:
        if c.gahp.proc.poll() is None:
            c.stop()


@pytest.fixture
def client(make_client):
    return make_client()


@pytest.fixture
def iwd(tmp_path):
    d = tmp_path / "job dir"
    d.mkdir()
    return d
