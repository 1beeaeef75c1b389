"""Uploads sized to the server (issue 22): large chunks by default, so a
raised server takes a big submit in few requests; a stock server's limits
learned from its first refusal (of a small probe sent alone), with no
failed submit and no file uploaded twice, and remembered per project; the
progress of a long submit in the log."""
import hashlib
import sqlite3

KB = 1024


def small_inputs(inputs, prefix, n):
    return [inputs("%s%05d.txt" % (prefix, i), b"%s %d\n" % (prefix.encode(), i))
            for i in range(n)]


def jobs_for(paths, prefix):
    return [("%s#%d" % (prefix, i), [], [(p, "in")]) for i, p in enumerate(paths)]


def test_raised_server_takes_10000_files_in_few_requests(make_client, emulator, inputs):
    emulator.set_limits(set="none")
    paths = small_inputs(inputs, "r", 10000)
    client = make_client()
    assert client.wait(client.submit("big", "uppercase", jobs_for(paths, "bg")),
                       timeout=600) == ["NULL"]
    c = emulator.counters()
    assert c["files_uploaded"] == 10000
    assert all(v == 1 for v in c["uploads_by_name"].values())
    assert c["rpc"]["upload_files"] < 20, c["rpc"]
    assert len(c["jobs_by_name"]) == 10000


def test_stock_limits_learned_from_the_first_refusal(make_client, emulator, inputs, journal):
    # the emulator's default: a stock PHP (20 files, 8M post, 2M per file)
    paths = small_inputs(inputs, "s", 130)
    client = make_client()
    assert client.wait(client.submit("st1", "uppercase", jobs_for(paths, "s1"))) == ["NULL"]
    c = emulator.counters()
    lim = c["php_limits"]
    # one refusal: the probe, sent alone (no other chunk left before it)
    assert lim["over_max_file_uploads"] == 1 and lim["over_post_max_size"] == 0
    assert lim["largest_post"] < 8 * 1000 * 1000
    # nothing stored twice, every file there, no failed submit
    assert c["files_uploaded"] == 130
    assert all(v == 1 for v in c["uploads_by_name"].values())
    assert c["bytes_uploaded"] == sum(len(b"s %d\n" % i) for i in range(130))
    assert c["batches_by_name"] == {"st1": 1} and len(c["jobs_by_name"]) == 130
    # the probe plus 130 / 20 chunks of at most 20 files
    assert c["rpc"]["upload_files"] == 1 + 7, c["rpc"]
    db = sqlite3.connect(journal)
    row = db.execute("SELECT max_files, max_bytes FROM upload_limits").fetchone()
    db.close()
    assert row == (20, 8000000)
    # the next submit to this project starts within them: no refusal
    paths2 = small_inputs(inputs, "t", 45)
    assert client.wait(client.submit("st2", "uppercase", jobs_for(paths2, "s2"))) == ["NULL"]
    c2 = emulator.counters()
    assert c2["php_limits"]["over_max_file_uploads"] == 1
    assert c2["rpc"]["upload_files"] == 8 + 3
    assert all(v == 1 for v in c2["uploads_by_name"].values())


def test_a_small_file_count_limit_is_learned_exactly(make_client, emulator, inputs, journal):
    emulator.set_limits(max_file_uploads=7)
    paths = small_inputs(inputs, "e", 50)
    client = make_client()
    assert client.wait(client.submit("ex", "uppercase", jobs_for(paths, "ex"))) == ["NULL"]
    c = emulator.counters()
    assert c["php_limits"]["over_max_file_uploads"] == 1
    assert c["files_uploaded"] == 50
    assert all(v == 1 for v in c["uploads_by_name"].values())
    db = sqlite3.connect(journal)
    assert db.execute("SELECT max_files FROM upload_limits").fetchone()[0] == 7
    db.close()


def test_progress_of_a_long_submit_is_logged(make_client, emulator, inputs):
    emulator.set_limits(set="none")
    n = 12000
    paths = small_inputs(inputs, "p", n)
    client = make_client(args=("--retry-budget", "5", "--log-level", "info"))
    assert client.wait(client.submit("prog", "uppercase", jobs_for(paths, "pg")),
                       timeout=600) == ["NULL"]
    log = client.gahp.stderr_text()
    hashed = [l for l in log.splitlines() if "progress: hashed" in l]
    uploaded = [l for l in log.splitlines() if "progress: uploaded" in l]
    # a line every 5,000 files (or every few seconds), not one per file
    assert 2 <= len(hashed) <= 10, hashed
    assert "of %d files" % n in hashed[0]
    assert 1 <= len(uploaded) <= 10, uploaded
    assert "of %d files" % n in uploaded[0]
    assert " bytes, " in uploaded[0] and uploaded[0].rstrip().endswith(" s")


def test_a_raised_file_count_named_by_the_refusal_is_believed(make_client, emulator, inputs,
                                                               journal):
    """Issue 28: a server with max_file_uploads = 1000 refuses the first
    2,000-file chunk with '# of uploaded files (1000) doesn't agree with
    request (2000)' (the real server's words, reference/real-server/29_...);
    the next chunks carry 1,000 files, not a stock server's 20."""
    emulator.set_limits(max_file_uploads=1000)
    paths = small_inputs(inputs, "k", 2000)
    client = make_client()
    assert client.wait(client.submit("kk", "uppercase", jobs_for(paths, "kk")),
                       timeout=600) == ["NULL"]
    c = emulator.counters()
    assert c["php_limits"]["over_max_file_uploads"] == 1
    assert c["files_uploaded"] == 2000
    assert all(v == 1 for v in c["uploads_by_name"].values())
    assert c["rpc"]["upload_files"] <= 3, c["rpc"]
    db = sqlite3.connect(journal)
    assert db.execute("SELECT max_files FROM upload_limits").fetchone()[0] == 1000
    db.close()
