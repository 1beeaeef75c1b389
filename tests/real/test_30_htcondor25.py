"""The real HTCondor 25.0.13 grid manager driving build/boinc_gahp through
`grid_resource = batch boinc` (the BLAH commands; issue 32), against the
emulator and against the real BOINC 8.3 server (doc/real-systems.md).

The pool is tests/real/recipes/htcondor25.sh's (set up by tests/real/setup_real.sh
with BOINC_GAHP pointing at build/boinc_gahp); the project comes from the
pool user's ~/.config/boinc_gahp/boinc_gahp.conf, switched per scenario.
After each scenario, as for 9.0: every job completed with the right output
or is held for a reason the user caused; no batch, job or upload twice on
the project; no EXCEPT in the GridmanagerLog; and for this grid type: one
BOINC job per HTCondor job submission.
"""
import os
import re
import signal
import subprocess
import time

import pytest

import realsys
import realsys25
from realsys25 import rs

pytestmark = pytest.mark.skipif(not realsys25.available(),
                                reason="no HTCondor 25.0 pool (setup_real.sh sets it up)")

FAST = "--cpu_time 1"


def limits(project, emu, real):
    return emu if project.kind == "emu" else real


@pytest.fixture(scope="module")
def pool25():
    if rs.master_pid() is None:
        pytest.fail("the 25.0 pool's condor_master is not running "
                    "(tests/real/recipes/htcondor25.sh start)")
    rs.ensure_queue_empty()
    return rs.schedd_name()


@pytest.fixture(scope="module")
def emu25(pool25):
    if not os.path.exists(realsys.EMU_DIR + ".out"):
        pytest.fail("boinc_emu for the pools is not running (tests/real/recipes/htcondor9.sh emu)")
    return realsys25.emu_project()


@pytest.fixture(scope="module")
def real25(pool25):
    if not (realsys.RS_STATE / "config.txt").exists():
        pytest.fail("no real BOINC server: run `make check-real`")
    return realsys.RealProject()


@pytest.fixture(params=["emu", "real"])
def project25(request):
    return request.getfixturevalue(request.param + "25")


@pytest.fixture
def scenario25():
    made = []

    def make(name, project, extra_config=""):
        realsys25.use_project(project, "log_file = %s\n%s" % (rs.GAHP_LOG, extra_config))
        s = Scenario25(name, project)
        made.append(s)
        return s
    yield make
    for s in made:
        s.cleanup()


class Scenario25(realsys25.Scenario):
    def wait_any_running(self, timeout, jobs=None):
        """Until one of the jobs runs (status 2 from the GAHP: the BOINC
        job is IN_PROGRESS); returns it."""
        def f():
            rows = self.rows()
            for j in (jobs or self.job_ids()):
                r = rows.get(j)
                if r and r["JobStatus"] == 2:
                    return j
            return None
        return rs.wait_until(f, timeout, "a job running on the server", 1.0)

    def check_once(self, resubmits=0):
        """One BOINC job per HTCondor job, plus one per release."""
        new = self.new_boinc_jobs()
        assert len(new) == len(self.job_ids()) + resubmits, (
            "%d BOINC jobs for %d HTCondor jobs (+%d releases)" % (
                len(new), len(self.job_ids()), resubmits))


# ------------------------------------------------------------------ plain
def test_b25_20_jobs(project25, scenario25):
    s = scenario25("jobs20", project25)
    s.submit(20, arguments=FAST)
    s.wait_settled(limits(project25, 300, 600))
    s.check()
    s.check_once()
    batches = realsys25.project_batch_names(project25)
    assert s.gahp.text().count("closed with") <= 2, "the 20 jobs were not gathered"
    del batches


def test_b25_unknown_app_is_held_with_its_name(emu25, scenario25):
    s = scenario25("unknown-app", emu25)
    cl = s.submit(2, arguments=FAST, app="no_such_app", expect_output=False)
    s.allowed_holds[(cl, 0)] = s.allowed_holds[(cl, 1)] = r"no_such_app"
    s.wait_settled(180)
    rows = s.rows()
    for j in ((cl, 0), (cl, 1)):
        assert rows[j]["JobStatus"] == 5 and "no_such_app" in rows[j]["HoldReason"], rows[j]
    s.check()


def test_b25_1000_job_cluster(emu25, scenario25):
    s = scenario25("jobs1000", emu25)
    t0 = time.monotonic()
    s.submit(1000, arguments=FAST)
    s.wait_settled(1800)
    took = time.monotonic() - t0
    s.check()
    s.check_once()
    closed = re.findall(r"batch (\S+) of app \S+ closed with (\d+) job", s.gahp.text())
    realsys.progress("    1000 jobs in %.0f s, %d BOINC batch(es): %s" % (
        took, len(closed), ", ".join(n for _, n in closed)))
    assert len(closed) <= 2, closed


