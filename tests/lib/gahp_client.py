"""gahp_client - a small GAHP client for tests: runs the real boinc_gahp
binary over pipes and speaks the protocol the way HTCondor does.

Part of the shared test library (tests/lib, on pytest's path through
pytest.ini): ``from gahp_client import Gahp, escape, split_tokens, gahp_env``.
"""
import itertools
import os
import queue
import re
import subprocess
import threading
import time

DEAD_PROXY = "http://127.0.0.1:9"

# The test clock (doc/testing.md): the server's deliberate pauses (settle
# pauses, retry back-off) at 1/100 of their design.  A test whose server
# really is still working on a lost request passes REAL_CLOCK.
TEST_CLOCK = {"BOINC_GAHP_TEST_TIME_SCALE": "0.01"}
REAL_CLOCK = {"BOINC_GAHP_TEST_TIME_SCALE": "1"}

# Timeout of a wait on work that grows with the test's size (10,000 pings,
# a 10 MB line, a 100,000-job reply): such a wait only has to catch a hang,
# never a busy machine (a sanitizer build under load is many times slower).
HANG_TIMEOUT = 3600

# Settings every server started through gahp_env() gets unless the caller's
# environment or the test itself names them.  tests/conftest.py puts
# TEST_CLOCK here, so every pytest suite runs on the test clock; scripts that
# import this module (the demo, the benchmarks) start with none: real time.
DEFAULTS = {}


def gahp_binary():
    """Path of the server under test ($BOINC_GAHP, else build/boinc_gahp)."""
    env = os.environ.get("BOINC_GAHP")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "build", "boinc_gahp")


def gahp_env(extra=None):
    """Environment with every proxy pointing at a dead loopback port."""
    # Settings of the machine the tests run on must not leak in: drop the
    # caller's BOINC_GAHP_* settings (test-only hooks stay) and name an empty configuration file,
    # so neither ~/.config/boinc_gahp nor /etc/boinc_gahp is read.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BOINC_GAHP_") or k.startswith("BOINC_GAHP_TEST_")}
    env["BOINC_GAHP_CONFIG"] = "/dev/null"
    for k, v in DEFAULTS.items():
        env.setdefault(k, v)
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env[k] = DEAD_PROXY
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1"
    if extra:
        env.update(extra)
    return env


# What a sanitizer build prints when it finds something (ASan, LeakSanitizer,
# UBSan, ThreadSanitizer).  Any of these in the server's stderr fails the test.
SANITIZER_REPORT = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|"
                              r"WARNING: ThreadSanitizer|ThreadSanitizer: reported|"
                              r"runtime error: ")


