"""Fault injection: every kind, before and after processing, by script and
by RPC name, count and probability."""

import http.client
import socket
import time

import pytest

import emu
from emu import tag_value, xml_create_batch


def test_http_errors_by_rpc_name(e):
    e.fault("ping", "http500")
    r = e.rpc("<ping> </ping>")
    assert r.status == 500 and b"Internal Server Error" in r.body
    assert e.rpc("<ping> </ping>").status == 200        # count defaults to 1
    e.fault("submit_rpc_handler.php", "http503", count=2)
    assert e.rpc("<ping> </ping>").status == 503
    assert e.rpc(xml_create_batch(e.authenticator, "f1")).status == 503
    assert e.rpc("<ping> </ping>").status == 200
    assert "f1" not in e.counters()["batches_by_name"]      # not processed


def test_after_processing_reply_lost(e):
    e.fault("create_batch", "http500", after=True)
    r = e.rpc(xml_create_batch(e.authenticator, "lost"))
    assert r.status == 500
    assert e.counters()["batches_by_name"]["lost"] == 1     # took effect anyway


def test_drop_cuts_the_reply(e):
    e.fault("create_batch", "drop", after=True)
    with pytest.raises((http.client.IncompleteRead, ConnectionError, http.client.HTTPException)):
        conn = http.client.HTTPConnection(e.host, e.port_bound, timeout=10)
        body, ctype = emu.multipart_encode({"request": xml_create_batch(e.authenticator, "dropped")})
        conn.request("POST", e.project_path("submit_rpc_handler.php"), body, {"Content-Type": ctype})
        resp = conn.getresponse()
        declared = int(resp.getheader("Content-Length"))
        data = resp.read()
        assert len(data) == declared      # not reached: read() raises
    assert e.counters()["batches_by_name"]["dropped"] == 1
    e.fault("ping", "drop")
    r = e.rpc("<ping> </ping>")
    assert r.partial and r.status == 200
    assert len(r.body) < int(r.headers["content-length"])


def test_truncate_malformed_html_error(e):
    e.fault("query_batches", "truncate")
    r = e.rpc(emu.xml_simple("query_batches", e.authenticator))
    assert r.status == 200 and "<b>Fatal error</b>" in r.text
    assert "</query_batches>" not in r.text and not r.partial
    e.fault("query_batches", "malformed")
    r = e.rpc(emu.xml_simple("query_batches", e.authenticator))
    assert r.status == 200 and b"<query_batches>" not in r.body
    e.fault("job_file.php", "html_error")
    r = e.job_file(emu.xml_simple("query_files", e.authenticator, phys_name="x.txt"))
    assert r.headers["content-type"].startswith("text/html") and b"Unable to handle request" in r.body
    e.fault("get_output.php", "html_error")
    r = e.get_output(cmd="workunit_file", auth_str=e.authenticator, wu_name="x", file_num=0)
    assert r.body.startswith(b"ERROR: ")
    # truncate after processing: the real reply cut, the request done
    e.fault("create_batch", "truncate", after=True)
    r = e.rpc(xml_create_batch(e.authenticator, "trunc"))
    assert "<b>Fatal error</b>" in r.text and "</create_batch>" not in r.text
    assert e.counters()["batches_by_name"]["trunc"] == 1


def test_delay_and_wildcard_and_clear(e):
    e.fault("*", "delay", delay_ms=300)
    t = time.monotonic()
    r = e.rpc("<ping> </ping>")
    assert r.status == 200 and b"<success>1</success>" in r.body
    assert time.monotonic() - t >= 0.3
    e.fault("*", "http503", probability=1.0)
    assert e.rpc("<ping> </ping>").status == 503
    assert e.get_output(cmd="x").status == 503
    e.clear_faults()
    assert e.rpc("<ping> </ping>").status == 200
    e.fault("*", "http503", probability=0.0)
    assert all(e.rpc("<ping> </ping>").status == 200 for _ in range(5))


def test_bad_fault_requests(e):
    with pytest.raises(emu.EmulatorError):
        e.fault("nosuch.php", "http500")
    with pytest.raises(emu.EmulatorError):
        e.fault("ping", "explode")
    with pytest.raises(emu.EmulatorError):
        e.fault("ping", "http500", probability=2)


def test_control_is_never_faulted(e):
    e.fault("*", "http500", probability=1.0)
    assert "rpc" in e.counters()
    e.clear_faults()


def test_connection_refused_after_stop(e):
    e.stop()
    with pytest.raises(OSError):
        socket.create_connection((e.host, e.port_bound), timeout=2).close()
