"""emu.py - the Python helper for the BOINC project emulator (boinc_emu),
part of the shared test library (tests/lib): every suite imports it as
``emu`` (the one module name it is loaded under).

Starts build/boinc_emu (or $BOINC_EMU) on a state directory, parses its
first stdout line, and wraps the control API and the three project scripts.
Standard library only; talks to 127.0.0.1 with http.client (never through
a proxy).

    import emu

    with emu.Emulator(tmp_path / "emu") as e:
        e.url, e.authenticator          # project URL (ends in /), main user
        e.users()["nosubmit_user"]      # other accounts' authenticators
        e.advance(60); e.run(3600)      # virtual time
        e.counters()["rpc"]["create_batch"]
"""

import http.client
import json
import os
import pathlib
import select
import signal
import subprocess
import time
import urllib.parse
import uuid

REPO = pathlib.Path(__file__).resolve().parents[2]

# Socket timeout of one exchange with the emulator: long enough for any
# ordinary request on a busy machine.
REQUEST_TIMEOUT = 120
# For exchanges whose work grows with the test's size (running or staging
# thousands of jobs): the emulator is a child of the test, so this only has
# to catch a hang, never a slow machine.
HEAVY_TIMEOUT = 3600


def emu_binary():
    """Path of the emulator binary: $BOINC_EMU or build/boinc_emu."""
    return os.environ.get("BOINC_EMU") or str(REPO / "build" / "boinc_emu")


def multipart_encode(fields, files=()):
    """Encode form fields {name: str} and files [(field, filename, bytes)]
    as multipart/form-data; returns (body bytes, content type)."""
    boundary = "emuboundary" + uuid.uuid4().hex
    out = []
    for name, value in fields.items():
        if isinstance(value, str):
            value = value.encode("utf-8")
        out.append(b"--" + boundary.encode() + b"\r\n")
        out.append(('Content-Disposition: form-data; name="%s"\r\n\r\n' % name).encode())
        out.append(value + b"\r\n")
    for field, filename, data in files:
        out.append(b"--" + boundary.encode() + b"\r\n")
        out.append(('Content-Disposition: form-data; name="%s"; filename="%s"\r\n'
                    % (field, filename)).encode())
        out.append(b"Content-Type: application/octet-stream\r\n\r\n")
        out.append(data + b"\r\n")
    out.append(b"--" + boundary.encode() + b"--\r\n")
    return b"".join(out), "multipart/form-data; boundary=" + boundary


class Reply:
    """One HTTP exchange: status, headers (lower-case keys), body bytes,
    and whether the body was cut short (Content-Length not reached)."""

    def __init__(self, status, headers, body, partial=False):
        self.status = status
        self.headers = headers
        self.body = body
        self.partial = partial

    @property
    def text(self):
        return self.body.decode("iso-8859-1")

    def __repr__(self):
        return "Reply(%d, %r%s)" % (self.status, self.body[:200], ", partial" if self.partial else "")


class EmulatorError(Exception):
    pass


