#!/usr/bin/python3
"""demo - a short scripted GAHP session against the BOINC project emulator.

Starts build/boinc_emu (real clock) and build/boinc_gahp on 127.0.0.1 with a
fresh journal, then does what HTCondor's grid manager does: banner,
COMMANDS, CONDOR_VERSION, RESPONSE_PREFIX, ASYNC_MODE_ON,
BOINC_SELECT_PROJECT, BOINC_PING, a BOINC_SUBMIT of two `uppercase` jobs,
BOINC_QUERY_BATCHES until they are done, BOINC_FETCH_OUTPUT, QUIT.  Every
line sent (>>) and received (<<) is printed; the authenticator is masked.
Then the part that sets boinc_gahp apart: a second batch is submitted and
the server is killed with SIGKILL in the middle of it (after create_batch,
via the test-only crash point), restarted on the same journal, and the
client re-issues the submit the way HTCondor would: the batch is finished,
exactly once, and its outputs fetched.

Act 4 is the other dialect, `grid_resource = batch boinc` (HTCondor
10.0-25.x): the server is configured as a site configures it (project_url
and authenticator_file in its configuration file), and driven the way the
25.0 grid manager drives it (tests/lib/blah_client.py): COMMANDS,
ASYNC_MODE_ON, BLAH_PING, one BLAH_JOB_SUBMIT per job with the ClassAd ad
the grid manager builds, BLAH_JOB_STATUS per job until status 4 (done)
with the outputs in the job's Iwd.  The server is killed with SIGKILL
after the group of jobs was created on the project and before it was
submitted; the restarted server resumes that submit at start-up, a
repeated BLAH_JOB_SUBMIT gets the job it got before, and each job runs
once.

Finally it shows what the journal recorded, through its audit views
(with their column names).  With --keep the journal is kept and its path
printed, to try `boinc_gahp journal status --journal PATH` on it; without,
everything is removed.  Exit status 0 when everything behaved as the
protocol and the recovery contract require.
"""
import argparse
import json
import shutil
import signal
import urllib.request
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))

from gahp_client import Gahp, escape, gahp_env, split_tokens  # noqa: E402
from blah_client import BlahClient, submit_ad  # noqa: E402


class Session:
    def __init__(self, gahp, secret):
        self.g = gahp
        self.secret = secret

    def show(self, arrow, text):
        if self.secret:
            text = text.replace(self.secret, "***")
        if len(text) > 200:
            text = text[:200] + "..."
        print("%s %s" % (arrow, text), flush=True)

    def cmd(self, line, expect="S"):
        self.show(">>", line)
        reply = self.g.command(line)
        self.show("<<", self.g.prefix + reply)
        if expect is not None and not reply.startswith(expect):
            raise SystemExit("unexpected reply %r to %r" % (reply, line))
        return reply

    def result_of(self, req_id, timeout=120):
        """Wait (R, RESULTS) until the result of req_id arrives."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.show(">>", "RESULTS")
            lines = self.g.results()
            self.show("<<", "%sS %d" % (self.g.prefix, len(lines)))
            found = None
            for line in lines:
                self.show("<<", self.g.prefix + line)
                if split_tokens(line)[0] == str(req_id):
                    found = line
            if found is not None:
                return split_tokens(found)
            time.sleep(0.5)
        raise SystemExit("no result for request %d" % req_id)


def open_session(journal, tmp, info, env=None):
    """Start boinc_gahp and do HTCondor's start-up sequence."""
    g = Gahp(journal, args=["--log-file", os.path.join(tmp, "gahp.log")], env=env)
    s = Session(g, info["authenticator"])
    s.show("<<", g.banner)
    s.cmd("COMMANDS")
    s.cmd(r"CONDOR_VERSION $CondorVersion:\ 9.0.17\ demo\ $")
    s.cmd("RESPONSE_PREFIX GAHP:")
    g.prefix = "GAHP:"
    s.cmd("ASYNC_MODE_ON")
    s.cmd("BOINC_SELECT_PROJECT %s %s" % (info["url"], info["authenticator"]))
    return g, s


