"""No process-wide lock across the network (issue 20): a submit's file
phase holds only the input files it may still query or upload, so a project
whose upload is stuck delays neither another project's submit nor a batch
of its own project with other inputs; two batches that share a new input
still upload it once (test_submit.py covers that with four batches)."""
import time

import emu as emu_mod
from gahp_client import escape, split_tokens

# The stuck upload: long enough that the other submit, on a loaded machine
# or a sanitizer build, finishes well inside it.
STUCK_MS = 12000
# The upload a second batch of the same input must wait for.
SHARED_STUCK_MS = 3000


def wait_for_upload_request(emu, timeout=60):
    """Until the emulator has received an upload_files request (it counts
    a request before the fault's delay)."""
    deadline = time.monotonic() + timeout
    while emu.counters()["rpc"].get("upload_files", 0) < 1:
        assert time.monotonic() < deadline, "no upload_files request reached the emulator"
        time.sleep(0.05)


def first_result(client, rids, timeout=120):
    """The id of whichever of rids is answered first, and its result (a
    RESULTS reply lists results in the order they were completed)."""
    while True:
        first = None
        for line in client.gahp.wait_results(1, timeout=timeout):
            toks = split_tokens(line)
            rid = int(toks[0])
            client.pending[rid] = toks[1:]
            if rid in rids and first is None:
                first = rid
        if first is not None:
            return first, client.pending[first]


def test_a_stuck_upload_delays_no_other_project(make_client, emulator, inputs, tmp_path):
    other = emu_mod.Emulator(tmp_path / "emu2", hosts=1)
    other.start()
    try:
        client = make_client()
        slow_in = inputs("slow.txt", b"this upload is stuck")
        fast_in = inputs("fast.txt", b"this upload is not")
        emulator.fault("upload_files", "delay", count=1, delay_ms=STUCK_MS)
        slow = client.submit("stuck", "uppercase", [("stuck#0", [], [(slow_in, "in")])])
        wait_for_upload_request(emulator)
        # HTCondor selects the project before the commands that use it.
        assert client.gahp.command("BOINC_SELECT_PROJECT %s %s" % (
            escape(other.url), escape(other.authenticator))) == "S"
        fast = client.submit("free", "uppercase", [("free#0", [], [(fast_in, "in")])])
        rid, result = first_result(client, {slow, fast})
        assert (rid, result) == (fast, ["NULL"]), \
            "the other project's submit waited for the stuck upload"
        assert client.wait(slow) == ["NULL"]
        assert other.counters()["batches_by_name"] == {"free": 1}
        assert emulator.counters()["batches_by_name"] == {"stuck": 1}
    finally:
        other.stop()


def test_two_batches_of_one_project_upload_in_parallel(make_client, emulator, inputs):
    client = make_client()
    a = inputs("a.txt", b"batch a's own input")
    b = inputs("b.txt", b"batch b's own input")
    emulator.fault("upload_files", "delay", count=1, delay_ms=STUCK_MS)
    slow = client.submit("pa", "uppercase", [("pa#0", [], [(a, "in")])])
    wait_for_upload_request(emulator)
    fast = client.submit("pb", "uppercase", [("pb#0", [], [(b, "in")])])
    rid, result = first_result(client, {slow, fast})
    assert (rid, result) == (fast, ["NULL"]), "a batch with other inputs waited for the stuck upload"
    assert client.wait(slow) == ["NULL"]
    c = emulator.counters()
    assert c["batches_by_name"] == {"pa": 1, "pb": 1}
    assert all(v == 1 for v in c["uploads_by_name"].values())


def test_a_batch_sharing_the_stuck_input_waits_and_uploads_nothing_twice(make_client, emulator, inputs):
    client = make_client()
    shared = inputs("shared.txt", b"one new input, two batches")
    emulator.fault("upload_files", "delay", count=1, delay_ms=SHARED_STUCK_MS)
    first = client.submit("s1", "uppercase", [("s1#0", [], [(shared, "in")])])
    wait_for_upload_request(emulator)
    stuck_since = time.monotonic()
    second = client.submit("s2", "uppercase", [("s2#0", [], [(shared, "in")])])
    # The second batch can only finish once the first one's upload was
    # answered: no sooner than the injected delay after that request
    # reached the emulator (which of the two then finishes first is a race).
    assert client.wait(second) == ["NULL"]
    waited = time.monotonic() - stuck_since
    assert waited >= SHARED_STUCK_MS / 1000 - 0.5, \
        "the batch sharing the input did not wait for it (%.2f s)" % waited
    assert client.wait(first) == ["NULL"]
    c = emulator.counters()
    assert list(c["uploads_by_name"].values()) == [1]
    assert c["rpc"]["upload_files"] == 1
