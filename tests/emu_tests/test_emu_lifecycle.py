"""Server-side job life cycle (seed 001): replication and quorum, a
disagreeing host, deadlines (no_reply), too many errors, detach, slow hosts,
mod_time filtering, and the apps really running."""

import emu
from emu import tag_value, xml_query_batch2, xml_simple

SS_UNSENT, SS_IN_PROGRESS, SS_OVER = 2, 4, 5
O_SUCCESS, O_CLIENT_ERROR, O_NO_REPLY, O_DIDNT_NEED, O_DETACHED = 1, 3, 4, 5, 7
V_VALID, V_INVALID, V_NO_CHECK = 1, 2, 3


def statuses(e, batch):
    return dict(emu.job_statuses(e.rpc(xml_query_batch2(e.authenticator, [batch])).body))


def test_uppercase_runs_for_real(e):
    bid, jobs = emu.submit(e, e.authenticator, "up", "uppercase", [[b"abc xyz\n"]])
    assert statuses(e, "up") == {jobs[0]: "UNSENT"}
    e.advance(0)        # one round of passes: the job is sent and the app runs
    assert statuses(e, "up") == {jobs[0]: "IN_PROGRESS"}
    j = e.job(jobs[0])
    assert j["instances"][0]["server_state"] == SS_IN_PROGRESS
    r = e.advance(1)
    assert r["unfinished_jobs"] == 0
    assert statuses(e, "up") == {jobs[0]: "DONE"}
    out = e.get_output(cmd="workunit_file", auth_str=e.authenticator, wu_name=jobs[0], file_num=0)
    assert out.body == b"ABC XYZ\n"
    # worker slots are emptied after each run (only stderr.txt is kept)
    left = [p.name for p in (e.state_dir / "slots").rglob("*") if p.is_file()]
    assert set(left) <= {"stderr.txt"}


def test_quorum2_with_disagreeing_host(e):
    bid, jobs = emu.submit(e, e.authenticator, "q2", "quorum2", [[b"quorum input\n"]])
    e.behaviour(jobs[0], "wrong", instance=1)
    e.run()
    j = e.job(jobs[0])
    assert j["status"] == "DONE" and j["error_mask"] == 0
    inst = j["instances"]
    assert len(inst) == 3                 # the disagreement asked for a third
    assert len({i["host"] for i in inst}) == 3
    by_seq = {int(i["name"].rsplit("_", 1)[1]): i for i in inst}
    assert by_seq[1]["validate_state"] == V_INVALID
    assert by_seq[0]["validate_state"] == V_VALID and by_seq[2]["validate_state"] == V_VALID
    assert j["canonical_resultid"] in (by_seq[0]["id"], by_seq[2]["id"])
    out = e.get_output(cmd="workunit_file", auth_str=e.authenticator, wu_name=jobs[0], file_num=0)
    assert out.body == b"QUORUM INPUT\n"


def test_quorum2_all_agree(e):
    bid, jobs = emu.submit(e, e.authenticator, "q2b", "quorum2", [[b"x\n"]])
    e.run()
    j = e.job(jobs[0])
    assert j["status"] == "DONE" and len(j["instances"]) == 2
    assert all(i["validate_state"] == V_VALID for i in j["instances"])


def test_deadline_no_reply_then_retry(e):
    bid, jobs = emu.submit(e, e.authenticator, "nr", "uppercase", [[b"late\n"]])
    e.behaviour(jobs[0], "no_reply", instance=0)
    e.advance(10)
    assert statuses(e, "nr") == {jobs[0]: "IN_PROGRESS"}
    e.advance(600)       # delay_bound of uppercase
    j = e.job(jobs[0])
    first = j["instances"][0]
    assert (first["server_state"], first["outcome"]) == (SS_OVER, O_NO_REPLY)
    e.run()
    j = e.job(jobs[0])
    assert j["status"] == "DONE" and len(j["instances"]) == 2


def test_no_reply_everywhere_gives_too_many_total(e):
    bid, jobs = emu.submit(e, e.authenticator, "nr2", "uppercase", [[b"late\n"]], delay_bound=100)
    e.behaviour(jobs[0], "no_reply")
    e.run(10000)
    j = e.job(jobs[0])
    assert j["status"] == "ERROR" and j["error_mask"] & 8
    assert [i["outcome"] for i in j["instances"]] == [O_NO_REPLY, O_NO_REPLY]


