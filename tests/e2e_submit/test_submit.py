"""BOINC_SUBMIT end to end: the real boinc_gahp against the real boinc_emu.

Invariants are checked on the emulator's side (its counters and state):
exactly one batch per name, each job once, each input uploaded at most
once, nothing created on the server when the submit is refused locally."""
import hashlib
import re

import pytest

from gahp_client import HANG_TIMEOUT, REAL_CLOCK


def phys(content, ext=".txt"):
    return hashlib.md5(content).hexdigest() + ext


def output_of(emulator, job, file_num=0):
    reply = emulator.get_output(cmd="workunit_file", auth_str=emulator.authenticator,
                                wu_name=job, file_num=file_num)
    assert reply.status == 200, reply
    return reply.body


def test_submit_runs_jobs_whose_outputs_match(client, emulator, inputs):
    a = inputs("a.txt", b"alpha input\n")
    b = inputs("b.txt", b"beta input\n")
    jobs = [("up#1.0", [], [(a, "in")]), ("up#1.1", ["--x"], [(b, "in")]),
            ("up#1.2", [], [(a, "in")])]
    assert client.call("BOINC_SUBMIT", "up", "uppercase", 3,
                       *sum([[n, len(ar)] + ar + [len(i)] + [x for p in i for x in p]
                             for n, ar, i in jobs], [])) == ["NULL"]
    c = emulator.counters()
    assert c["batches_by_name"] == {"up": 1}
    assert c["jobs_by_name"] == {"up#1.0": 1, "up#1.1": 1, "up#1.2": 1}
    # a.txt is used by two jobs: uploaded once
    assert c["uploads_by_name"] == {phys(b"alpha input\n"): 1, phys(b"beta input\n"): 1}
    assert c["rpc"]["create_batch"] == 1 and c["rpc"]["submit_batch"] == 1
    emulator.run(3600)
    assert output_of(emulator, "up#1.0") == b"ALPHA INPUT\n"
    assert output_of(emulator, "up#1.1") == b"BETA INPUT\n"


def test_result_tokens_and_journal_state(client, emulator, inputs, journal):
    import sqlite3
    a = inputs("one.dat", b"1")
    rid = client.submit("jb", "uppercase", [("jb#0", [], [(a, "in")])])
    assert client.wait(rid) == ["NULL"]
    db = sqlite3.connect(journal)
    step, sid, njobs = db.execute(
        "SELECT step, server_batch_id, njobs FROM audit_batches WHERE name='jb'").fetchone()
    assert step == "submitted" and sid > 0 and njobs == 1
    assert [r[0] for r in db.execute("SELECT name FROM jobs")] == ["jb#0"]
    files = db.execute("SELECT phys_name, state FROM batch_files").fetchall()
    assert files == [(phys(b"1", ".dat"), "uploaded")]
    assert db.execute("SELECT count(*) FROM file_md5_cache").fetchone()[0] == 1


def test_shared_inputs_are_uploaded_once_across_batches(make_client, emulator, inputs):
    shared = inputs("shared.bin", b"S" * 100000)
    own = [inputs("own%d.txt" % i, b"own %d" % i) for i in range(5)]
    first = make_client()
    jobs = [("s1#%d" % i, [], [(own[i], "in")]) for i in range(5)]
    jobs += [("s1#x%d" % i, [], [(shared, "in")]) for i in range(3)]
    assert first.wait(first.submit("s1", "uppercase", jobs)) == ["NULL"]
    before = emulator.counters()
    # Same content again (other job names) in a new batch: nothing uploaded,
    # nothing read for hashing (the journal's MD5 cache answers).
    jobs2 = [("s2#%d" % i, [], [(own[i], "in")]) for i in range(5)]
    jobs2 += [("s2#x", [], [(shared, "in")])]
    assert first.wait(first.submit("s2", "uppercase", jobs2)) == ["NULL"]
    after = emulator.counters()
    assert after["rpc"]["upload_files"] == before["rpc"]["upload_files"]
    assert after["bytes_uploaded"] == before["bytes_uploaded"]
    assert all(n == 1 for n in after["uploads_by_name"].values())
    assert "submit s2: 6 inputs, 0 files read for hashing" in first.gahp.stderr_text()


