"""Fixtures for the issue-8 fixes: the real boinc_gahp over pipes against
the real boinc_emu, driven like HTCondor 9.0's grid manager really drives
it (tests/lib/htc.py: ids from 2, jobs in arbitrary order, 20 s per return
line).  The emulator, journal and inputs fixtures are tests/conftest.py's."""
import pytest

from gahp_client import Gahp
from htc import GridManager


@pytest.fixture
def make_gm(journal, emulator):
    """Factory: make_gm(args=..., env=..., path=...) starts boinc_gahp and
    returns an htc.GridManager on it; killed at teardown."""
    started = []

    def make(args=("--retry-budget", "5"), env=None, path=None):
        g = Gahp(path or journal, args=list(args), env=env)
        started.append(g)
        return GridManager(g, emulator)

    yield make
    for g in started:
        g.kill()
