"""The real HTCondor 9.0.19 grid manager driving build/boinc_gahp, against
the emulator and against the real BOINC 8.3 server (doc/real-systems.md).

Jobs are submitted with condor_submit as the pool's user and watched with
condor_q and their user log; every wait has a time limit.  After each
scenario: every job completed with the right output (the upper-cased input)
or is held for a reason the user caused; no batch, job or upload twice on
the project; no EXCEPT or crash loop in the GridmanagerLog.

The scenarios for the defects 1-4 of issue 18 assert the correct behaviour.
"""
import hashlib
import re
import signal
import subprocess
import time
import os

import pytest

import realsys
from realsys import condor, progress, sigkill_gahp, wait_until

# The uppercase app on the real server burns --cpu_time N CPU seconds
# (default 20); the emulator logs the arguments and ignores them.
FAST = "--cpu_time 1"


def limits(project, emu, real):
    return emu if project.kind == "emu" else real


# ------------------------------------------------------------------ plain
@pytest.mark.parametrize("n", [1, 20])
def test_jobs(project, scenario_factory, n):
    s = scenario_factory("jobs%d" % n, project)
    s.submit(n, arguments=FAST)
    s.wait_settled(limits(project, 180 + 3 * n, 300 + 12 * n))
    s.check()


def test_200_jobs_on_the_emulator(emu_project, scenario_factory):
    s = scenario_factory("jobs200", emu_project)
    s.submit(200, arguments=FAST)
    s.wait_settled(900)
    s.check()


# ------------------------------------------------------------------ SIGKILL
KILL_STAGES = {
    # stage: (jobs, input size, pattern in the GAHP log that starts the stage)
    "upload": (10, 1500 * 1024, r"upload_files: POST"),
    "submit_batch": (5, 0, r"submit_batch: POST"),
    "mid_run": (5, 0, None),
    "mid_fetch": (8, 1500 * 1024, r"get_output: GET"),
}


@pytest.mark.parametrize("stage", list(KILL_STAGES))
def test_sigkill_gahp(project, scenario_factory, stage):
    n, size, pattern = KILL_STAGES[stage]
    s = scenario_factory("kill-" + stage, project)
    s.submit(n, arguments=FAST if stage != "mid_run" else limits(project, FAST, "--cpu_time 15"),
             size=size)
    if pattern:
        s.gahp.wait_for(pattern, limits(project, 120, 400))
    else:
        s.wait_any_running(limits(project, 120, 300))
    sigkill_gahp()
    s.kills += 1
    s.wait_settled(limits(project, 300, 600))
    s.check()


# ------------------------------------------------------------------ master restart
def test_restart_condor_master(project, scenario_factory):
    s = scenario_factory("master-restart", project)
    s.submit(5, arguments=limits(project, FAST, "--cpu_time 10"))
    s.wait_any_running(limits(project, 120, 300))
    pid = realsys.master_pid()
    os.kill(pid, signal.SIGTERM)
    progress("    SIGTERM condor_master %d" % pid)
    wait_until(lambda: not any(realsys.pids_named(n, realsys.UID) for n in
                               ("condor_master", "condor_schedd", "condor_gridmanager",
                                "boinc_gahp")), 120, "every HTCondor daemon and the GAHP to exit", 1)
    # in its own session: the daemons must outlive this test's process group
    subprocess.run(["setsid", "-w", str(realsys.RECIPES / "htcondor9.sh"),
                    "start"], stdin=subprocess.DEVNULL,
                   cwd=str(realsys.REPO), check=True, timeout=120,
                   stdout=subprocess.DEVNULL)
    progress("    condor_master started again (pid %s)" % realsys.master_pid())
    s.restarts += 1
    s.wait_settled(limits(project, 300, 600))
    s.check()


# ------------------------------------------------------------------ condor_rm
def test_condor_rm(project, scenario_factory):
    s = scenario_factory("condor-rm", project)
    cl = s.submit(6, arguments=limits(project, FAST, "--cpu_time 5"))
    running = s.wait_any_running(limits(project, 120, 300))
    other = (cl, 5 if running[1] != 5 else 4)
    condor(["condor_rm", "%d.%d" % running, "%d.%d" % other])
    progress("    condor_rm %d.%d %d.%d" % (running + other))
    s.wait_settled(limits(project, 240, 600))
    s.check(removed={running, other})
    aborts = s.gm_lines(r"<- 'BOINC_ABORT_JOBS")
    assert aborts, "no BOINC_ABORT_JOBS for the removed jobs"


