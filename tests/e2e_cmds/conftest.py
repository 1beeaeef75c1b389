"""Fixtures for the end-to-end tests of the query, fetch, abort, retire
and lease commands (helpers in tests/lib/cmds_helpers.py): the real
boinc_gahp and the real boinc_emu, each in its own temp directory; the
journal fixture is tests/conftest.py's."""
import pytest

from cmds_helpers import Emu, Gahp, Session


@pytest.fixture
def emu(tmp_path):
    e = Emu(tmp_path / "emu")
    yield e
    e.stop()


@pytest.fixture
def make_emu(tmp_path):
    started = []

    def make(config_xml=None):
        cfg = None
        if config_xml is not None:
            cfg = tmp_path / ("emu%d.xml" % len(started))
            cfg.write_text(config_xml)
        e = Emu(tmp_path / ("emu%d" % len(started)), cfg)
        started.append(e)
        return e

    yield make
    for e in started:
        e.stop()


@pytest.fixture
def make_session(journal):
    started = []

    def make(emu_proc, args=("--retry-budget", "5")):
        g = Gahp(journal, args=list(args))
        started.append(g)
        return Session(g, emu_proc)

    yield make
    # A clean QUIT, so that under ASan the leak checker runs and a leak or
    # sanitizer report fails the test.
    for g in started:
        g.stop_cleanly()


@pytest.fixture
def session(make_session, emu):
    return make_session(emu)


@pytest.fixture
def iwd(tmp_path):
    d = tmp_path / "iwd with space"
    d.mkdir()
    return d