def test_same_content_at_two_paths_is_uploaded_once(client, emulator, inputs):
    p1 = inputs("x1.txt", b"same")
    p2 = inputs("x2.txt", b"same")
    jobs = [("dup#0", [], [(p1, "in")]), ("dup#1", [], [(p2, "in")])]
    assert client.wait(client.submit("dup", "uppercase", jobs)) == ["NULL"]
    assert emulator.counters()["uploads_by_name"] == {phys(b"same"): 1}


def test_missing_local_input_fails_before_anything_on_the_server(client, emulator, inputs, tmp_path):
    good = inputs("good.txt", b"g")
    missing = str(tmp_path / "no such dir" / "gone.txt")
    res = client.wait(client.submit("miss", "uppercase",
                                    [("m#0", [], [(good, "in")]), ("m#1", [], [(missing, "in")])]))
    assert len(res) == 1 and res[0] != "NULL"
    assert missing in res[0] and "No such file" in res[0]
    c = emulator.counters()
    assert c["rpc"]["create_batch"] == 0 and c["rpc"]["upload_files"] == 0


def test_unknown_app_is_reported_with_the_servers_message(client, emulator, inputs):
    a = inputs("a.txt", b"a")
    res = client.wait(client.submit("noapp", "no_such_app", [("na#0", [], [(a, "in")])]))
    assert len(res) == 1 and "app not found: no_such_app" in res[0]
    assert emulator.counters()["rpc"]["create_batch"] == 0


def test_wrong_number_of_inputs_is_refused_before_create(client, emulator, inputs):
    a = inputs("a.txt", b"a")
    b = inputs("b.txt", b"b")
    res = client.wait(client.submit("twoin", "uppercase", [("t#0", [], [(a, "in"), (b, "in2")])]))
    assert len(res) == 1 and "needs 1" in res[0]
    assert emulator.counters()["rpc"]["create_batch"] == 0


def test_args_a_server_cannot_carry_are_refused_before_create(client, emulator, inputs):
    """White space, quotes, empty arguments and line breaks cannot travel
    through a real server's create_work: refused, naming job and argument,
    before create_batch (doc/commands.md "Job arguments")."""
    a = inputs("a.txt", b"a")
    for n, bad in enumerate(["two words", "", "it's", 'say "hi"', "line\nbreak"]):
        res = client.wait(client.submit("mangle%d" % n, "uppercase",
                                        [("mg%d#0" % n, ["ok", bad], [(a, "in")])]))
        assert len(res) == 1 and "argument 2 of job mg%d#0" % n in res[0], res
    # a job name is a word of the same create_work line
    res = client.wait(client.submit("mangle-name", "uppercase", [("mg name", [], [(a, "in")])]))
    assert len(res) == 1 and "job name mg name" in res[0], res
    c = emulator.counters()
    assert c["rpc"]["create_batch"] == 0 and c["rpc"]["submit_batch"] == 0


def test_an_argument_that_is_not_utf8_is_refused_before_create(client, emulator, inputs):
    """submit_batch's request is XML: one byte that is not UTF-8 (a lone
    \\377, an overlong form, a surrogate) makes a real server refuse the
    whole batch ("can't parse request message").  Refused before
    create_batch, naming the job and the argument (its bad bytes shown as
    octal); UTF-8 text passes (doc/commands.md "Arguments")."""
    a = inputs("a.txt", b"a")
    # the line is written with surrogateescape: "\udcff" is the byte 0xff
    for n, (bad, shown) in enumerate([("h\udcffllo", "h\\377llo"),
                                      ("\udcc0\udcaf", "\\300\\257"),
                                      ("\udced\udca0\udc80", "\\355\\240\\200"),
                                      ("\udcf4\udc90\udc80\udc80", "\\364\\220\\200\\200")]):
        res = client.wait(client.submit("u8bad%d" % n, "uppercase",
                                        [("u8#%d" % n, ["h\u00e9llo", bad], [(a, "in")])]))
        assert res == ["submit refused: argument 2 of job u8#%d (%s) is not valid UTF-8 "
                       "(a BOINC server's XML parser would refuse the whole batch's "
                       "request)" % (n, shown)], res
    c = emulator.counters()
    assert c["rpc"]["create_batch"] == 0 and c["rpc"]["submit_batch"] == 0
    res = client.wait(client.submit("u8good", "uppercase", [("u8good#0", ["h\u00e9llo"], [(a, "in")])]))
    assert res == ["NULL"], res


