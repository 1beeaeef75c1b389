"""A model of the BLAH client of HTCondor 10.0-25.x's grid manager
(grid_resource = batch boinc), written from what the real 25.0.13 grid
manager was seen to send and accept (doc/htcondor.md, "What the 25.0 grid
manager does"): the start-up COMMANDS, ASYNC_MODE_ON, BLAH_PING <id>
boinc; one BLAH_JOB_SUBMIT per job with the ad INFNBatchJob::buildSubmitAd
makes (attributes in its order, JobDirectory = home_bl_<sandbox id>);
BLAH_JOB_STATUS per job; BLAH_JOB_CANCEL on condor_rm and condor_hold; and
the grid manager's own checks of every result line (an exact token count:
anything else is an ASSERT that kills the grid manager).

The tests drive the real boinc_gahp with it; where this model and the
real client disagree, the real one wins (make check-real runs it)."""
import itertools
import os

from gahp_client import Gahp, escape, split_tokens

# Settings of the tests: a cluster's jobs arrive within milliseconds, and
# every status asks the server (no interval).
FAST_ARGS = ("--blah-batch-window", "0.3", "--blah-status-interval", "0", "--retry-budget", "5")


def write_config(path, emu_proc, extra=""):
    """A boinc_gahp.conf naming emu_proc's project (the BLAH commands name
    none), its authenticator in a private file beside it."""
    auth = path.parent / (path.name + ".auth")
    auth.write_text(emu_proc.auth + "\n")
    os.chmod(auth, 0o600)
    path.write_text("project_url = %s\nauthenticator_file = %s\n%s" % (emu_proc.url, auth, extra))
    os.chmod(path, 0o600)
    return path


# Token counts the grid manager asserts on each result (after the id).
RESULT_TOKENS = {"BLAH_JOB_SUBMIT": 3, "BLAH_JOB_STATUS": 4, "BLAH_JOB_CANCEL": 2,
                 "BLAH_PING": 2}


# What HTCondor's ClassAd unparser (src/classad/sink.cpp of 25.0.13,
# ClassAdUnParser::UnparseString) writes for these bytes; every other byte
# that fails the C locale's isprint (below 0x20, 0x7f, every byte of a
# UTF-8 sequence) as a three-digit octal escape.
_UNPARSE_ESCAPES = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t",
                    11: "\\v", 92: "\\\\"}
# Names sink.cpp's identifierNeedsQuoting quotes whatever they hold
# (compared without regard to case).
_RESERVED = {"error", "false", "is", "isnt", "parent", "true", "undefined"}


def _unparse(value, delim):
    data = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)
    out = []
    for b in data:
        if b == ord(delim):
            out.append("\\" + delim)
        elif b in _UNPARSE_ESCAPES:
            out.append(_UNPARSE_ESCAPES[b])
        elif 0x20 <= b < 0x7f:
            out.append(chr(b))
        else:
            out.append("\\%03o" % b)
    return "".join(out)


def classad_string(s):
    """s (str, UTF-8 encoded; or bytes) as a ClassAd string literal,
    exactly as the grid manager's unparser writes it: "h\\303\\251llo"."""
    return '"' + _unparse(s, '"') + '"'


def classad_name(name):
    """An attribute name as the unparser writes it: bare when it is an
    identifier and no reserved word, else quoted ('my attr')."""
    text = _unparse(name, "'")
    plain = (text != "" and (text[0].isascii() and (text[0].isalpha() or text[0] == "_"))
             and all(c.isascii() and (c.isalnum() or c == "_") for c in text)
             and text.lower() not in _RESERVED)
    return text if plain else "'" + text + "'"


def classad_unescape(raw):
    """The bytes of a string literal's inside, read as HTCondor's lexer
    reads them (util.cpp convert_escapes)."""
    simple = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
    data = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else raw
    out = bytearray()
    i = 0
    while i < len(data):
        c = data[i]
        if c == 0x5c and i + 1 < len(data):
            i += 1
            ch = chr(data[i])
            if ch in simple:
                c = simple[ch]
            elif "0" <= ch <= "7":
                n = data[i] - 48
                if i + 1 < len(data) and 48 <= data[i + 1] <= 55:
                    i += 1
                    n = n * 8 + data[i] - 48
                    if n < 0o40 and i + 1 < len(data) and 48 <= data[i + 1] <= 55:
                        i += 1
                        n = n * 8 + data[i] - 48
                assert n != 0, "a \\0 in a ClassAd string: %r" % raw
                c = n
            else:
                c = data[i]
        out.append(c)
        i += 1
    return bytes(out)


