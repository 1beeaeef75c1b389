"""Line handling of the real binary: escaping round trips, garbage and
binary lines, a 10 MB line, pipelining, request-id rules, R semantics."""
import sqlite3
import time

from gahp_client import HANG_TIMEOUT, escape, split_tokens


def test_escaped_arguments_round_trip(gahp, journal):
    g = gahp()
    names = ["a b", "back\\slash", "cr\rin", "lf\nin", "trail\\", "condor#sched@h-1#12#1700000000"]
    for n, name in enumerate(names, start=1):
        assert g.command("BOINC_RETIRE_BATCH %d %s" % (n, escape(name))) == "S"
    # CRLF line ending and a lower-case command name
    g.send_raw(b"boinc_retire_batch 99 crlf\r\n")
    assert g.read_line() == "S"
    res = g.wait_results(len(names) + 1)
    for line in res:
        toks = split_tokens(line)
        assert len(toks) == 2, line
    with sqlite3.connect(journal) as c:
        rows = dict(c.execute("SELECT client_id, args FROM requests"))
    for n, name in enumerate(names, start=1):
        assert rows[n] == escape(name)            # canonical escaped form
        assert split_tokens(rows[n]) == [name]
    assert rows[99] == "crlf"


def test_garbage_and_binary_lines_get_E(gahp):
    g = gahp()
    bad = [b"", b" ", b"NOSUCH", b"BOINC_PING\x00 1", b"BOINC_PING 1\x01", b"\xff\xfe\xfd",
           b"BOINC_PING \t1", b"\x1b[2J", b"VERSION extra", b"RESULTS 1",
           b"QUIT now", b"COMMANDS x", b"ASYNC_MODE_ON x", b"RESPONSE_PREFIX", b"CONDOR_VERSION",
           b"BOINC_PING 1 2", b"BOINC_PING 0", b"BOINC_PING 99999999999", b"BOINC_SUBMIT 1 b",
           b"BOINC_SET_LEASE 1 b", b"BOINC_ABORT_JOBS 1",
           b"BOINC_FETCH_OUTPUT 1 j", b"BOINC_QUERY_BATCHES 1 0 3 a b"]
    for line in bad:
        g.send_raw(line + b"\n")
        assert g.read_line() == "E", line
    # still alive and well
    assert g.command("VERSION").startswith("S $GahpVersion")
    assert g.results() == []


def test_well_framed_request_with_a_bad_value_gets_S_and_an_error_result(gahp):
    """E is only for lines that are not well-framed requests: the grid
    manager exits on anything but S and repeats the line forever.  A bad
    value gets S and a one-token error result naming the field and value."""
    g = gahp()
    assert g.command("BOINC_SET_LEASE 3 b soon") == "S"
    assert g.command("BOINC_SUBMIT 4 b app 1 j 0 0 NULL NULL \"2GB\" NULL NULL NULL") == "S"
    res = {int(split_tokens(line)[0]): split_tokens(line)[1:] for line in g.wait_results(2)}
    assert res[3] == ["lease time soon is not a non-negative integer"]
    assert res[4] == ['rsc_memory_bound "2GB" is not a number']
    # still E: unknown command, wrong counts, bad or pending request ids, NUL
    for line in [b"BOINC_NOSUCH 5", b"BOINC_SET_LEASE 5 b", b"BOINC_SET_LEASE 0 b 1",
                 b"BOINC_SET_LEASE x b 1", b"BOINC_SUBMIT 5 b app 2 j 0 0",
                 b"BOINC_SET_LEASE 5 b\x00 1"]:
        g.send_raw(line + b"\n")
        assert g.read_line() == "E", line
    assert g.command("BOINC_SET_LEASE 6 b 1") == "S"
    assert g.command("BOINC_SET_LEASE 6 b 1") == "E"     # 6 is still pending
    # a raw TAB inside a token is an ordinary byte (HTCondor does not escape it)
    assert g.command("BOINC_RETIRE_BATCH 7 tab\tname") == "S"
    lines = g.wait_results(2)
    assert any(split_tokens(line)[0] == "7" for line in lines)
    assert g.quit() == 0