def test_six_trailing_htcondor_fields(client, emulator, inputs):
    a = inputs("a.txt", b"a")
    rid = client.submit("p6", "uppercase", [("p6#0", [], [(a, "in")])],
                        params=["NULL", "1e13", "NULL", "1e8", "3600", "NULL"])
    assert client.wait(rid) == ["NULL"]
    assert emulator.counters()["jobs_by_name"] == {"p6#0": 1}


def test_reissue_of_a_finished_submit_is_answered_from_the_journal(make_client, emulator, inputs, journal):
    a = inputs("a.txt", b"a")
    jobs = [("re#0", [], [(a, "in")])]
    c1 = make_client()
    assert c1.wait(c1.submit("re", "uppercase", jobs)) == ["NULL"]
    c1.gahp.quit()
    before = emulator.counters()
    c2 = make_client()          # a new server run on the same journal
    assert c2.wait(c2.submit("re", "uppercase", jobs)) == ["NULL"]
    assert emulator.counters() == before     # not a single RPC
    res = c2.wait(c2.submit("re", "uppercase", [("re#0", [], [(a, "in")]), ("re#1", [], [(a, "in")])]))
    assert len(res) == 1 and "different jobs" in res[0]
    assert emulator.counters()["batches_by_name"] == {"re": 1}


def test_failed_submit_is_retried_reusing_batch_and_files(client, emulator, inputs):
    """submit_batch answers HTTP 500 to each of the GAHP's three attempts.
    An HTTP 500 is an unknown outcome (a script can fail after acting), so
    after the first two the GAHP asks the server whether the batch got its
    jobs (query_batch), finds none and sends submit_batch again; the third
    fails the submit with the error.  The re-issue then reuses the batch and
    the uploaded file."""
    a = inputs("a.txt", b"retry me")
    emulator.fault("submit_batch", "http500", count=3)
    jobs = [("rt#0", [], [(a, "in")])]
    res = client.wait(client.submit("rt", "uppercase", jobs))
    assert len(res) == 1 and res[0].startswith(
        "submit_batch failed: HTTP error: submit_batch: HTTP 500"), res
    c = emulator.counters()
    assert c["rpc"]["submit_batch"] == 3 and c["rpc"]["query_batch"] > 0, c["rpc"]
    assert c["jobs_by_name"] == {}
    emulator.clear_faults()
    assert client.wait(client.submit("rt", "uppercase", jobs)) == ["NULL"]
    c = emulator.counters()
    assert c["batches_by_name"] == {"rt": 1} and c["rpc"]["create_batch"] == 1
    assert c["uploads_by_name"] == {phys(b"retry me"): 1}
    assert c["jobs_by_name"] == {"rt#0": 1}


def _lost_reply(client, emulator, inputs, endpoint, name):
    """The server acts on `endpoint` but the reply is lost (connection
    dropped after processing): the GAHP must find out, not repeat."""
    files = [inputs("%s%d.txt" % (name, i), ("%s %d" % (name, i)).encode()) for i in range(3)]
    emulator.fault(endpoint, "drop", count=1, after=True)
    jobs = [("%s#%d" % (name, i), [], [(files[i], "in")]) for i in range(3)]
    assert client.wait(client.submit(name, "uppercase", jobs)) == ["NULL"]
    c = emulator.counters()
    assert c["batches_by_name"] == {name: 1}
    assert c["jobs_by_name"] == {"%s#%d" % (name, i): 1 for i in range(3)}
    assert sorted(c["uploads_by_name"].values()) == [1, 1, 1]
    return c


def test_create_batch_reply_lost_adopts_the_created_batch(client, emulator, inputs):
    c = _lost_reply(client, emulator, inputs, "create_batch", "lc")
    assert c["rpc"]["create_batch"] == 1 and c["rpc"]["query_batches"] >= 1


def test_query_files_reply_lost_is_resolved_without_repeating_it(client, emulator, inputs):
    _lost_reply(client, emulator, inputs, "query_files", "lq")


def test_upload_reply_lost_does_not_upload_twice(client, emulator, inputs):
    c = _lost_reply(client, emulator, inputs, "upload_files", "lu")
    assert c["rpc"]["upload_files"] == 1


