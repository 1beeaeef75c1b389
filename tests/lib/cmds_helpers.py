"""Helpers for the end-to-end tests of BOINC_QUERY_BATCHES,
BOINC_FETCH_OUTPUT, BOINC_ABORT_JOBS, BOINC_RETIRE_BATCH and
BOINC_SET_LEASE: the real boinc_gahp binary (over pipes, via gahp_client)
against the real BOINC project emulator on 127.0.0.1 (via emu).

Jobs are created by talking to the emulator directly over HTTP
(create_batch, upload_files, submit_batch, exactly as a BOINC client
library would), so these tests do not depend on BOINC_SUBMIT.
"""
import emu
from gahp_client import Gahp, Requests, escape, split_tokens  # noqa: F401


class Emu(emu.Emulator):
    """One boinc_emu process in its own state directory, started at once,
    plus what these tests need on top of the shared helper: jobs with
    names of our choosing, and state look-ups by name."""

    def __init__(self, state_dir, config=None, php_limits=None):
        super().__init__(state_dir, hosts=2, config=config, php_limits=php_limits)
        self.start()
        self.auth = self.authenticator

    def job_state(self, name):
        j = self.job(name)
        if j is None:
            raise KeyError(name)
        return j

    def batch_state(self, name):
        return [b for b in self.state()["batches"] if b["name"] == name]

    def submit(self, batch, app, jobs):
        """create_batch, query_files + upload_files, submit_batch, straight
        to the emulator (a real BOINC server's RPCs, not BOINC_SUBMIT).
        jobs: list of (name, [input bytes...], command_line or None).
        Returns the server's batch id."""
        h = emu
        r = self.rpc(h.xml_create_batch(self.auth, batch, app))
        batch_id = h.tag_value(r.body, "batch_id")
        assert batch_id is not None, r
        batch_id = int(batch_id)
        flat = [data for _, inputs, _ in jobs for data in inputs]
        phys = h.stage_files(self, self.auth, batch_id, flat) if flat else []
        specs, k = [], 0
        for name, inputs, cmdline in jobs:
            specs.append((name, phys[k:k + len(inputs)], cmdline))
            k += len(inputs)
        r = self.rpc(h.xml_submit_batch(self.auth, batch_id, app, specs))
        assert h.tag_value(r.body, "batch_id") is not None, r
        return batch_id


class Session(Requests):
    """A boinc_gahp with the emulator's project selected; call() runs one
    async command and returns the unescaped tokens of its result (without
    the id)."""

    def __init__(self, gahp, emu):
        super().__init__(gahp)
        self.emu = emu
        self.select(emu.url, emu.auth)

    # HTCondor's result shapes
    def query(self, min_mod_time, *batches):
        return self.call("BOINC_QUERY_BATCHES", min_mod_time, len(batches), *batches)


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