# ------------------------------------------------------------------ SIGKILL
KILL_STAGES = {
    # stage: (jobs, input size, pattern in the GAHP log that starts the stage)
    "joined": (6, 0, r"BLAH: job \S+ is bgahp_"),
    "upload": (10, 1500 * 1024, r"upload_files: POST"),
    "submit_batch": (5, 0, r"submit_batch: POST"),
    "polling": (5, 0, None),
    "fetch": (8, 1500 * 1024, r"get_output: GET"),
}


@pytest.mark.parametrize("stage", list(KILL_STAGES))
def test_b25_sigkill_gahp(emu25, scenario25, stage):
    n, size, pattern = KILL_STAGES[stage]
    s = scenario25("kill-" + stage, emu25)
    s.submit(n, arguments=FAST, size=size)
    if pattern:
        s.gahp.wait_for(pattern, 180)
    else:
        s.wait_any_running(180)
    rs.sigkill_gahp()
    s.kills += 1
    s.wait_settled(600)
    s.check()
    s.check_once()


# ------------------------------------------------------------------ restarts
def test_b25_gridmanager_killed(emu25, scenario25):
    s = scenario25("gm-killed", emu25)
    s.submit(5, arguments=FAST)
    s.wait_any_running(180)
    for p in realsys25.grid_managers():
        os.kill(p, signal.SIGKILL)
        realsys.progress("    SIGKILL condor_gridmanager %d" % p)
    s.restarts += 1
    s.wait_settled(600)
    s.check()
    s.check_once()


def test_b25_schedd_restarted(emu25, scenario25):
    s = scenario25("master-restart", emu25)
    s.submit(5, arguments=FAST)
    s.wait_any_running(180)
    pid = rs.master_pid()
    os.kill(pid, signal.SIGTERM)
    realsys.progress("    SIGTERM condor_master %d (schedd, grid manager, GAHP)" % pid)
    rs.wait_until(lambda: not any(rs.pids_named(n, rs.UID) for n in
                                  ("condor_master", "condor_schedd", "condor_gridmanager",
                                   "boinc_gahp")), 120, "the 25.0 daemons to exit", 1)
    subprocess.run(["setsid", "-w", str(realsys.RECIPES / "htcondor25.sh"),
                    "start"], stdin=subprocess.DEVNULL, env=setup25_env(),
                   cwd="/", check=True, timeout=120, stdout=subprocess.DEVNULL)
    realsys.progress("    condor_master started again (pid %s)" % rs.master_pid())
    s.restarts += 1
    s.wait_settled(600)
    s.check()
    s.check_once()


def setup25_env():
    env = dict(os.environ)
    env["BOINC_GAHP_BIN"] = "/opt/condor25/libexec/boinc_gahp"
    env["JOB_PROBE_INTERVAL"] = "5"
    return env


# ------------------------------------------------------------------ rm, hold
def test_b25_condor_rm(emu25, scenario25):
    s = scenario25("condor-rm", emu25)
    cl = s.submit(6, arguments=FAST)
    running = s.wait_any_running(180)
    other = (cl, 5 if running[1] != 5 else 4)
    rs.condor(["condor_rm", "%d.%d" % running, "%d.%d" % other])
    realsys.progress("    condor_rm %d.%d %d.%d" % (running + other))
    s.wait_settled(300)
    s.check(removed={running, other})
    assert s.gm_lines(r"<- 'BLAH_JOB_CANCEL"), "no BLAH_JOB_CANCEL for the removed jobs"
    rs.wait_until(lambda: "aborted" in s.gahp.text(), 60, "the abort on the server", 1)


def test_b25_hold_and_release(emu25, scenario25):
    """The released job gets a new BOINC job (the cancelled one is never
    handed back) and completes."""
    s = scenario25("hold-release", emu25)
    s.submit(4, arguments=FAST)
    job = s.wait_any_running(180)
    rs.condor(["condor_hold", "%d.%d" % job])
    realsys.progress("    condor_hold %d.%d" % job)
    s.wait_status(job, lambda r: r["JobStatus"] == 5, 60, "held")
    rs.wait_until(lambda: s.gm_lines(r"<- 'BLAH_JOB_CANCEL"), 60, "the BLAH_JOB_CANCEL", 1)
    rs.condor(["condor_release", "%d.%d" % job])
    realsys.progress("    condor_release %d.%d" % job)
    s.wait_settled(300)
    s.check(must_complete=[job])
    s.check_once(resubmits=1)