class Emulator:
    """A running boinc_emu.  Use as a context manager or call start()/stop()."""

    def __init__(self, state_dir, clock="manual", hosts=None, quirks=None,
                 config=None, port=0, binary=None, extra_args=(), php_limits=None,
                 tls=None):
        self.state_dir = pathlib.Path(state_dir)
        self.clock = clock
        self.hosts = hosts
        self.quirks = quirks
        # None: the emulator's default, a stock PHP (20 files, 8M post, 2M file)
        self.php_limits = php_limits
        self.config = config
        self.port = port
        self.binary = binary or emu_binary()
        self.extra_args = list(extra_args)
        # (cert, key) PEM files: also serve https (self.https_url)
        self.tls = tls
        self.https_url = None
        self.proc = None
        self.info = None
        self.log_path = self.state_dir.parent / (self.state_dir.name + ".log")

    # ---- process ----
    def command(self):
        cmd = [self.binary, "--state-dir", str(self.state_dir), "--port", str(self.port),
               "--clock", self.clock]
        if self.hosts is not None:
            cmd += ["--hosts", str(self.hosts)]
        if self.quirks is not None:
            cmd += ["--quirks", self.quirks]
        if self.config is not None:
            cmd += ["--config", str(self.config)]
        if self.php_limits is not None:
            cmd += ["--php-limits", self.php_limits]
        if self.tls is not None:
            cmd += ["--tls-cert", str(self.tls[0]), "--tls-key", str(self.tls[1])]
        return cmd + self.extra_args

    def start(self, timeout=30):
        self.state_dir.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.command(), stdout=subprocess.PIPE, stderr=log,
                                     stdin=subprocess.DEVNULL)
        log.close()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            self.proc.kill()
            self.proc.wait()
            raise EmulatorError("boinc_emu did not start; log:\n" + self.log())
        self.info = json.loads(line)
        self.url = self.info["url"]
        self.authenticator = self.info["authenticator"]
        self.control_url = self.info["control"]
        self.pid = self.info["pid"]
        self.https_url = self.info.get("https_url")
        parsed = urllib.parse.urlsplit(self.url)
        self.host, self.port_bound = parsed.hostname, parsed.port
        self.port = self.port_bound      # a restart reuses the same port
        return self

    def log(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout=30):
        """SIGTERM and wait; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        rc = self.proc.returncode
        self.proc = None
        return rc

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc.stdout.close()
            self.proc = None

    def restart(self):
        self.stop()
        return self.start()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---- raw HTTP ----
    def request(self, method, path, body=None, headers=None, timeout=REQUEST_TIMEOUT):
        """path is absolute ("/emu/x.php?...").  Returns a Reply; a body
        shorter than its Content-Length gives partial=True."""
        conn = http.client.HTTPConnection(self.host, self.port_bound, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            partial = False
            try:
                data = resp.read()
            except http.client.IncompleteRead as e:
                data, partial = e.partial, True
            return Reply(resp.status, hdrs, data, partial)
        finally:
            conn.close()

    def project_path(self, script):
        return urllib.parse.urlsplit(self.url).path + script

    def post_form(self, script, fields, files=(), timeout=REQUEST_TIMEOUT):
        body, ctype = multipart_encode(fields, files)
        return self.request("POST", self.project_path(script), body, {"Content-Type": ctype},
                            timeout=timeout)

    def rpc(self, xml, timeout=REQUEST_TIMEOUT):
        """POST a submit_rpc_handler.php request (XML text)."""
        return self.post_form("submit_rpc_handler.php", {"request": xml}, timeout=timeout)

    def job_file(self, xml, files=(), timeout=REQUEST_TIMEOUT):
        """POST job_file.php; files: list of bytes, sent as file_0, file_1..."""
        parts = [("file_%d" % i, "f%d" % i, data) for i, data in enumerate(files)]
        return self.post_form("job_file.php", {"request": xml}, parts, timeout=timeout)

    def get_output(self, **params):
        return self.request("GET", self.project_path("get_output.php") + "?" +
                            urllib.parse.urlencode(params))

    # ---- control API ----
    def control(self, name, method="GET", timeout=REQUEST_TIMEOUT, **params):
        path = urllib.parse.urlsplit(self.control_url).path + name
        if params:
            path += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        r = self.request(method, path, body=b"" if method == "POST" else None, timeout=timeout)
        data = json.loads(r.body or b"{}")
        if r.status != 200:
            raise EmulatorError("control %s: HTTP %d %s" % (name, r.status, data))
        return data

    def counters(self):
        return self.control("counters")

    def state(self):
        return self.control("state")

    def users(self):
        """{user name: authenticator} for emu_user, nosubmit_user, other_user."""
        return {u["name"]: u["authenticator"] for u in self.control("users")["users"]}

    def time(self):
        return self.control("time")["time"]

    def advance(self, seconds):
        return self.control("advance", "POST", seconds=seconds)

    def run(self, max_seconds=86400, max_runs=None):
        """Run the virtual clock until every job is finished (or the limits):
        the work grows with the jobs, so only a hang times out."""
        return self.control("run", "POST", timeout=HEAVY_TIMEOUT, max_seconds=max_seconds,
                            max_runs=max_runs)

    def behaviour(self, job, behaviour, instance=None):
        return self.control("behaviour", "POST", job=job, behaviour=behaviour, instance=instance)

    def default_behaviour(self, behaviour):
        return self.control("behaviour", "POST", default=behaviour)

    def fault(self, endpoint, kind, count=None, probability=None, delay_ms=None, after=False):
        return self.control("fault", "POST", endpoint=endpoint, kind=kind, count=count,
                            probability=probability, delay_ms=delay_ms,
                            after=1 if after else None)

    def clear_faults(self):
        return self.control("clear_faults", "POST")

    def set_quirks(self, quirks):
        return self.control("quirks", "POST", set=quirks)

    def set_post_max_bytes(self, n):
        """Emulate PHP's post_max_size: larger POSTs arrive empty (0 = off)."""
        return self.control("limits", "POST", post_max_bytes=n)

    def set_limits(self, **limits):
        """PHP limits: post_max_bytes, max_file_uploads, upload_max_filesize
        (0 = none), or set="stock"/"none".  Returns all three."""
        return self.control("limits", "POST", **limits)

    def job(self, name):
        for j in self.state()["jobs"]:
            if j["name"] == name:
                return j
        return None

    def wait_until(self, predicate, timeout=30, interval=0.1):
        """For --clock real: poll predicate() until true or timeout."""
        end = time.time() + timeout
        while time.time() < end:
            if predicate():
                return True
            time.sleep(interval)
        return False


# ---- request builders and reply parsers (for tests of any suite) ----

def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_create_batch(auth, name, app="uppercase", expire_time=0):
    return ("<create_batch>\n   <authenticator>%s</authenticator>\n   <batch_name>%s</batch_name>\n"
            "   <app_name>%s</app_name>\n   <expire_time>%f</expire_time>\n</create_batch>\n"
            % (auth, esc(name), esc(app), expire_time))


