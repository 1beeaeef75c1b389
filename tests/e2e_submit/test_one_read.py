"""A new input is read once (issue 22): the submit keeps a new file's
bytes from its MD5 pass to its upload (up to 16 MB a file, 64 MB in all),
so the bytes uploaded are the ones hashed even when the file changes in
between; a file too large to keep is read again at upload and hashed on
the way, and if it no longer matches the MD5 that names it the request is
cut short: nothing is ever stored under a name its bytes do not have.

Each test changes the file while create_batch is held up on the server,
after the hashing (the log's "inputs planned") and before the upload."""
import hashlib
import pathlib

KEPT_MAX = 16 * 1024 * 1024


def stored(emulator, name):
    """The bytes the emulator stored under a physical name, or None."""
    p = pathlib.Path(emulator.state_dir) / "download" / name
    return p.read_bytes() if p.exists() else None


def submit_changing(client, emulator, path, batch, new_bytes):
    emulator.fault("create_batch", "delay", count=1, delay_ms=1500)
    rid = client.start("BOINC_SUBMIT", batch, "uppercase", 1, batch + "#0", 0, 1, path, "in")
    client.gahp.wait_stderr("submit %s: inputs planned" % batch)
    with open(path, "r+b") as f:        # same size, other bytes
        f.write(new_bytes)
    return client.wait(rid)


def test_a_kept_file_uploads_the_bytes_it_was_hashed_from(client, emulator, inputs):
    old = b"a" * (1024 * 1024)
    path = inputs("kept.dat", old)
    res = submit_changing(client, emulator, path, "keep", b"b" * 4096)
    # read once: the upload sent the hashed bytes, not the changed file
    assert res == ["NULL"], res
    name = hashlib.md5(old).hexdigest() + ".dat"
    assert stored(emulator, name) == old
    assert emulator.counters()["uploads_by_name"] == {name: 1}


def test_a_file_read_again_that_changed_is_never_stored(client, emulator, inputs):
    emulator.set_limits(set="none")
    old = b"c" * (KEPT_MAX + 4096)              # too large to keep: read again
    path = inputs("big.dat", old)
    new = b"d" * len(old)
    res = submit_changing(client, emulator, path, "big", new)
    assert len(res) == 1 and "changed since it was hashed" in res[0], res
    assert "big.dat" in res[0]
    for content in (old, new):
        assert stored(emulator, hashlib.md5(content).hexdigest() + ".dat") is None
    assert emulator.counters()["rpc"]["submit_batch"] == 0


def test_a_file_read_again_that_did_not_change_is_uploaded(client, emulator, inputs):
    emulator.set_limits(set="none")
    old = bytes(range(256)) * ((KEPT_MAX + 8192) // 256)
    path = inputs("big2.dat", old)
    res = submit_changing(client, emulator, path, "same", old[:4096])   # rewritten, equal
    assert res == ["NULL"], res
    assert stored(emulator, hashlib.md5(old).hexdigest() + ".dat") == old
