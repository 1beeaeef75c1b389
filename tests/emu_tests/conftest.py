"""Fixtures for the emulator's own tests: a fresh boinc_emu per test on a
temporary state directory (manual clock, so tests decide when time moves),
through the shared helper tests/lib/emu.py."""

import os

import pytest

import emu

# Like every suite of the project: proxies point at a dead port, so a
# request that wrongly went through a proxy would fail.
for _var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
    os.environ[_var] = "http://127.0.0.1:9"
os.environ["no_proxy"] = os.environ["NO_PROXY"] = "127.0.0.1"


@pytest.fixture
def emu_factory(tmp_path):
    started = []

    def make(name="state", **kw):
        e = emu.Emulator(tmp_path / name, **kw)
        e.start()
        started.append(e)
        return e

    yield make
    # a clean exit also means no sanitizer report (ASan/LSan exit non-zero)
    codes = [(e.state_dir, e.stop()) for e in started]
    bad = [(d, c) for d, c in codes if c not in (0, None)]
    assert not bad, "boinc_emu exited badly: %r\n%s" % (bad, started[0].log()[-4000:])


@pytest.fixture
def e(emu_factory):
    return emu_factory()
