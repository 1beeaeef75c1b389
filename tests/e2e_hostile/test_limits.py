"""Issue 10 #1, #3, #7: every reply, download and unpacked archive is
bounded, and exceeding a bound is an error result, never memory growth or
a silent cut.  Memory cases run under an address-space limit (skipped for
ASan/TSan builds): a regression then fails the test instead of the machine."""
import pytest

from gahp_client import HANG_TIMEOUT
from hostile_helpers import (Client, completed_job_xml, is_sanitizer_build, query_batch2_reply,
                             tree, zip_bytes)

# Generous for normal operation of a 2-worker server (thread stacks, one
# malloc arena per thread, libcurl, libxml2: ~0.3 GB of address space),
# far below what an unbounded endless reply reaches (4 GB in 11 s).
AS_LIMIT = 1536 * 1024 * 1024
SMALL = ("--workers", "2", "--retry-budget", "1")


def test_endless_reply_is_an_error_within_memory(server, make_gahp):
    server.cfg["post"] = "endless"
    g = make_gahp(SMALL + ("--max-reply-bytes", "8000000"), as_limit=AS_LIMIT)
    c = Client(g, server.url)
    toks = c.call("BOINC_PING")
    assert toks == ["ping failed: bad reply: ping: reply larger than the limit of "
                    "8000000 bytes (--max-reply-bytes)"], toks
    # still healthy afterwards
    server.cfg["post"] = "ok"
    assert c.call("BOINC_PING") == ["NULL"]


def test_endless_reply_default_limit_within_memory(server, make_gahp):
    """The default limit (32 MiB) also holds under the address-space limit."""
    server.cfg["post"] = "endless"
    g = make_gahp(SMALL, as_limit=AS_LIMIT)
    c = Client(g, server.url)
    toks = c.call("BOINC_PING")
    assert len(toks) == 1 and "reply larger than the limit of 33554432 bytes" in toks[0], toks


def test_reply_limit_from_environment_and_config_file(server, make_gahp, tmp_path):
    """HTCondor starts the GAHP without arguments: the limit must also come
    from BOINC_GAHP_MAX_REPLY_BYTES and the file key max_reply_bytes."""
    server.cfg["post"] = "endless"
    conf = tmp_path / "gahp.conf"
    conf.write_text("max_reply_bytes = 9000\n")
    for env, limit in (({"BOINC_GAHP_MAX_REPLY_BYTES": "8000"}, 8000),
                       ({"BOINC_GAHP_CONFIG": str(conf)}, 9000)):
        g = make_gahp(SMALL, env=env, as_limit=AS_LIMIT,
                      journal_path=str(tmp_path / ("j%d.db" % limit)))
        toks = Client(g, server.url).call("BOINC_PING")
        assert toks == ["ping failed: bad reply: ping: reply larger than the limit of "
                        "%d bytes (--max-reply-bytes)" % limit], toks


def test_default_limit_takes_a_100000_job_batch(server, make_gahp):
    body = query_batch2_reply(100000)
    server.cfg["post"] = lambda req: body
    g = make_gahp(SMALL, as_limit=AS_LIMIT)
    c = Client(g, server.url)
    toks = c.call("BOINC_QUERY_BATCHES", 0, 1, "big", timeout=HANG_TIMEOUT)
    assert toks[0] == "NULL" and toks[2] == "100000", toks[:4]
    assert len(toks) == 3 + 2 * 100000


def test_endless_download_is_an_error_and_leaves_nothing(server, make_gahp, tmp_path):
    server.cfg.update(outputs=["out.dat"], download="endless")
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    g = make_gahp(SMALL + ("--max-output-bytes", "5000000"), as_limit=AS_LIMIT)
    c = Client(g, server.url)
    toks = c.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and "output file larger than the limit of 5000000 bytes" in toks[0], toks
    assert tree(iwd) == []


def test_fetch_total_limit(server, make_gahp, tmp_path):
    server.cfg.update(outputs=["a", "b"], download=[b"x" * 600000, b"y" * 600000])
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    g = make_gahp(SMALL + ("--max-fetch-bytes", "1000000"))
    c = Client(g, server.url)
    toks = c.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and "larger than the limit of 400000 bytes" in toks[0], toks
    assert tree(iwd) == []
    # within the limit the same fetch succeeds
    g2 = make_gahp(SMALL + ("--max-fetch-bytes", "1200000"), journal_path=str(tmp_path / "j2"))
    c2 = Client(g2, server.url)
    assert c2.fetch("j", str(iwd), "err", "ALL")[0] == "NULL"
    assert tree(iwd) == ["a", "b"]


def test_zip_bomb_refused_by_ratio(server, make_gahp, tmp_path):
    bomb = zip_bytes([("zeros.bin", b"\0" * (50 * 1024 * 1024))])
    assert len(bomb) < 100 * 1024
    server.cfg.update(outputs=["out.zip"], download=bomb)
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    g = make_gahp(SMALL)
    c = Client(g, server.url)
    toks = c.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and toks[0].startswith("unpacking output failed"), toks
    assert "--max-unzip-ratio" in toks[0], toks
    assert tree(iwd) == []


def test_zip_total_limit_and_ratio_option(server, make_gahp, tmp_path):
    z = zip_bytes([("a.txt", b"A" * 300000), ("b.txt", b"B" * 300000)])
    server.cfg.update(outputs=["out.zip"], download=z)
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    g = make_gahp(SMALL + ("--max-unzip-ratio", "1000000", "--max-unzip-bytes", "500000"))
    c = Client(g, server.url)
    toks = c.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and "--max-unzip-bytes" in toks[0], toks
    assert tree(iwd) == []
    g2 = make_gahp(SMALL + ("--max-unzip-ratio", "1000000"), journal_path=str(tmp_path / "j2"))
    assert Client(g2, server.url).fetch("j", str(iwd), "err", "ALL")[0] == "NULL"
    assert tree(iwd) == ["a.txt", "b.txt"]


