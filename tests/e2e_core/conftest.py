"""Fixtures for the core end-to-end tests: a temporary journal per test, a
factory that starts the real boinc_gahp binary (killed at teardown), a
tiny real HTTP server on 127.0.0.1 answering BOINC's ping, and a refused
port.  The journal fixture is tests/conftest.py's."""
import http.server
import socket
import threading

import pytest

from gahp_client import Gahp

PING_OK = (b'<?xml version="1.0" encoding="ISO-8859-1" ?>\n'
           b"<ping>\n<success>1</success>\n        </ping>\n")


class PingHandler(http.server.BaseHTTPRequestHandler):
    """The first path component chooses the behaviour:
    /ok/   a real BOINC ping reply (reference/real-server/01_ping.txt)
    /e500/ HTTP 500;  /boincerr/ an <error> reply;  /garbage/ not XML;
    /hang/ never answers (until the server shuts down);
    /gate/ the /ok/ reply once the test opens the gate (server.gate.set())."""

    def log_message(self, fmt, *args):
        pass

    def _reply(self, status, body, ctype="text/xml;charset=UTF-8"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.hits += 1
        mode = self.path.strip("/").split("/")[0]
        if mode == "ok":
            self._reply(200, PING_OK)
        elif mode == "e500":
            self._reply(500, b"<html>Internal Server Error</html>", "text/html")
        elif mode == "boincerr":
            self._reply(200, b"<?xml version=\"1.0\" ?>\n<error>\n<error_num>-1</error_num>\n"
                             b"<error_msg>bad authenticator</error_msg>\n</error>\n")
        elif mode == "garbage":
            self._reply(200, b"\x00\x01this is not xml at all <<<")
        elif mode == "hang":
            self.server.stop_event.wait(60)
        elif mode == "gate":
            self.server.gate.wait(60)
            self._reply(200, PING_OK)
        else:
            self._reply(404, b"not found", "text/plain")


@pytest.fixture
def ping_server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PingHandler)
    srv.daemon_threads = True
    srv.hits = 0
    srv.stop_event = threading.Event()
    srv.gate = threading.Event()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.base = "http://127.0.0.1:%d" % srv.server_address[1]
    yield srv
    srv.stop_event.set()
    srv.gate.set()
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def refused_url():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return "http://127.0.0.1:%d/test/" % port


@pytest.fixture
def gahp(journal):
    """Factory: gahp(args=[...]) starts a server on the test's journal."""
    started = []

    def start(args=(), env=None, path=None, **kw):
        g = Gahp(path or journal, args=["--retry-budget", "0", "--connect-timeout", "5",
                                        "--http-timeout", "30"] + list(args), env=env, **kw)
        started.append(g)
        return g

    yield start
    for g in started:
        g.kill()
