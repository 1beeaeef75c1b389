"""Helpers for the end-to-end tests of BOINC_QUERY_BATCHES,
BOINC_FETCH_OUTPUT, BOINC_ABORT_JOBS, BOINC_RETIRE_BATCH and
BOINC_SET_LEASE: the real boinc_gahp binary (over pipes, via the core
suite's gahp_client) against the real BOINC project emulator on 127.0.0.1.

Jobs are created by talking to the emulator directly over HTTP
(create_batch, upload_files, submit_batch, exactly as a BOINC client
library would), so these tests do not depend on BOINC_SUBMIT.
"""
import hashlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e_core"))

from gahp_client import Gahp, escape, gahp_env, split_tokens  # noqa: E402


def emu_binary():
    env = os.environ.get("BOINC_EMU")
    if env:
        return env
    return os.path.join(HERE, "..", "..", "build", "boinc_emu")


# Talk to the emulator without any proxy (the environment of the test run
# may point the proxy variables at a dead port).
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _xml_escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _tag(xml, name):
    m = re.search(r"<%s>(.*?)</%s>" % (name, name), xml, re.S)
    return m.group(1) if m else None


class Emu:
    """One boinc_emu process in its own state directory."""

    def __init__(self, state_dir, config=None):
        args = [emu_binary(), "--state-dir", str(state_dir), "--hosts", "2"]
        if config is not None:
            args += ["--config", str(config)]
        self.stderr_path = os.path.join(str(state_dir) + ".stderr")
        self._stderr = open(self.stderr_path, "ab")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._stderr,
                                     env=gahp_env())
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("boinc_emu did not start: see %s" % self.stderr_path)
        info = json.loads(line)
        self.url = info["url"]
        self.auth = info["authenticator"]
        self.control_url = info["control"]

    # ---- control API ---------------------------------------------------
    def control(self, what, method="GET", **params):
        url = self.control_url + what
        if params:
            url += "?" + urllib.parse.urlencode(params)
        req = urllib.request.Request(url, data=b"" if method == "POST" else None,
                                     method=method)
        with _OPENER.open(req, timeout=120) as r:
            return json.loads(r.read().decode())

    def run(self, max_seconds=3600):
        return self.control("run", "POST", max_seconds=max_seconds)

    def advance(self, seconds):
        return self.control("advance", "POST", seconds=seconds)

    def fault(self, endpoint, kind, count=1):
        return self.control("fault", "POST", endpoint=endpoint, kind=kind, count=count)

    def behaviour(self, job, behaviour):
        return self.control("behaviour", "POST", job=job, behaviour=behaviour)

    def state(self):
        return self.control("state")

    def counters(self):
        return self.control("counters")

    def job_state(self, name):
        for j in self.state()["jobs"]:
            if j["name"] == name:
                return j
        raise KeyError(name)

    def batch_state(self, name):
        return [b for b in self.state()["batches"] if b["name"] == name]

    # ---- BOINC RPCs, sent directly ------------------------------------
    def post(self, script, request_xml, files=()):
        boundary = "----e2ecmds" + uuid.uuid4().hex
        parts = []

        def part(name, data, filename=None):
            head = 'Content-Disposition: form-data; name="%s"' % name
            if filename is not None:
                head += '; filename="%s"' % filename
            parts.append(b"--" + boundary.encode() + b"\r\n" + head.encode() +
                         b"\r\n\r\n" + data + b"\r\n")

        part("request", request_xml.encode())
        for i, data in enumerate(files):
            part("file_%d" % i, data, "file_%d" % i)
        body = b"".join(parts) + b"--" + boundary.encode() + b"--\r\n"
        req = urllib.request.Request(self.url + script, data=body, method="POST")
        req.add_header("Content-Type", "multipart/form-data; boundary=" + boundary)
        with _OPENER.open(req, timeout=120) as r:
            return r.read().decode("utf-8", "replace")

    def rpc(self, name, inner):
        xml = "<%s>\n<authenticator>%s</authenticator>\n%s</%s>\n" % (
            name, self.auth, inner, name)
        return self.post("submit_rpc_handler.php", xml)

    def submit(self, batch, app, jobs):
        """jobs: list of (name, [input bytes...], command_line or None).
        Returns the server's batch id."""
        reply = self.rpc("create_batch",
                         "<batch_name>%s</batch_name>\n<app_name>%s</app_name>\n"
                         "<expire_time>0</expire_time>\n" % (_xml_escape(batch), app))
        batch_id = _tag(reply, "batch_id")
        assert batch_id is not None, reply
        phys = {}
        for _, inputs, _ in jobs:
            for data in inputs:
                phys[hashlib.md5(data).hexdigest() + ".txt"] = data
        if phys:
            names = sorted(phys)
            xml = ("<upload_files>\n<authenticator>%s</authenticator>\n"
                   "<batch_id>%s</batch_id>\n%s</upload_files>\n") % (
                       self.auth, batch_id,
                       "".join("<phys_name>%s</phys_name>\n" % n for n in names))
            reply = self.post("job_file.php", xml, [phys[n] for n in names])
            assert "<error>" not in reply, reply
        jx = []
        for name, inputs, cmdline in jobs:
            j = "<job>\n<name>%s</name>\n" % _xml_escape(name)
            if cmdline:
                j += "<command_line>%s</command_line>\n" % _xml_escape(cmdline)
            for data in inputs:
                j += ("<input_file>\n<mode>local_staged</mode>\n<source>%s</source>\n"
                      "</input_file>\n") % (hashlib.md5(data).hexdigest() + ".txt")
            jx.append(j + "</job>\n")
        reply = self.rpc("submit_batch",
                         "<batch>\n<batch_id>%s</batch_id>\n<app_name>%s</app_name>\n"
                         "%s</batch>\n" % (batch_id, app, "".join(jx)))
        assert _tag(reply, "batch_id") is not None, reply
        return int(batch_id)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self._stderr.close()


