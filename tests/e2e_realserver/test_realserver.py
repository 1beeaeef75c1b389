"""boinc_gahp against a server that behaves like a stock BOINC project
(issue 9): uploads within PHP's limits and limits learned from its errors,
arguments as create_work carries them, the exit status of failed jobs,
and no batch that lives forever after a failed submit."""
import hashlib
import os
import signal
import sqlite3

import emu

KB, MB = 1024, 1024 * 1024


def phys(content, ext=".bin"):
    return hashlib.md5(content).hexdigest() + ext


def jobs_for(paths, prefix):
    return [("%s#%d" % (prefix, i), [], [(p, "in")]) for i, p in enumerate(paths)]


def assert_within_stock_limits(c, probes=0):
    """No request beyond a stock server's limits, except `probes` refused
    probes (the first upload to a project with no learned limits: many
    files, under 8 MB), each by the file count only."""
    lim = c["php_limits"]
    assert lim["over_post_max_size"] == 0 and lim["over_max_file_uploads"] == probes
    assert lim["over_upload_max_filesize"] == 0
    if probes == 0:
        assert lim["most_files_in_post"] <= 20
    assert lim["largest_post"] < 8 * MB


def test_many_small_and_some_large_inputs_fit_a_stock_server(client, emulator, inputs):
    small = [inputs("s%02d.bin" % i, os.urandom(150 * KB)) for i in range(60)]
    large = [inputs("l%02d.bin" % i, os.urandom(1 * MB)) for i in range(10)]
    jobs = jobs_for(small, "sm") + jobs_for(large, "lg")
    assert client.wait(client.submit("stock", "uppercase", jobs), timeout=300) == ["NULL"]
    c = emulator.counters()
    assert c["files_uploaded"] == 70
    assert len(c["uploads_by_name"]) == 70
    assert all(v == 1 for v in c["uploads_by_name"].values())
    # the default chunks are large: the stock server's limits are learned
    # from its one refusal of the probe, before any other upload
    assert_within_stock_limits(c, probes=1)
    assert len(c["jobs_by_name"]) == 70


def test_too_large_input_names_the_limit_and_leaves_nothing_forever(client, emulator, inputs):
    ok = inputs("fine.bin", os.urandom(10 * KB))
    big_content = os.urandom(3 * MB)
    big = inputs("big.bin", big_content)
    res = client.wait(client.submit("huge", "uppercase",
                                    jobs_for([ok, big], "hg")), timeout=120)
    assert len(res) == 1, res
    assert phys(big_content) in res[0] and str(3 * MB) in res[0], res
    assert "upload_max_filesize" in res[0], res
    st = emulator.state()
    batches = [b for b in st["batches"] if b["name"] == "huge"]
    assert len(batches) == 1 and batches[0]["njobs"] == 0
    # finite expire time (about 6 h from now), and the server retires the
    # empty batch once it passes
    now = emulator.time()
    assert now < batches[0]["expire_time"] <= now + 6 * 3600 + 60
    emulator.advance(6 * 3600 + 120)
    b = [b for b in emulator.state()["batches"] if b["name"] == "huge"][0]
    assert b["retired"] or b["state"] == 4
    assert emulator.counters()["uploads_by_name"].get(phys(big_content)) is None


def test_input_over_post_max_size_names_both_php_limits(client, emulator, inputs):
    """Issue 28: a file over post_max_size is over upload_max_filesize too
    (stock: 8M and 2M); a hold naming only the first is held again."""
    big = inputs("nine.bin", os.urandom(9 * MB))
    res = client.wait(client.submit("nine", "uppercase", jobs_for([big], "nn")), timeout=120)
    assert len(res) == 1 and "post_max_size" in res[0], res
    assert "upload_max_filesize" in res[0], res


def test_too_large_input_resumes_once_the_limit_is_raised(client, emulator, inputs):
    ok_content = os.urandom(10 * KB)
    ok = inputs("fine.bin", ok_content)
    big_content = os.urandom(3 * MB)
    big = inputs("big.bin", big_content)
    jobs = jobs_for([ok, big], "rs")
    res = client.wait(client.submit("raise", "uppercase", jobs), timeout=120)
    assert len(res) == 1 and "upload_max_filesize" in res[0], res
    emulator.set_limits(upload_max_filesize="4M")
    # the client re-issues the same submit: the batch resumes
    assert client.wait(client.submit("raise", "uppercase", jobs), timeout=120) == ["NULL"]
    c = emulator.counters()
    assert c["uploads_by_name"] == {phys(ok_content): 1, phys(big_content): 1}
    assert c["batches_by_name"] == {"raise": 1} and len(c["jobs_by_name"]) == 2


def test_arguments_reach_the_job_verbatim(client, emulator, inputs, tmp_path):
    a = inputs("a.txt", b"a\n")
    args = ["a$b", "x`y", "50%_", "c:/new/tmp"]
    assert client.call("BOINC_SUBMIT", "argv", "uppercase", 1, "argv#0", len(args), *args,
                       1, a, "in") == ["NULL"]
    emulator.run(3600)
    out = tmp_path / "o"
    out.mkdir()
    res = client.call("BOINC_FETCH_OUTPUT", "argv#0", str(out), "err.txt", "ALL", 0)
    assert res[0] == "NULL", res
    log = (out / "err.txt").read_text()
    for n, arg in enumerate(args, 1):
        assert "argument %d: [%s]" % (n, arg) in log, log