def check_sanitizer_report(stderr_path, offset=0):
    """Fail when the server's stderr (from offset) holds a sanitizer report."""
    try:
        with open(stderr_path, "rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return
    m = SANITIZER_REPORT.search(text)
    if m:
        start = max(0, m.start() - 200)
        raise AssertionError("sanitizer report in %s:\n%s" % (stderr_path,
                                                             text[start:start + 4000]))


def escape(s):
    """GAHP-escape one argument (space, backslash, CR, LF)."""
    if isinstance(s, bytes):
        out = bytearray()
        for b in s:
            if b in b" \\\r\n":
                out += b"\\"
            out.append(b)
        return bytes(out)
    out = []
    for ch in s:
        if ch in " \\\r\n":
            out.append("\\")
        out.append(ch)
    return "".join(out)


def split_tokens(line):
    """Split a result line into unescaped tokens, as HTCondor does."""
    tokens, cur, i = [], [], 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            cur.append(line[i + 1])
            i += 2
            continue
        if ch == " ":
            tokens.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    tokens.append("".join(cur))
    return tokens


class Gahp:
    """One boinc_gahp process.  Lines are read by a thread into a queue;
    `prefix` is stripped from lines that carry it (after RESPONSE_PREFIX)."""

    # RESULTS polling interval of wait_results (without async mode).
    poll_interval = 0.05
    # After enable_async(): wait_results sleeps until the server's R line,
    # as HTCondor does, instead of polling (benches: no poll rounding).
    async_mode = False

    BANNER_RE = re.compile(r"^\$GahpVersion: \d+\.\d+\.\d+ [A-Z][a-z]{2} \d{1,2} \d{4} .+ \$$")

    def __init__(self, journal, args=(), env=None, stderr_path=None, read_banner=True,
                 preexec_fn=None):
        self.journal = journal
        self.stderr_path = stderr_path or (journal + ".stderr")
        self._stderr = open(self.stderr_path, "ab")
        self._stderr_start = self._stderr.tell()
        cmd = [gahp_binary(), "--journal", journal] + list(args)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=gahp_env(env),
                                     preexec_fn=preexec_fn)
        self.prefix = ""
        self.r_count = 0
        self._lines = queue.Queue()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self.banner = self.read_raw(timeout=30) if read_banner else None

    def _read_loop(self):
        buf = b""
        start = scan = 0
        out = self.proc.stdout
        while True:
            chunk = out.read1(1 << 16)
            if not chunk:
                break
            buf += chunk
            while True:
                idx = buf.find(b"\n", scan)
                if idx < 0:
                    scan = len(buf)
                    break
                # a result line may hold "\<LF>": only an unescaped LF ends it
                k, nb = idx - 1, 0
                while k >= start and buf[k] == 0x5C:
                    nb += 1
                    k -= 1
                if nb % 2 == 1:
                    scan = idx + 1
                    continue
                self._lines.put(buf[start:idx].decode("utf-8", "surrogateescape"))
                start = scan = idx + 1
            buf = buf[start:]
            scan -= start
            start = 0
        self._lines.put(None)

    # ---- raw I/O -------------------------------------------------------
    def send(self, line):
        data = line if isinstance(line, bytes) else line.encode("utf-8", "surrogateescape")
        if not data.endswith(b"\n"):
            data += b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_raw(self, timeout=30):
        """Next line, exactly as written; None at EOF."""
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no line from boinc_gahp within %ss" % timeout)

    def read_line(self, timeout=30):
        """Next line without the prefix, skipping (and counting) R lines."""
        while True:
            line = self.read_raw(timeout)
            if line is None:
                return None
            if self.prefix:
                assert line.startswith(self.prefix), "line without prefix: %r" % line
                line = line[len(self.prefix):]
            if line == "R":
                self.r_count += 1
                continue
            return line

    def command(self, line, timeout=30):
        """Send a command and return its (first) return line."""
        self.send(line)
        return self.read_line(timeout)

    # ---- protocol helpers ----------------------------------------------
    def set_prefix(self, prefix):
        assert self.command("RESPONSE_PREFIX " + escape(prefix)) == "S"
        self.prefix = prefix

    def results(self, timeout=30):
        """RESULTS once: list of result lines."""
        head = self.command("RESULTS", timeout)
        assert head is not None and head.startswith("S "), head
        n = int(head[2:])
        return [self.read_line(timeout) for _ in range(n)]

    def wait_results(self, count, timeout=60):
        """Poll RESULTS until `count` result lines arrived; returns them."""
        got = []
        deadline = time.monotonic() + timeout
        seen_r = self.r_count
        while len(got) < count:
            got += self.results()
            if len(got) >= count:
                break
            if time.monotonic() > deadline:
                raise TimeoutError("only %d of %d results" % (len(got), count))
            if not self.async_mode:
                time.sleep(self.poll_interval)
            elif self.r_count == seen_r:
                self._await_r(max(0.0, deadline - time.monotonic()))
            seen_r = self.r_count
        return got

    def enable_async(self):
        """ASYNC_MODE_ON: the server writes R when a result is ready."""
        assert self.command("ASYNC_MODE_ON") == "S"
        self.async_mode = True

    def _await_r(self, timeout):
        """Block until the next line, which while no command is pending can
        only be an R line."""
        line = self.read_raw(timeout)
        assert line == self.prefix + "R", "expected R, got %r" % line
        self.r_count += 1

    def wait_r(self, timeout=30):
        """Block until an R line arrives (async mode)."""
        line = self.read_raw(timeout)
        expect = self.prefix + "R"
        assert line == expect, "expected R, got %r" % line
        return True

    def quit(self, timeout=30):
        assert self.command("QUIT") == "S"
        return self.wait(timeout)

    def close_stdin(self):
        self.proc.stdin.close()

    def wait(self, timeout=30):
        rc = self.proc.wait(timeout=timeout)
        self._stderr.close()
        check_sanitizer_report(self.stderr_path, self._stderr_start)
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self._stderr.closed:
            self._stderr.close()
            # A server that ended on its own may have reported (a killed one
            # cannot): the report fails the test at teardown.
            check_sanitizer_report(self.stderr_path, self._stderr_start)

    def stderr_text(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_stderr(self, text, timeout=60):
        """Wait until the server's log (this run's part) contains text."""
        deadline = time.monotonic() + timeout
        while True:
            with open(self.stderr_path, "rb") as f:
                f.seek(self._stderr_start)
                if text in f.read().decode("utf-8", "replace"):
                    return
            assert time.monotonic() < deadline, \
                "%r not in the server's log after %ss" % (text, timeout)
            time.sleep(0.05)

    def stop_cleanly(self, timeout=30):
        """Teardown: QUIT a server still running and require exit status 0
        and no sanitizer report (under ASan the leak checker runs only on a
        clean exit); a server already gone is only reaped."""
        if self.proc.poll() is not None:
            self.kill()
            return
        try:
            rc = self.quit(timeout=timeout)
        finally:
            self.kill()
        text = self.stderr_text()
        assert rc == 0, "boinc_gahp exit status %s:\n%s" % (rc, text[-4000:])
        assert "Sanitizer" not in text and "runtime error" not in text, text[-4000:]


class Requests:
    """Asynchronous requests over one Gahp, ids from 1: start() sends one
    command and checks its S, wait() returns the unescaped tokens of its
    result (without the id), call() does both."""

    def __init__(self, gahp):
        self.gahp = gahp
        self._ids = itertools.count(1)

    def select(self, url, auth):
        assert self.gahp.command("BOINC_SELECT_PROJECT %s %s"
                                 % (escape(url), escape(auth))) == "S"

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

    def fetch(self, job, iwd, stderr_file, mode, specs=(), timeout=120):
        flat = [x for pair in specs for x in pair]
        return self.call("BOINC_FETCH_OUTPUT", job, iwd, stderr_file, mode,
                         len(specs), *flat, timeout=timeout)
