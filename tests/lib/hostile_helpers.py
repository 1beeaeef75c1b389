"""Helpers for the hostile-input tests (issue 10): a scriptable hostile
BOINC project on 127.0.0.1 (endless and huge replies, endless downloads,
zip bombs, echoing and slow servers), and boinc_gahp started under an
address-space limit so that a memory regression fails a test instead of
the machine.

The server is Python's own http.server: it stands in for a compromised
or broken real project, which the emulator (a faithful one) never is.
"""
import http.server
import io
import os
import resource
import threading
import zipfile

import gahp_client
from gahp_client import Gahp, escape, split_tokens  # noqa: F401

XML_HEAD = '<?xml version="1.0" encoding="ISO-8859-1" ?>\n'
AUTH = "5f0c1d2e3a4b5c6d7e8f90a1b2c3d4e5"


def is_sanitizer_build():
    """ASan and TSan reserve terabytes of shadow memory: RLIMIT_AS must stay
    off, and their allocators keep freed memory resident (no RSS checks)."""
    with open(gahp_client.gahp_binary(), "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


class LimitedGahp(Gahp):
    """boinc_gahp with RLIMIT_AS (bytes) and/or a umask set in the child."""

    def __init__(self, journal, args=(), env=None, as_limit=None, umask=None,
                 fsize_limit=None, **kw):
        if as_limit is not None and is_sanitizer_build():
            as_limit = None

        def preexec():
            if as_limit is not None:
                resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
            if fsize_limit is not None:     # ulimit -f, in bytes
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_limit, fsize_limit))
            if umask is not None:
                os.umask(umask)

        super().__init__(journal, args=args, env=env, preexec_fn=preexec, **kw)


