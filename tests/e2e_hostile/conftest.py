"""Fixtures of the hostile-input tests (issue 10): the real boinc_gahp over
pipes against scriptable hostile servers on 127.0.0.1 (tests/lib/
hostile_helpers.py).  The journal fixture is tests/conftest.py's."""
import pytest

from hostile_helpers import HostileServer, LimitedGahp


@pytest.fixture
def server():
    s = HostileServer()
    yield s
    s.stop()


@pytest.fixture
def make_server():
    started = []

    def make(cfg=None):
        s = HostileServer(cfg)
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def make_gahp(journal):
    """Start boinc_gahp processes; at teardown each still running gets a
    clean QUIT, so that under ASan the leak checker runs and a sanitizer
    report fails the test."""
    started = []

    def make(args=("--retry-budget", "1"), journal_path=None, **kw):
        g = LimitedGahp(journal_path or journal, args=list(args), **kw)
        started.append(g)
        return g

    yield make
    for g in started:
        g.stop_cleanly(timeout=60)
