"""BOINC_FETCH_OUTPUT against a hostile project: a small real HTTP server
on 127.0.0.1 whose templates and archives carry names that would escape
the job's directory (the emulator refuses to serve such names, so this
server stands in for a compromised or broken real project)."""
import http.server
import io
import os
import threading
import zipfile

import pytest

from cmds_helpers import Gahp, Session

XML_HEAD = '<?xml version="1.0" encoding="ISO-8859-1" ?>\n'


def zip_bytes(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members:
            z.writestr(name, data)
    return buf.getvalue()


class Hostile(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def _reply(self, body, ctype="text/xml;charset=UTF-8"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        cfg = self.server.cfg
        if "<query_completed_job>" in body:
            xml = ("<query_completed_job>\n<completed_job>\n<error_mask>0</error_mask>\n"
                   "<canonical_resultid>7</canonical_resultid>\n<exit_status>0</exit_status>\n"
                   "<elapsed_time>1.5</elapsed_time>\n<cpu_time>1.25</cpu_time>\n"
                   "</completed_job>\n</query_completed_job>\n")
        elif "<get_templates>" in body:
            refs = "".join("<file_ref><file_name>f%d</file_name><open_name>%s</open_name>"
                           "</file_ref>\n" % (i, n) for i, n in enumerate(cfg["outputs"]))
            xml = ("<get_templates>\n<templates>\n<input_template></input_template>\n"
                   "<output_template>\n<result>\n%s</result>\n</output_template>\n"
                   "</templates>\n</get_templates>\n" % refs)
        else:
            xml = "<error><error_num>-1</error_num><error_msg>bad command</error_msg></error>\n"
        self._reply((XML_HEAD + xml).encode())

    def do_GET(self):
        self.server.downloads += 1
        self._reply(self.server.cfg["content"], "application/octet-stream")


@pytest.fixture
def hostile(journal):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    srv.daemon_threads = True
    srv.downloads = 0
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    class FakeEmu:
        url = "http://127.0.0.1:%d/proj/" % srv.server_address[1]
        auth = "0123456789abcdef"

    g = Gahp(journal, args=["--retry-budget", "1"])
    yield srv, Session(g, FakeEmu())
    rc = g.quit()
    assert rc == 0, g.stderr_text()[-4000:]
    srv.shutdown()
    srv.server_close()


def tree(d):
    return sorted(os.path.relpath(os.path.join(r, n), str(d))
                  for r, ds, fs in os.walk(str(d)) for n in ds + fs)


def test_output_name_escaping_iwd_is_refused(hostile, tmp_path):
    srv, s = hostile
    srv.cfg = {"outputs": ["good", "../evil"], "content": b"data"}
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    before = tree(tmp_path)
    toks = s.fetch("j", str(iwd), "err", "ALL")
    assert toks == ["fetch_output failed: unsafe output name from server: ../evil"]
    assert srv.downloads == 0
    assert tree(tmp_path) == before


def test_zip_member_escaping_iwd_is_refused(hostile, tmp_path):
    srv, s = hostile
    srv.cfg = {"outputs": ["out.ZIP"],
               "content": zip_bytes([("fine.txt", b"ok"), ("../evil.txt", b"bad")])}
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    before = tree(tmp_path)
    toks = s.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and toks[0].startswith("unpacking output failed"), toks
    # No member, no archive, no private directory left behind.
    assert tree(tmp_path) == before


def test_zip_rule_is_case_insensitive_and_times_are_plain(hostile, tmp_path):
    srv, s = hostile
    srv.cfg = {"outputs": ["out.ZIP"], "content": zip_bytes([("a.txt", b"A"), ("b.txt", b"B")])}
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    assert s.fetch("j", str(iwd), "err", "ALL") == ["NULL", "0", "1.500000", "1.250000"]
    assert tree(iwd) == ["a.txt", "b.txt"]


def test_some_without_specs_fetches_nothing(hostile, tmp_path):
    srv, s = hostile
    srv.cfg = {"outputs": ["x", "y"], "content": b"data"}
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    assert s.fetch("j", str(iwd), "err", "SOME")[0] == "NULL"
    assert srv.downloads == 0 and tree(iwd) == []
