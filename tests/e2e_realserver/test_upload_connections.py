"""Several upload_files requests of one submit in flight at once
(--upload-connections, issue 12): every input reaches the server exactly
once, every request stays within the per-request limits, and a limit
error met by several requests at once is learned and resolved without
uploading anything twice."""
import os
import sqlite3



def jobs_for(paths, prefix):
    return [("%s#%d" % (prefix, i), [], [(p, "in")]) for i, p in enumerate(paths)]

KB = 1024


def test_concurrent_chunks_upload_every_file_once_within_limits(make_client, emulator, inputs,
                                                                journal):
    c = make_client(args=("--retry-budget", "5", "--upload-chunk-files", "4",
                          "--upload-connections", "3"))
    paths = [inputs("c%02d.bin" % i, os.urandom(3 * KB)) for i in range(41)]
    assert c.wait(c.submit("conc", "uppercase", jobs_for(paths, "cc")), timeout=120) == ["NULL"]
    cnt = emulator.counters()
    assert cnt["files_uploaded"] == 41
    assert len(cnt["uploads_by_name"]) == 41
    assert all(v == 1 for v in cnt["uploads_by_name"].values())
    assert cnt["php_limits"]["most_files_in_post"] == 4
    assert cnt["rpc"]["upload_files"] == 11          # ceil(41 / 4): no request twice
    assert len(cnt["jobs_by_name"]) == 41
    # every lane's last outcome was journaled too
    db = sqlite3.connect(journal)
    states = db.execute("SELECT state, count(*) FROM batch_files GROUP BY state").fetchall()
    db.close()
    assert states == [("uploaded", 41)], states


def test_limit_error_on_concurrent_chunks_is_learned_and_nothing_uploads_twice(
        make_client, emulator, inputs, journal):
    emulator.set_limits(max_file_uploads=3)
    c = make_client(args=("--retry-budget", "5", "--upload-chunk-files", "8",
                          "--upload-connections", "4"))
    paths = [inputs("l%02d.bin" % i, os.urandom(2 * KB)) for i in range(50)]
    assert c.wait(c.submit("clim", "uppercase", jobs_for(paths, "cl")), timeout=120) == ["NULL"]
    cnt = emulator.counters()
    assert cnt["php_limits"]["over_max_file_uploads"] >= 1
    assert cnt["files_uploaded"] == 50
    assert all(v == 1 for v in cnt["uploads_by_name"].values())
    assert len(cnt["jobs_by_name"]) == 50