def test_ten_megabyte_line(gahp, journal):
    g = gahp()
    jobs = ["job#%07d#%s" % (i, "x" * 80) for i in range(115000)]
    line = "BOINC_ABORT_JOBS 7 " + " ".join(jobs)
    assert len(line) > 10 * 1024 * 1024
    assert g.command(line, timeout=HANG_TIMEOUT) == "S"
    res = g.wait_results(1, timeout=HANG_TIMEOUT)
    assert split_tokens(res[0])[0] == "7" and len(split_tokens(res[0])) == 2
    with sqlite3.connect(journal) as c:
        (n,) = c.execute("SELECT length(args) FROM requests WHERE client_id = 7").fetchone()
    assert n == len(line) - len("BOINC_ABORT_JOBS 7 ")
    # and a 10 MB garbage line is an E, not a crash
    g.send_raw(b"Z" * (10 * 1024 * 1024) + b"\x00\n")
    assert g.read_line(timeout=HANG_TIMEOUT) == "E"
    assert g.quit() == 0


def test_ten_thousand_pipelined_pings_answered_once(gahp, journal):
    g = gahp()
    n = 10000
    g.send_raw(b"".join(b"BOINC_PING %d\n" % i for i in range(1, n + 1)))
    for _ in range(n):
        assert g.read_line() == "S"
    res = g.wait_results(n, timeout=HANG_TIMEOUT)
    ids = [int(split_tokens(line)[0]) for line in res]
    assert sorted(ids) == list(range(1, n + 1))       # each exactly once
    assert g.results() == []                          # nothing twice
    assert g.quit() == 0
    with sqlite3.connect(journal) as c:
        assert c.execute("SELECT count(*) FROM requests WHERE state='delivered'").fetchone() == (n,)


def test_pending_request_id_is_refused_until_delivered(gahp):
    g = gahp()
    assert g.command("BOINC_PING 4") == "S"
    assert g.command("BOINC_PING 4") == "E"           # still pending
    assert g.wait_results(1) == [r"4 no\ project\ selected"]
    assert g.command("BOINC_PING 4") == "S"           # delivered: may be reused
    assert g.wait_results(1) == [r"4 no\ project\ selected"]


def _wait_completed(journal, n):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with sqlite3.connect(journal) as c:
            (k,) = c.execute("SELECT count(*) FROM requests WHERE state IN"
                             " ('completed', 'delivered')").fetchone()
        if k >= n:
            return
        time.sleep(0.02)
    raise TimeoutError("requests not completed")


def test_response_prefix_and_r_once_per_cycle(gahp, journal):
    g = gahp()
    assert g.command("RESPONSE_PREFIX P1:") == "S"
    g.send("ASYNC_MODE_ON")
    assert g.read_raw() == "P1:S"                     # P1 applies from the line after RESPONSE_PREFIX
    g.prefix = "P1:"
    for i in range(1, 4):
        assert g.command("BOINC_PING %d" % i) == "S"
    _wait_completed(journal, 3)
    got = g.results()                                 # reads past any R before "S n"
    assert sorted(got) == [r"%d no\ project\ selected" % i for i in (1, 2, 3)]
    assert g.r_count == 1                             # one R for the whole cycle
    assert g.command("BOINC_PING 4") == "S"
    _wait_completed(journal, 4)
    assert g.results() == [r"4 no\ project\ selected"]
    assert g.r_count == 2                             # a new cycle, a new R
    assert g.command("RESPONSE_PREFIX P2:") == "S"    # answered with the old prefix
    g.prefix = "P2:"
    assert g.command("ASYNC_MODE_OFF") == "S"
    assert g.command("BOINC_PING 10") == "S"
    _wait_completed(journal, 5)
    assert g.results() == [r"10 no\ project\ selected"]
    assert g.r_count == 2                             # no R in sync mode


def test_every_command_gets_its_return_line_when_the_line_queue_cannot_grow(gahp, journal):
    """A burst longer than the reserved return-line queue, with growing the
    queue failing (test fault point): the burst so far is flushed early and
    every command still gets exactly one return line, in order."""
    g = gahp(env={"BOINC_GAHP_TEST_FAULT_AT": "nomem.queue_line"})
    n = 600
    g.send_raw(b"".join(b"BOINC_PING %d\n" % i for i in range(1, n + 1)) + b"VERSION\n")
    for _ in range(n):
        assert g.read_line() == "S"
    assert g.read_line().startswith("S $GahpVersion")
    res = g.wait_results(n, timeout=120)
    assert sorted(int(split_tokens(line)[0]) for line in res) == list(range(1, n + 1))
    assert g.quit() == 0
    assert "flushing" in g.stderr_text()
