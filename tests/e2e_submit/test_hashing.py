"""Input hashing of BOINC_SUBMIT on the hash pool (issue 12): the distinct
inputs of a submit are stat'ed and hashed on several threads and their
cache keys looked up in bulk.  What must not change: every physical name is
the MD5 of the content, every cache row carries the key of the file that
was hashed, a resubmit reads nothing, and the input error reported is the
first one in job order, whichever thread met it first."""
import hashlib
import os
import sqlite3

N = 64          # several files per pool thread, small and large mixed


def make_inputs(inputs, n):
    paths, contents = [], []
    for i in range(n):
        # a few multi-megabyte files among small ones: the threads finish
        # out of order
        data = (b"%d " % i) * (300000 if i % 16 == 3 else 7 + i)
        paths.append(inputs("f%03d.dat" % i, data))
        contents.append(data)
    return paths, contents


def test_threaded_hashing_gives_the_serial_names_and_cache_rows(client, emulator, inputs,
                                                                journal):
    paths, contents = make_inputs(inputs, N)
    jobs = [("hp#%d" % i, [], [(p, "in")]) for i, p in enumerate(paths)]
    assert client.wait(client.submit("hp", "uppercase", jobs)) == ["NULL"]
    want = {hashlib.md5(c).hexdigest() + ".dat": 1 for c in contents}
    assert emulator.counters()["uploads_by_name"] == want
    db = sqlite3.connect(journal)
    rows = {r[0]: r[1:] for r in db.execute(
        "SELECT path, size, mtime_ns, inode, md5 FROM file_md5_cache")}
    assert len(rows) == N
    for p, c in zip(paths, contents):
        st = os.stat(p)
        assert rows[p] == (len(c), st.st_mtime_ns, st.st_ino, hashlib.md5(c).hexdigest()), p
    phys = [r[0] for r in db.execute(
        "SELECT phys_name FROM batch_files ORDER BY rowid")]
    # first-use order, as the serial pass journaled them
    assert phys == [hashlib.md5(c).hexdigest() + ".dat" for c in contents]


def test_resubmit_reads_nothing_and_a_changed_file_is_hashed_again(client, emulator, inputs,
                                                                     journal):
    paths, contents = make_inputs(inputs, N)
    jobs = [("r1#%d" % i, [], [(p, "in")]) for i, p in enumerate(paths)]
    assert client.wait(client.submit("r1", "uppercase", jobs)) == ["NULL"]
    with open(paths[5], "ab") as f:            # new size and mtime: a cache miss
        f.write(b"changed")
    jobs = [("r2#%d" % i, [], [(p, "in")]) for i, p in enumerate(paths)]
    assert client.wait(client.submit("r2", "uppercase", jobs)) == ["NULL"]
    assert "submit r2: %d inputs, 1 files read for hashing" % N in client.gahp.stderr_text()
    md5 = sqlite3.connect(journal).execute(
        "SELECT md5 FROM file_md5_cache WHERE path = ?", (paths[5],)).fetchone()[0]
    assert md5 == hashlib.md5(contents[5] + b"changed").hexdigest()


def test_first_bad_input_in_job_order_is_the_one_reported(client, emulator, inputs, tmp_path):
    paths, _ = make_inputs(inputs, N)
    gone = [str(tmp_path / ("gone%d.txt" % i)) for i in range(3)]
    os.mkdir(tmp_path / "a dir")
    paths[10] = gone[0]                        # the first failure in job order
    paths[11] = str(tmp_path / "a dir")
    paths[40] = gone[1]
    paths[63] = gone[2]
    for _ in range(3):                         # the threads race differently each time
        jobs = [("bad#%d" % i, [], [(p, "in")]) for i, p in enumerate(paths)]
        res = client.wait(client.submit("bad", "uppercase", jobs))
        assert len(res) == 1 and gone[0] in res[0] and "No such file" in res[0], res
        assert gone[1] not in res[0] and "a dir" not in res[0]
    assert emulator.counters()["rpc"]["create_batch"] == 0


def test_a_hashing_error_before_a_stat_error_is_the_one_reported(client, emulator, inputs,
                                                                  tmp_path):
    """/proc/self/status stats as an empty regular file but reads as text:
    its hashing fails ("changed while it was being hashed") although its
    stat succeeded.  A serial pass meets it before the missing file that
    comes later in job order, so its error is the one reported."""
    paths, _ = make_inputs(inputs, N)
    gone = str(tmp_path / "gone.txt")
    paths[5] = "/proc/self/status"
    paths[20] = gone
    jobs = [("pr#%d" % i, [], [(p, "in")]) for i, p in enumerate(paths)]
    res = client.wait(client.submit("pr", "uppercase", jobs))
    assert len(res) == 1 and "/proc/self/status" in res[0], res
    assert "changed while it was being hashed" in res[0] and gone not in res[0]
    assert emulator.counters()["rpc"]["create_batch"] == 0


def test_a_relative_and_an_absolute_path_of_one_file_are_one_upload(client, emulator, inputs,
                                                                    journal):
    """A relative input path is joined to the server's working directory as
    it is (not normalised; the plan keeps its own copy of it, while an
    absolute path is used as the request gives it): the same file named
    both ways is two inputs of one content, uploaded once under its one
    physical name, and the journal records the first spelling."""
    data = b"one file, two spellings\n"
    path = inputs("both.dat", data)
    rel = os.path.relpath(path, os.getcwd())        # the server runs in this cwd
    assert not rel.startswith("/")
    joined = os.getcwd() + "/" + rel
    jobs = [("rel#0", [], [(rel, "in")]), ("rel#1", [], [(path, "in")])]
    assert client.wait(client.submit("rel", "uppercase", jobs)) == ["NULL"]
    name = hashlib.md5(data).hexdigest() + ".dat"
    assert emulator.counters()["uploads_by_name"] == {name: 1}
    db = sqlite3.connect(journal)
    assert [r[0] for r in db.execute("SELECT local_path FROM batch_files")] == [joined]
    assert sorted(r[0] for r in db.execute("SELECT path FROM file_md5_cache")) == sorted([joined, path])


def test_a_same_size_rewrite_within_the_second_is_hashed_again(client, emulator, inputs,
                                                               journal):
    """Issue 42: the cache key holds the nanoseconds of the mtime.  An
    input rewritten in place (same inode) with content of the same size,
    its mtime in the same second as before, is a cache miss: the job runs
    on the new content, never on the old one's upload."""
    old, new = b"first content\n", b"other content\n"
    assert len(old) == len(new)
    p = inputs("same.dat", old)
    sec = int(os.stat(p).st_mtime)
    os.utime(p, ns=(sec * 10**9 + 100, sec * 10**9 + 100))
    ino = os.stat(p).st_ino
    assert client.wait(client.submit("ns1", "uppercase", [("ns1#0", [], [(p, "in")])])) == ["NULL"]
    with open(p, "r+b") as f:
        f.write(new)
    os.utime(p, ns=(sec * 10**9 + 200, sec * 10**9 + 200))
    st = os.stat(p)
    assert (st.st_ino, st.st_size, int(st.st_mtime)) == (ino, len(old), sec)
    assert client.wait(client.submit("ns2", "uppercase", [("ns2#0", [], [(p, "in")])])) == ["NULL"]
    uploads = emulator.counters()["uploads_by_name"]
    assert uploads.get(hashlib.md5(new).hexdigest() + ".dat") == 1, uploads
    md5 = sqlite3.connect(journal).execute(
        "SELECT md5 FROM file_md5_cache WHERE path = ?", (p,)).fetchone()[0]
    assert md5 == hashlib.md5(new).hexdigest()
