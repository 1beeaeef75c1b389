#!/usr/bin/python3
"""demo - a short scripted GAHP session against the BOINC project emulator.

Starts build/boinc_emu (real clock) and build/boinc_gahp on 127.0.0.1 with a
fresh journal, then does what HTCondor's grid manager does: banner,
COMMANDS, CONDOR_VERSION, RESPONSE_PREFIX, ASYNC_MODE_ON,
BOINC_SELECT_PROJECT, BOINC_PING, a BOINC_SUBMIT of two `uppercase` jobs,
BOINC_QUERY_BATCHES until they are done, BOINC_FETCH_OUTPUT, QUIT.  Every
line sent (>>) and received (<<) is printed; the authenticator is masked.
Finally it shows what the journal recorded.  Exit status 0 when the
session behaved as the protocol requires.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e_core"))

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
        g = Gahp(journal, args=["--log-file", os.path.join(tmp, "gahp.log")])
        s = Session(g, info["authenticator"])
        try:
            s.show("<<", g.banner)
            s.cmd("COMMANDS")
            s.cmd(r"CONDOR_VERSION $CondorVersion:\ 9.0.17\ demo\ $")
            s.cmd("RESPONSE_PREFIX GAHP:")
            g.prefix = "GAHP:"
            s.cmd("ASYNC_MODE_ON")
            s.cmd("BOINC_SELECT_PROJECT %s %s" % (info["url"], info["authenticator"]))
            s.cmd("BOINC_PING 1")
            ping = s.result_of(1)
            if ping[1] != "NULL":
                raise SystemExit("ping failed: %s" % ping[1])

            inputs = []
            for i in range(2):
                path = os.path.join(tmp, "input %d.txt" % i)
                with open(path, "w") as f:
                    f.write("hello boinc number %d\n" % i)
                inputs.append(path)
            batch = "condor#demo#1#%d" % int(time.time())
            jobs = ["%s#1.%d" % (batch, i) for i in range(2)]
            spec = " ".join("%s 0 1 %s in" % (escape(j), escape(p)) for j, p in zip(jobs, inputs))
            s.cmd("BOINC_SUBMIT 2 %s uppercase 2 %s NULL NULL NULL NULL NULL NULL"
                  % (escape(batch), spec))
            sub = s.result_of(2)
            print("-- submit result: %s" % ("ok" if sub[1] == "NULL" else sub[1]))
            if sub[1] == "NULL":
                req = 3
                deadline = time.monotonic() + 120
                done = False
                while not done and time.monotonic() < deadline:
                    s.cmd("BOINC_QUERY_BATCHES %d 0 1 %s" % (req, escape(batch)))
                    q = s.result_of(req)
                    req += 1
                    done = q[1] == "NULL" and q.count("DONE") == len(jobs)
                    if not done:
                        time.sleep(1)
                for j in jobs:
                    out_dir = os.path.join(tmp, "out")
                    os.makedirs(out_dir, exist_ok=True)
                    s.cmd("BOINC_FETCH_OUTPUT %d %s %s %s.err ALL 1 out %s.out"
                          % (req, escape(j), escape(out_dir), escape(j), escape(j)))
                    f = s.result_of(req)
                    req += 1
                    out = os.path.join(out_dir, j + ".out")
                    if f[1] == "NULL" and os.path.exists(out):
                        with open(out) as fh:
                            print("-- output of %s: %r" % (j, fh.read()))
            s.cmd("QUIT")
            g.wait(30)
        finally:
            g.kill()
            emu.terminate()
            emu.wait()
        print("-- journal %s after the session:" % os.path.basename(journal))
        with sqlite3.connect(journal) as c:
            for row in c.execute("SELECT client_id, command, state, result FROM requests ORDER BY id"):
                print("   request %-3s %-20s %-10s %s" % row)
            for row in c.execute("SELECT id, version, condor_version, clean_exit FROM sessions"):
                print("   session %s version %s client %s clean_exit %s" % row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
