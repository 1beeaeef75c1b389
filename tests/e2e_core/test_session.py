"""The HTCondor start-up sequence, PING against a real HTTP server, the
journal after a run, QUIT/EOF with work pending, options."""
import os
import re
import sqlite3
import stat
import subprocess
import time

from gahp_client import Gahp, gahp_binary, split_tokens, gahp_env

ALL_COMMANDS = {"ASYNC_MODE_OFF", "ASYNC_MODE_ON", "BLAH_JOB_CANCEL", "BLAH_JOB_STATUS",
                "BLAH_JOB_SUBMIT", "BLAH_PING", "BOINC_ABORT_JOBS", "BOINC_FETCH_OUTPUT",
                "BOINC_PING", "BOINC_QUERY_BATCHES", "BOINC_RETIRE_BATCH",
                "BOINC_SELECT_PROJECT", "BOINC_SET_LEASE", "BOINC_SUBMIT", "COMMANDS",
                "CONDOR_VERSION", "QUIT", "RESPONSE_PREFIX", "RESULTS", "VERSION"}


def db(journal):
    return sqlite3.connect(journal)


def test_htcondor_startup_sequence(gahp, ping_server, journal):
    g = gahp()
    assert Gahp.BANNER_RE.match(g.banner), g.banner
    reply = g.command("COMMANDS")
    assert reply.startswith("S ")
    assert set(reply.split()[1:]) == ALL_COMMANDS
    assert g.command("VERSION") == "S " + g.banner
    # exactly two tokens, "S <version>", or the client logs a failed command
    reply = split_tokens(g.command(r"CONDOR_VERSION $CondorVersion:\ 9.0.17\ Sep\ 2022\ $"))
    assert len(reply) == 2 and reply[0] == "S", reply
    assert reply[1] == g.banner
    assert g.command("RESPONSE_PREFIX GAHP:") == "S"      # old (empty) prefix
    g.prefix = "GAHP:"
    assert g.command("ASYNC_MODE_ON") == "S"
    assert g.command("BOINC_SELECT_PROJECT %s/ok/test myauthkey" % ping_server.base) == "S"
    assert g.command("BOINC_PING 1") == "S"
    g.wait_r()                                            # R arrives by itself
    assert g.results() == ["1 NULL"]
    assert ping_server.hits == 1
    assert g.quit() == 0
    with db(journal) as c:
        row = c.execute("SELECT condor_version, clean_exit, ended_at IS NOT NULL, pid"
                        " FROM sessions").fetchone()
        assert row[0] == "$CondorVersion: 9.0.17 Sep 2022 $"
        assert row[1] == 1 and row[2] == 1 and row[3] == g.proc.pid
        req = c.execute("SELECT client_id, command, state, result, p.url, p.authenticator"
                        " FROM requests r JOIN projects p ON p.id = r.project_id").fetchall()
        # a ping's result goes once delivered (doc/journal.md, "Retention")
        assert req == [(1, "BOINC_PING", "delivered", None,
                        ping_server.base + "/ok/test/", "myauthkey")]
    assert stat.S_IMODE(os.stat(journal).st_mode) == 0o600
    assert "myauthkey" not in g.stderr_text()


def test_ping_errors_are_one_token(gahp, ping_server, refused_url):
    g = gahp()
    cases = {"e500": "http", "boincerr": "bad authenticator", "garbage": None}
    ids = {}
    for n, mode in enumerate(cases, start=1):
        assert g.command("BOINC_SELECT_PROJECT %s/%s/ secret" % (ping_server.base, mode)) == "S"
        assert g.command("BOINC_PING %d" % n) == "S"
        ids[n] = mode
    assert g.command("BOINC_SELECT_PROJECT %s secret" % refused_url) == "S"
    assert g.command("BOINC_PING 9") == "S"
    res = g.wait_results(4)
    by_id = {}
    for line in res:
        toks = split_tokens(line)
        assert len(toks) == 2, line                   # HTCondor counts tokens
        by_id[int(toks[0])] = toks[1]
    for n, mode in ids.items():
        assert by_id[n].startswith("ping failed:"), by_id[n]
        assert "secret" not in by_id[n]
    assert "bad authenticator" in by_id[2]
    assert "transport" in by_id[9] or "connect" in by_id[9].lower()