def make_batch(tmp, tag, n):
    """n input files and the BOINC_SUBMIT arguments of a batch using them."""
    batch = "condor#demo#%s#%d" % (tag, int(time.time()))
    jobs = ["%s#%s.%d" % (batch, tag, i) for i in range(n)]
    paths = []
    for i in range(n):
        path = os.path.join(tmp, "input %s %d.txt" % (tag, i))
        with open(path, "w") as f:
            f.write("hello boinc, batch %s job %d\n" % (tag, i))
        paths.append(path)
    spec = " ".join("%s 0 1 %s in" % (escape(j), escape(p)) for j, p in zip(jobs, paths))
    line = "%s uppercase %d %s NULL NULL NULL NULL NULL NULL" % (escape(batch), n, spec)
    return batch, jobs, line


def wait_and_fetch(s, tmp, batch, jobs, req):
    """Query until every job is DONE, then fetch each output; returns the
    next request id.  Raises SystemExit on a wrong output."""
    deadline = time.monotonic() + 120
    done = False
    while not done and time.monotonic() < deadline:
        s.cmd("BOINC_QUERY_BATCHES %d 0 1 %s" % (req, escape(batch)))
        q = s.result_of(req)
        req += 1
        done = q[1] == "NULL" and q.count("DONE") == len(jobs)
        if not done:
            time.sleep(1)
    if not done:
        raise SystemExit("batch %s did not finish" % batch)
    out_dir = os.path.join(tmp, "out")
    os.makedirs(out_dir, exist_ok=True)
    for j in jobs:
        s.cmd("BOINC_FETCH_OUTPUT %d %s %s %s.err ALL 1 out %s.out"
              % (req, escape(j), escape(out_dir), escape(j), escape(j)))
        f = s.result_of(req)
        req += 1
        out = os.path.join(out_dir, j + ".out")
        if f[1] != "NULL" or not os.path.exists(out):
            raise SystemExit("fetch of %s failed: %s" % (j, f))
        with open(out) as fh:
            text = fh.read()
        print("-- output of %s: %r" % (j, text))
        if not text.startswith("HELLO BOINC"):
            raise SystemExit("wrong output")
    return req


def counters(info):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(info["control"] + "counters", timeout=30) as r:
        return json.loads(r.read().decode())


def start_emu(emu, state_dir):
    p = subprocess.Popen([emu, "--state-dir", state_dir, "--clock", "real", "--log-level", "warn"],
                         stdout=subprocess.PIPE, env=gahp_env())
    info = json.loads(p.stdout.readline().decode())
    return p, info


class ShownBlahClient(BlahClient):
    """The grid manager's BLAH client, every line sent and received printed."""

    def __init__(self, journal, args, env, secret):
        BlahClient.__init__(self, journal, args=args, env=env)
        s = Session(self.gahp, secret)
        s.show("<<", self.gahp.banner)
        command, results = self.gahp.command, self.gahp.results

        def shown_command(line, timeout=30):
            s.show(">>", line)
            reply = command(line, timeout)
            s.show("<<", reply)
            return reply

        def shown_results(timeout=30):
            lines = results(timeout)
            for line in lines:
                s.show("<<", line)
            return lines

        self.gahp.command, self.gahp.results = shown_command, shown_results


