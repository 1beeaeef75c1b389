"""Fixtures of the real-systems suite (`make check-real`, doc/real-systems.md).

The pool and the two projects must already be up (mk/real.mk sets them up);
a missing piece fails the first test that needs it with a clear message.
Scenarios run one after the other: they share the pool user's grid manager
and boinc_gahp (one per user), which some of them kill.
"""
import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import realsys  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _progress_to_terminal(request):
    """Progress lines on the terminal while pytest captures the tests' output."""
    pm = request.config.pluginmanager
    realsys.set_reporter(pm.get_plugin("terminalreporter"), pm.get_plugin("capturemanager"))


def pytest_runtest_logstart(nodeid, location):
    realsys.progress("--- %s" % nodeid.split("::", 1)[-1])


@pytest.fixture(scope="session")
def pool():
    if not (realsys.PREFIX / "etc/condor_config").exists():
        pytest.fail("no personal HTCondor in %s: run `make check-real` (it runs "
                    "tests/real/recipes/htcondor9.sh)" % realsys.PREFIX)
    if realsys.master_pid() is None:
        pytest.fail("condor_master is not running (tests/real/recipes/htcondor9.sh start)")
    realsys.ensure_queue_empty()
    return realsys.schedd_name()


@pytest.fixture(scope="session")
def emu_project(pool):
    if not os.path.exists(realsys.EMU_DIR + ".out"):
        pytest.fail("boinc_emu for the pool is not running (tests/real/recipes/htcondor9.sh emu)")
    return realsys.EmuProject()


@pytest.fixture(scope="session")
def real_project(pool):
    if not (realsys.RS_STATE / "config.txt").exists():
        pytest.fail("no real BOINC server (%s/config.txt): run `make check-real` "
                    "(it runs tests/real/recipes/boinc_server.sh)" % realsys.RS_STATE)
    return realsys.RealProject()


@pytest.fixture(params=["emu", "real"])
def project(request):
    return request.getfixturevalue(request.param + "_project")


@pytest.fixture
def scenario_factory():
    made = []

    def make(name, project):
        s = realsys.Scenario(name, project)
        made.append(s)
        return s
    yield make
    for s in made:
        s.cleanup()
