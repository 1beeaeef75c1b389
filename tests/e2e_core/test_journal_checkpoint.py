"""WAL checkpoints on a long-running server (doc/journal.md, "Checkpoints"):
the completion committer checkpoints the WAL while it is small and restarts
it, so the WAL file stays bounded and accept commits overwrite blocks it
already has; every request stays journaled through the checkpoints."""
import os
import sqlite3
import struct
import time

# Each isolated ping writes about 8 WAL frames of 4 KB (its accept, its
# completion, its delivery).  SQLite's own checkpoint comes at 1000 frames,
# leaving a WAL of about 4 MB; the committer's comes at 256.
ROUNDS = 200
WAL_BOUND = 2 * 1024 * 1024


def wal_header(journal):
    """(checkpoint sequence number, file size) of the journal's WAL."""
    path = journal + "-wal"
    with open(path, "rb") as f:
        head = f.read(32)
    magic, _version, _page_size, seq = struct.unpack(">IIII", head[:16])
    assert magic in (0x377F0682, 0x377F0683), "not a WAL header"
    return seq, os.path.getsize(path)


def result_of(g, rid):
    """Poll RESULTS often (the default 50 ms would make 200 rounds slow)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        got = g.results()
        if got:
            assert got == [r"%d no\ project\ selected" % rid]
            return
        time.sleep(0.002)
    raise TimeoutError("no result for request %d" % rid)


def test_wal_stays_small_and_keeps_every_request(gahp, journal):
    g = gahp()
    largest = 0
    for i in range(1, ROUNDS + 1):
        assert g.command("BOINC_PING %d" % i) == "S"
        result_of(g, i)
        largest = max(largest, os.path.getsize(journal + "-wal"))
    assert largest < WAL_BOUND, "WAL grew to %d bytes" % largest
    seq, _ = wal_header(journal)
    assert seq >= 2, "the WAL was not restarted after checkpoints"
    # Everything is journaled (checkpointed or still in the WAL), read by a
    # separate connection while the server runs.
    with sqlite3.connect(journal) as c:
        states = c.execute("SELECT state, count(*) FROM requests GROUP BY state").fetchall()
    assert dict(states).get("completed", 0) + dict(states).get("delivered", 0) == ROUNDS
    assert g.quit() == 0
    with sqlite3.connect(journal) as c:
        ids = [r[0] for r in c.execute("SELECT client_id FROM requests ORDER BY id")]
    assert ids == list(range(1, ROUNDS + 1))