def blah_act(tmp, info, journal):
    """Act 4: the BLAH dialect, SIGKILL and all (see the module's doc)."""
    cfg = os.path.join(tmp, "boinc_gahp.conf")
    auth = cfg + ".auth"
    with open(auth, "w") as f:
        f.write(info["authenticator"] + "\n")
    os.chmod(auth, 0o600)
    with open(cfg, "w") as f:
        f.write("project_url = %s\nauthenticator_file = %s\n" % (info["url"], auth))
    print("-- %s: project_url = %s, authenticator_file = %s"
          % (os.path.basename(cfg), info["url"], os.path.basename(auth)))
    iwd = os.path.join(tmp, "blah job dir")
    os.makedirs(iwd)
    ads = []
    for k in range(3):
        with open(os.path.join(iwd, "in.%d" % k), "w") as f:
            f.write("hello boinc, BLAH job %d\n" % k)
        ads.append(submit_ad(iwd, "home_bl_127.0.0.1_9618_demo.%d_%d" % (k, int(time.time())),
                             transfer_input="in.%d" % k, transfer_output="out",
                             remaps="out = out.%d" % k, out="out.txt.%d" % k,
                             err="err.txt.%d" % k))
    # the group of jobs is submitted 3 s (the default window) after its last
    # job joined; a status pass over the project every 2 s
    log = os.path.join(tmp, "gahp.log")
    log_start = os.path.getsize(log) if os.path.exists(log) else 0
    args = ["--log-file", log, "--blah-status-interval", "2"]
    env = {"BOINC_GAHP_CONFIG": cfg}
    c = ShownBlahClient(journal, args, dict(env, BOINC_GAHP_TEST_CRASH_AT="submit.create_sent"),
                        info["authenticator"])
    try:
        if c.start_up() != ["0", "NULL"]:
            raise SystemExit("BLAH_PING failed")
        rids = [c.start("BLAH_JOB_SUBMIT", ad) for ad in ads]
        jobs = []
        for rid in rids:
            rc, err, job = c.wait(rid)
            if rc != "0":
                raise SystemExit("submit refused: %s" % err)
            jobs.append(job)
        rc = c.gahp.proc.wait(timeout=60)
        print("-- boinc_gahp died with signal %d after create_batch of the group (exit %d)"
              % (-rc if rc < 0 else 0, rc))
    finally:
        c.kill()
    print("== act 5: restart; start-up resumes the group's submit, a repeated submit gets its job")
    c = ShownBlahClient(journal, args, env, info["authenticator"])
    try:
        if c.start_up() != ["0", "NULL"]:
            raise SystemExit("BLAH_PING failed after the restart")
        rc, err, again = c.submit(ads[0])
        if again != jobs[0]:
            raise SystemExit("the repeated submit got %s, not %s" % (again, jobs[0]))
        deadline = time.monotonic() + 180
        done = {}
        while len(done) < len(jobs):
            if time.monotonic() > deadline:
                raise SystemExit("BLAH jobs did not finish: %s" % sorted(set(jobs) - set(done)))
            for j in jobs:
                if j not in done:
                    rc, err, status, ad = c.status(j)
                    if status == 4:
                        done[j] = ad
            if len(done) < len(jobs):
                time.sleep(2)
        c.stop()
    finally:
        c.kill()
    with open(log) as fh:
        fh.seek(log_start)
        for log_line in fh:
            if "recovery" in log_line or "BLAH_GROUP_SUBMIT" in log_line:
                print("-- log: " + log_line.rstrip())
    for k, j in enumerate(jobs):
        with open(os.path.join(iwd, "out.%d" % k)) as fh:
            text = fh.read()
        print("-- %s: ExitCode %s, out.%d in Iwd: %r" % (j, done[j].get("ExitCode"), k, text))
        if text != "HELLO BOINC, BLAH JOB %d\n" % k:
            raise SystemExit("wrong output of %s" % j)
    cnt = counters(info)
    print("-- emulator: runs of each BLAH job: %s" % {j: cnt["jobs_by_name"].get(j) for j in jobs})
    if any(cnt["jobs_by_name"].get(j) != 1 for j in jobs):
        raise SystemExit("a BLAH job was not created exactly once")


def print_view(c, title, sql):
    """A query's rows under its column names, as a table."""
    cur = c.execute(sql)
    names = [d[0] for d in cur.description]
    rows = [["NULL" if v is None else str(v) for v in row] for row in cur.fetchall()]
    width = [max([len(n)] + [min(len(r[i]), 60) for r in rows]) for i, n in enumerate(names)]
    print("   %s:" % title)
    print("     " + "  ".join(n.ljust(w) for n, w in zip(names, width)))
    for r in rows:
        print("     " + "  ".join(v[:60].ljust(w) for v, w in zip(r, width)))
    if not rows:
        print("     (no rows)")