def submit_ad(iwd, job_dir, queue="uppercase", arguments="", transfer_input=None,
              out="out.txt", err="err.txt", infile="/dev/null", transfer_output=None,
              remaps=None, extra=None):
    """The ad as buildSubmitAd unparses it (the order seen from 25.0.13)."""
    attrs = [("In", classad_string(infile)), ("Cmd", classad_string("/bin/true")),
             ("Err", classad_string(err)), ("Iwd", classad_string(str(iwd))),
             ("Out", classad_string(out))]
    if queue is not None:
        attrs.append(("Queue", classad_string(queue)))
    attrs += [("gridtype", classad_string("boinc")),
              ("Arguments", classad_string(arguments)),
              ("Environment", classad_string("")),
              ("GridResource", classad_string("batch boinc")),
              ("JobDirectory", classad_string(job_dir))]
    if transfer_input is not None:
        attrs.append(("TransferInput", classad_string(transfer_input)))
    if transfer_output is not None:
        attrs.append(("TransferOutput", classad_string(transfer_output)))
    if remaps is not None:
        attrs.append(("TransferOutputRemaps", classad_string(remaps)))
    for k, v in (extra or {}).items():
        attrs.append((classad_name(k), v))
    return "[ " + "; ".join("%s = %s" % kv for kv in attrs) + " ]"


def parse_status_ad(text):
    """The status ad's attributes (string values unquoted)."""
    assert text.startswith("[") and text.endswith("]"), text
    out = {}
    body = text[1:-1]
    i = 0
    while i < len(body):
        j = body.find("=", i)
        if j < 0:
            break
        name = body[i:j].strip().lstrip(";").strip()
        k = j + 1
        while body[k] == " ":
            k += 1
        if body[k] == '"':
            start, k = k + 1, k + 1
            while body[k] != '"':
                k += 2 if body[k] == "\\" else 1
            out[name] = classad_unescape(body[start:k]).decode("utf-8", "surrogateescape")
            k += 1
        else:
            e = body.find(";", k)
            e = len(body) if e < 0 else e
            out[name] = body[k:e].strip()
            k = e
        i = k + 1
    return out


class BlahClient:
    """One grid manager's conversation with one boinc_gahp process."""

    def __init__(self, journal, args=(), env=None, stderr_path=None, preexec_fn=None):
        self.gahp = Gahp(journal, args=list(args), env=env, stderr_path=stderr_path,
                         preexec_fn=preexec_fn)
        self._ids = itertools.count(2)      # request ids start at 2, as observed
        self.pending = {}                   # id -> command
        self.results = {}                   # id -> tokens after the id

    def start_up(self):
        reply = self.gahp.command("COMMANDS")
        assert reply.startswith("S "), reply
        self.commands = reply.split()[1:]
        for c in RESULT_TOKENS:
            assert c in self.commands, (c, reply)
        assert self.gahp.command("ASYNC_MODE_ON") == "S"
        self.gahp.async_mode = True
        return self.call("BLAH_PING", "boinc")

    def start(self, command, *args):
        rid = next(self._ids)
        line = " ".join([command, str(rid)] + [escape(str(a)) for a in args])
        reply = self.gahp.command(line)
        assert reply == "S", "Bad %s Request: %r" % (command, reply)
        self.pending[rid] = command
        return rid

    def collect(self, timeout=60):
        """One RESULTS round (after an R, as the grid manager does)."""
        for line in self.gahp.wait_results(1, timeout=timeout):
            toks = split_tokens(line)
            rid = int(toks[0])
            command = self.pending.pop(rid)
            want = RESULT_TOKENS[command]
            assert len(toks) - 1 == want, "Bad %s Result: %r" % (command, line)
            self.results[rid] = toks[1:]

    def wait(self, rid, timeout=60):
        import time
        deadline = time.monotonic() + timeout
        while rid not in self.results:
            self.collect(timeout=max(0.1, deadline - time.monotonic()))
        return self.results.pop(rid)

    def call(self, command, *args, timeout=60):
        return self.wait(self.start(command, *args), timeout)

    # ---- the commands, with the grid manager's reading of each ------------
    def submit(self, ad, timeout=60):
        rc, err, job = self.call("BLAH_JOB_SUBMIT", ad, timeout=timeout)
        return int(rc), err, job

    def status(self, job, timeout=60):
        rc, err, status, ad = self.call("BLAH_JOB_STATUS", job, timeout=timeout)
        return int(rc), err, int(status), (parse_status_ad(ad) if ad != "NULL" else None)

    def cancel(self, job, timeout=60):
        rc, err = self.call("BLAH_JOB_CANCEL", job, timeout=timeout)
        return int(rc), err

    def kill(self):
        self.gahp.kill()

    def stop(self):
        self.gahp.stop_cleanly()


# ---- a vanilla job routed by condor_job_router (HTCondor 25.0.13) ------------------