def zip_bytes(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(name, data)
    return buf.getvalue()


def completed_job_xml(stderr_text=None, cdata=True):
    se = ""
    if stderr_text is not None and cdata:
        se = "<stderr_out><![CDATA[%s]]></stderr_out>\n" % stderr_text
    elif stderr_text is not None:
        se = "<stderr_out>%s</stderr_out>\n" % stderr_text
    return ("<query_completed_job>\n<completed_job>\n<error_mask>0</error_mask>\n"
            "<canonical_resultid>7</canonical_resultid>\n<exit_status>0</exit_status>\n"
            "<elapsed_time>1.5</elapsed_time>\n<cpu_time>1.25</cpu_time>\n%s"
            "</completed_job>\n</query_completed_job>\n" % se)


def templates_xml(outputs, max_nbytes=None):
    """max_nbytes: None (no <file_info>) or one value per output, listed in
    reverse order and named as BOINC's templates do (<OUTFILE_i/>), so that
    the client must match a file_ref to its file_info by name."""
    infos = ""
    if max_nbytes is not None:
        infos = "".join("<file_info><name><OUTFILE_%d/></name><max_nbytes>%s</max_nbytes>"
                        "</file_info>\n" % (i, max_nbytes[i])
                        for i in reversed(range(len(outputs))))
    fname = "<OUTFILE_%d/>" if max_nbytes is not None else "f%d"
    refs = "".join(("<file_ref><file_name>" + fname + "</file_name><open_name>%s</open_name>"
                    "</file_ref>\n") % (i, n) for i, n in enumerate(outputs))
    return ("<get_templates>\n<templates>\n<input_template></input_template>\n"
            "<output_template>\n%s<result>\n%s</result>\n</output_template>\n"
            "</templates>\n</get_templates>\n" % (infos, refs))


class Handler(http.server.BaseHTTPRequestHandler):
    """Behaviour comes from server.cfg (a dict the test sets):
      post:     "ok" | "endless" | "echo" | "slow" | callable(body) -> xml text
      outputs:  output names for get_templates
      max_nbytes: one <max_nbytes> per output for get_templates (None: no
                <file_info>)
      stderr:   stderr_out text for query_completed_job
      download: bytes | "endless" | list of bytes per file_num
      pieces:   n: XML replies go out chunked, n bytes per chunk, each
                flushed (the client's write callback sees every split)
    """
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _reply(self, body, ctype="text/xml;charset=UTF-8"):
        pieces = self.server.cfg.get("pieces")
        if pieces and ctype.startswith("text/xml"):
            return self._in_pieces(body, ctype, pieces)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _in_pieces(self, body, ctype, n):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(0, len(body), n):
            piece = body[i:i + n]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _endless(self, ctype, chunk):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
        try:
            while not self.server.stopping:
                self.wfile.write(frame)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace")
        srv = self.server
        with srv.lock:
            srv.posts.append(body)
            srv.auths.append(self.headers.get("Authorization"))
        cfg = srv.cfg
        mode = cfg.get("post", "ok")
        if "<query_completed_job>" in body and mode in ("ok",):
            xml = completed_job_xml(cfg.get("stderr"), cfg.get("cdata", True))
        elif "<get_templates>" in body and mode in ("ok",):
            xml = templates_xml(cfg.get("outputs", []), cfg.get("max_nbytes"))
        elif mode == "endless":
            return self._endless("text/xml", b"<x>" + b"a" * 65536 + b"</x>")
        elif mode == "echo":
            return self._echo(body, cfg)
        elif mode == "slow":
            srv.release.wait(120)
            xml = "<ping><success>1</success></ping>\n"
        elif callable(mode):
            xml = mode(body)
        else:
            xml = "<ping><success>1</success></ping>\n"
        self._reply((XML_HEAD + xml).encode())

    def _echo(self, body, cfg):
        """Echo the secrets the client sent: the request body from its
        <authenticator> on, placed so that a 2000-character cut of the
        message lands inside the authenticator, and the URL's user:password
        decoded from the Authorization header."""
        import base64
        basic = self.headers.get("Authorization", "")
        creds = ""
        if basic.startswith("Basic "):
            creds = base64.b64decode(basic[6:]).decode("utf-8", "replace")
        i = body.find("<authenticator>")
        tail = body[i:] if i >= 0 else body
        # messages are cut to cfg["cut"] characters, " [...]" included
        filler = "E" * max(0, cfg.get("cut", 2000) - 6 - len("<authenticator>") - 16)
        text = "%s%s creds=%s %s" % (filler, tail[:80], creds, tail)
        text = text.replace("&", "&amp;").replace("<", "&lt;")
        status = cfg.get("status", 200)
        if status == 200:
            out = "<error><error_num>-1</error_num><error_msg>%s</error_msg></error>\n" % text
            return self._reply((XML_HEAD + out).encode())
        page = ("<html><head><title>%d Oops</title></head><body><h1>Oops</h1>%s"
                "</body></html>" % (status, text)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def do_GET(self):
        srv = self.server
        with srv.lock:
            srv.downloads += 1
        d = srv.cfg.get("download", b"data")
        if d == "endless":
            return self._endless("application/octet-stream", b"\0" * 65536)
        if isinstance(d, list):
            num = int(self.path.split("file_num=")[1].split("&")[0])
            d = d[num]
        self._reply(d, "application/octet-stream")


class HostileServer:
    def __init__(self, cfg=None):
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.srv.daemon_threads = True
        self.srv.cfg = cfg or {}
        self.srv.posts = []
        self.srv.auths = []
        self.srv.downloads = 0
        self.srv.stopping = False
        self.srv.lock = threading.Lock()
        self.srv.release = threading.Event()
        self.port = self.srv.server_address[1]
        self.url = "http://127.0.0.1:%d/proj/" % self.port
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    @property
    def cfg(self):
        return self.srv.cfg

    def posts(self):
        with self.srv.lock:
            return list(self.srv.posts)

    def stop(self):
        self.srv.stopping = True
        self.srv.release.set()
        self.srv.shutdown()
        self.srv.server_close()


class Client(gahp_client.Requests):
    """A boinc_gahp with one project selected; call() runs one async
    command and returns the unescaped tokens of its result."""

    def __init__(self, gahp, url, auth=AUTH):
        super().__init__(gahp)
        self.select(url, auth)

    def select(self, url, auth=AUTH):
        super().select(url, auth)


def secret_pieces(secret, n=8):
    """Every substring of secret with n characters."""
    return {secret[i:i + n] for i in range(len(secret) - n + 1)}


def tree(d):
    return sorted(os.path.relpath(os.path.join(r, x), str(d))
                  for r, ds, fs in os.walk(str(d)) for x in ds + fs)


def query_batch2_reply(njobs):
    """A query_batch2 reply: one batch of njobs IN_PROGRESS jobs job_000000...;
    server_time 1700000000."""
    jobs = "".join("<job><job_name>job_%06d</job_name><status>IN_PROGRESS</status></job>\n"
                   % i for i in range(njobs))
    return ("<query_batch2>\n<server_time>1700000000.000000</server_time>\n"
            "<batch_size>%d</batch_size>\n%s</query_batch2>\n" % (njobs, jobs))