def run(args, tmp):
    """The acts, in tmp."""
    emu, info = start_emu(os.path.abspath(args.emu), os.path.join(tmp, "emu"))
    journal = os.path.join(tmp, "journal.db")
    g = None
    try:
        print("== act 1: an HTCondor-style session")
        g, s = open_session(journal, tmp, info)
        s.cmd("BOINC_PING 1")
        ping = s.result_of(1)
        if ping[1] != "NULL":
            raise SystemExit("ping failed: %s" % ping[1])
        batch, jobs, line = make_batch(tmp, "1", 2)
        s.cmd("BOINC_SUBMIT 2 " + line)
        sub = s.result_of(2)
        if sub[1] != "NULL":
            raise SystemExit("submit failed: %s" % sub[1])
        wait_and_fetch(s, tmp, batch, jobs, 3)
        s.cmd("QUIT")
        g.wait(30)

        print("== act 2: the server is killed in the middle of a submit")
        g, s = open_session(journal, tmp, info,
                            env={"BOINC_GAHP_TEST_CRASH_AT": "submit.created"})
        batch2, jobs2, line2 = make_batch(tmp, "2", 3)
        s.cmd("BOINC_SUBMIT 1 " + line2)
        rc = g.proc.wait(timeout=60)
        print("-- boinc_gahp died with signal %d after create_batch (exit %d)"
              % (-rc if rc < 0 else 0, rc))
        g.kill()
        print("== act 3: restart on the same journal; the client re-issues")
        g, s = open_session(journal, tmp, info)
        s.cmd("BOINC_SUBMIT 1 " + line2)     # HTCondor numbers from 1 again
        sub = s.result_of(1)
        if sub[1] != "NULL":
            raise SystemExit("re-issued submit failed: %s" % sub[1])
        c = counters(info)
        print("-- emulator: batches named %s: %d; create_batch calls in all: %d "
              "(one per batch); each input uploaded once: %s"
              % (batch2, c["batches_by_name"].get(batch2, 0), c["rpc"]["create_batch"],
                 all(v == 1 for v in c["uploads_by_name"].values())))
        if c["batches_by_name"].get(batch2) != 1:
            raise SystemExit("the batch was not created exactly once")
        wait_and_fetch(s, tmp, batch2, jobs2, 2)
        s.cmd("QUIT")
        g.wait(30)
        with open(os.path.join(tmp, "gahp.log")) as fh:
            for log_line in fh:
                if "recovery" in log_line:
                    print("-- log: " + log_line.rstrip())
        g = None

        print("== act 4: the BLAH dialect (batch boinc), as the 25.0 grid manager drives it;"
              " killed after create_batch")
        blah_act(tmp, info, journal)
    finally:
        if g is not None:
            g.kill()
        emu.send_signal(signal.SIGTERM)
        emu.wait()
    print("-- journal %s after the sessions (what an operator sees with sqlite3 -readonly):"
          % os.path.basename(journal))
    c = sqlite3.connect("file:%s?mode=ro" % journal, uri=True)
    try:
        print_view(c, "requests", "SELECT session_id, client_id, command, state, result"
                                  " FROM requests ORDER BY id")
        print_view(c, "sessions", "SELECT id, version, clean_exit FROM sessions")
        print_view(c, "audit_pending_at_stop",
                   "SELECT session_id, how_it_ended, request, command, state_at_stop,"
                   " what_became_of_it FROM audit_pending_at_stop")
        print_view(c, "audit_batches", "SELECT name, server_batch_id, step, njobs, files,"
                                       " files_uploaded FROM audit_batches")
        print_view(c, "audit_blah_jobs", "SELECT job_id, batch, group_state, boinc_status,"
                                         " exit_code, wall_s, cpu_s, fetch_result"
                                         " FROM audit_blah_jobs")
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", default=os.path.join(HERE, "..", "..", "build", "boinc_gahp"))
    ap.add_argument("--emu", default=os.path.join(HERE, "..", "..", "build", "boinc_emu"))
    ap.add_argument("--keep", action="store_true",
                    help="keep the journal (and the rest of the demo's directory) and print "
                         "its path, for `boinc_gahp journal status --journal PATH`")
    args = ap.parse_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    tmp = tempfile.mkdtemp(prefix="boinc_gahp_demo.")
    try:
        run(args, tmp)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.keep:
        journal = os.path.join(tmp, "journal.db")
        print("-- kept: %s (the server's log: %s)" % (journal, os.path.join(tmp, "gahp.log")))
        print("-- try:  %s journal status --journal %s"
              % (os.path.relpath(os.environ["BOINC_GAHP"]), journal))
    return 0


if __name__ == "__main__":
    sys.exit(main())