def routed_submit_ad(iwd, job_dir, executable, arguments="", transfer_input=None,
                     transfer_output=None, remaps=None, output=None, error=None,
                     route_queue="uppercase", boinc_app=None, keep_remaps=True,
                     request_memory=1):
    """The BLAH ad the 25.0 grid manager builds for a vanilla job that the
    job router routed to `batch boinc`, step by step as the real daemons do
    it (issue 40; doc/htcondor.md, "Routing vanilla jobs to BOINC"):

    1. condor_submit: the vanilla job (V1 Args, Cmd the user's executable,
       TransferOutputRemaps "a = x; b = y", JobUniverse 5);
    2. the schedd's job transform of examples/condor_config.d-boinc-job-router
       (keep_remaps): COPY TransferOutputRemaps remote_TransferOutputRemaps;
    3. VanillaToGrid::vanillaToGrid: JobUniverse 9 with Remote_JobUniverse 5,
       and for a job that is not spooled TransferOutputRemaps deleted, its
       remaps applied to Out and Err only;
    4. the route: BatchQueue = the job's BoincApp, else the route's;
    5. INFNBatchJob::buildSubmitAd: the listed attributes (Queue from
       BatchQueue, Args as V1), then every remote_<Attr> as <Attr>, which
       wins (JobUniverse = 5 comes from Remote_JobUniverse)."""
    job = {"Cmd": str(iwd / executable) if not executable.startswith("/") else executable,
           "Iwd": str(iwd), "In": "/dev/null", "Out": output or "/dev/null",
           "Err": error or "/dev/null", "Args": arguments, "JobUniverse": 5,
           "Environment": "", "RequestMemory": request_memory}
    if transfer_input is not None:
        job["TransferInput"] = transfer_input
    if transfer_output is not None:
        job["TransferOutput"] = transfer_output
    if remaps is not None:
        job["TransferOutputRemaps"] = remaps
    if boinc_app is not None:
        job["BoincApp"] = boinc_app
    # 2. the schedd's transform
    if keep_remaps and "TransferOutputRemaps" in job:
        job["remote_TransferOutputRemaps"] = job["TransferOutputRemaps"]
    # 3. VanillaToGrid
    job["Remote_JobUniverse"] = job["JobUniverse"]
    job["JobUniverse"] = 9
    job["GridResource"] = "batch boinc"
    rm = job.pop("TransferOutputRemaps", None)
    if rm:
        pairs = {}
        for item in rm.split(";"):
            if "=" in item:
                a, b = item.split("=", 1)
                pairs[a.strip()] = b.strip()
        for attr in ("Out", "Err"):
            if job[attr] in pairs:
                job[attr] = pairs[job[attr]]
    # 4. the route
    job["BatchQueue"] = job.get("BoincApp", route_queue)
    # 5. buildSubmitAd, in the order seen from 25.0.13
    attrs = [("In", classad_string(job["In"])), ("Cmd", classad_string(job["Cmd"])),
             ("Err", classad_string(job["Err"])), ("Iwd", classad_string(job["Iwd"])),
             ("Out", classad_string(job["Out"])), ("Args", classad_string(job["Args"]))]
    if job["BatchQueue"] is not None:
        attrs.append(("Queue", classad_string(job["BatchQueue"])))
    attrs += [("gridtype", classad_string("boinc")),
              ("Environment", classad_string(job["Environment"])),
              ("JobUniverse", str(job["JobUniverse"])),
              ("GridResource", classad_string(job["GridResource"])),
              ("JobDirectory", classad_string(job_dir)),
              ("RequestMemory", str(job["RequestMemory"]))]
    if "TransferInput" in job:
        attrs.append(("TransferInput", classad_string(job["TransferInput"])))
    if "TransferOutput" in job:
        attrs.append(("TransferOutput", classad_string(job["TransferOutput"])))
    for name, value in list(job.items()):
        if name.lower().startswith("remote_") and len(name) > 7:
            v = value if isinstance(value, int) else classad_string(value)
            attrs = [a for a in attrs if a[0].lower() != name[7:].lower()]
            attrs.append((name[7:], str(v)))
    return "[ " + "; ".join("%s = %s" % kv for kv in attrs) + " ]"


# ---- a cluster as the grid manager sends it (the e2e_blah tests share these)

BIG_INPUT = 4 * 1024 * 1024     # twice a stock PHP's upload_max_filesize


def stage(iwd, name, data):
    """Write an input file into Iwd (text or bytes)."""
    (iwd / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def cluster_ads(iwd, n, prefix, big=(), **kw):
    """n jobs of one cluster (JobDirectory <prefix>.<k>_1795751136), each
    with its own input in.<k>, TransferOutput out remapped to out.<k>, Out
    out.txt.<k> and Err err.txt.<k>; the jobs in big get a BIG_INPUT-byte
    input.  kw goes to submit_ad."""
    ads = []
    for k in range(n):
        stage(iwd, "in.%d" % k, b"x" * BIG_INPUT if k in big else "job %d input\n" % k)
        ads.append(submit_ad(iwd, "%s.%d_1795751136" % (prefix, k), transfer_input="in.%d" % k,
                             transfer_output="out", remaps="out = out.%d" % k,
                             out="out.txt.%d" % k, err="err.txt.%d" % k, **kw))
    return ads


def submit_each(client, ads):
    """Every BLAH_JOB_SUBMIT in flight before any result is read, as the
    grid manager sends a cluster's submits: [(rc, error, job id)]."""
    rids = [client.start("BLAH_JOB_SUBMIT", ad) for ad in ads]
    return [(int(rc), err, job) for rc, err, job in (client.wait(r) for r in rids)]


def submit_all_ok(client, ads):
    """submit_each, every submit accepted: the job ids."""
    out = submit_each(client, ads)
    for rc, err, _ in out:
        assert rc == 0, err
    return [job for _, _, job in out]