def test_arguments_a_server_cannot_carry_are_refused_before_create_batch(client, emulator, inputs):
    a = inputs("a.txt", b"a\n")
    for n, bad in enumerate(["white space", "", "'", '"', "new\nline", "c:\\new\\tmp",
                             "end\\", "a\\b"]):
        res = client.wait(client.submit("bad%d" % n, "uppercase",
                                        [("bad%d#0" % n, [bad], [(a, "in")])]))
        assert len(res) == 1 and "argument 1 of job bad%d#0" % n in res[0], res
    # a backslash in an argument: refused with the reason, never rewritten
    res = client.wait(client.submit("bs", "uppercase", [("bs#0", ["x\\y"], [(a, "in")])]))
    assert res == ["submit refused: argument 1 of job bs#0 (x\\y) contains \\ (a real server's database "
                   "rewrites backslashes: \\n becomes a line break, \\b a backspace, a "
                   "lone \\ vanishes)"], res
    # and in a job name (the server would store another name)
    res = client.wait(client.submit("bsn", "uppercase", [("bsn#0\\", [], [(a, "in")])]))
    assert len(res) == 1 and res[0].startswith("submit refused: job name bsn#0\\ contains \\"), res
    # a job line over create_work's 100 words
    many = ["w%d" % i for i in range(100)]
    res = client.wait(client.submit("many", "uppercase", [("many#0", many, [(a, "in")])]))
    assert len(res) == 1 and "words" in res[0], res
    # and over its 4096-byte line buffer
    long_arg = ["x" * 4100]
    res = client.wait(client.submit("long", "uppercase", [("long#0", long_arg, [(a, "in")])]))
    assert len(res) == 1 and "bytes" in res[0], res
    assert emulator.counters()["rpc"]["create_batch"] == 0


def job_line_bytes(name, arg, phys_name):
    """The line submit_rpc_handler.php writes to create_work for a job."""
    return len(" --wu_name %s --command_line \"%s\" %s\n" % (name, arg, phys_name))


def test_job_line_limit_is_4094_bytes(client, emulator, inputs):
    # create_work takes a 4,095-byte line for "fgets() buffer was too small"
    # and leaves the batch empty (reference/boinc-web-rpc.md, third round)
    content = b"line limit\n"
    a = inputs("a.txt", content)
    base = job_line_bytes("L#0", "", phys(content, ".txt"))
    res = client.wait(client.submit("L4095", "uppercase",
                                    [("L#0", ["x" * (4095 - base)], [(a, "in")])]))
    assert len(res) == 1 and "would be 4095 bytes, more than the 4094" in res[0], res
    assert emulator.counters()["rpc"]["create_batch"] == 0
    res = client.wait(client.submit("L4094", "uppercase",
                                    [("L#0", ["x" * (4094 - base)], [(a, "in")])]))
    assert res == ["NULL"], res
    assert emulator.counters()["batches_by_name"] == {"L4094": 1}
    assert list(emulator.counters()["jobs_by_name"]) == ["L#0"]


def test_exit_status_of_a_failed_job_on_a_stock_server(client, emulator, inputs, tmp_path):
    emulator.set_quirks("php-warnings,qcj-stock")
    a = inputs("a.txt", b"a\n")
    assert client.call("BOINC_SUBMIT", "fl", "failer", 1, "fl#0", 2, "--exit", "7",
                       1, a, "in") == ["NULL"]
    emulator.run(3600)
    out = tmp_path / "o"
    out.mkdir()
    res = client.call("BOINC_FETCH_OUTPUT", "fl#0", str(out), "err.txt", "ALL", 0)
    assert res[0] == "NULL" and int(res[1]) == 7, res
    assert emulator.counters()["rpc"]["query_batch"] >= 1


def test_unfinished_and_aborted_jobs_on_a_stock_server(client, emulator, inputs, tmp_path):
    assert emulator.control("quirks")["qcj-stock"] is True     # the default
    a = inputs("a.txt", b"a\n")
    assert client.call("BOINC_SUBMIT", "ua", "uppercase", 2, "ua#0", 0, 1, a, "in",
                       "ua#1", 0, 1, a, "in") == ["NULL"]
    out = tmp_path / "o"
    out.mkdir()
    # each job its own stderr file: two live jobs never write one path (issue 40)
    assert client.call("BOINC_FETCH_OUTPUT", "ua#0", str(out), "e0", "ALL", 0) == \
        ["job ua#0 is not finished"]
    assert client.call("BOINC_ABORT_JOBS", "ua#1") == ["NULL"]
    res = client.call("BOINC_FETCH_OUTPUT", "ua#1", str(out), "e1", "ALL", 0)
    assert res == ["job ua#1 failed: no instance reported an exit status (the server's "
                   "query_completed_job failed)"], res
    assert list(out.iterdir()) == []


