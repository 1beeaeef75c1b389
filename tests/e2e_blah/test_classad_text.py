"""ClassAd text exactly as HTCondor writes it (issue 39): the 25.0.13 grid
manager unparses the submit ad with sink.cpp, which writes every byte that
fails isprint as an octal escape (`é` arrives as `\\303\\251`) and quotes
names that are not identifiers ('my attr').  The model
(tests/lib/blah_client.py classad_string, classad_name) writes exactly
that; here UTF-8 reaches the job byte for byte through the real binary
and the emulator, and what HTCondor's lexer or a BOINC server would refuse
is refused up front, naming the attribute or the argument."""
import time

from blah_client import classad_name, classad_string, submit_ad


def wait_status(client, job, want, emu, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        got = client.status(job)
        if got[2] == want:
            return got
        assert time.monotonic() < deadline, got
        emu.run(max_seconds=600)
        time.sleep(0.2)


def test_the_model_writes_what_the_unparser_writes():
    """The texts sink.cpp's UnparseString and identifierNeedsQuoting make
    (read from HTCondor 25.0.13's source)."""
    assert classad_string("h\u00e9llo") == '"h\\303\\251llo"'
    assert classad_string("a\"b\\c'd") == '"a\\"b\\\\c\'d"'
    assert classad_string("\a\b\f\n\r\t\v\x7f\x1b") == '"\\a\\b\\f\\n\\r\\t\\v\\177\\033"'
    assert classad_string(b"\xff") == '"\\377"'
    assert classad_name("Iwd") == "Iwd"
    assert classad_name("my attr") == "'my attr'"
    assert classad_name("it's") == "'it\\'s'"
    assert classad_name("True") == "'True'"
    assert classad_name("jos\u00e9") == "'jos\\303\\251'"


def test_utf8_iwd_file_names_and_arguments_reach_the_job(client, emu, tmp_path):
    iwd = tmp_path / "jos\u00e9"
    iwd.mkdir()
    (iwd / "d\u00e0ta.txt").write_text("job input\n")
    ad = submit_ad(iwd, "home_bl_127.0.0.1_9618_s_1.0_1795751136", arguments="h\u00e9llo w\u00f6rld",
                   transfer_input="d\u00e0ta.txt", out="\u00f6ut.txt", err="\u00e9rr.txt",
                   transfer_output="out", remaps="out = r\u00e9sultat.txt")
    # what the grid manager sends: printable ASCII, UTF-8 as octal escapes
    assert all(0x20 <= ord(c) < 0x7f for c in ad), ad
    assert 'Arguments = "h\\303\\251llo w\\303\\266rld"' in ad
    assert "/jos\\303\\251" in ad and 'Err = "\\303\\251rr.txt"' in ad
    rc, err, job = client.submit(ad)
    assert (rc, err) == (0, "NULL")
    got = wait_status(client, job, 4, emu)
    assert got[3]["ExitCode"] == "0"
    assert (iwd / "r\u00e9sultat.txt").read_text() == "JOB INPUT\n"
    log = (iwd / "\u00e9rr.txt").read_bytes()
    assert "argument 1: [h\u00e9llo]".encode() in log, log
    assert "argument 2: [w\u00f6rld]".encode() in log, log


def test_a_quoted_attribute_name_does_not_refuse_the_ad(client, emu, iwd):
    (iwd / "in").write_text("x\n")
    ad = submit_ad(iwd, "home_bl_quoted.0_1", transfer_input="in", transfer_output="out",
                   extra={"my attr": classad_string("a;b]"), "True": "1",
                          "jos\u00e9": classad_string("\u00e9")})
    assert "'my attr' = \"a;b]\"" in ad and "'True' = 1" in ad
    rc, err, job = client.submit(ad)
    assert (rc, err) == (0, "NULL")
    wait_status(client, job, 4, emu)
    assert (iwd / "out").read_text() == "X\n"


def test_a_nul_in_a_string_is_refused_naming_the_attribute(client, emu, iwd):
    """No C string can hold it and HTCondor's lexer refuses it: the job is
    refused, never run with its argument cut at the NUL."""
    (iwd / "in").write_text("x\n")
    ad = submit_ad(iwd, "home_bl_nul.0_1", transfer_input="in", arguments="a")
    ad = ad.replace('Arguments = "a"', 'Arguments = "a\\0b"')
    rc, err, job = client.submit(ad)
    assert rc == 1 and job == "NULL", err
    assert "attribute Arguments" in err and "NUL" in err, err
    assert len(emu.state()["batches"]) == 0


def test_a_non_utf8_argument_is_refused_and_holds_no_other_job(client, emu, iwd):
    """A lone \\377 would make the server refuse the whole batch's XML:
    refused at submit, before the job joins a group; the job submitted
    beside it completes."""
    (iwd / "in.0").write_text("good\n")
    (iwd / "in.1").write_text("bad\n")
    good = submit_ad(iwd, "home_bl_u8.0_1", transfer_input="in.0", transfer_output="out",
                     remaps="out = out.0", arguments="h\u00e9llo")
    bad = submit_ad(iwd, "home_bl_u8.1_1", transfer_input="in.1", transfer_output="out",
                    remaps="out = out.1", arguments=b"h\xffllo")
    assert 'Arguments = "h\\377llo"' in bad
    rids = [client.start("BLAH_JOB_SUBMIT", a) for a in (good, bad)]
    (rc0, err0, job0), (rc1, err1, job1) = [client.wait(r) for r in rids]
    assert (rc0, err0) == ("0", "NULL")
    assert rc1 == "1" and job1 == "NULL"
    assert "argument 1 of the job (h\\377llo) is not valid UTF-8" in err1, err1
    wait_status(client, job0, 4, emu)
    assert (iwd / "out.0").read_text() == "GOOD\n"
    assert not (iwd / "out.1").exists()
    c = emu.counters()
    assert c["rpc"]["create_batch"] == 1 and list(c["jobs_by_name"]) == [job0]
