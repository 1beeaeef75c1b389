"""gridmanager_sim - a wire-faithful model of HTCondor 9.0's grid manager
(grid type `boinc`) driving the real boinc_gahp over real pipes.

Written for this test suite from the documented behaviour of HTCondor
9.0's grid manager (doc/htcondor.md, doc/protocol.md), not copied from
anything.  What it models:

* the job queue of the schedd (GridManager.jobs): it survives grid-manager
  restarts, like the real job queue; everything else is per process;
* one simulated grid-manager process = one GAHP, spawned with NO arguments
  (options only through the environment: see gahp_environment());
* the start-up handshake (banner read rules, COMMANDS, CONDOR_VERSION,
  RESPONSE_PREFIX GAHP:, ASYNC_MODE_ON), R lines and RESULTS;
* request ids from 2 in every process, the client's escaping (only space,
  backslash, CR and LF; TAB raw; job names inside BOINC_SUBMIT and
  min_mod_time not escaped at all), CRLF line ends, no pipelining;
* the 20 s response timeout and the 300 s call timeout (both settable),
  at most 50 requests in flight;
* SELECT_PROJECT whenever the resource changes, one ping per resource;
  the ping does NOT gate anything: SUBMIT, SET_LEASE and QUERY go out
  before its result, as the real 9.0.19 client did;
* batches condor#<schedd>#<app>#<unix time>, jobs <batch>#<cluster>.<proc>,
  the batch name saved before BOINC_SUBMIT, jobs in a shuffled order that
  differs per process, the six trailing fields of the first job, taken
  only from STRING job-ad attributes (a numeric value is sent as NULL);
* full and partial status queries (min_mod_time = the server_time of the
  previous partial query, verbatim; "0" until then and for full queries,
  which do not update it; the full-query flag is cleared by every poll,
  even one with no batch to list), the early-stopping reply loop of
  FinishBatchStatus (it stops at the first unconfirmed batch, whether it
  confirms it or resubmits it because its group is empty), `no batch
  named` handling; in a partial query a job not listed keeps its status;
* status lines applied by cluster.proc (the text after the last `#`) to
  whichever job of the user has it, whatever batch the line belongs to
  (BaseJob::JobsByProcId), not by full job name;
* DONE -> FETCH_OUTPUT (ALL 0, or SOME with the (basename(Out), Out) and
  (basename(Err), Err) specs); ERROR -> hold, and GridJobStatus = ERROR
  stays in the job ad: every later condor_release re-holds the job at once
  ("Unspecified gridmanager error" without a batch name) until an
  administrator clears it (GridManager.admin_clear_status, condor_qedit);
* leases, RETIRE by the last job to leave a batch (a user-held job counts
  as done), one ABORT per removed or user-held job; an abort clears the
  job's GridJobStatus and, for condor_hold, its batch name: a release
  then makes the job join a NEW batch (new BOINC_SUBMIT, same cluster.proc)
  while the rest of its old batch keeps being polled;
* any non-S return line or a result with the wrong number of tokens ends
  the process ("unexpected client exit"); the death of the GAHP ends it
  too; GridManager.run() then starts a new process, as the schedd does.

The 25.0 grid manager's BLAH dialect (`batch boinc`) has its own model,
tests/lib/blah_client.py; its routed_submit_ad builds the BLAH ad of a
vanilla job that condor_job_router routed (issue 40: V1 Args, the user's
Cmd, JobUniverse 5, the remaps only as remote_TransferOutputRemaps).

Time: the simulator has its own clock (GridManager.now), moved by 60 s per
poll cycle, so leases and batch names do not depend on the wall clock; the
poll hook lets a test move the emulator's virtual clock in step.  The two
GAHP timeouts are real (wall-clock) time, as in the real client.
"""
import os
import queue
import random
import re
import signal
import subprocess
import threading
import time

import pathlib

from gahp_client import gahp_binary, gahp_env

# ---- the real client's constants (reference: "Lines, escaping, timeouts") ----
RESPONSE_TIMEOUT = 20.0          # GRIDMANAGER_GAHP_RESPONSE_TIMEOUT
CALL_TIMEOUT = 300.0             # GRIDMANAGER_GAHP_CALL_TIMEOUT
MAX_IN_FLIGHT = 50
FIRST_REQUEST_ID = 2
REQUEST_ID_WRAP = 990_000_000
MAX_TOKEN_BYTES = 512_000
BANNER_MAX_CHARS = 149
POLL_INTERVAL = 60               # status poll and the periodic RESULTS poll
LEASE_DURATION = 6 * 3600
LEASE_RENEW_BEFORE = 4 * 3600
LEASE_MIN_RETRY = 5 * 60
CONDOR_VERSION = "$CondorVersion: 9.0.17 Oct 04 2022 BuildID: 612345 PackageID: 9.0.17-1 $"
TRAILING_ATTRS = ("rsc_fpops_est", "rsc_fpops_bound", "rsc_memory_bound",
                  "rsc_disk_bound", "delay_bound", "app_version_num")

# job states in the schedd's queue
IDLE, RUNNING, COMPLETED, HELD, REMOVED = "IDLE", "RUNNING", "COMPLETED", "HELD", "REMOVED"