def test_submit_batch_reply_lost_does_not_submit_twice(client, emulator, inputs):
    c = _lost_reply(client, emulator, inputs, "submit_batch", "ls")
    assert c["rpc"]["submit_batch"] == 1 and c["rpc"]["query_batch"] >= 1


def test_transient_500_before_create_is_retried(client, emulator, inputs):
    a = inputs("a.txt", b"five hundred")
    emulator.fault("create_batch", "http500", count=1)
    assert client.wait(client.submit("t5", "uppercase", [("t5#0", [], [(a, "in")])])) == ["NULL"]
    assert emulator.counters()["batches_by_name"] == {"t5": 1}


def test_concurrent_batches_sharing_a_new_input_upload_it_once(client, emulator, inputs):
    shared = inputs("new_shared.txt", b"brand new shared content")
    rids = [client.submit("cc%d" % b, "uppercase",
                          [("cc%d#%d" % (b, i), [], [(shared, "in")]) for i in range(3)])
            for b in range(4)]
    for rid in rids:
        assert client.wait(rid) == ["NULL"]
    c = emulator.counters()
    assert c["uploads_by_name"] == {phys(b"brand new shared content"): 1}
    assert c["batches_by_name"] == {"cc%d" % b: 1 for b in range(4)}


def test_large_batch_is_chunked(client, emulator, inputs):
    n = 1500
    shared = inputs("big_shared.txt", b"x" * 4096)
    paths = [inputs("f%04d.txt" % i, b"job %d" % i) for i in range(n)]
    jobs = [("lg#%d" % i, [], [(paths[i], "in")]) for i in range(n)]
    jobs.append(("lg#shared", [], [(shared, "in")]))
    assert client.wait(client.submit("lg", "uppercase", jobs), timeout=HANG_TIMEOUT) == ["NULL"]
    c = emulator.counters()
    assert c["files_uploaded"] == n + 1
    assert all(v == 1 for v in c["uploads_by_name"].values())
    # 2000 names per request, and the batch-less query after the refused probe
    assert c["rpc"]["query_files"] == 2
    # the probe (refused by the emulator's stock PHP: limits learned), then
    # 20 files per request
    assert c["rpc"]["upload_files"] == 1 + 76
    assert c["php_limits"]["over_max_file_uploads"] == 1
    assert len(c["jobs_by_name"]) == n + 1


def test_authenticator_never_reaches_the_log(make_client, emulator, inputs, tmp_path):
    """Debug logging of a whole job life, faults included: the account's
    secret (also in get_output URLs) never appears in the log."""
    a = inputs("a.txt", b"secret-free log\n")
    c = make_client(args=("--retry-budget", "5", "--log-level", "debug"))
    emulator.fault("get_output.php", "http500", count=1)
    assert c.call("BOINC_SUBMIT", "lg1", "uppercase", 1, "lg1#0", 0, 1, a, "in") == ["NULL"]
    emulator.run(3600)
    out = tmp_path / "out dir"
    out.mkdir()
    res = c.call("BOINC_FETCH_OUTPUT", "lg1#0", str(out), "err.txt", "ALL", 0)
    assert res[0] == "NULL", res
    assert (out / "out").read_bytes() == b"SECRET-FREE LOG\n"
    c.gahp.quit()
    log = c.gahp.stderr_text()
    assert "get_output" in log            # the fault was logged ...
    assert emulator.authenticator not in log   # ... without the secret


def test_arguments_and_names_reach_the_app_verbatim(client, emulator, inputs, tmp_path):
    """Arguments with $, backquotes and XML markup survive GAHP escaping,
    XML, create_work's line and SQL, and the client's splitting: the app
    logs each argument it got, and the log comes back through
    BOINC_FETCH_OUTPUT's stderr file.  (A backslash is refused before
    create_batch, since a real server's database rewrites it:
    test_arguments_a_server_cannot_carry_are_refused_before_create_batch.)"""
    a = inputs("input with space.txt", b"spaced\n")
    args = ["--tag", "a$b", "x`y", "a&b<c>", "$(id)"]
    job = "job#1.0"
    assert client.call("BOINC_SUBMIT", "batch with spaces", "uppercase", 1,
                       job, len(args), *args, 1, a, "in") == ["NULL"]
    emulator.run(3600)
    out = tmp_path / "out dir"
    out.mkdir()
    res = client.call("BOINC_FETCH_OUTPUT", job, str(out), "std err.txt", "ALL", 1,
                      "out", "result file.txt")
    assert res[0] == "NULL" and len(res) == 4, res
    assert (out / "result file.txt").read_bytes() == b"SPACED\n"
    log = (out / "std err.txt").read_text()
    for n, arg in enumerate(args, 1):
        assert "argument %d: [%s]" % (n, arg) in log, log