# ------------------------------------------------------------------ defect 1
def test_hold_and_release_while_the_batch_is_polled(project, scenario_factory):
    """Defect 1: the released job must complete, never be held again."""
    s = scenario_factory("hold-release", project)
    cl = s.submit(6, arguments=limits(project, FAST, "--cpu_time 20"))
    job = s.wait_any_running(limits(project, 120, 300))
    condor(["condor_hold", "%d.%d" % job])
    progress("    condor_hold %d.%d" % job)
    s.wait_status(job, lambda r: r["JobStatus"] == 5, 60, "held")
    wait_until(lambda: s.gm_lines(r"<- 'BOINC_ABORT_JOBS"), 60, "the BOINC_ABORT_JOBS", 1)
    time.sleep(6)      # one status poll of the batch after the abort
    still = [j for j, r in s.rows().items() if r["JobStatus"] == 2 and j != job]
    condor(["condor_release", "%d.%d" % job])
    progress("    condor_release %d.%d (%d other job(s) of the batch still running)"
             % (job + (len(still),)))
    s.wait_settled(limits(project, 300, 600))
    s.check(must_complete=[job])


# ------------------------------------------------------------------ defect 2
def test_bad_project_url_next_to_good_jobs(project, scenario_factory):
    """Defect 2: good jobs complete, the bad one is held with a reason, no
    grid-manager EXCEPT or crash loop."""
    s = scenario_factory("bad-url", project)
    s.submit(2, arguments=FAST)
    bad_url = "htp" + project.url[project.url.index(":"):]
    bad = s.submit(1, arguments=FAST, url=bad_url, tag="bad")
    s.allowed_holds[(bad, 0)] = r"(?i)url|http|scheme|project"
    s.wait_settled(limits(project, 240, 420))
    s.check()
    r = s.rows().get((bad, 0))
    assert r is not None and r["JobStatus"] == 5, "the job with the bad URL is not held: %s" % r


# ------------------------------------------------------------------ job-ad attributes
def test_trailing_job_ad_attributes(project, scenario_factory):
    """String attributes reach the GAHP (and the server); a numeric one
    arrives as NULL (the 9.0 client) and changes nothing."""
    s = scenario_factory("attrs", project)
    s.submit(2, arguments=FAST, extra='+delay_bound = "1200"\n+rsc_fpops_est = "2e9"\n'
                                      '+rsc_memory_bound = 300000000')
    s.wait_settled(limits(project, 200, 400))
    s.check()
    subs = _submits(s)
    assert subs, "no BOINC_SUBMIT in the GridmanagerLog"
    tail = subs[0][-6:]
    assert tail == ["2e9", "NULL", "NULL", "NULL", "1200", "NULL"], subs[0][-8:]
    if project.kind == "real":
        # Real fact (BOINC 8.3): submit_rpc_handler.php passes job_params to
        # create_work as --delay_bound/--rsc_fpops_est, but create_work then
        # reads the app's input template, whose <delay_bound>600 and
        # <rsc_fpops_est>1e9 override them: the workunits carry the
        # template's values whatever the job ad says.
        rows = realsys.mysql("select name, delay_bound, rsc_fpops_est, rsc_memory_bound "
                             "from workunit where create_time >= %d and name like 'condor#%%'"
                             % s.snap["t"])
        assert len(rows) == 2, rows
        for name, delay, fpops, mem in rows:
            assert (int(delay), float(fpops), float(mem)) == (600, 1e9, 1e8), \
                (name, delay, fpops, mem)


# ------------------------------------------------------------------ failing app
def test_failing_app(project, scenario_factory):
    s = scenario_factory("failing-app", project)
    bad = s.submit(1, arguments="--early_exit " + FAST, tag="fail", expect_output=False)
    s.allowed_holds[(bad, 0)] = r"."
    s.submit(1, arguments=FAST)
    s.wait_settled(limits(project, 200, 500))
    s.check()
    r = s.rows().get((bad, 0))
    assert r is not None and r["JobStatus"] == 5, "the failing job is not held: %s" % r
    progress("    failing job held: %s" % r["HoldReason"])


# ------------------------------------------------------------------ defect 3
# (condor_submit drops a trailing backslash of the old-style arguments
# syntax, so `end\` would reach the GAHP as `end`: the direct tests cover it)
BACKSLASH_ARGS = ["c:\\new\\tmp", "a\\b", "x\\\\y"]


def _submits(s):
    """Token lists of the BOINC_SUBMIT lines the grid manager sent (the
    GridmanagerLog shows them as `GAHP[pid] <- 'BOINC_SUBMIT ...'`)."""
    out = []
    for line in s.gm_lines(r"<- 'BOINC_SUBMIT \d+"):
        text = line[line.index("'BOINC_SUBMIT") + 1:]
        if text.endswith("'"):
            text = text[:-1]
        out.append(realsys_split(text))
    return out