def gahp_environment(journal, home, extra=None):
    """The environment the grid manager gives the GAHP: its own (HOME = the
    user's home, GAHP_TEMP added) plus the tests' dead proxies.  The ONE
    place that passes boinc_gahp options: the journal path goes through
    BOINC_GAHP_JOURNAL until lane B's environment/config-file options land."""
    env = gahp_env(extra)
    env["HOME"] = str(home)
    env["GAHP_TEMP"] = str(pathlib.Path(home) / "gahp_temp")
    env["BOINC_GAHP_JOURNAL"] = str(journal)
    return env


def client_escape(text):
    """The client's escaping: a backslash before space, backslash, CR, LF;
    TAB and every other control character stay raw."""
    out = []
    for ch in text:
        if ch in " \\\r\n":
            out.append("\\")
        out.append(ch)
    return "".join(out)


class ClientExit(Exception):
    """The simulated grid-manager process ends.  expected=False marks the
    exits the issue calls bugs (a non-S return line, a wrong result, an
    unresponsive GAHP); a GAHP that died (EOF) is expected=True."""

    def __init__(self, reason, expected=False):
        super().__init__(reason)
        self.reason = reason
        self.expected = expected


class SimulatorError(Exception):
    """The test harness itself gave up (a hang the real client would sit in
    forever, or a safety bound); never a modelled client behaviour."""