def test_quorum_disagreement_is_resolved_by_a_third_instance(make_client, inputs, tmp_path):
    """App quorum2 needs two agreeing instances; the first host returns a
    wrong answer.  The server sends a third instance (to a third host: a
    job never gets two instances on one host), the two honest ones agree,
    and the GAHP reports DONE and fetches the canonical (right) output."""
    import emu
    emulator = emu.Emulator(tmp_path / "emu4", hosts=4)
    emulator.start()
    try:
        _quorum_scenario(make_client(emu=emulator), emulator, inputs, tmp_path)
    finally:
        emulator.stop()


def _quorum_scenario(client, emulator, inputs, tmp_path):
    a = inputs("q.txt", b"quorum input\n")
    emulator.behaviour("qj#0", "wrong", instance=0)
    assert client.call("BOINC_SUBMIT", "qb", "quorum2", 1, "qj#0", 0, 1, a, "in") == ["NULL"]
    emulator.run(3600)
    job = emulator.job("qj#0")
    assert len(job["instances"]) >= 3, job
    res = client.call("BOINC_QUERY_BATCHES", 0, 1, "qb")
    assert res[0] == "NULL" and res[2:] == ["1", "qj#0", "DONE"], res
    out = tmp_path / "q out"
    out.mkdir()
    res = client.call("BOINC_FETCH_OUTPUT", "qj#0", str(out), "err.txt", "ALL", 0)
    assert res[0] == "NULL", res
    assert (out / "out").read_bytes() == b"QUORUM INPUT\n"


@pytest.mark.serial     # real-clock race: 1 s HTTP timeout against 3 s delays
def test_slow_server_gives_a_clean_error_not_a_hang(make_client, emulator, inputs):
    """Replies slower than --http-timeout: safe requests are retried within
    the retry budget, then the request ends with one error token; the
    server keeps answering other requests meanwhile."""
    # real pauses: the delayed submit_batch must finish while the GAHP waits
    c = make_client(args=("--http-timeout", "1", "--retry-budget", "2"),
                    env=REAL_CLOCK)
    emulator.fault("ping", "delay", count=100, delay_ms=3000)
    rid = c.start("BOINC_PING")
    assert c.gahp.command("VERSION").startswith("S $GahpVersion")   # not blocked
    res = c.wait(rid, timeout=60)
    assert len(res) == 1 and res[0] != "NULL" and "ping" in res[0], res
    emulator.clear_faults()
    a = inputs("slow.txt", b"slow\n")
    emulator.fault("submit_batch", "delay", count=1, delay_ms=3000)
    res = c.call("BOINC_SUBMIT", "slowb", "uppercase", 1, "slowb#0", 0, 1, a, "in")
    # the reply to submit_batch was lost to the timeout: the GAHP asked the
    # server instead of submitting twice
    assert res == ["NULL"], res
    assert emulator.counters()["jobs_by_name"] == {"slowb#0": 1}


@pytest.mark.serial     # real-clock race: settle looks at ~2 s and ~4 s, batch at 2.5 s
def test_create_batch_slower_than_the_timeout_is_not_created_twice(make_client, emulator, inputs):
    """create_batch times out on the client while the server is still
    working on it: the GAHP looks again after a pause and adopts the batch
    instead of creating a second one with the same name."""
    # real pauses: the server really is still working on the lost request
    c = make_client(args=("--http-timeout", "1", "--retry-budget", "5"),
                    env=REAL_CLOCK)
    a = inputs("late.txt", b"late create\n")
    emulator.fault("create_batch", "delay", count=1, delay_ms=2500)
    assert c.call("BOINC_SUBMIT", "lateb", "uppercase", 1, "lateb#0", 0, 1, a, "in") == ["NULL"]
    cnt = emulator.counters()
    assert cnt["batches_by_name"] == {"lateb": 1}
    assert cnt["rpc"]["create_batch"] == 1


