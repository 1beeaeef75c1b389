"""submit_client - a GAHP session the way HTCondor runs one (prefix, async
mode, a selected project), for the suites that submit through boinc_gahp.
The fixtures built on it (emulator, journal, make_client, client, inputs)
are in tests/conftest.py."""
import itertools

from gahp_client import Gahp, escape, split_tokens  # noqa: F401


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
