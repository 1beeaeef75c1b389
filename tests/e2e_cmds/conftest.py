"""Fixtures for the end-to-end tests of the query, fetch, abort, retire
and lease commands (helpers in cmds_helpers.py): the real boinc_gahp and
the real boinc_emu, each in its own temp directory."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cmds_helpers import Emu, Gahp, Session  # noqa: E402,F401


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
def journal(tmp_path):
    return str(tmp_path / "journal.sqlite")


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
        if g.proc.poll() is not None:
            continue
        try:
            rc = g.quit()
        finally:
            g.kill()
        text = g.stderr_text()
        assert rc == 0, "boinc_gahp exit status %s:\n%s" % (rc, text[-4000:])
        assert "Sanitizer" not in text and "runtime error" not in text, text[-4000:]


@pytest.fixture
def session(make_session, emu):
    return make_session(emu)


@pytest.fixture
def iwd(tmp_path):
    d = tmp_path / "iwd with space"
    d.mkdir()
    return d
