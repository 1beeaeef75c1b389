"""Fixtures for the HTCondor grid-manager simulator tests: the real
boinc_gahp driven by tests/lib/gridmanager_sim.GridManager over real pipes,
against the real boinc_emu (the emulator fixture of tests/conftest.py,
manual virtual clock, 2 hosts)."""
import pathlib

import pytest

from gridmanager_sim import GridManager


@pytest.fixture
def resource(tmp_path, emulator):
    """(project URL, authenticator file): the grid manager's resource."""
    auth = tmp_path / "home" / ".boinc" / "emu.auth"
    auth.parent.mkdir(parents=True, exist_ok=True)
    auth.write_text(emulator.authenticator + "\n")
    return (emulator.url, str(auth))


@pytest.fixture
def make_gm(tmp_path, emulator):
    """Factory for a GridManager on this test's journal and home, whose
    poll cycles move the emulator's virtual clock by 60 s in step."""
    def make(**kw):
        gm = GridManager(tmp_path / "journal.db", tmp_path / "home", **kw)
        gm.poll_hook = lambda proc: emulator.advance(60)
        return gm
    return make


@pytest.fixture
def add_jobs(tmp_path, resource):
    """add_jobs(gm, n, app="uppercase", **kw): queue a cluster whose jobs
    each have their own input `in` (unique text) and expect `out`."""
    def add(gm, n, app="uppercase", res=None, iwd_root=None, upper=True, **kw):
        def text(iwd):
            return "input of %s in %s\n" % (app, pathlib.Path(iwd).name)

        def inputs(iwd):
            p = pathlib.Path(iwd) / "in"
            p.write_bytes(text(iwd).encode())
            return [str(p)]

        def expect(iwd):
            data = text(iwd).encode()
            return {str(pathlib.Path(iwd) / "out"): data.upper() if upper else data}
        kw.setdefault("inputs", inputs)
        kw.setdefault("expect", expect)
        return gm.submit_cluster(n, app, res or resource, iwd_root or tmp_path / "jobs", **kw)
    return add
