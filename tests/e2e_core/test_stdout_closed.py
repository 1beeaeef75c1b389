"""A client that stops reading (its end of the server's stdout closed,
stdin still open) ends the session (issue 42, sampled mutation: a server
that forgot its stdout was broken, and read on, passed every net).  The
real boinc_gahp over real pipes."""
import subprocess

from gahp_client import gahp_binary, gahp_env


def test_a_closed_stdout_ends_the_server(journal, tmp_path):
    log = tmp_path / "stderr"
    with open(log, "wb") as err:
        p = subprocess.Popen([gahp_binary(), "--journal", journal], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=err, env=gahp_env())
    try:
        assert p.stdout.readline().startswith(b"$GahpVersion: ")
        p.stdout.close()
        # the answer to this cannot be written: the server says so and stops,
        # though its stdin stays open
        p.stdin.write(b"VERSION\n")
        p.stdin.flush()
        rc = p.wait(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        try:
            p.stdin.close()
        except OSError:
            pass
    text = log.read_text()
    assert rc == 1, (rc, text[-2000:])
    assert "cannot write to stdout" in text, text[-2000:]