class Session:
    """A boinc_gahp with a project selected; call() runs one async command
    and returns the unescaped tokens of its result (without the id)."""

    def __init__(self, gahp, emu):
        self.gahp = gahp
        self.emu = emu
        self._ids = itertools.count(1)
        assert gahp.command("BOINC_SELECT_PROJECT %s %s"
                            % (escape(emu.url), escape(emu.auth))) == "S"

    def start(self, command, *args):
        rid = next(self._ids)
        line = " ".join([command, str(rid)] + [escape(str(a)) for a in args])
        assert self.gahp.command(line) == "S", line
        return rid

    def wait(self, rid, timeout=120):
        line = self.gahp.wait_results(1, timeout=timeout)[0]
        toks = split_tokens(line)
        assert toks[0] == str(rid), line
        return toks[1:]

    def call(self, command, *args, timeout=120):
        return self.wait(self.start(command, *args), timeout)

    # HTCondor's result shapes
    def query(self, min_mod_time, *batches):
        return self.call("BOINC_QUERY_BATCHES", min_mod_time, len(batches), *batches)

    def fetch(self, job, iwd, stderr_file, mode, specs=()):
        flat = [x for pair in specs for x in pair]
        return self.call("BOINC_FETCH_OUTPUT", job, iwd, stderr_file, mode,
                         len(specs), *flat)


def parse_query(toks, nbatches):
    """NULL <server_time> {<n> {<job> <status>}*n}*nbatches -> (time, [dict])."""
    assert toks[0] == "NULL", toks
    server_time, i, out = toks[1], 2, []
    for _ in range(nbatches):
        n = int(toks[i])
        i += 1
        out.append({toks[i + 2 * k]: toks[i + 2 * k + 1] for k in range(n)})
        i += 2 * n
    assert i == len(toks), "token count does not match: %r" % toks
    return server_time, out
