"""realsys - helpers for the real-systems scenarios (`make check-real`).

The personal HTCondor 9.0.19 pool and the real BOINC 8.3 server are set up
by the recipes in tests/real/recipes/ (called from mk/real.mk); this module only drives them:

* `condor(...)` runs an HTCondor tool as the pool's user (htcgrid);
* `Scenario` is one scenario's submit directory, its clusters, its waits
  (condor_q + the job's user log, every wait bounded) and its invariants
  (GridmanagerLog, the project's own records);
* `EmuProject` / `RealProject` are the two BOINC projects the pool's jobs
  go to: boinc_emu (started by recipes/htcondor9.sh `emu`) and the real
  server (its URL and authenticator in /var/lib/rs-boinc-state/).

Authenticators are read from files and never printed.
"""
import hashlib
import json
import os
import pathlib
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[2]
PREFIX = pathlib.Path(os.environ.get("HTC_PREFIX", "/opt/condor9"))
LOCAL_DIR = pathlib.Path(os.environ.get("HTC_LOCAL_DIR", "/var/lib/condor9"))
USER = os.environ.get("HTC_USER", "htcgrid")
EMU_DIR = os.environ.get("HTC_EMU_DIR", "/var/lib/boinc-emu-htc")
RS_STATE = pathlib.Path(os.environ.get("RS_STATE_DIR", "/var/lib/rs-boinc-state"))
RS_PROJECT_DB = os.environ.get("RS_PROJECT", "rstest")
RECIPES = REPO / "tests/real/recipes"
RUN_ID = os.environ.get("REAL_RUN_ID") or time.strftime("%Y%m%d-%H%M%S", time.gmtime())

_pw = pwd.getpwnam(USER)
HOME = pathlib.Path(_pw.pw_dir)
UID, GID = _pw.pw_uid, _pw.pw_gid
GAHP_LOG = HOME / ".local/state/boinc_gahp/boinc_gahp.log"
GM_LOG = LOCAL_DIR / "log" / ("GridmanagerLog." + USER)

_reporter = None
_capman = None


def set_reporter(rep, capman=None):
    global _reporter, _capman
    _reporter, _capman = rep, capman


def progress(msg):
    """A progress line on the terminal, even while pytest captures output."""
    line = "[%s] %s" % (time.strftime("%H:%M:%S", time.gmtime()), msg)
    if _reporter is not None and _capman is not None:
        with _capman.global_and_fixture_disabled():
            _reporter.write_line(line)
    elif _reporter is not None:
        _reporter.write_line(line)
    else:
        print(line, file=sys.stderr, flush=True)


class Timeout(AssertionError):
    pass


# ------------------------------------------------------------------ HTCondor
def condor_env():
    return {
        "CONDOR_CONFIG": str(PREFIX / "etc/condor_config"),
        "PATH": "%s:%s:/usr/sbin:/usr/bin:/sbin:/bin" % (PREFIX / "bin", PREFIX / "sbin"),
        "LD_LIBRARY_PATH": str(PREFIX / "lib"),
        "HOME": str(HOME), "USER": USER, "LOGNAME": USER,
    }


