"""Fixtures of the hostile-input tests (issue 10): the real boinc_gahp over
pipes against scriptable hostile servers on 127.0.0.1 (hostile_helpers)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hostile_helpers import HostileServer, LimitedGahp  # noqa: E402


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
def journal(tmp_path):
    return str(tmp_path / "journal.sqlite")


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
        if g.proc.poll() is not None:
            g.kill()
            continue
        try:
            rc = g.quit(timeout=60)
        finally:
            g.kill()
        text = g.stderr_text()
        assert rc == 0, "boinc_gahp exit status %s:\n%s" % (rc, text[-4000:])
        assert "Sanitizer" not in text and "runtime error" not in text, text[-4000:]
