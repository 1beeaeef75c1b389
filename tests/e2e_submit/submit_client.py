"""submit_client - shared by the submit and crash suites: loads the
emulator helper (tests/emu_tests/emu.py) and drives a GAHP session the way
HTCondor does (prefix, async mode, a selected project)."""
import importlib.util
import itertools
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e_core"))

from gahp_client import Gahp, escape, split_tokens  # noqa: E402,F401


def _load_emu():
    spec = importlib.util.spec_from_file_location("emu", HERE.parent / "emu_tests" / "emu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


emu_mod = _load_emu()


class Client:
    """A GAHP session the way HTCondor runs one: prefix, async mode, a
    selected project; submit() builds a BOINC_SUBMIT line from Python data."""

    def __init__(self, gahp, emulator, auth=None):
        self.gahp = gahp
        self.emu = emulator
        self.ids = itertools.count(1)
        self.pending = {}
        gahp.set_prefix("GAHP:")
        assert gahp.command("ASYNC_MODE_ON") == "S"
        assert gahp.command("BOINC_SELECT_PROJECT %s %s" % (
            escape(emulator.url), escape(auth or emulator.authenticator))) == "S"

    def line(self, command, *tokens):
        """(request id, request line) of a command, not sent yet."""
        rid = next(self.ids)
        return rid, " ".join([command, str(rid)] + [escape(str(t)) for t in tokens])

    def send(self, line):
        """Send a built request line; it must be accepted."""
        assert self.gahp.command(line) == "S", line

    def start(self, command, *tokens):
        rid, line = self.line(command, *tokens)
        self.send(line)
        return rid

    def submit_line(self, batch, app, jobs, params=None):
        """(request id, BOINC_SUBMIT line); jobs: list of (name, [args],
        [(src_path, dst_name)])."""
        toks = [batch, app, len(jobs)]
        for name, args, inputs in jobs:
            toks += [name, len(args)] + list(args) + [len(inputs)]
            for src, dst in inputs:
                toks += [src, dst]
        if params is not None:
            toks += list(params)
        return self.line("BOINC_SUBMIT", *toks)

    def submit(self, batch, app, jobs, params=None, start=True):
        """jobs: list of (name, [args], [(src_path, dst_name)])."""
        rid, line = self.submit_line(batch, app, jobs, params)
        self.send(line)
        return rid

    def wait(self, rid, timeout=120):
        """Result tokens (after the id) of request rid."""
        while rid not in self.pending:
            for line in self.gahp.wait_results(1, timeout=timeout):
                toks = split_tokens(line)
                self.pending[int(toks[0])] = toks[1:]
        return self.pending.pop(rid)

    def call(self, command, *tokens, timeout=120):
        return self.wait(self.start(command, *tokens), timeout)


TEST_CLOCK = {"BOINC_GAHP_TEST_TIME_SCALE": "0.01"}
REAL_CLOCK = {"BOINC_GAHP_TEST_TIME_SCALE": "1"}


# ---- fixtures shared by the suites that import this module into their conftest ----

@pytest.fixture
def emulator(tmp_path):
    e = emu_mod.Emulator(tmp_path / "emu", hosts=2)
    e.start()
    yield e
    e.stop()


@pytest.fixture
def journal(tmp_path):
    return str(tmp_path / "journal.db")


@pytest.fixture
def make_client(journal, emulator):
    started = []

    def make(args=("--retry-budget", "5"), env=None, path=None, auth=None, emu=None):
        # The test clock: settle pauses and retry back-off at 1/100 of their
        # design (doc/testing.md); a test about real timing passes "1".
        g = Gahp(path or journal, args=list(args), env=dict(TEST_CLOCK, **(env or {})))
        started.append(g)
        return Client(g, emu or emulator, auth=auth)

    yield make
    for g in started:
        g.kill()


@pytest.fixture
def inputs(tmp_path):
    """Factory: inputs(name, content) writes a local input file, returns its path."""
    d = tmp_path / "in put"
    d.mkdir()

    def make(name, content):
        p = d / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        return str(p)

    return make