def _sent_batches(s):
    return sorted({t[2] for t in _submits(s) if len(t) > 2})


def realsys_split(text):
    toks, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur.append(text[i + 1])
            i += 2
            continue
        if ch == " ":
            toks.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    toks.append("".join(cur))
    return toks


def test_backslash_in_arguments(project, scenario_factory):
    """Defect 3: never silently altered: refused with a clear hold reason
    before anything is created, or byte-exact on the server."""
    s = scenario_factory("backslash", project)
    cl = s.submit(1, arguments=" ".join(BACKSLASH_ARGS), tag="bs")
    job = (cl, 0)
    s.allowed_holds[job] = r"(?i)\\|backslash"
    s.wait_settled(limits(project, 200, 400))
    subs = _submits(s)
    assert subs, "no BOINC_SUBMIT"
    toks = subs[0]
    # BOINC_SUBMIT id batch app njobs job nargs args...
    nargs = int(toks[6])
    sent = toks[7:7 + nargs]
    assert sent == BACKSLASH_ARGS, "HTCondor sent %r" % sent
    r = s.rows().get(job)
    batches = _sent_batches(s)
    if r is not None and r["JobStatus"] == 5:
        progress("    refused: %s" % r["HoldReason"])
        assert re.search(s.allowed_holds[job], r["HoldReason"]), r["HoldReason"]
        left = project.batches_named(batches)
        assert not left, "a refused submit left batches on the server: %s" % left
        s.check()
        return
    s.check()
    if project.kind == "real":
        ids = [b["id"] for b in project.batches_named(batches)]
        wus = project.workunits_of_batches(ids)
        assert len(wus) == 1, wus
        cmd = realsys.command_line_of(wus[0][1])
        assert cmd == " ".join(BACKSLASH_ARGS), "stored command line %r" % cmd
    else:
        err = (s.dir / "err0.0").read_text(errors="replace")
        for n, a in enumerate(BACKSLASH_ARGS, 1):
            assert "argument %d: [%s]" % (n, a) in err, err[-1000:]


# ------------------------------------------------------------------ defect 4
def _line_bytes(job_name, args, phys):
    return len(" --wu_name ") + len(job_name) + len(' --command_line ""') + len(args) \
        + 1 + len(phys) + 1


def _submit_line_job(s, pool, target):
    """One held job whose create_work line will be `target` bytes long;
    returns (job, arguments)."""
    k = len(s.clusters)
    cl = s.submit(1, arguments="--cpu_time 1 PAD", tag="ln", hold=True)
    content = s.content(1000 * k)
    phys = hashlib.md5(content).hexdigest() + ".0"          # input ln<k>.0
    t = int(time.time())
    job_name = "condor#%s#uppercase#%d#%d.0" % (pool, t, cl)
    base = _line_bytes(job_name, "--cpu_time 1 ", phys)
    args = "--cpu_time 1 " + "p" * (target - base)
    assert _line_bytes(job_name, args, phys) == target
    condor(["condor_qedit", "%d.0" % cl, "Args", '"%s"' % args])
    condor(["condor_release", "%d.0" % cl])
    return (cl, 0), args


def test_create_work_line_of_4095_bytes(project, scenario_factory, pool):
    """Defect 4: a 4,095-byte create_work line is refused cleanly (no empty
    batch left behind) or fits; a 4,094-byte line runs."""
    s = scenario_factory("line4095", project)
    job, args = _submit_line_job(s, pool, 4095)
    s.allowed_holds[job] = r"4,?09[45]|bytes|create_work"
    s.wait_settled(limits(project, 200, 400))
    batches = _sent_batches(s)
    r = s.rows().get(job)
    if r is not None and r["JobStatus"] == 5:
        progress("    4095: refused: %s" % r["HoldReason"])
        left = project.batches_named(batches)
        empty = [b for b in left if b["njobs"] == 0]
        assert not empty, "a refused 4,095-byte job left an empty batch: %s" % empty
    s.check()
    # the longest line the real create_work takes
    job2, args2 = _submit_line_job(s, pool, 4094)
    s.wait_settled(limits(project, 200, 400))
    s.check(must_complete=[job2])
    if project.kind == "real":
        rows = realsys.mysql("select xml_doc from workunit where name like '%%#%d.0'" % job2[0])
        assert rows and realsys.command_line_of(rows[0][0]) == args2