def test_learned_chunk_limit_survives_a_restart(make_client, emulator, inputs, journal):
    emulator.set_limits(max_file_uploads=5)
    first = make_client()
    paths = [inputs("a%02d.txt" % i, b"first %d\n" % i) for i in range(12)]
    assert first.wait(first.submit("lrn1", "uppercase", jobs_for(paths, "l1"))) == ["NULL"]
    c = emulator.counters()
    assert c["php_limits"]["over_max_file_uploads"] == 1     # learned once
    assert all(v == 1 for v in c["uploads_by_name"].values())
    db = sqlite3.connect(journal)
    assert db.execute("SELECT max_files FROM upload_limits").fetchone()[0] == 5
    db.close()
    first.gahp.quit()
    again = make_client()
    paths2 = [inputs("b%02d.txt" % i, b"second %d\n" % i) for i in range(12)]
    assert again.wait(again.submit("lrn2", "uppercase", jobs_for(paths2, "l2"))) == ["NULL"]
    c2 = emulator.counters()
    assert c2["php_limits"]["over_max_file_uploads"] == 1    # not hit again
    assert c2["files_uploaded"] == 24
    assert all(v == 1 for v in c2["uploads_by_name"].values())


def test_sigkill_during_adaptive_upload_never_uploads_twice(make_client, emulator, inputs):
    emulator.set_limits(max_file_uploads=6)
    paths = [inputs("k%02d.txt" % i, b"kill %d\n" % i) for i in range(30)]
    jobs = jobs_for(paths, "kl")
    crashing = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": "submit.limit_learned"})
    crashing.submit("kb", "uppercase", jobs)
    assert crashing.gahp.proc.wait(timeout=60) == -signal.SIGKILL
    crashing.gahp.kill()
    crashing2 = make_client(env={"BOINC_GAHP_TEST_CRASH_AT": "submit.uploaded:2"})
    crashing2.submit("kb", "uppercase", jobs)
    assert crashing2.gahp.proc.wait(timeout=60) == -signal.SIGKILL
    crashing2.gahp.kill()
    again = make_client()
    assert again.wait(again.submit("kb", "uppercase", jobs)) == ["NULL"]
    c = emulator.counters()
    assert c["files_uploaded"] == 30
    assert all(v == 1 for v in c["uploads_by_name"].values()), c["uploads_by_name"]
    assert c["batches_by_name"] == {"kb": 1} and len(c["jobs_by_name"]) == 30


def test_empty_ping_element_is_refused_like_a_real_server(emulator):
    r = emulator.rpc("<ping></ping>")
    assert emu.error_msg(r.body).startswith("can't parse request message")
    r = emulator.rpc("<ping> </ping>")
    assert b"<success>1</success>" in r.body


def test_post_size_limit_is_learned_and_a_single_file_over_it_named(make_client, emulator,
                                                                    inputs, journal):
    # a server with a smaller post_max_size than the default chunk assumes
    emulator.set_limits(post_max_bytes=1 * MB)
    c = make_client()
    paths = [inputs("p%02d.bin" % i, os.urandom(300 * KB)) for i in range(10)]
    assert c.wait(c.submit("pm", "uppercase", jobs_for(paths, "pm")), timeout=120) == ["NULL"]
    cnt = emulator.counters()
    assert cnt["php_limits"]["over_post_max_size"] >= 1
    assert cnt["files_uploaded"] == 10
    assert all(v == 1 for v in cnt["uploads_by_name"].values())
    db = sqlite3.connect(journal)
    assert db.execute("SELECT max_bytes FROM upload_limits").fetchone()[0] <= 1 * MB
    db.close()
    # one file larger than the POST limit: named with post_max_size
    big_content = os.urandom(1 * MB + 100 * KB)
    big = inputs("pbig.bin", big_content)
    res = c.wait(c.submit("pm2", "uppercase", jobs_for([big], "pb")), timeout=120)
    assert len(res) == 1 and phys(big_content) in res[0] and "post_max_size" in res[0], res


def test_expire_and_chunk_settings_from_environment_and_config_file(
        make_client, emulator, inputs, tmp_path):
    """The three settings of issue 9 are rows of the option table: a
    BOINC_GAHP_* variable and a configuration-file key reach the requests."""
    conf = tmp_path / "gahp.conf"
    conf.write_text("upload_chunk_files = 4\n")
    c = make_client(env={"BOINC_GAHP_CONFIG": str(conf), "BOINC_GAHP_BATCH_EXPIRE": "3600"})
    paths = [inputs("s%02d.txt" % i, b"setting %d\n" % i) for i in range(10)]
    assert c.wait(c.submit("sett", "uppercase", jobs_for(paths, "st"))) == ["NULL"]
    cnt = emulator.counters()
    assert cnt["php_limits"]["most_files_in_post"] == 4
    assert cnt["rpc"]["upload_files"] == 3 and cnt["files_uploaded"] == 10
    b = [b for b in emulator.state()["batches"] if b["name"] == "sett"][0]
    now = emulator.time()
    assert now + 3600 - 120 < b["expire_time"] <= now + 3600 + 60