def xml_submit_batch(auth, batch_id, app, jobs, delay_bound=0, batch_name=None):
    """jobs: list of (name, [phys names], command_line or None)."""
    out = ["<submit_batch>\n<authenticator>%s</authenticator>\n<batch>\n" % auth]
    out.append("   <batch_id>%d</batch_id>\n" % batch_id)
    if batch_name is not None:
        out.append("   <batch_name>%s</batch_name>\n" % esc(batch_name))
    out.append("   <app_name>%s</app_name>\n   <app_version_num>0</app_version_num>\n"
               "   <job_params>\n       <delay_bound>%f</delay_bound>\n   </job_params>\n"
               % (esc(app), delay_bound))
    for name, sources, cmdline in jobs:
        out.append("<job>\n  <name>%s</name>\n" % esc(name))
        if cmdline:
            out.append("<command_line>%s</command_line>\n" % esc(cmdline))
        for s in sources:
            out.append("<input_file>\n<mode>local_staged</mode>\n<source>%s</source>\n</input_file>\n"
                       % esc(s))
        out.append("</job>\n")
    out.append("</batch>\n</submit_batch>\n")
    return "".join(out)


def xml_query_batch2(auth, names, min_mod_time=0.0):
    return ("<query_batch2>\n<authenticator>%s</authenticator>\n<min_mod_time>%f</min_mod_time>\n%s"
            "</query_batch2>\n" % (auth, min_mod_time,
                                   "".join("<batch_name>%s</batch_name>\n" % esc(n) for n in names)))


def xml_simple(tag, auth, **fields):
    """<tag><authenticator/>fields...</tag>; list values repeat the element."""
    out = ["<%s>\n" % tag]
    if auth is not None:
        out.append("<authenticator>%s</authenticator>\n" % auth)
    for k, v in fields.items():
        for item in (v if isinstance(v, (list, tuple)) else [v]):
            out.append("<%s>%s</%s>\n" % (k, esc(str(item)), k))
    out.append("</%s>\n" % tag)
    return "".join(out)


def error_msg(body):
    """The <error_msg> text of a reply (tolerant of non-XML replies), or None."""
    import re
    text = body.decode("iso-8859-1") if isinstance(body, bytes) else body
    m = re.search(r"<error_msg>(.*?)</error_msg>", text, re.S)
    return m.group(1) if m else None


def tag_value(body, tag):
    import re
    text = body.decode("iso-8859-1") if isinstance(body, bytes) else body
    m = re.search(r"<%s>(.*?)</%s>" % (tag, tag), text, re.S)
    return m.group(1) if m else None


def job_statuses(body):
    """[(job_name, status)] from a query_batch2 reply."""
    import re
    text = body.decode("iso-8859-1") if isinstance(body, bytes) else body
    return re.findall(r"<job_name>(.*?)</job_name>\s*<status>(.*?)</status>", text, re.S)


def phys_name(data, ext=".txt"):
    import hashlib
    return hashlib.md5(data).hexdigest() + ext


def stage_files(e, auth, batch_id, contents, ext=".txt", chunk=20, timeout=REQUEST_TIMEOUT):
    """query_files + upload_files (only the absent ones, never twice, at
    most `chunk` files per upload: a stock PHP's max_file_uploads);
    returns the physical names in order."""
    import re
    names, seen = [], []
    for c in contents:
        n = phys_name(c, ext)
        names.append(n)
        if n not in seen:
            seen.append(n)
    data = {phys_name(c, ext): c for c in contents}
    r = e.job_file(xml_simple("query_files", auth, batch_id=batch_id, phys_name=seen),
                   timeout=timeout)
    absent = [int(i) for i in re.findall(r"<file>(\d+)</file>", r.text)]
    if absent:
        up_all = [seen[i] for i in absent]
        for k in range(0, len(up_all), chunk):
            up = up_all[k:k + chunk]
            r2 = e.job_file(xml_simple("upload_files", auth, batch_id=batch_id, phys_name=up),
                            [data[n] for n in up], timeout=timeout)
            if b"<success/>" not in r2.body:
                raise EmulatorError("upload failed: %r" % r2)
    return names


def submit(e, auth, batch_name, app, jobs_inputs, cmdlines=None, delay_bound=0, prefix=None):
    """create_batch + stage + submit_batch; jobs_inputs: list of lists of
    bytes (one list per job).  Returns (batch_id, [job names])."""
    r = e.rpc(xml_create_batch(auth, batch_name, app))
    bid = int(tag_value(r.body, "batch_id"))
    flat = [c for inputs in jobs_inputs for c in inputs]
    names = stage_files(e, auth, bid, flat) if flat else []
    jobs, k = [], 0
    prefix = prefix or batch_name
    for i, inputs in enumerate(jobs_inputs):
        srcs = names[k:k + len(inputs)]
        k += len(inputs)
        jobs.append(("%s_job%d" % (prefix, i), srcs, (cmdlines or {}).get(i)))
    r = e.rpc(xml_submit_batch(auth, bid, app, jobs, delay_bound))
    if tag_value(r.body, "batch_id") is None:
        raise EmulatorError("submit failed: %r" % r)
    return bid, [j[0] for j in jobs]