@pytest.mark.parametrize("cdata", [True, False])
def test_stderr_over_10MB_is_never_cut_silently(cdata, server, make_gahp, tmp_path):
    text = "line of stderr output\n" * 600000          # 13.2 MB
    server.cfg.update(outputs=[], stderr=text, cdata=cdata)
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    g = make_gahp(SMALL)
    c = Client(g, server.url)
    toks = c.fetch("j", str(iwd), "err.txt", "ALL")
    err = iwd / "err.txt"
    if toks[0] == "NULL":
        assert err.read_text() == text          # written completely
    else:
        assert len(toks) == 1 and "too large" in toks[0], toks
        assert not err.exists() or err.stat().st_size == 0
    # a normal stderr still arrives
    server.cfg["stderr"] = "short\n"
    assert c.fetch("j", str(iwd), "err.txt", "ALL")[0] == "NULL"
    assert err.read_text() == "short\n"


def hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(is_sanitizer_build(), reason="a sanitizer's allocator keeps freed memory resident")
@pytest.mark.serial     # measures the server's peak RSS
def test_large_query_memory_is_proportional_to_what_is_kept(server, make_gahp):
    """A 300,000-job query_batch2 reply (21 MB) is read as a stream: peak
    RSS grows by a small multiple of the reply (buffer, job list, result
    line), not by the ~14x a libxml2 tree costs."""
    body = query_batch2_reply(300000)
    g = make_gahp(SMALL)
    c = Client(g, server.url)
    assert c.call("BOINC_PING") == ["NULL"]
    before = hwm_kb(g.proc.pid)
    server.cfg["post"] = lambda req: body
    toks = c.call("BOINC_QUERY_BATCHES", 0, 1, "big", timeout=HANG_TIMEOUT)
    assert toks[0] == "NULL" and toks[2] == "300000", toks[:3]
    grew = (hwm_kb(g.proc.pid) - before) * 1024
    assert grew < 6 * len(body), "peak RSS grew by %.1f MB for a %.1f MB reply" % (
        grew / 1e6, len(body) / 1e6)


@pytest.mark.skipif(is_sanitizer_build(), reason="a sanitizer's allocator keeps freed memory resident")
@pytest.mark.serial     # measures the server's peak RSS
def test_a_1GB_request_line_is_refused_without_buffering_it(make_gahp):
    """Issue 29 #6: a line longer than the limit (64 MiB, doc/protocol.md)
    is answered E with its bytes dropped as they arrive: a 1 GB line
    leaves the server's peak RSS under 100 MB (buffered whole, it reached
    1,041 MB), an escaped LF inside it does not end it, and the server
    keeps answering."""
    g = make_gahp(SMALL)
    chunk = b"BOINC_PING 1 " + b"y" * (16 * 1024 * 1024 - 13)
    for i in range(64):
        g.send_raw(chunk if i != 10 else chunk[:-2] + b"\\\n")
        chunk = b"y" * len(chunk)
    g.send_raw(b"\n")
    assert g.read_line(timeout=HANG_TIMEOUT) == "E"
    assert g.command("BOINC_PING 2") == "S"
    peak = hwm_kb(g.proc.pid) * 1024
    assert peak < 100 * 1024 * 1024, "peak RSS %.1f MB" % (peak / 1e6)
    print("peak RSS after a 1 GB line: %.1f MB" % (peak / 1e6))
    assert "a line of %d bytes, longer than the limit of 67108864" % (64 * len(chunk)) \
        in g.stderr_text()
    assert g.quit() == 0


def test_file_size_limit_is_an_error_result_not_death(server, make_gahp, tmp_path):
    """Issue 29 #7: under ulimit -f an endless download made the server die
    of SIGXFSZ.  It is an error result for that fetch, nothing is left in
    the output directory, and the server keeps answering."""
    server.cfg.update(outputs=["out.dat"], download="endless")
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    g = make_gahp(SMALL, fsize_limit=8 * 1024 * 1024)
    c = Client(g, server.url)
    toks = c.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and "cannot write the output file: File too large" in toks[0], toks
    assert tree(iwd) == []
    assert g.proc.poll() is None
    server.cfg["download"] = b"small output\n"
    assert c.fetch("j", str(iwd), "err", "ALL")[0] == "NULL"
    assert (iwd / "out.dat").read_bytes() == b"small output\n"
    assert c.call("BOINC_PING") == ["NULL"]


def test_output_is_stopped_at_its_templates_max_nbytes(server, make_gahp, tmp_path):
    """Issue 29 #7: a download is bounded by the max_nbytes the app's
    output template declares for that file (matched to its file_ref by
    name), not only by --max-output-bytes: an output of exactly max_nbytes
    is delivered, one byte more is an error and nothing is left."""
    server.cfg.update(outputs=["a", "b"], max_nbytes=["5e5", "1000"],
                      download=[b"x" * 500000, b"y" * 1001])
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    g = make_gahp(SMALL)
    c = Client(g, server.url)
    toks = c.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and "output file larger than the limit of 1000 bytes" in toks[0], toks
    assert "get_output of b (file 1)" in toks[0], toks
    assert tree(iwd) == []
    server.cfg["download"] = [b"x" * 500000, b"y" * 1000]
    assert c.fetch("j", str(iwd), "err", "ALL")[0] == "NULL"
    assert (iwd / "b").read_bytes() == b"y" * 1000
    assert len((iwd / "a").read_bytes()) == 500000