# ---------------------------------------------------------------------------
class GahpWire:
    """The pipes to one GAHP process, read the way gahp-client.cpp reads:
    the banner line by its own rules, then lines split into tokens
    (backslash escapes any byte, unescaped CR dropped, space separates,
    LF ends).  A reader thread queues ("banner", text), ("line", tokens)
    and ("eof", None)."""

    def __init__(self, env, stderr_path):
        self._stderr = open(stderr_path, "ab")
        # no arguments at all: argv is just the program, as BOINC_GAHP runs it
        self.proc = subprocess.Popen([gahp_binary()], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        self.pid = self.proc.pid
        self.items = queue.Queue()
        threading.Thread(target=self._read_loop, daemon=True).start()

    def _read_loop(self):
        out = self.proc.stdout
        banner = bytearray()
        while True:
            b = out.read(1)
            if not b:
                self.items.put(("eof", None))
                return
            if b == b"\n":
                break
            banner += b
        self.items.put(("banner", self._banner_text(bytes(banner))))
        tokens, cur, escaped = [], bytearray(), False
        while True:
            chunk = out.read1(1 << 16)
            if not chunk:
                self.items.put(("eof", None))
                return
            for byte in chunk:
                if escaped:
                    cur.append(byte)
                    escaped = False
                elif byte == 0x5C:
                    escaped = True
                elif byte == 0x0D:
                    continue
                elif byte == 0x20:
                    tokens.append(cur.decode("utf-8", "surrogateescape"))
                    cur = bytearray()
                elif byte == 0x0A:
                    tokens.append(cur.decode("utf-8", "surrogateescape"))
                    self.items.put(("line", tokens))
                    tokens, cur = [], bytearray()
                else:
                    cur.append(byte)
                if len(cur) > MAX_TOKEN_BYTES:
                    self.items.put(("toolong", None))
                    return

    @staticmethod
    def _banner_text(raw):
        """Skip everything before the first `$`, drop backslashes, keep at
        most 149 characters."""
        text = raw.decode("utf-8", "surrogateescape")
        start = text.find("$")
        text = text[start:] if start >= 0 else ""
        return text.replace("\\", "")[:BANNER_MAX_CHARS]

    def send(self, line):
        """Write one line ending in CRLF (EPIPE = the GAHP is gone)."""
        try:
            self.proc.stdin.write(line.encode("utf-8", "surrogateescape") + b"\r\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ClientExit("GAHP pipe closed", expected=True)

    def get(self, timeout):
        try:
            return self.items.get(timeout=timeout)
        except queue.Empty:
            return ("timeout", None)

    def close(self, wait=30):
        """The grid manager never sends QUIT: it just closes the pipes."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.close()


# ---------------------------------------------------------------------------
class Job:
    """One job of the schedd's queue (its ad).  batch_name, submitted,
    remote_status, state, hold_reason and exit_status persist across
    grid-manager processes; the rest is the submit description."""

    def __init__(self, cluster, proc, app, resource, iwd, args=(), inputs=(), attrs=None,
                 output=None, error=None, transfer_output_files=None, expect=None):
        self.cluster, self.proc = cluster, proc
        self.app, self.resource, self.iwd = app, resource, str(iwd)
        self.args = list(args)
        self.inputs = list(inputs)               # absolute paths
        self.attrs = dict(attrs or {})
        self.output, self.error = output, error
        self.transfer_output_files = transfer_output_files   # None or [(name, remap)]
        self.expect = expect or {}               # {path: bytes} the test checks
        self.batch_name = None
        self.submitted = False                   # has a remote job id (GridJobId)
        self.remote_status = None
        self.state = IDLE
        self.hold_reason = None
        self.exit_status = None
        self.removing = False                    # condor_rm or condor_hold pending
        self.user_hold = False                   # ... and it was condor_hold

    @property
    def id(self):
        return "%d.%d" % (self.cluster, self.proc)

    @property
    def remote_name(self):
        return "%s#%s" % (self.batch_name, self.id)

    @property
    def terminal(self):
        return self.state in (COMPLETED, HELD, REMOVED)

    def hold(self, reason):
        self.state = HELD
        self.hold_reason = reason

    def __repr__(self):
        return "Job(%s %s %s)" % (self.id, self.state, self.hold_reason or self.remote_status)


class Request:
    def __init__(self, rid, command, line, on_result, on_timeout, deadline):
        self.rid, self.command, self.line = rid, command, line
        self.on_result, self.on_timeout = on_result, on_timeout
        self.deadline = deadline
        self.timed_out = False


class Batch:
    """Per-process view of one batch.  state: 'open' (jobs joined, not yet
    submitted), 'submitting', 'unconfirmed' (found at start-up without a
    remote job id), 'submitted'."""

    def __init__(self, name, resource, app, state):
        self.name, self.resource, self.app, self.state = name, resource, app, state
        self.lease = None
        self.last_lease_attempt = None
        self.lease_in_flight = False
        self.retiring = False


# ---------------------------------------------------------------------------
class GridManagerProcess:
    """One life of the grid manager: one GAHP, ids from 2, its own random
    job order.  run() returns normally when every job is terminal, or
    raises ClientExit."""

    def __init__(self, gm, number):
        self.gm = gm
        self.number = number
        self.rng = random.Random(gm.seed * 7919 + number)
        self.next_id = FIRST_REQUEST_ID - 1
        self.pending = {}
        self.reserved = set()           # ids of timed-out requests
        self.backlog = []
        self.results_wanted = False
        self.last_results_poll = time.monotonic()
        self.current_resource = None
        self.prefix = None
        self.commands = set()
        self.condor_version_reply = None
        self.batches = {}
        self.pinged = {}                # resource -> 'pending'|'up'
        self.query_in_flight = {}       # resource -> bool
        self.full_query_needed = {}     # resource -> bool
        self.partial_time = {}          # resource -> server_time text, verbatim
        self.query_loops = 0
        self.fetching = set()
        self.wire = None
        self.sent_ids = []

    # ---- wire --------------------------------------------------------
    def log(self, text):
        self.gm.log.append("[gm%d] %s" % (self.number, text))

    def _read_item(self, timeout):
        kind, value = self.wire.get(timeout)
        if kind == "eof":
            raise ClientExit("GAHP exited (EOF)", expected=True)
        if kind == "toolong":
            raise ClientExit("token over 512,000 bytes: assertion failure")
        return kind, value

    def read_line(self, timeout=None):
        """Next line after prefix handling; R lines schedule a RESULTS poll.
        Exceeding the response timeout makes the client exit."""
        limit = self.gm.response_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            kind, tokens = self._read_item(max(left, 0.0))
            if kind == "timeout":
                raise ClientExit("GAHP unresponsive: no line within %gs" % limit)
            if self.prefix is not None:
                if not tokens[0].startswith(self.prefix):
                    self.log("discarded line without prefix: %r" % (tokens,))
                    continue
                tokens = [tokens[0][len(self.prefix):]] + tokens[1:]
            if len(tokens) == 1 and tokens[0].startswith("R"):
                self.results_wanted = True
                continue
            return tokens

    def command(self, line):
        """Write a command, read its return line (no pipelining)."""
        self.wire.send(line)
        return self.read_line()

    # ---- start-up ------------------------------------------------------
    def start_gahp(self):
        env = gahp_environment(self.gm.journal, self.gm.home,
                               self.gm.env_for_process(self.number))
        self.wire = GahpWire(env, self.gm.stderr_path)
        self.gm.on_gahp_started(self)
        # the banner read has no timeout in the real client; the bound here
        # only keeps a broken test from hanging
        kind, banner = self.wire.get(self.gm.banner_safety_timeout)
        if kind == "timeout":
            raise SimulatorError("no banner within %gs" % self.gm.banner_safety_timeout)
        if kind != "banner":
            for job in self.gm.active_jobs():
                job.hold("Failed to initialize GAHP")
            raise ClientExit("EOF before the banner: start-up failed", expected=True)
        self.banner = banner
        self.handshake()
        self.gm.on_gahp_ready(self)

    def handshake(self):
        reply = self.command("COMMANDS")
        if not reply[0].startswith("S"):
            raise ClientExit("COMMANDS answered %r" % (reply,))
        self.commands = set(reply[1:])
        if "CONDOR_VERSION" in self.commands:
            reply = self.command("CONDOR_VERSION " + client_escape(CONDOR_VERSION))
            self.condor_version_reply = reply
            if len(reply) != 2 or reply[0] != "S":
                self.log("CONDOR_VERSION failed: %r" % (reply,))    # logged, not fatal
        if "RESPONSE_PREFIX" in self.commands:
            reply = self.command("RESPONSE_PREFIX GAHP:")
            if not reply[0].startswith("S"):
                raise ClientExit("RESPONSE_PREFIX answered %r" % (reply,))
            self.prefix = "GAHP:"
        if "ASYNC_MODE_ON" in self.commands:
            reply = self.command("ASYNC_MODE_ON")
            if not reply[0].startswith("S"):
                raise ClientExit("ASYNC_MODE_ON answered %r" % (reply,))

    # ---- requests ------------------------------------------------------
    def _new_id(self):
        while True:
            self.next_id += 1
            if self.next_id > REQUEST_ID_WRAP:
                self.next_id = 1
            if self.next_id not in self.pending and self.next_id not in self.reserved:
                return self.next_id

    def _select_project(self, resource):
        if resource == self.current_resource:
            return
        url, auth_file = resource
        with open(auth_file) as f:
            words = f.read().split()
        auth = words[0][:79] if words else ""
        reply = self.command("BOINC_SELECT_PROJECT %s %s" % (client_escape(url),
                                                              client_escape(auth)))
        if not reply[0].startswith("S"):
            raise ClientExit("Bad BOINC_SELECT_PROJECT Request: %r" % (reply,))
        self.current_resource = resource
        self.gm.selects.append((self.number, resource))

    def request(self, resource, command, body, on_result, on_timeout=None):
        """Queue a BOINC command; body is a function id -> the line's tail
        (already escaped by the caller as the client does)."""
        self.backlog.append((resource, command, body, on_result, on_timeout))
        self._send_backlog()

    def _send_backlog(self):
        while self.backlog and len(self.pending) < MAX_IN_FLIGHT:
            resource, command, body, on_result, on_timeout = self.backlog.pop(0)
            self._select_project(resource)
            rid = self._new_id()
            line = "%s %d %s" % (command, rid, body) if body else "%s %d" % (command, rid)
            reply = self.command(line)
            if not reply[0].startswith("S") and len(reply) >= 2 and \
                    reply[1] == "Threads limit reached":
                self.backlog.insert(0, (resource, command, body, on_result, on_timeout))
                return
            if not reply[0].startswith("S"):
                self.gm.wire_log.append((self.number, line, reply))
                raise ClientExit("Bad %s Request: %r" % (command, reply))
            self.sent_ids.append(rid)
            self.gm.on_request_accepted(self, command, rid)
            self.gm.wire_log.append((self.number, line, reply))
            self.pending[rid] = Request(rid, command, line, on_result, on_timeout,
                                        time.monotonic() + self.gm.call_timeout)
            self.gm.max_in_flight = max(self.gm.max_in_flight, len(self.pending))

    def poll_results(self):
        reply = self.command("RESULTS")
        if not reply[0].startswith("S") or len(reply) != 2:
            raise ClientExit("Bad RESULTS Request: %r" % (reply,))
        self.results_wanted = False
        self.last_results_poll = time.monotonic()
        lines = [self.read_line() for _ in range(int(reply[1]))]
        for tokens in lines:
            self._deliver(tokens)
        self._send_backlog()

    def _deliver(self, tokens):
        try:
            rid = int(tokens[0])
        except ValueError:
            self.log("result with a bad id ignored: %r" % (tokens,))
            return
        if rid in self.reserved:
            self.reserved.discard(rid)      # the late result of a timed-out request
            self.gm.results_log.append((self.number, "(timed out)", tokens))
            return
        req = self.pending.pop(rid, None)
        if req is None:
            self.log("result for unknown id %d ignored" % rid)
            return
        self.gm.results_log.append((self.number, req.line, tokens))
        req.on_result(tokens[1:])

    def _check_call_timeouts(self):
        now = time.monotonic()
        for rid, req in list(self.pending.items()):
            if now >= req.deadline:
                del self.pending[rid]
                self.reserved.add(rid)      # stays reserved until a result arrives
                self.log("%s %d timed out" % (req.command, rid))
                self.gm.timeouts.append((self.number, req.command))
                if req.on_timeout:
                    req.on_timeout()

    def wait_quiet(self):
        """Serve R lines and RESULTS until nothing is in flight."""
        while self.pending or self.backlog or self.results_wanted:
            if self.backlog and len(self.pending) < MAX_IN_FLIGHT:
                self._send_backlog()        # requeued ("Threads limit reached")
            if self.results_wanted or \
                    time.monotonic() - self.last_results_poll >= self.gm.results_poll_interval:
                self.poll_results()
                continue
            self._check_call_timeouts()
            if not self.pending and not self.backlog:
                break
            kind, tokens = self._read_item(0.05)
            if kind == "timeout":
                continue
            if self.prefix is not None:
                if not tokens[0].startswith(self.prefix):
                    continue
                tokens = [tokens[0][len(self.prefix):]] + tokens[1:]
            if len(tokens) == 1 and tokens[0].startswith("R"):
                self.results_wanted = True
            else:
                self.log("unsolicited line discarded: %r" % (tokens,))

    @staticmethod
    def _two_tokens(command, result):
        if len(result) != 1:
            raise ClientExit("%s result with %d tokens: %r" % (command, len(result) + 1, result))
        return result[0]

    # ---- the grid manager's work -----------------------------------------
    def run(self):
        self.start_gahp()
        self.recover()
        self.ping_resources()
        cycles = 0
        while True:
            if self.gm.stop_process_at_cycle(self.number, cycles):
                raise ClientExit("grid manager restarted by the test", expected=True)
            if not self.gm.active_jobs() and not self.pending:
                return
            self.cycle()
            self.wait_quiet()
            cycles += 1
            self.gm.cycles += 1
            if self.gm.cycles > self.gm.max_cycles:
                raise SimulatorError("jobs not finished after %d poll cycles: %r"
                                     % (self.gm.max_cycles, self.gm.jobs))
            self.gm.now += POLL_INTERVAL
            self.gm.poll_hook(self)

    def recover(self):
        """Jobs with a batch name but no remote job id form unconfirmed
        batches; jobs with one are assumed submitted."""
        for job in self.gm.active_jobs():
            if job.batch_name is None:
                continue
            b = self.batches.get(job.batch_name)
            if b is None:
                b = Batch(job.batch_name, job.resource, job.app,
                          "submitted" if job.submitted else "unconfirmed")
                self.batches[b.name] = b
                if b.state == "submitted":
                    b.lease = 0          # renewed at once, like a fresh confirmation
            if not job.submitted:
                b.state = "unconfirmed"
            self.full_query_needed[job.resource] = True

    def ping_resources(self):
        resources = []
        for job in self.gm.active_jobs():
            if job.resource not in resources:
                resources.append(job.resource)
        for res in resources:
            self.pinged[res] = "pending"

            def done(result, res=res):
                self._two_tokens("BOINC_PING", result)
                self.pinged[res] = "up"
            self.request(res, "BOINC_PING", "", done)
        # no wait: the real client sends SUBMIT, SET_LEASE and QUERY before
        # the ping's result arrives (reference, "Seen running the real client")

    def cycle(self):
        self.join_batches()
        self.submit_open_batches()
        self.query_status()
        self.wait_quiet()
        self.fetch_done_jobs()
        self.abort_removed_jobs()
        self.renew_leases()

    def job_batch(self, job):
        return self.batches.get(job.batch_name) if job.batch_name else None

    def join_batches(self):
        """Idle jobs without a batch join the open batch of their (resource,
        app); its name is saved in the job queue right away."""
        for job in self.gm.active_jobs():
            if job.batch_name is not None or job.state != IDLE or job.removing:
                continue
            if job.resource not in self.pinged:
                self.ping_new_resource(job.resource)      # does not gate the job
            open_batch = next((b for b in self.batches.values() if b.state == "open"
                               and b.resource == job.resource and b.app == job.app), None)
            if open_batch is None:
                name = "condor#%s#%s#%d" % (self.gm.schedd, job.app, self.gm.batch_time())
                open_batch = Batch(name, job.resource, job.app, "open")
                self.batches[name] = open_batch
            job.batch_name = open_batch.name          # saved before the submit
            self.full_query_needed[job.resource] = True

    def ping_new_resource(self, res):
        if res in self.pinged:
            return
        self.pinged[res] = "pending"

        def done(result):
            self._two_tokens("BOINC_PING", result)
            self.pinged[res] = "up"
        self.request(res, "BOINC_PING", "", done)

    def batch_jobs(self, batch):
        return [j for j in self.gm.active_jobs() if j.batch_name == batch.name]

    def submit_open_batches(self):
        for b in list(self.batches.values()):
            if b.state == "open":
                self.submit_batch(b)

    def submit_batch(self, batch):
        jobs = self.batch_jobs(batch)
        if not jobs:
            del self.batches[batch.name]
            return
        order = self.gm.submit_order(self, jobs)
        parts = [client_escape(batch.name), client_escape(batch.app), str(len(order))]
        for job in order:
            parts.append(job.remote_name)                      # not escaped (client bug)
            parts.append(str(len(job.args)))
            parts += [client_escape(a) for a in job.args]
            parts.append(str(len(job.inputs)))
            for path in job.inputs:
                parts += [client_escape(path), client_escape(os.path.basename(path))]
        first = order[0]
        for attr in TRAILING_ATTRS:
            value = first.attrs.get(attr)
            # LookupString: a numeric job-ad value (+delay_bound = 1200) is
            # not a string and is sent as NULL; only "1200" is sent
            parts.append(client_escape(value) if isinstance(value, str) else "NULL")
        batch.state = "submitting"
        if self.gm.exit_before_submit(self.number, batch.name):
            raise ClientExit("grid manager died between saving %s and BOINC_SUBMIT" % batch.name,
                             expected=True)
        self.gm.submits.append((self.number, batch.name, [j.id for j in order]))

        def done(result):
            text = self._two_tokens("BOINC_SUBMIT", result)
            if text == "NULL":
                self._confirm(batch)
            else:
                self._fail_submit(batch, jobs, text)

        def timeout():
            self._fail_submit(batch, jobs, "BOINC_SUBMIT timed out")
        self.request(batch.resource, "BOINC_SUBMIT", " ".join(parts), done, timeout)

    def _confirm(self, batch):
        batch.state = "submitted"
        for job in self.batch_jobs(batch):
            job.submitted = True
        batch.lease = 0                 # lease set right after the submit
        batch.last_lease_attempt = None

    def _fail_submit(self, batch, jobs, reason):
        """Submit error or timeout: jobs held, their batch name cleared."""
        for job in jobs:
            if job.batch_name == batch.name and not job.terminal:
                job.hold(reason)
                job.batch_name = None
                job.submitted = False
        self.batches.pop(batch.name, None)

    # ---- status queries ---------------------------------------------------
    def query_status(self):
        by_resource = {}
        for job in self.gm.active_jobs():
            by_resource.setdefault(job.resource, [])
        for b in list(self.batches.values()):
            if b.state == "submitted" and not self.batch_jobs(b):
                del self.batches[b.name]        # its last job left held: never retired
                continue
            if b.state in ("submitted", "unconfirmed"):
                by_resource.setdefault(b.resource, []).append(b)
        for res, batches in by_resource.items():
            if self.query_in_flight.get(res):
                continue
            # StartBatchStatus: the full-query flag is cleared by every poll,
            # even one with nothing to list (so the first query naming a new
            # batch is, in practice, partial)
            full = self.full_query_needed.get(res, False)
            self.full_query_needed[res] = False
            if not batches:
                continue
            names = [b.name for b in batches]
            self.gm.order_query_batches(self, names)
            self.issue_query(res, names, full)

    def issue_query(self, res, names, full):
        min_mod_time = "0" if full else self.partial_time.get(res, "0")
        body = "%s %d %s" % (min_mod_time, len(names), " ".join(client_escape(n) for n in names))
        self.query_in_flight[res] = True
        self.gm.queries.append((self.number, min_mod_time, list(names)))

        def done(result):
            self.query_in_flight[res] = False
            self.query_result(res, names, full, result)

        def timeout():
            self.query_in_flight[res] = False
            self._hold_unconfirmed(res, "BOINC_QUERY_BATCHES timed out")
        self.request(res, "BOINC_QUERY_BATCHES", body.rstrip(), done, timeout)

    def _hold_unconfirmed(self, res, reason):
        for b in list(self.batches.values()):
            if b.resource == res and b.state == "unconfirmed":
                for job in self.batch_jobs(b):
                    job.hold(reason)

    def query_result(self, res, names, full, result):
        if not result:
            raise ClientExit("BOINC_QUERY_BATCHES result without tokens")
        if result[0] != "NULL":
            self.query_error(res, names, full, result[0])
            return
        if len(result) < 2:
            raise ClientExit("query result without server_time: %r" % (result,))
        server_time = result[1]
        toks = result[2:]
        pos = 0
        for name in names:
            if pos >= len(toks):
                break                           # missing groups: silently skipped
            n, pos = self._count(toks, pos)
            if pos + 2 * n > len(toks):
                raise ClientExit("query reply read past its end (count %d)" % n)
            pairs = [(toks[pos + 2 * i], toks[pos + 2 * i + 1]) for i in range(n)]
            pos += 2 * n
            batch = self.batches.get(name)
            if batch is None:
                continue
            if batch.state == "unconfirmed":
                # FinishBatchStatus: the first BatchMaybeSubmitted batch ends
                # the loop (a `break`) whether its group is empty (resubmit)
                # or not (confirmed; that group's statuses are dropped)
                if n == 0:
                    self.log("unconfirmed batch %s has 0 jobs: resubmit; rest not read" % name)
                    batch.state = "open"        # resubmitted under the same names
                    self.submit_batch(batch)
                else:
                    self._confirm(batch)
                    self.log("batch %s confirmed; rest of the reply not read" % name)
                break                           # the client's early stop
            for job_name, status in pairs:
                self.apply_status(batch, job_name, status)
            # a job of this batch not listed in a partial reply keeps its status
        else:
            if pos < len(toks):
                raise ClientExit("more query groups than batches: assertion failure")
        if not full:
            self.partial_time[res] = server_time

    @staticmethod
    def _count(toks, pos):
        try:
            return int(toks[pos]), pos + 1
        except ValueError:
            raise ClientExit("query group count %r is not a number" % toks[pos])

    @staticmethod
    def _proc_id(job_name):
        """The text after the last `#`, read as sscanf("%d.%d") does;
        None when there is no `#` or it does not parse."""
        if "#" not in job_name:
            return None
        m = re.match(r"\s*([-+]?\d+)\.\s*([-+]?\d+)", job_name.rsplit("#", 1)[1])
        return "%d.%d" % (int(m.group(1)), int(m.group(2))) if m else None

    def apply_status(self, batch, job_name, status):
        """NewBoincState on the job found through BaseJob::JobsByProcId:
        whichever job of the user has that cluster.proc, in this batch or
        any other (the batch the line came in is not looked at)."""
        key = self._proc_id(job_name)
        job = next((j for j in self.gm.active_jobs() if j.id == key), None)
        if job is None:
            return
        if job.batch_name != batch.name:
            self.gm.cross_batch_statuses.append((job.id, batch.name, job.batch_name, status))
        job.remote_status = status              # GridJobStatus in the job ad
        if job.removing:
            return                              # GM_CANCEL comes first; the abort clears it
        if status == "DONE":
            self.gm.done_seen.add(job.id)
        elif status == "ERROR":
            # GM_SUBMITTED: held, GridJobStatus = ERROR left in the ad (sticky)
            job.hold("Reason unknown, check the server" if job.batch_name
                     else "Unspecified gridmanager error")
            self.gm.error_holds.append((job.id, batch.name, job_name))
        elif status == "IN_PROGRESS" and job.state == IDLE:
            job.state = RUNNING

    def query_error(self, res, names, full, text):
        marker = "no batch named "
        if marker in text:
            missing = text.split(marker, 1)[1]
            batch = self.batches.get(missing)
            if batch is not None and missing in names:
                if batch.state == "unconfirmed":
                    batch.state = "open"
                    self.submit_batch(batch)
                else:
                    self.log("confirmed batch %s unknown to the server" % missing)
                rest = [n for n in names if n != missing]
                if rest:
                    self.issue_query(res, rest, full)
                return
            self.query_loops += 1
            if self.query_loops > 50:
                raise SimulatorError("query loop: %r matches no batch" % text)
            self.issue_query(res, names, full)      # identical query, at once
            return
        self.gm.query_errors.append(text)
        self._hold_unconfirmed(res, text)

    # ---- outputs, aborts, leases, retire ---------------------------------------
    def fetch_done_jobs(self):
        for job in self.gm.active_jobs():
            if job.remote_status == "DONE" and job.state != HELD and not job.removing \
                    and job.id not in self.fetching:
                self.fetch(job)

    def fetch_specs(self, job):
        if job.transfer_output_files is None:
            return "ALL 0"
        specs = list(job.transfer_output_files)
        out = job.output or "/dev/null"
        err = job.error or "/dev/null"
        if out != "/dev/null":
            specs.append((os.path.basename(out), out))
        if err != out:
            specs.append((os.path.basename(err), err))
        body = ["SOME", str(len(specs))]
        for src, dst in specs:
            body += [client_escape(src), client_escape(dst)]
        return " ".join(body)

    def fetch(self, job):
        self.fetching.add(job.id)
        stderr_path = job.error or "/dev/null"
        body = "%s %s %s %s" % (client_escape(job.remote_name), client_escape(job.iwd),
                                client_escape(stderr_path), self.fetch_specs(job))

        def done(result):
            self.fetching.discard(job.id)
            if result and result[0] == "NULL":
                if len(result) != 4:
                    raise ClientExit("FETCH_OUTPUT NULL result with %d tokens" % (len(result) + 1))
                job.exit_status = int(float(result[1]))
                self.leave_batch(job, COMPLETED)
            else:
                job.hold(result[0] if result else "fetch failed")

        def timeout():
            self.fetching.discard(job.id)
            job.hold("BOINC_FETCH_OUTPUT timed out")
        self.request(job.resource, "BOINC_FETCH_OUTPUT", body, done, timeout)

    def cancelled(self, job):
        """After the abort of a removed or user-held job (GM_CANCEL, then
        GM_CANCEL_COMMIT): GridJobStatus cleared; the job counts as done in
        its batch (the last one to leave retires it); a user-held job also
        loses its batch name, so a release makes it join a new batch."""
        job.removing = False
        job.remote_status = None
        if job.user_hold:
            job.user_hold = False
            batch = self.job_batch(job)
            job.hold("via condor_hold")
            job.batch_name = None
            job.submitted = False
            if batch is not None and not self.batch_jobs(batch):
                self.retire(batch)
        else:
            self.leave_batch(job, REMOVED)

    def leave_batch(self, job, state):
        """A job leaves its batch; the last one to leave retires it."""
        batch = self.job_batch(job)
        job.state = state
        if batch is None or self.batch_jobs(batch):
            return
        self.retire(batch)

    def retire(self, batch):
        batch.retiring = True
        self.batches.pop(batch.name, None)
        self.gm.retired.append(batch.name)

        def done(result):
            self._two_tokens("BOINC_RETIRE_BATCH", result)     # errors ignored
        self.request(batch.resource, "BOINC_RETIRE_BATCH", client_escape(batch.name), done)

    def abort_removed_jobs(self):
        for job in self.gm.active_jobs():
            if not job.removing or job.id in self.fetching:
                continue
            if not job.submitted:
                self.cancelled(job)
                continue
            self.fetching.add(job.id)

            def done(result, job=job):
                self._two_tokens("BOINC_ABORT_JOBS", result)
                self.fetching.discard(job.id)
                self.cancelled(job)

            def timeout(job=job):
                self.fetching.discard(job.id)
                self.cancelled(job)
            self.request(job.resource, "BOINC_ABORT_JOBS", client_escape(job.remote_name),
                         done, timeout)

    def renew_leases(self):
        now = self.gm.now
        for b in self.batches.values():
            if b.state != "submitted" or b.lease is None or b.lease_in_flight:
                continue
            if now < b.lease - LEASE_RENEW_BEFORE:
                continue
            if b.last_lease_attempt is not None and now - b.last_lease_attempt < LEASE_MIN_RETRY:
                continue
            b.last_lease_attempt = now
            b.lease_in_flight = True
            new_lease = now + LEASE_DURATION

            def done(result, b=b, new_lease=new_lease):
                b.lease_in_flight = False
                if self._two_tokens("BOINC_SET_LEASE", result) == "NULL":
                    b.lease = new_lease
                    self.gm.leases.append((b.name, new_lease))
                else:
                    self.log("lease of %s failed: %s" % (b.name, result[0]))

            def timeout(b=b):
                b.lease_in_flight = False
            self.request(b.resource, "BOINC_SET_LEASE",
                         "%s %d" % (client_escape(b.name), new_lease), done, timeout)


# ---------------------------------------------------------------------------
class GridManager:
    """The schedd's job queue plus the grid manager it keeps restarting.

    Hooks a test may set (all optional):
      env_for_process(n) -> extra environment for process n's GAHP
      on_gahp_started(proc) -> called right after the GAHP is spawned
      on_gahp_ready(proc) -> called after the start-up handshake
      on_request_accepted(proc, command, rid) -> after each `S` to a BOINC command
      poll_hook(proc) -> called after each poll cycle (move the emulator's clock)
      stop_process_at_cycle(n, cycle) -> True ends process n there (the GAHP
          sees EOF on stdin), as a grid-manager restart does; also usable
          as a start-of-cycle hook
      exit_before_submit(n, batch_name) -> True makes process n die after
          saving the batch name and before sending BOINC_SUBMIT
    """

    def __init__(self, journal, home, schedd="sim-schedd@127.0.0.1", seed=1,
                 response_timeout=RESPONSE_TIMEOUT, call_timeout=CALL_TIMEOUT,
                 results_poll_interval=POLL_INTERVAL, max_cycles=60, start_time=None):
        self.journal, self.home = str(journal), pathlib.Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "gahp_temp").mkdir(exist_ok=True)
        self.stderr_path = str(self.home / "gahp.stderr")
        self.schedd = schedd
        self.seed = seed
        self.response_timeout = response_timeout
        self.call_timeout = call_timeout
        self.results_poll_interval = results_poll_interval
        self.banner_safety_timeout = 120.0
        self.max_cycles = max_cycles
        self.now = int(start_time if start_time is not None else time.time())
        self.last_batch_time = 0
        self.jobs = []
        self.next_cluster = 1
        self.processes = []
        self.exits = []             # (process number, reason, expected)
        self.log, self.wire_log, self.results_log = [], [], []
        self.submits, self.queries, self.query_errors = [], [], []
        self.timeouts, self.leases, self.retired = [], [], []
        self.selects = []
        self.submit_orders = []
        self.max_in_flight = 0
        self.done_seen = set()
        self.error_holds = []           # (job, batch of the line, job name of the line)
        self.cross_batch_statuses = []  # (job, batch of the line, job's own batch, status)
        self.releases, self.reholds = [], []
        self.cycles = 0
        self.last_orders = {}
        self.env_for_process = lambda n: {}
        self.on_gahp_started = lambda proc: None
        self.on_gahp_ready = lambda proc: None
        self.on_request_accepted = lambda proc, command, rid: None
        self.poll_hook = lambda proc: None
        self.stop_process_at_cycle = lambda n, cycle: False
        self.exit_before_submit = lambda n, batch_name: False
        self.gave_up = None

    # ---- the job queue -------------------------------------------------------
    def submit_cluster(self, count, app, resource, iwd_root, inputs=None, args=None,
                       attrs=None, output=None, error=None, transfer_output_files=None,
                       expect=None):
        """Queue `count` jobs (procs 0..count-1).  Each per-proc parameter
        may be a function of the proc number; each job gets its own iwd."""
        cluster = self.next_cluster
        self.next_cluster += 1
        jobs = []

        def val(v, proc):
            return v(proc) if callable(v) else v
        for proc in range(count):
            iwd = pathlib.Path(iwd_root) / ("%d.%d" % (cluster, proc))
            iwd.mkdir(parents=True, exist_ok=True)
            job = Job(cluster, proc, app, resource, iwd,
                      args=val(args, proc) or (),
                      inputs=val(inputs, iwd) if inputs else (),
                      attrs=val(attrs, proc), output=val(output, proc),
                      error=val(error, proc),
                      transfer_output_files=val(transfer_output_files, proc),
                      expect=val(expect, iwd))
            jobs.append(job)
        self.jobs += jobs
        return jobs

    def active_jobs(self):
        return [j for j in self.jobs if not j.terminal]

    def remove(self, job):
        """condor_rm: one BOINC_ABORT_JOBS, then the job leaves the queue."""
        job.removing = True

    def hold_by_user(self, job):
        """condor_hold: one BOINC_ABORT_JOBS, then the job is held."""
        job.removing = job.user_hold = True

    def release(self, job):
        """condor_release: a new job object starts from the ad.  With
        GridJobStatus = ERROR still in it, the job is held again at once
        (GM_START -> GM_CLEAR_REQUEST -> GM_HOLD "Unspecified gridmanager
        error" without a batch name; GM_SUBMITTED -> GM_HOLD "Reason
        unknown, check the server" with one): the hold is sticky until
        admin_clear_status().  Otherwise the job goes back to idle and, if
        its batch name was cleared, joins a new batch."""
        if job.state != HELD:
            return
        self.releases.append(job.id)
        if job.remote_status == "ERROR":
            job.hold("Reason unknown, check the server" if job.batch_name
                     else "Unspecified gridmanager error")
            self.reholds.append(job.id)
            return
        job.state, job.hold_reason = IDLE, None
        if job.batch_name is None:
            job.submitted = False

    def admin_clear_status(self, job):
        """condor_qedit <job> GridJobStatus undefined (an administrator)."""
        job.remote_status = None

    def batch_time(self):
        t = max(self.now, self.last_batch_time + 1)
        self.last_batch_time = t
        return t

    def submit_order(self, proc, jobs):
        """The arbitrary order of a set of pointers: shuffled, and never the
        order the previous process used for the same batch."""
        order = list(jobs)
        key = tuple(sorted(j.id for j in jobs))
        for _ in range(20):
            proc.rng.shuffle(order)
            if len(order) < 2 or self.last_orders.get(key) != [j.id for j in order]:
                break
        self.last_orders[key] = [j.id for j in order]
        self.submit_orders.append([j.id for j in order])
        return order

    def order_query_batches(self, proc, names):
        proc.rng.shuffle(names)

    # ---- processes -----------------------------------------------------------
    @property
    def unexpected_exits(self):
        return [(n, r) for n, r, expected in self.exits if not expected]

    def run(self, max_processes=12):
        """Start grid-manager processes until every job is terminal; after
        max_processes, give up (gave_up says why: a crash loop)."""
        while self.active_jobs():
            if len(self.processes) >= max_processes:
                self.gave_up = ("still %d active jobs after %d processes"
                                % (len(self.active_jobs()), max_processes))
                return self
            proc = GridManagerProcess(self, len(self.processes) + 1)
            self.processes.append(proc)
            try:
                proc.run()
            except ClientExit as e:
                self.exits.append((proc.number, e.reason, e.expected))
            except SimulatorError as e:
                self.gave_up = str(e)       # a hang the real client would sit in
                return self
            finally:
                if proc.wire is not None:
                    proc.wire.close()
            self.now += 5       # the schedd starts the next grid manager a bit later
        return self