def test_no_project_selected_is_an_error_result(gahp):
    g = gahp()
    assert g.command("BOINC_PING 5") == "S"
    assert g.command("BOINC_RETIRE_BATCH 6 b") == "S"
    res = sorted(g.wait_results(2))
    assert res == [r"5 no\ project\ selected", r"6 no\ project\ selected"]


def test_select_project_validation(gahp, ping_server):
    g = gahp()
    # only a line that is not a well-framed request gets E
    assert g.command("BOINC_SELECT_PROJECT") == "E"
    assert g.command("BOINC_SELECT_PROJECT http://127.0.0.1/x") == "E"
    assert g.command("BOINC_SELECT_PROJECT http://127.0.0.1/x a b") == "E"
    assert g.command("BOINC_SELECT_PROJECT %s/ok a" % ping_server.base) == "S"
    # the project is the one selected when the command was accepted
    assert g.command("BOINC_PING 1") == "S"
    assert g.command("BOINC_SELECT_PROJECT http://127.0.0.1:9/nothing/ a") == "S"
    res = dict(line.split(" ", 1) for line in g.wait_results(1))
    assert res == {"1": "NULL"}


def test_an_unusable_project_gets_s_and_its_commands_the_reason(gahp, ping_server):
    # HTCondor 9.0 exits on anything but S to BOINC_SELECT_PROJECT, and its
    # successor sends the same line again: an E would crash-loop every
    # BOINC job of the user (reference/htcondor-client.md)
    g = gahp()
    cases = [("ftp://user:s3cret@127.0.0.1/x a", "project URL must start with http:// or "
              "https:// (check grid_resource)"),
             ("htp://127.0.0.1:1/x a", "project URL must start with http:// or https:// "
              "(check grid_resource)"),
             ("not-a-url a", "project URL must start with http:// or https:// "
              "(check grid_resource)"),
             ("http://127.0.0.1/x ", "the authenticator is empty (check "
              "boinc_authenticator_file)")]
    rid = 1
    for select, why in cases:
        assert g.command("BOINC_SELECT_PROJECT " + select) == "S", select
        assert g.command("BOINC_PING %d" % rid) == "S"
        assert g.command("BOINC_SUBMIT %d b%d app 1 b%d#0 0 0 NULL NULL NULL NULL NULL NULL"
                         % (rid + 1, rid, rid)) == "S"
        res = dict(line.split(" ", 1) for line in g.wait_results(2))
        expect = ("BOINC_SELECT_PROJECT: " + why).replace(" ", "\\ ")
        assert res == {str(rid): expect, str(rid + 1): expect}, (select, res)
        assert "s3cret" not in repr(res)
        rid += 2
    # a good project selected afterwards works, and no request went anywhere
    assert ping_server.hits == 0
    assert g.command("BOINC_SELECT_PROJECT %s/ok a" % ping_server.base) == "S"
    assert g.command("BOINC_PING %d" % rid) == "S"
    assert g.wait_results(1) == ["%d NULL" % rid]
    assert "s3cret" not in g.stderr_text()


def test_quit_with_work_pending_is_prompt(gahp, ping_server, journal):
    g = gahp()
    assert g.command("BOINC_SELECT_PROJECT %s/hang/ a" % ping_server.base) == "S"
    assert g.command("BOINC_PING 1") == "S"
    deadline = time.monotonic() + 20
    while ping_server.hits == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ping_server.hits == 1                      # the worker is in HTTP
    assert g.quit(timeout=10) == 0                    # does not wait 30 s of HTTP
    with db(journal) as c:
        assert c.execute("SELECT state FROM requests").fetchall() == [("accepted",)]
        assert c.execute("SELECT clean_exit FROM sessions").fetchone() == (1,)


