"""What a plain BOINC_FETCH_OUTPUT leaves in the server's log (issue 42,
sampled mutation: a negated test of the stale-temporary sweep that starts
every fetch - a warning "out of memory" after each sweep that worked,
none after one that failed - passed every net).  The real boinc_gahp
over pipes against the real emulator on 127.0.0.1."""


def test_a_fetch_that_works_logs_no_warning(session, emu, iwd, tmp_path):
    emu.submit("t", "twoinout", [("t#1", [b"1 2 3\n", b"10 20\n"], None)])
    emu.run()
    toks = session.fetch("t#1", str(iwd), "job.err", "ALL")
    assert toks[0] == "NULL", toks
    assert (iwd / "sum").read_text() == "36\n"
    log = session.gahp.stderr_text()
    assert "[warn]" not in log and "[error]" not in log, log[-3000:]

