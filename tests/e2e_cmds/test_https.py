"""https in our own loop (issue 28): the emulator serves the project over
https with a certificate from a CA the test makes (tests/lib/tls.py);
boinc_gahp verifies it with ca_file or ca_path, and a certificate that
cannot be verified (unknown issuer, another host's name, expired) or a
malformed URL fails at once, not retried, with a result that says what
to fix."""
import pytest

import emu
from gahp_client import Gahp, Requests
from tls import ScratchCA


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return ScratchCA(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def https_emu(tmp_path, ca):
    """Factory: https_emu(name, san, days) -> a started emulator serving a
    certificate of that kind; stopped at teardown."""
    started = []

    def make(name="good", san="IP:127.0.0.1", days=2):
        e = emu.Emulator(tmp_path / ("emu-" + name), hosts=1, tls=ca.server(name, san, days))
        e.start()
        started.append(e)
        assert e.https_url.startswith("https://127.0.0.1:")
        return e

    yield make
    for e in started:
        e.stop()


def ping(journal, url, auth, *args):
    g = Gahp(journal, args=["--retry-budget", "20"] + list(args))
    try:
        g.set_prefix("GAHP:")
        assert g.command("ASYNC_MODE_ON") == "S"
        r = Requests(g)
        r.select(url, auth)
        toks = r.call("BOINC_PING", timeout=120)
        g.quit()
        return toks, g
    finally:
        g.kill()


def log_of(journal):
    return open(journal[:-len(".db")] + ".log").read()


def test_ca_file_verifies_the_project(https_emu, ca, journal):
    e = https_emu()
    toks, _ = ping(journal, e.https_url, e.authenticator, "--ca-file", ca.cert)
    assert toks == ["NULL"], toks
    assert e.counters()["rpc"].get("ping", 0) >= 1


def test_ca_path_verifies_the_project(https_emu, ca, journal):
    e = https_emu()
    toks, _ = ping(journal, e.https_url, e.authenticator, "--ca-path", ca.hashed_dir())
    assert toks == ["NULL"], toks


@pytest.mark.parametrize("kind", ["unknown issuer", "wrong name", "expired"])
def test_a_certificate_that_fails_verification_is_not_retried(https_emu, ca, journal, kind):
    if kind == "unknown issuer":            # the system's CAs never signed it
        e, args = https_emu(), []
    elif kind == "wrong name":
        e, args = https_emu("other", san="DNS:other.example"), ["--ca-file", ca.cert]
    else:
        e, args = https_emu("expired", days=-1), ["--ca-file", ca.cert]
    toks, _ = ping(journal, e.https_url, e.authenticator, *args)
    msg = toks[0]
    assert "setup error" in msg and "certificate" in msg, msg
    assert "ca_file" in msg and "not retried" in msg, msg
    assert "gave up after" not in msg
    assert "retrying" not in log_of(journal)
    assert e.authenticator not in msg
    assert e.counters()["rpc"].get("ping", 0) == 0       # nothing reached the project


def test_a_malformed_url_is_not_retried(journal, emulator):
    bad = "http://127.0.0.1:99999/emu/"                  # no such port number
    toks, _ = ping(journal, bad, emulator.authenticator)
    msg = toks[0]
    assert "setup error" in msg and "not retried" in msg and "URL" in msg, msg
    assert "retrying" not in log_of(journal)