def condor(args, cwd=None, timeout=60, check=True):
    """Run an HTCondor tool as the pool's user; returns stdout."""
    env = condor_env()
    cmd = ["runuser", "-u", USER, "--", "env", "-i"] + \
        ["%s=%s" % kv for kv in env.items()] + list(args)
    try:
        p = subprocess.run(cmd, cwd=cwd or str(HOME), capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise Timeout("%s: no answer within %ss" % (" ".join(args), timeout))
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s %s" % (" ".join(args), p.returncode,
                                                          p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout


def queue_rows(constraint=None):
    """{(cluster, proc): {JobStatus, GridJobStatus, HoldReason, GridJobId}}
    of the user's jobs in the queue."""
    args = ["condor_q", "-af:t", "ClusterId", "ProcId", "JobStatus", "GridJobStatus",
            "GridJobId", "HoldReason"]
    if constraint:
        args[1:1] = ["-constraint", constraint]
    out = condor(args, timeout=60)
    rows = {}
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < 6:
            continue
        rows[(int(f[0]), int(f[1]))] = {"JobStatus": int(f[2]), "GridJobStatus": f[3],
                                        "GridJobId": f[4], "HoldReason": f[5]}
    return rows


def pids_named(name, uid=None):
    """Processes whose command name is `name` (of user uid, if given)."""
    out = []
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            comm = (d / "comm").read_text().strip()
            if comm == name[:15] and (uid is None or d.stat().st_uid == uid):
                out.append(int(d.name))
        except OSError:
            continue
    return out


def ppid_of(pid):
    try:
        stat = pathlib.Path("/proc/%d/stat" % pid).read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def gahp_pids():
    """boinc_gahp processes that are children of a condor_gridmanager."""
    gms = set(pids_named("condor_gridmanager"))
    return [p for p in pids_named("boinc_gahp") if ppid_of(p) in gms]


def master_pid():
    try:
        pid = int((LOCAL_DIR / "run/master.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except OSError:
        return None
    return pid


def schedd_name():
    out = condor(["condor_status", "-schedd", "-af", "Name"], timeout=60).split()
    return out[0] if out else "htc9"


class LogTail:
    """The part of a growing log file written after this object was made."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        try:
            self.start = self.path.stat().st_size
        except OSError:
            self.start = 0

    def text(self):
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                f.seek(self.start if size >= self.start else 0)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def wait_for(self, pattern, timeout, interval=0.05):
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = rx.search(self.text())
            if m:
                return m
            time.sleep(interval)
        raise Timeout("no /%s/ in %s within %ss" % (pattern, self.path, timeout))


def wait_until(pred, timeout, what, interval=2.0):
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise Timeout("timed out after %ss waiting for %s" % (timeout, what))
        time.sleep(interval)


def sigkill_gahp(timeout=60):
    """SIGKILL the pool's boinc_gahp (the child of condor_gridmanager)."""
    pids = wait_until(gahp_pids, timeout, "a boinc_gahp child of condor_gridmanager", 0.1)
    for p in pids:
        os.kill(p, signal.SIGKILL)
    progress("    SIGKILL boinc_gahp pid %s" % ",".join(map(str, pids)))
    return pids


# ------------------------------------------------------------------ job log
EVENT_RE = re.compile(r"^(\d{3}) \((\d+)\.(\d+)\.\d+\) (.*)$")


def parse_user_log(path):
    """[(code, cluster, proc, text of the event)] from an HTCondor user log."""
    events = []
    try:
        text = pathlib.Path(path).read_text(errors="replace")
    except OSError:
        return events
    for block in text.split("...\n"):
        lines = block.strip("\n").splitlines()
        if not lines:
            continue
        m = EVENT_RE.match(lines[0])
        if m:
            events.append((m.group(1), int(m.group(2)), int(m.group(3)),
                           "\n".join([m.group(4)] + lines[1:])))
    return events


# ------------------------------------------------------------------ projects
class EmuProject:
    """boinc_emu started by recipes/htcondor9.sh `emu` on 127.0.0.1."""
    kind = "emu"

    def __init__(self):
        info = json.loads(pathlib.Path(EMU_DIR + ".out").read_text().splitlines()[0])
        self.url = info["url"]
        self.control_url = info["control"]
        self.auth_file = str(HOME / "emu.auth")

    def control(self, name):
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                self.control_url + name, timeout=60) as r:
            return json.loads(r.read())

    def snapshot(self):
        c = self.control("counters")
        return {"t": time.time(),
                "counts": {k: dict(c[k]) for k in
                           ("batches_by_name", "jobs_by_name", "uploads_by_name")}}

    def check_no_duplicates(self, snap, job_ids):
        """No batch, job or upload twice; at most one live server job per
        HTCondor job (cluster.proc).  The emulator's state outlives a run:
        a name counts as twice only if it got a new one during this
        scenario (a duplicate left by an earlier run, such as the batch
        names two grid managers once shared, is not this scenario's)."""
        c = self.control("counters")
        before = snap.get("counts", {})

        def dups(kind):
            old = before.get(kind, {})
            return {k: v for k, v in c[kind].items() if v > 1 and v > old.get(k, 0)}
        dup_b = dups("batches_by_name")
        dup_j = dups("jobs_by_name")
        dup_u = dups("uploads_by_name")
        assert not dup_b, "batches twice on the emulator: %s" % dup_b
        assert not dup_j, "jobs twice on the emulator: %s" % dup_j
        assert not dup_u, "files uploaded twice to the emulator: %s" % dup_u
        st = self.control("state")
        live = {}
        for j in st["jobs"]:
            key = j["name"].rsplit("#", 1)[-1]
            if j["name"].startswith("condor#") and not (j["error_mask"] & 16):
                live.setdefault(key, []).append(j["name"])
        for cp in job_ids:
            names = live.get("%d.%d" % cp, [])
            assert len(names) <= 1, "HTCondor job %d.%d is live twice on the server: %s" % (
                cp[0], cp[1], names)

    def batches_named(self, names):
        st = self.control("state")
        return [b for b in st["batches"] if b["name"] in names]

    def jobs_of(self, job_suffixes):
        st = self.control("state")
        return [j for j in st["jobs"] if j["name"].rsplit("#", 1)[-1] in job_suffixes]


def mysql(query, timeout=60):
    """Read-only query on the real project's database (as root over the
    socket); rows as lists of strings."""
    p = subprocess.run(["mysql", "-N", "-B", "-e", query, RS_PROJECT_DB], capture_output=True,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("mysql: %s" % p.stderr)
    return [line.split("\t") for line in p.stdout.splitlines()]


class RealProject:
    """The real BOINC 8.3 server of tests/real/recipes/boinc_server.sh."""
    kind = "real"

    def __init__(self):
        lines = (RS_STATE / "config.txt").read_text().split()
        self.url = lines[0]
        self._auth = lines[1]
        self.auth_file = str(HOME / "rs.auth")
        p = pathlib.Path(self.auth_file)
        if not p.exists() or p.read_text().strip() != self._auth:
            old = os.umask(0o077)
            try:
                p.write_text(self._auth + "\n")
            finally:
                os.umask(old)
        os.chown(p, UID, GID)
        os.chmod(p, 0o600)

    @property
    def authenticator(self):
        return self._auth

    def snapshot(self):
        t = int(mysql("select unix_timestamp()")[0][0])
        return {"t": t - 2}

    def check_no_duplicates(self, snap, job_ids):
        t0 = snap["t"]
        dup_b = mysql("select name, count(*) from batch where name in "
                      "(select name from batch where create_time >= %d) "
                      "group by name having count(*) > 1" % t0)
        assert not dup_b, "batches twice on the real server: %s" % dup_b
        dup_f = mysql("select name, count(*) from job_file group by name having count(*) > 1")
        assert not dup_f, "files twice on the real server (job_file): %s" % dup_f
        dup_a = mysql("select job_file_id, batch_id, count(*) from batch_file_assoc "
                      "group by job_file_id, batch_id having count(*) > 1")
        assert not dup_a, "a file associated twice with a batch: %s" % dup_a
        rows = mysql("select name from workunit where create_time >= %d and name like 'condor#%%' "
                     "and (error_mask & 16) = 0" % t0)
        live = {}
        for (name,) in rows:
            live.setdefault(name.rsplit("#", 1)[-1], []).append(name)
        for cp in job_ids:
            names = live.get("%d.%d" % cp, [])
            assert len(names) <= 1, "HTCondor job %d.%d is live twice on the server: %s" % (
                cp[0], cp[1], names)

    def batches_named(self, names):
        if not names:
            return []
        q = ",".join("'%s'" % n.replace("'", "") for n in names)
        # njobs: the workunits the batch really has (a real server counts a
        # submit's jobs in batch.njobs before create_work runs, so a batch
        # whose create_work failed says njobs 1 and has none)
        return [{"id": int(r[0]), "name": r[1], "njobs": int(r[2]), "state": int(r[3])}
                for r in mysql("select b.id, b.name, (select count(*) from workunit w "
                               "where w.batch = b.id), b.state from batch b "
                               "where b.name in (%s)" % q)]

    def workunits_of_batches(self, batch_ids):
        if not batch_ids:
            return []
        return mysql("select name, xml_doc from workunit where batch in (%s)"
                     % ",".join(map(str, batch_ids)))


def mysql_unescape(text):
    """A value as `mysql -B` prints it: \\n, \\t, \\0 and \\\\ are escapes."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "0": "\0"}.get(m.group(1), m.group(1)),
                  text, flags=re.S)


def command_line_of(xml_doc):
    """The stored command line of a workunit's xml_doc (as mysql -B prints
    it); create_work writes it as `<command_line>\\nX\\n</command_line>`."""
    m = re.search(r"<command_line>(.*?)</command_line>", mysql_unescape(xml_doc), re.S)
    if m is None:
        return None
    x = m.group(1)
    if x.startswith("\n"):
        x = x[1:]
    if x.endswith("\n"):
        x = x[:-1]
    return x


# ------------------------------------------------------------------ scenario
SUBMIT_TEMPLATE = """universe = grid
grid_resource = boinc {url}
executable = {app}
boinc_authenticator_file = {auth_file}
transfer_input_files = {inputs}
transfer_output_files = out
transfer_output_remaps = "out = out.$(Process)"
error = err.$(Process)
log = jobs.log
notification = never
{extra}
queue {n}
"""


class Scenario:
    """One scenario: a directory under ~htcgrid/real-tests/<run>/, its
    clusters, its waits and its invariants."""

    def __init__(self, name, project):
        self.name = name
        self.project = project
        self.dir = HOME / "real-tests" / RUN_ID / ("%s-%s" % (project.kind, name))
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        for d in [self.dir, self.dir.parent, self.dir.parent.parent]:
            os.chown(d, UID, GID)
        self.gm = LogTail(GM_LOG)
        self.gahp = LogTail(GAHP_LOG)
        self.snap = project.snapshot()
        self.expected = {}        # (cluster, proc) -> expected out content (bytes) or None
        self.clusters = []
        self.allowed_holds = {}   # (cluster, proc) -> regex the hold reason must match
        self.kills = 0
        self.restarts = 0
        self.t0 = time.monotonic()
        progress("%s/%s: start (dir %s)" % (project.kind, name, self.dir))

    # ---- files and submit ----
    def write(self, name, data):
        p = self.dir / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        os.chown(p, UID, GID)
        return p

    def content(self, i, size=0):
        base = ("%s %s %s job %d: hello world\n" % (RUN_ID, self.project.kind, self.name, i))
        if size > len(base):
            filler = hashlib.sha256(base.encode()).hexdigest()
            base += (filler * (size // len(filler) + 1))[:size - len(base) - 1] + "\n"
        return base.encode()

    def submit(self, n, arguments=None, extra="", url=None, app="uppercase", size=0,
               tag="in", expect_output=True, hold=False):
        """Write inputs <tag>.<cluster-local i> and a submit file; returns the
        cluster id.  Expected output: the upper-cased input."""
        k = len(self.clusters)
        sub = "c%d.sub" % k
        inputs = []
        for i in range(n):
            self.write("%s%d.%d" % (tag, k, i), self.content(1000 * k + i, size))
        lines = []
        if arguments is not None:
            lines.append("arguments = %s" % arguments)
        if hold:
            lines.append("hold = true")
        lines.append(extra)
        text = SUBMIT_TEMPLATE.format(
            url=url or self.project.url, app=app, auth_file=self.project.auth_file,
            inputs="%s%d.$(Process)" % (tag, k), extra="\n".join(lines), n=n)
        # per-cluster outputs: out.<proc> would collide across clusters
        text = text.replace('"out = out.$(Process)"', '"out = out%d.$(Process)"' % k)
        text = text.replace("err.$(Process)", "err%d.$(Process)" % k)
        self.write(sub, text)
        out = condor(["condor_submit", sub], cwd=str(self.dir), timeout=120)
        m = re.search(r"submitted to cluster (\d+)", out)
        assert m, out
        cl = int(m.group(1))
        self.clusters.append(cl)
        for i in range(n):
            self.expected[(cl, i)] = (self.content(1000 * k + i, size).upper(), k) \
                if expect_output else (None, k)
        progress("    cluster %d: %d job(s) submitted%s" % (cl, n, " on hold" if hold else ""))
        return cl

    # ---- state ----
    def events(self):
        return [e for e in parse_user_log(self.dir / "jobs.log") if e[1] in self.clusters]

    def rows(self):
        if not self.clusters:
            return {}
        return queue_rows(" || ".join("ClusterId == %d" % c for c in self.clusters))

    def job_ids(self):
        return sorted(self.expected)

    def settled(self, jobs=None):
        """True when each job (default: all) has left the queue after a
        terminate/abort event or is held."""
        jobs = jobs or self.job_ids()
        rows = self.rows()
        ev = self.events()
        ended = {(c, p) for code, c, p, _ in ev if code in ("005", "009")}
        for j in jobs:
            r = rows.get(j)
            if r is None:
                if j not in ended:
                    return False
            elif r["JobStatus"] != 5:
                return False
        return True

    def wait_settled(self, timeout, jobs=None):
        last = [0]

        def pred():
            ok = self.settled(jobs)
            if not ok and time.monotonic() - last[0] > 30:
                last[0] = time.monotonic()
                rows = self.rows()
                st = {}
                for r in rows.values():
                    key = "%s/%s" % ({1: "idle", 2: "running", 3: "removing", 4: "done",
                                      5: "held"}.get(r["JobStatus"], r["JobStatus"]),
                                     r["GridJobStatus"])
                    st[key] = st.get(key, 0) + 1
                progress("    waiting: %d in queue %s" % (len(rows), st))
            return ok
        wait_until(pred, timeout, "jobs of %s to finish or be held" % self.name)

    def wait_status(self, job, pred, timeout, what):
        def f():
            r = self.rows().get(job)
            return r is not None and pred(r)
        return wait_until(f, timeout, "job %d.%d %s" % (job + (what,)), 1.0)

    def wait_any_running(self, timeout, jobs=None):
        """Until one of the jobs is IN_PROGRESS on the server; returns it."""
        def f():
            rows = self.rows()
            for j in (jobs or self.job_ids()):
                r = rows.get(j)
                if r and r["GridJobStatus"] == "IN_PROGRESS" and r["JobStatus"] == 2:
                    return j
            return None
        return wait_until(f, timeout, "a job running on the server", 1.0)

    # ---- invariants ----
    def check(self, removed=(), must_complete=None):
        """The scenario's invariants.  removed: jobs the test removed;
        must_complete: jobs that must have completed (default: every job
        without an allowed hold)."""
        removed = set(removed)
        rows = self.rows()
        ev = self.events()
        terminated = {(c, p): t for code, c, p, t in ev if code == "005"}
        problems = []
        for j in self.job_ids():
            exp, k = self.expected[j]
            if j in removed:
                continue
            r = rows.get(j)
            if r is not None and r["JobStatus"] == 5:
                rx = self.allowed_holds.get(j)
                if rx is None or not re.search(rx, r["HoldReason"]):
                    problems.append("job %d.%d held: %r" % (j + (r["HoldReason"],)))
                continue
            if j not in terminated:
                problems.append("job %d.%d neither completed nor held (%s)" % (j + (r,)))
                continue
            if exp is not None:
                out = self.dir / ("out%d.%d" % (k, j[1]))
                try:
                    got = out.read_bytes()
                except OSError:
                    got = None
                if got != exp:
                    problems.append("job %d.%d output %s: %r, expected %r" % (
                        j + (out.name, got if got is None else got[:80], exp[:80])))
            if must_complete is not None and j not in must_complete:
                pass
        if must_complete is not None:
            for j in must_complete:
                if j not in terminated:
                    problems.append("job %d.%d did not complete" % j)
        # a job held more than once, then released, is defect 1's symptom
        holds = {}
        for code, c, p, t in ev:
            if code == "012":
                holds.setdefault((c, p), []).append(t.replace("\n", " | "))
        for j, hs in holds.items():
            user_holds = [h for h in hs if "via condor_hold" in h]
            other = [h for h in hs if "via condor_hold" not in h]
            if other and j not in self.allowed_holds:
                problems.append("job %d.%d held by the system: %s" % (j + (other,)))
            if user_holds and other:
                problems.append("job %d.%d held again after a condor_hold/release: %s"
                                % (j + (other,)))
        problems += self.gm_problems()
        try:
            self.project.check_no_duplicates(self.snap, self.job_ids())
        except AssertionError as e:
            problems.append(str(e))
        assert not problems, "%s/%s:\n  %s" % (self.project.kind, self.name,
                                                "\n  ".join(problems))

    def gm_problems(self):
        """EXCEPTs in the GridmanagerLog that the scenario's own kills and
        restarts do not explain.  A SIGKILLed GAHP shows as `ERROR "Gahp
        Server (pid=N) died due to signal 9 (Killed) unexpectedly"`, or,
        when it died in the middle of a command, `ERROR "Bad <CMD> Request:
        Empty response"`; each kill or restart explains one of them."""
        text = self.gm.text()
        problems, explained = [], []
        for m in re.finditer(r"^.*(EXCEPT|ERROR \").*$", text, re.M):
            line = m.group(0).strip()
            if re.search(r"died due to signal 9|Empty response|died due to signal 15", line):
                explained.append(line)
            else:
                problems.append("GridmanagerLog: %s" % line)
        if len(explained) > self.kills + self.restarts:
            problems.append("grid manager EXCEPTed %d times after a GAHP death, %d kill(s)/"
                            "restart(s) explain %d: %s" % (
                                len(explained), self.kills + self.restarts,
                                self.kills + self.restarts, explained[-1]))
        exits = re.findall(r"EXITING WITH STATUS (\d+)", text)
        bad = [x for x in exits if x != "0"]
        if len(bad) > self.kills + self.restarts:
            problems.append("grid manager exited abnormally %d times (statuses %s)"
                            % (len(bad), ",".join(bad)))
        return problems[:10]

    def gm_lines(self, pattern):
        return re.findall(r"^.*%s.*$" % pattern, self.gm.text(), re.M)

    def cleanup(self):
        """Remove whatever is left of the scenario's clusters (also jobs the
        grid manager can no longer handle) and wait until they are gone."""
        if not self.clusters:
            return
        rows = self.rows()
        if rows:
            condor(["condor_rm"] + [str(c) for c in self.clusters], check=False)
            try:
                wait_until(lambda: not self.rows(), 60, "removed jobs to leave", 2)
            except Timeout:
                condor(["condor_rm", "-forcex"] + [str(c) for c in self.clusters], check=False)
                wait_until(lambda: not self.rows(), 60, "forcibly removed jobs to leave", 2)
        progress("%s/%s: done in %.0f s" % (self.project.kind, self.name,
                                            time.monotonic() - self.t0))


def ensure_queue_empty():
    """Leftovers of an interrupted run would share the grid manager."""
    rows = queue_rows()
    if rows:
        progress("removing %d leftover job(s) of user %s" % (len(rows), USER))
        condor(["condor_rm", "-all"], check=False)
        try:
            wait_until(lambda: not queue_rows(), 60, "leftovers to leave", 2)
        except Timeout:
            condor(["condor_rm", "-all", "-forcex"], check=False)
            wait_until(lambda: not queue_rows(), 60, "leftovers to leave (forcex)", 2)