def test_out_of_memory_reading_the_create_batch_reply_never_creates_a_second_batch(
        make_client, emulator, inputs):
    """The server created the batch, then memory ran out while the reply was
    buffered (test fault point): the outcome is unknown, not "refused", so
    the batch is found with query_batches and adopted - never created again."""
    a = inputs("a.txt", b"oom\n")
    c = make_client(env={"BOINC_GAHP_TEST_FAULT_AT": "reply_nomem.create_batch"})
    assert c.call("BOINC_SUBMIT", "oom", "uppercase", 1, "oom#0", 0, 1, a, "in") == ["NULL"]
    # a re-issue is answered from the journal
    assert c.call("BOINC_SUBMIT", "oom", "uppercase", 1, "oom#0", 0, 1, a, "in") == ["NULL"]
    counters = emulator.counters()
    assert counters["rpc"]["create_batch"] == 1
    assert counters["batches_by_name"] == {"oom": 1}
    assert counters["jobs_by_name"] == {"oom#0": 1}
    c.gahp.quit()
    assert "create_batch outcome unknown" in c.gahp.stderr_text()


def test_waiter_never_reports_success_when_the_owner_left_no_result(
        make_client, emulator, inputs):
    """Two identical submits at once: the second attaches to the running
    first.  The first fails (the app does not exist) and its result is lost
    (test fault point: no memory to copy it).  The waiter must not report
    success: it answers from the journal, which says failed."""
    a = inputs("a.txt", b"w\n")
    emulator.fault("get_templates", "delay", count=1, delay_ms=1500)
    c = make_client(args=("--retry-budget", "5", "--workers", "4"),
                    env={"BOINC_GAHP_TEST_FAULT_AT": "nomem.submit_result"})
    toks = ("wt", "no_such_app", 1, "wt#0", 0, 1, a, "in")
    first = c.start("BOINC_SUBMIT", *toks)
    second = c.start("BOINC_SUBMIT", *toks)
    results = {first: c.wait(first), second: c.wait(second)}
    assert all(r != ["NULL"] for r in results.values()), results
    assert any("get_templates" in " ".join(r) for r in results.values()), results
    assert emulator.counters()["batches_by_name"] == {}


def test_trailing_field_that_is_not_a_number_is_an_error_result_not_E(client, emulator, inputs):
    """Users write +rsc_memory_bound = "2GB"; the grid manager passes the
    attribute as is.  The line is well framed: S, then an error result that
    names the field and the value (the job is held with a reason the user
    can act on), and nothing is created on the server."""
    a = inputs("a.txt", b"x\n")
    rid = client.submit("gb", "uppercase", [("gb#0", [], [(a, "in")])],
                        params=["NULL", "NULL", '"2GB"', "NULL", "NULL", "NULL"])
    assert client.wait(rid) == ['rsc_memory_bound "2GB" is not a number']
    rid = client.submit("gb2", "uppercase", [("gb2#0", [], [(a, "in")])],
                        params=["1e12", "NULL", "NULL", "2GB", "NULL", "NULL"])
    assert client.wait(rid) == ["rsc_disk_bound 2GB is not a number"]
    assert emulator.counters()["batches_by_name"] == {}


def test_raw_tab_is_an_ordinary_byte_of_the_framing(client, emulator, inputs):
    """HTCondor does not escape TAB: it reaches the GAHP raw inside a token,
    and the framing takes it as an ordinary byte (S, never E).  In an input
    path it works (inputs reach the server under their MD5 names).  In an
    argument the argument rule refuses it - a real server splits the command
    line on white space - with a one-token error result naming the job and
    the argument, before anything is created on the server."""
    a = inputs("tab\there.txt", b"tab\n")
    path = a.replace(" ", "\\ ")
    line = "BOINC_SUBMIT 900 tb uppercase 1 tb#0 1 x\ty 1 %s in" % path
    assert client.gahp.command(line) == "S"
    res = client.wait(900)
    assert len(res) == 1, res
    assert "argument 1 of job tb#0 (x\ty)" in res[0] and "white space" in res[0], res
    assert emulator.counters()["batches_by_name"] == {}
    line = "BOINC_SUBMIT 901 tp uppercase 1 tp#0 1 x 1 %s in" % path
    assert client.gahp.command(line) == "S"
    assert client.wait(901) == ["NULL"]
    cnt = emulator.counters()
    assert cnt["batches_by_name"] == {"tp": 1} and cnt["jobs_by_name"] == {"tp#0": 1}
