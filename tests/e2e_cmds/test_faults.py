"""Every RPC of the five commands under every kind of server fault the
emulator injects: the result is always exactly one error token naming the
step, a fetch writes nothing, and once the fault is gone the same command
succeeds."""
import os

import pytest

from cmds_helpers import parse_query

KINDS = ["http500", "malformed", "truncate", "html_error", "drop"]


def _command(s, rpc, iwd):
    if rpc == "query_batch2":
        return s.query("0", "t")
    if rpc in ("query_completed_job", "get_templates"):
        return s.fetch("t#1", str(iwd), "err", "ALL")
    if rpc == "retire_batch":
        return s.call("BOINC_RETIRE_BATCH", "t")
    if rpc == "abort_jobs":
        return s.call("BOINC_ABORT_JOBS", "t#1")
    return s.call("BOINC_SET_LEASE", "t", 1900000000)


@pytest.mark.parametrize("rpc", ["query_batch2", "query_completed_job", "get_templates",
                                 "abort_jobs", "retire_batch", "set_expire_time"])
def test_persistent_faults_give_one_error_token(make_session, emu, iwd, rpc):
    s = make_session(emu, args=("--retry-budget", "1"))
    emu.submit("t", "twoinout", [("t#1", [b"1 2 3\n", b"10 20\n"], None)])
    emu.run()
    for kind in KINDS:
        emu.fault(rpc, kind, count=1000)
        toks = _command(s, rpc, iwd)
        emu.control("clear_faults", "POST")
        assert len(toks) == 1, (kind, toks)
        assert toks[0].startswith(rpc + " failed: "), (kind, toks)
        assert os.listdir(str(iwd)) == [], kind
    toks = _command(s, rpc, iwd)
    assert toks[0] == "NULL", toks
    if rpc == "query_batch2":
        assert parse_query(toks, 1)[1] == [{"t#1": "DONE"}]
    if rpc in ("query_completed_job", "get_templates"):
        assert (iwd / "sum").read_text() == "36\n"
