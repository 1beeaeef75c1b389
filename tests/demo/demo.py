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
exactly once, and its outputs fetched.  Finally it shows what the journal
recorded, through its audit views.  Exit status 0 when everything behaved
as the protocol and the recovery contract require.
"""
import argparse
import json
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


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", default=os.path.join(HERE, "..", "..", "build", "boinc_gahp"))
    ap.add_argument("--emu", default=os.path.join(HERE, "..", "..", "build", "boinc_emu"))
    args = ap.parse_args()
    os.environ["BOINC_GAHP"] = os.path.abspath(args.gahp)
    with tempfile.TemporaryDirectory(prefix="boinc_gahp_demo.") as tmp:
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
        finally:
            if g is not None:
                g.kill()
            emu.send_signal(signal.SIGTERM)
            emu.wait()
        print("-- journal %s after the sessions (what an operator sees with sqlite3):"
              % os.path.basename(journal))
        with sqlite3.connect(journal) as c:
            for row in c.execute("SELECT session_id, client_id, command, state, result"
                                 " FROM requests ORDER BY id"):
                print("   session %s request %-3s %-20s %-10s %.60s" % row)
            for row in c.execute("SELECT id, version, clean_exit FROM sessions"):
                print("   session %s version %s clean_exit %s" % row)
            print("   audit_pending_at_stop:")
            for row in c.execute("SELECT session_id, how_it_ended, request, command,"
                                 " state_at_stop, what_became_of_it FROM audit_pending_at_stop"):
                print("     %s" % (row,))
            print("   audit_batches:")
            for row in c.execute("SELECT name, server_batch_id, step, njobs, files,"
                                 " files_uploaded FROM audit_batches"):
                print("     %s" % (row,))
    return 0


if __name__ == "__main__":
    sys.exit(main())