def test_too_many_errors_crash(e):
    bid, jobs = emu.submit(e, e.authenticator, "cr", "uppercase", [[b"a\n"], [b"b\n"]])
    e.behaviour(jobs[0], "crash")
    e.behaviour(jobs[1], "crash", instance=0)
    e.run()
    j0, j1 = e.job(jobs[0]), e.job(jobs[1])
    assert j0["status"] == "ERROR" and j0["error_mask"] == 2 | 8
    assert [i["outcome"] for i in j0["instances"]] == [O_CLIENT_ERROR, O_CLIENT_ERROR]
    assert j0["instances"][0]["exit_status"] == 1
    assert j1["status"] == "DONE" and len(j1["instances"]) == 2
    e.set_quirks("php-warnings")     # a server with query_completed_job fixed
    r = e.rpc(xml_simple("query_completed_job", e.authenticator, job_name=jobs[0]))
    assert "simulated crash" in r.text


def test_default_behaviour_detach_and_slow(e):
    e.default_behaviour("detach")
    bid, jobs = emu.submit(e, e.authenticator, "dt", "uppercase", [[b"d\n"]])
    e.run(100)
    j = e.job(jobs[0])
    assert [i["outcome"] for i in j["instances"]] == [O_DETACHED, O_DETACHED]
    assert j["status"] == "ERROR" and j["error_mask"] == 8
    e.default_behaviour("slow")
    bid, jobs = emu.submit(e, e.authenticator, "sl", "uppercase", [[b"s\n"]])
    t0 = e.time()
    e.advance(200)
    assert statuses(e, "sl") == {jobs[0]: "IN_PROGRESS"}
    e.advance(150)                         # delay_bound/2 = 300 s after sending
    assert statuses(e, "sl") == {jobs[0]: "DONE"}
    assert e.time() == t0 + 350


def test_min_mod_time_second_resolution(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "mm", "uppercase", [[b"1"], [b"2"], [b"3"]])
    e.behaviour(jobs[1], "no_reply")
    e.run(5)
    st = statuses(e, "mm")
    assert st[jobs[0]] == "DONE" and st[jobs[1]] == "IN_PROGRESS"
    server_time = float(tag_value(e.rpc(xml_query_batch2(a, ["mm"])).body, "server_time"))
    e.advance(3)
    e.rpc(xml_simple("abort_jobs", a, job_name=jobs[2]))    # already DONE: mask bit only
    e.rpc(xml_simple("abort_jobs", a, job_name=jobs[1]))
    r = e.rpc(xml_query_batch2(a, ["mm"], min_mod_time=server_time))
    assert [n for n, s in emu.job_statuses(r.body)] == [jobs[1], jobs[2]]
    assert dict(emu.job_statuses(r.body))[jobs[1]] == "ERROR"


def test_abort_while_running_is_error_at_once(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "ar", "uppercase", [[b"1"]])
    e.behaviour(jobs[0], "slow")
    e.advance(1)
    assert statuses(e, "ar") == {jobs[0]: "IN_PROGRESS"}
    e.rpc(xml_simple("abort_jobs", a, job_name=jobs[0]))
    assert statuses(e, "ar") == {jobs[0]: "ERROR"}
    e.advance(1000)
    j = e.job(jobs[0])
    assert j["status"] == "ERROR"
    assert [b["state"] for b in e.state()["batches"]] == [2]      # complete
    # the host still reported a success: not checked, not validated for
    # ever (an INIT success of an errored job made the validator and the
    # transitioner cycle with the database lock held)
    inst = j["instances"][0]
    assert inst["outcome"] == O_SUCCESS and inst["validate_state"] == V_NO_CHECK


def test_failer_exit_code_and_twoinout(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "fl", "failer", [[b"in"], [b"in2"]], cmdlines={1: "--exit 0"})
    e.run()
    assert statuses(e, "fl") == {jobs[0]: "DONE", jobs[1]: "DONE"}
    bid, jobs = emu.submit(e, a, "ti", "twoinout", [[b"1", b"2"]])
    e.run()
    assert e.get_output(cmd="workunit_file", auth_str=a, wu_name=jobs[0], file_num=0).body == b"3\n"


def test_couldnt_send_with_too_few_hosts(emu_factory):
    e = emu_factory(hosts=1)
    bid, jobs = emu.submit(e, e.authenticator, "cs", "quorum2", [[b"needs two hosts\n"]])
    e.run()
    assert e.job(jobs[0])["status"] == "ERROR"      # at once, while instance 0 runs
    e.advance(10)
    j = e.job(jobs[0])
    assert j["status"] == "ERROR" and j["error_mask"] & 1
    assert sorted(i["outcome"] for i in j["instances"]) == [O_SUCCESS, 2]