def test_eof_acts_like_quit(gahp, journal, ping_server):
    g = gahp(args=["--workers", "2"])
    for i in range(1, 51):
        g.send("BOINC_PING %d" % i)
    for _ in range(50):
        assert g.read_line() == "S"
    # one request stuck in HTTP when stdin closes
    assert g.command("BOINC_SELECT_PROJECT %s/hang/ a" % ping_server.base) == "S"
    assert g.command("BOINC_PING 51") == "S"
    deadline = time.monotonic() + 20
    while ping_server.hits == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ping_server.hits == 1
    g.close_stdin()
    assert g.wait(timeout=20) == 0
    assert g.read_raw(timeout=5) is None              # no S for an EOF
    with db(journal) as c:
        states = dict(c.execute("SELECT state, count(*) FROM requests GROUP BY state"))
        assert sum(states.values()) == 51
        assert c.execute("SELECT state FROM requests WHERE client_id = 51").fetchone() \
            == ("accepted",)                          # unfinished, as left
        assert "delivered" not in states              # never sent RESULTS
        assert c.execute("SELECT clean_exit FROM sessions").fetchone() == (1,)


def test_second_server_on_same_journal_fails(gahp, journal):
    g = gahp()
    assert g.command("VERSION").startswith("S $GahpVersion")
    p = subprocess.run([gahp_binary(), "--journal", journal], input=b"QUIT\n",
                       capture_output=True, env=gahp_env(), timeout=30)
    assert p.returncode != 0
    assert b"in use" in p.stderr
    assert p.stdout == b""                            # no banner, nothing on stdout
    assert g.quit() == 0


def test_options(tmp_path):
    def run(*args, env=None):
        return subprocess.run([gahp_binary()] + list(args), input=b"", capture_output=True,
                              env=gahp_env(env), timeout=30)
    p = run("--help")
    assert p.returncode == 0 and b"--journal" in p.stdout
    p = run("--version")
    assert p.returncode == 0 and p.stdout.startswith(b"$GahpVersion: ")
    for bad in (["--workers", "0"], ["--workers", "257"], ["--workers", "x"],
                ["--sync", "sometimes"], ["--log-level", "loud"], ["--bogus"],
                ["--retention-days", "-1"], ["--journal"], ["extra-arg"]):
        p = run("--journal", str(tmp_path / "j.db"), *bad)
        assert p.returncode == 2, bad
        assert p.stderr.strip() != b"", bad
        assert p.stdout == b"", bad
    # default path: $XDG_STATE_HOME/boinc_gahp/journal.db, dirs 0700
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "BOINC_GAHP_JOURNAL": ""}
    p = run(env=env)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "state" / "boinc_gahp" / "journal.db").exists()
    assert stat.S_IMODE(os.stat(tmp_path / "state" / "boinc_gahp").st_mode) == 0o700
    p = run(env={"BOINC_GAHP_JOURNAL": str(tmp_path / "env.db")})
    assert p.returncode == 0 and (tmp_path / "env.db").exists()


def test_config_file_preselects_project(gahp, ping_server, tmp_path):
    conf = tmp_path / "gahp.conf"
    conf.write_text("# test\nproject_url = %s/ok/test\nauthenticator = k3y\n" % ping_server.base)
    os.chmod(conf, 0o644)
    p = subprocess.run([gahp_binary(), "--journal", str(tmp_path / "x.db"), "--config", str(conf)],
                       input=b"", capture_output=True, env=gahp_env(), timeout=30)
    assert p.returncode == 2 and b"group/others" in p.stderr
    os.chmod(conf, 0o600)
    g = gahp(args=["--config", str(conf)])
    assert g.command("BOINC_PING 3") == "S"
    assert g.wait_results(1) == ["3 NULL"]


def test_log_file_and_levels(gahp, tmp_path):
    log = tmp_path / "gahp.log"
    g = gahp(args=["--log-file", str(log), "--log-level", "debug"])
    assert g.command("BOINC_PING x") == "E"
    assert g.quit() == 0
    text = log.read_text()
    assert "started" in text and re.search(r"E for BOINC_PING", text)
