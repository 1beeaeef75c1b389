"""The simulator's own rules, checked without a GAHP: reading and writing
(reference/htcondor-client.md, "Process and start-up" and "Lines,
escaping, timeouts"), and the real 9.0.19 client's status handling
("Seen running the real client")."""
import pytest

from gridmanager_sim import (Batch, GahpWire, GridManager, GridManagerProcess, HELD, IDLE,
                             RUNNING, client_escape)


def test_client_escapes_only_space_backslash_cr_lf():
    assert client_escape("a b\\c\rd\ne") == "a\\ b\\\\c\\\rd\\\ne"
    assert client_escape("tab\there\x01") == "tab\there\x01"     # raw, as the client sends


def test_banner_rules():
    banner = GahpWire._banner_text
    assert banner(b"noise $GahpVersion: 1.0.0 x\\ y $") == "$GahpVersion: 1.0.0 x y $"
    assert banner(b"no dollar at all") == ""
    assert len(banner(b"$" + b"x" * 500)) == 149


# ---- the real 9.0.19 client's status handling (reference, "Seen running
# the real client"; boincresource.cpp FinishBatchStatus, boincjob.cpp),
# checked on the simulator alone: no GAHP, results fed to query_result().
RES = ("https://project.example/", "/nonexistent/auth")


@pytest.fixture
def sim(tmp_path):
    gm = GridManager(tmp_path / "journal.db", tmp_path / "home")
    proc = GridManagerProcess(gm, 1)
    sent = []
    proc.request = lambda res, command, body, on_result, on_timeout=None: \
        sent.append((command, body))
    proc.sent = sent
    return gm, proc


def put_in_batch(proc, jobs, name, state="submitted"):
    b = Batch(name, RES, "uppercase", state)
    proc.batches[name] = b
    for j in jobs:
        j.batch_name = name
        j.submitted = state == "submitted"
    return b


def test_status_applies_by_cluster_proc_across_batches_and_error_is_sticky(sim, tmp_path):
    gm, proc = sim
    a, b = gm.submit_cluster(2, "uppercase", RES, tmp_path / "jobs")
    put_in_batch(proc, [a], "condor#s#uppercase#100")       # a: released into a new batch
    put_in_batch(proc, [b], "condor#s#uppercase#200")
    # the old batch's reply names a's cluster.proc: it reaches a, in its new batch
    proc.query_result(RES, ["condor#s#uppercase#200"], False,
                      ["NULL", "7", "2", "condor#s#uppercase#50#1.0", "ERROR",
                       "condor#s#uppercase#200#1.1", "IN_PROGRESS"])
    assert a.state == HELD and a.remote_status == "ERROR", a
    assert a.hold_reason == "Reason unknown, check the server"
    assert b.state == RUNNING
    assert gm.cross_batch_statuses == [("1.0", "condor#s#uppercase#200",
                                        "condor#s#uppercase#100", "ERROR")]
    # every release re-holds it until an administrator clears GridJobStatus
    for _ in range(3):
        gm.release(a)
        assert a.state == HELD, a
    assert gm.reholds == ["1.0"] * 3
    a.batch_name = None
    gm.release(a)
    assert a.state == HELD and a.hold_reason == "Unspecified gridmanager error"
    gm.admin_clear_status(a)
    gm.release(a)
    assert a.state == IDLE and a.hold_reason is None


def test_partial_reply_keeps_unlisted_statuses_and_min_mod_time_is_verbatim(sim, tmp_path):
    gm, proc = sim
    jobs = gm.submit_cluster(2, "uppercase", RES, tmp_path / "jobs")
    put_in_batch(proc, jobs, "condor#s#uppercase#100")
    names = ["condor#s#uppercase#100"]
    proc.query_result(RES, names, True, ["NULL", "5", "2", names[0] + "#1.0", "IN_PROGRESS",
                                         names[0] + "#1.1", "IN_PROGRESS"])
    assert proc.partial_time.get(RES) is None           # a full query does not update it
    proc.query_result(RES, names, False, ["NULL", "0012", "1", names[0] + "#1.1", "DONE"])
    assert [j.remote_status for j in jobs] == ["IN_PROGRESS", "DONE"]
    assert proc.partial_time[RES] == "0012"             # verbatim
    proc.issue_query(RES, names, False)
    assert proc.sent[-1] == ("BOINC_QUERY_BATCHES", "0012 1 " + names[0])
    proc.issue_query(RES, names, True)
    assert proc.sent[-1] == ("BOINC_QUERY_BATCHES", "0 1 " + names[0])


def test_reply_loop_stops_at_the_first_unconfirmed_batch(sim, tmp_path):
    """FinishBatchStatus breaks out of the loop at the first
    BatchMaybeSubmitted batch: confirmed (non-empty group, its statuses
    dropped) or resubmitted (empty group); later groups are not read."""
    gm, proc = sim
    x, y, z = gm.submit_cluster(3, "uppercase", RES, tmp_path / "jobs")
    put_in_batch(proc, [x], "B1")
    put_in_batch(proc, [y], "B2", "unconfirmed")
    put_in_batch(proc, [z], "B3")
    reply = ["NULL", "9", "1", "B1#1.0", "DONE", "1", "B2#1.1", "DONE", "1", "B3#1.2", "DONE"]
    proc.query_result(RES, ["B1", "B2", "B3"], False, reply)
    assert [j.remote_status for j in (x, y, z)] == ["DONE", None, None]
    assert proc.batches["B2"].state == "submitted"
    # an empty group of an unconfirmed batch: resubmitted, and the loop stops too
    y.remote_status, z.remote_status = None, None
    proc.batches["B2"].state = "unconfirmed"
    proc.query_result(RES, ["B2", "B3"], False, ["NULL", "10", "0", "1", "B3#1.2", "DONE"])
    assert z.remote_status is None
    assert [c for c, _ in proc.sent] == ["BOINC_SUBMIT"]
    assert proc.sent[0][1].startswith("B2 uppercase 1 B2#1.1 ")


def test_trailing_fields_only_from_string_attributes(sim, tmp_path):
    gm, proc = sim
    job, = gm.submit_cluster(1, "uppercase", RES, tmp_path / "jobs",
                             attrs={"rsc_fpops_est": "1e12", "delay_bound": 1200,
                                    "rsc_memory_bound": 2.5e9, "app_version_num": "2 x"})
    b = put_in_batch(proc, [job], "B", "open")
    proc.submit_batch(b)
    assert proc.sent[0][1].split(" ")[-7:] == ["1e12", "NULL", "NULL", "NULL", "NULL",
                                               "2\\", "x"]


def test_ping_does_not_gate_submit_or_query(sim, tmp_path):
    """The real client sent SUBMIT, SET_LEASE and QUERY before the PING's
    result: nothing waits for the ping."""
    gm, proc = sim
    gm.submit_cluster(2, "uppercase", RES, tmp_path / "jobs")
    proc.ping_resources()
    proc.join_batches()
    proc.submit_open_batches()
    proc.query_status()
    assert proc.pinged[RES] == "pending"
    assert [c for c, _ in proc.sent] == ["BOINC_PING", "BOINC_SUBMIT"]
    batch, = proc.batches.values()
    proc._confirm(batch)                # the SUBMIT's result, still before the ping's
    proc.query_status()
    proc.renew_leases()
    assert proc.pinged[RES] == "pending"
    assert [c for c, _ in proc.sent] == ["BOINC_PING", "BOINC_SUBMIT",
                                         "BOINC_QUERY_BATCHES", "BOINC_SET_LEASE"]
