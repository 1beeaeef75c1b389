"""realsys25 - the personal HTCondor 25.0.13 pool of `make check-real`
(tests/real/recipes/htcondor25.sh: /opt/condor25, /var/lib/condor25, user
htcgrid25, port 29625), whose real grid manager drives build/boinc_gahp
through the BLAH commands of `grid_resource = batch boinc`.

The helpers are realsys's (condor tools as the pool's user, user-log
parsing, waits, the GridmanagerLog checks), loaded a second time with the
25.0 pool's paths and user, plus what the batch grid type needs: a submit
template with batch_queue, the project in the user's boinc_gahp.conf
(the BLAH commands name no project), and a duplicate check that works
with boinc_gahp's own job names (bgahp_<hex>-<n>), which carry no
cluster.proc.
"""
import importlib.util
import os
import pathlib
import re
import time

HERE = pathlib.Path(__file__).resolve().parent
POOL25 = {"HTC_PREFIX": "/opt/condor25", "HTC_LOCAL_DIR": "/var/lib/condor25",
          "HTC_USER": os.environ.get("HTC25_USER", "htcgrid25")}


def _load():
    saved = {k: os.environ.get(k) for k in POOL25}
    os.environ.update(POOL25)
    try:
        spec = importlib.util.spec_from_file_location("realsys_pool25", HERE / "realsys.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return mod


try:
    rs = _load()
except KeyError:            # no such user: the pool was never set up
    rs = None

BATCH_TEMPLATE = """universe = grid
grid_resource = batch boinc
batch_queue = {app}
executable = /bin/true
transfer_executable = false
transfer_input_files = {inputs}
transfer_output_files = out
transfer_output_remaps = "out = out.$(Process)"
error = err.$(Process)
log = jobs.log
notification = never
{extra}
queue {n}
"""

CONFIG_DIR = None if rs is None else rs.HOME / ".config/boinc_gahp"


def available():
    return rs is not None and (rs.PREFIX / "etc/condor_config").exists()


def grid_managers():
    return [p for p in rs.pids_named("condor_gridmanager")
            if pathlib.Path("/proc/%d" % p).stat().st_uid == rs.UID]


def use_project(project, extra=""):
    """Point the pool user's boinc_gahp at project (its configuration
    file), once no grid manager of the user runs (the next one starts a
    GAHP that reads it)."""
    rs.ensure_queue_empty()
    rs.wait_until(lambda: not grid_managers(), 120, "the 25.0 grid manager to exit", 1)
    CONFIG_DIR.mkdir(parents=True, exist_ok=True)
    for d in (CONFIG_DIR.parent, CONFIG_DIR):
        os.chown(d, rs.UID, rs.GID)
    auth = CONFIG_DIR / ("%s.auth" % project.kind)
    old = os.umask(0o077)
    try:
        auth.write_text(project.authenticator + "\n")
        conf = CONFIG_DIR / "boinc_gahp.conf"
        conf.write_text("project_url = %s\nauthenticator_file = %s\nlog_level = debug\n%s"
                        % (project.url, auth, extra))
    finally:
        os.umask(old)
    for p in (auth, conf):
        os.chown(p, rs.UID, rs.GID)
        os.chmod(p, 0o600)


class Scenario(rs.Scenario if rs is not None else object):
    """realsys.Scenario on the 25.0 pool with `batch boinc` submit files."""

    def __init__(self, name, project):
        rs.SUBMIT_TEMPLATE = BATCH_TEMPLATE
        super().__init__("b25-" + name, project)
        self.boinc_before = project_job_names(project)

    def grid_job_ids(self):
        """{(cluster, proc): the BOINC job id the grid manager holds}."""
        out = {}
        for j, r in self.rows().items():
            m = re.match(r"batch boinc \S+ (\S+)$", r["GridJobId"] or "")
            if m:
                out[j] = m.group(1)
        return out

    def new_boinc_jobs(self):
        return project_job_names(self.project) - self.boinc_before


def project_job_names(project):
    """Names of boinc_gahp's BLAH jobs on the project (bgahp_*)."""
    if project.kind == "emu":
        return {j["name"] for j in project.control("state")["jobs"]
                if j["name"].startswith("bgahp_")}
    return {r[0] for r in rs.mysql("select name from workunit where name like 'bgahp\\_%'")}


def project_batch_names(project):
    if project.kind == "emu":
        return {b["name"] for b in project.control("state")["batches"]
                if b["name"].startswith("bgahp_")}
    return {r[0] for r in rs.mysql("select name from batch where name like 'bgahp\\_%'")}


def emu_project():
    """The 9.0 pool's emulator project (its authenticator read as root)."""
    import realsys
    p = realsys.EmuProject()
    p.authenticator = pathlib.Path(p.auth_file).read_text().split()[0]
    return p


def wait_gahp_log(pattern, timeout):
    return rs.LogTail(rs.GAHP_LOG).wait_for(pattern, timeout)


def now():
    return time.monotonic()


# ---- the job router (issue 40) ---------------------------------------------------------
# A vanilla job routed to batch boinc: the submit file, with the
# per-cluster names Scenario.submit makes (out<k>.<proc>, err<k>.<proc>;
# stdout.<cluster>.<proc> here: two clusters of one scenario must not
# name one output file, or the second is refused).
ROUTED_TEMPLATE = """universe = vanilla
executable = uppercase.sh
transfer_input_files = {inputs}
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
transfer_output_files = out
transfer_output_remaps = "out = out.$(Process)"
output = stdout.$(ClusterId).$(Process)
error = err.$(Process)
log = jobs.log
notification = never
+WantJobRouter = true
{extra}
queue {n}
"""

ROUTER_EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / \
    "examples/condor_config.d-boinc-job-router"


def job_router_binary():
    """Where recipes/htcondor25.sh installs it: JOB_ROUTER's default,
    $(LIBEXEC)/condor_job_router."""
    return rs.PREFIX / "libexec/condor_job_router"


def job_router_available():
    return available() and job_router_binary().exists()


def job_routers():
    return rs.pids_named("condor_job_router", rs.UID)


def enable_job_router(setup_env):
    """The pool with the repository's example route configuration: copied
    into the pool's etc/, included from its condor_config (which
    recipes/htcondor25.sh rewrites on `config`: the include is added again
    when missing), and the pool restarted when no condor_job_router runs
    (DAEMON_LIST changes need a restart).  The router's log is
    $(LOG)/JobRouterLog, beside the GridmanagerLog."""
    conf = rs.PREFIX / "etc/condor_config.d-boinc-job-router"
    text = ROUTER_EXAMPLE.read_text()
    if not conf.exists() or conf.read_text() != text:
        conf.write_text(text)
        os.chmod(conf, 0o644)
    main = rs.PREFIX / "etc/condor_config"
    line = "include : %s" % conf
    body = main.read_text()
    if line not in body:
        main.write_text(body.rstrip("\n") + "\n\n# issue 40: condor_job_router with the "
                        "example routes (tests/real/realsys25.py)\n" + line + "\n")
    if job_routers():
        return
    import subprocess
    script = str(rs.RECIPES / "htcondor25.sh")
    rs.ensure_queue_empty()
    for phase in ("stop", "start"):
        subprocess.run(["setsid", "-w", script, phase], stdin=subprocess.DEVNULL, env=setup_env,
                       cwd="/", check=True, timeout=180, stdout=subprocess.DEVNULL)
    rs.wait_until(lambda: job_routers(), 120, "condor_job_router to start", 1)
    rs.progress("    25.0 pool restarted with condor_job_router (pid %s)" % job_routers())


class RoutedScenario(Scenario):
    """A scenario of vanilla jobs that the job router routes to batch boinc
    (examples/condor_config.d-boinc-job-router)."""

    def __init__(self, name, project):
        super().__init__("routed-" + name, project)
        rs.SUBMIT_TEMPLATE = ROUTED_TEMPLATE
        self.router = rs.LogTail(rs.LOCAL_DIR / "log/JobRouterLog")
        script = self.write("uppercase.sh", "#!/bin/sh\n# run by BOINC's uppercase app, "
                                            "not here\nexit 0\n")
        os.chmod(script, 0o755)

    def wait_any_running(self, timeout, jobs=None):
        """Until one job's routed copy runs (status 2 from the GAHP: its
        BOINC job is IN_PROGRESS); returns the original's id.  The original
        vanilla job carries no GridJobStatus, and the router mirrors the
        copy's status only on its next poll."""
        def f():
            routed = self.routed_rows()
            for j in (jobs or self.job_ids()):
                r = routed.get(j)
                if r and r["JobStatus"] == 2:
                    return j
            return None
        return rs.wait_until(f, timeout, "a routed job running on the server", 1.0)

    def routed_rows(self):
        """{original (cluster, proc): the routed job's row} by RoutedFromJobId."""
        out = rs.condor(["condor_q", "-af:t", "RoutedFromJobId", "ClusterId", "ProcId",
                         "JobStatus", "GridJobId", "HoldReason",
                         "-constraint", "RoutedFromJobId isnt undefined"], timeout=60)
        rows = {}
        for line in out.splitlines():
            f = line.split("\t")
            if len(f) < 6 or "." not in f[0]:
                continue
            c, p = f[0].split(".", 1)
            rows[(int(c), int(p))] = {"job": (int(f[1]), int(f[2])), "JobStatus": int(f[3]),
                                      "GridJobId": f[4], "HoldReason": f[5]}
        return rows

    def history(self, job, attrs):
        """The original job's attributes in condor_history."""
        out = rs.condor(["condor_history", "-af:t"] + list(attrs) +
                        ["-constraint", "ClusterId == %d && ProcId == %d" % job], timeout=60)
        line = out.splitlines()[0] if out.strip() else ""
        return dict(zip(attrs, line.split("\t"))) if line else None
