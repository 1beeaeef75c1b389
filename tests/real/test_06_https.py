"""https in our own loop (issue 28): the real BOINC 8.3 project behind
Apache's mod_ssl on 127.0.0.1 (tests/real/setup_tls.sh, run by
setup_real.sh: a test CA, a certificate for 127.0.0.1, a vhost on
127.0.0.1:18443 serving the same project).  build/boinc_gahp, driven over
its pipes as HTCondor drives it, runs a whole session over https with
ca_file = the test CA; with a CA that did not sign the server's
certificate it fails at once, naming the certificate, and is not retried."""
import os
import pathlib
import time

import pytest

import realsys
from realsys import mysql, progress

# the shared test library, tests/lib (on the path through pytest.ini)
from gahp_client import REAL_CLOCK, Gahp
from submit_client import Client
from tls import ScratchCA

TLS_DIR = pathlib.Path(os.environ.get("RS_TLS_DIR", str(realsys.RS_STATE / "tls")))
NULL6 = ["NULL"] * 6


class HttpsProject:
    """The real project at its https URL (what Client selects)."""

    def __init__(self, real):
        self.url = (TLS_DIR / "url").read_text().strip()
        self.authenticator = real.authenticator
        self.ca_file = str(TLS_DIR / "ca.pem")


@pytest.fixture
def https_project(real_project):
    if not (TLS_DIR / "url").exists() or not (TLS_DIR / "ca.pem").exists():
        pytest.fail("no https front of the real project (%s/url, ca.pem): run `make "
                    "check-real` (setup_real.sh runs tests/real/setup_tls.sh)" % TLS_DIR)
    p = HttpsProject(real_project)
    assert p.url.startswith("https://127.0.0.1:"), p.url
    return p


@pytest.fixture
def session(tmp_path):
    started = []

    def make(project, ca_file):
        # a real server: the server's pauses as designed, not the test clock
        g = Gahp(str(tmp_path / ("journal%d.db" % len(started))),
                 args=["--ca-file", ca_file, "--retry-budget", "60", "--log-level", "debug"],
                 env=REAL_CLOCK)
        started.append(g)
        return Client(g, project)
    yield make
    for g in started:
        g.kill()


def log_of(client):
    return open(client.gahp.journal[:-len(".db")] + ".log").read()


def test_a_session_over_https_with_the_test_ca(https_project, session, tmp_path):
    c = session(https_project, https_project.ca_file)
    assert c.call("BOINC_PING", timeout=120) == ["NULL"]
    b = "rshttps-%s" % realsys.RUN_ID
    data = ("%s: over https\n" % b).encode()
    src = tmp_path / "in.txt"
    src.write_bytes(data)
    res = c.wait(c.submit(b, "uppercase", [(b + "#0", ["--cpu_time", "1"], [(str(src), "in")])],
                          NULL6), timeout=180)
    assert res == ["NULL"], res
    rows = mysql("select id from batch where name = '%s'" % b)
    assert len(rows) == 1, rows
    # the job runs on the real client; query and fetch over https too
    end = time.monotonic() + 400
    while True:
        res = c.call("BOINC_QUERY_BATCHES", 0, 1, b, timeout=120)
        assert res[0] == "NULL", res
        if "DONE" in res or "ERROR" in res:
            break
        assert time.monotonic() < end, "job not done on the real server: %s" % res
        time.sleep(5)
    assert "DONE" in res, res
    out = tmp_path / "out"
    out.mkdir()
    res = c.call("BOINC_FETCH_OUTPUT", b + "#0", str(out), "err", "SOME", 1, "out", "o",
                 timeout=180)
    assert res[0] == "NULL", res
    assert (out / "o").read_bytes() == data.upper()
    c.call("BOINC_RETIRE_BATCH", b, timeout=120)
    assert "https://127.0.0.1:" in log_of(c)             # the RPCs went to the https URL
    assert https_project.authenticator not in log_of(c)
    progress("    session over %s: ping, submit, query, fetch ok" % https_project.url)


def test_a_wrong_ca_fails_at_once_naming_the_certificate(https_project, session, tmp_path):
    other = ScratchCA(tmp_path / "other-ca")     # never signed the server's certificate
    c = session(https_project, other.cert)
    res = c.call("BOINC_PING", timeout=120)
    msg = res[0]
    assert "setup error" in msg and "certificate" in msg, msg
    assert "ca_file" in msg and "not retried" in msg, msg
    assert "gave up after" not in msg
    assert "retrying" not in log_of(c)
    assert https_project.authenticator not in msg
