"""BOINC_FETCH_OUTPUT's template cache (src/fetch/fetch_step.c), against
the real emulator and its RPC counters: pipelined fetches of jobs of one
app submitted through the GAHP cost one get_templates, a job the journal
does not know costs one per fetch, and an output template changed on the
server side is still honoured."""
from gahp_client import split_tokens

TWO_OUTPUTS = """<emu_config>
  <app><name>tpl</name><kind>twoinout</kind><input>a</input><input>b</input>
       <output>sum</output><output>log</output></app>
</emu_config>
"""

# The same app after the project changed it: one input, one output.
ONE_OUTPUT = """<emu_config>
  <app><name>tpl</name><kind>uppercase</kind><input>in</input>
       <output>out</output></app>
</emu_config>
"""


def get_templates(emu):
    return emu.counters()["rpc"]["get_templates"]


def fetch_all(s, jobs, iwd):
    """Pipelined fetches (ALL) of jobs, each into iwd/<job>; every one must
    succeed."""
    rids = {}
    for job in jobs:
        d = iwd / job.replace("#", "_")
        d.mkdir()
        rids[s.start("BOINC_FETCH_OUTPUT", job, str(d), "err", "ALL", 0)] = job
    for line in s.gahp.wait_results(len(rids), timeout=120):
        toks = split_tokens(line)
        assert toks[1] == "NULL", (rids[int(toks[0])], toks)
        del rids[int(toks[0])]
    assert not rids


def submit_uppercase(s, batch, n, tmp_path):
    args = []
    for i in range(n):
        src = tmp_path / ("%s-%d.txt" % (batch, i))
        src.write_text("text %d\n" % i)
        args += ["%s#%d" % (batch, i), 0, 1, str(src), "in"]
    assert s.call("BOINC_SUBMIT", batch, "uppercase", n, *args) == ["NULL"]


def test_fetches_of_one_app_cost_one_get_templates(make_session, emu, iwd, tmp_path):
    s = make_session(emu)
    submit_uppercase(s, "tc", 8, tmp_path)
    emu.run()
    before = get_templates(emu)
    fetch_all(s, ["tc#%d" % i for i in range(8)], iwd)
    for i in range(8):
        assert (iwd / ("tc_%d" % i) / "out").read_text() == "TEXT %d\n" % i
    # 8 pipelined fetches on several workers: one asked, the others waited
    # for its answer or found it cached.
    assert get_templates(emu) - before == 1
    # Later fetches of the same app, one at a time: still cached.
    again = iwd / "again"
    again.mkdir()
    assert s.fetch("tc#3", str(again), "err", "ALL")[0] == "NULL"
    assert (again / "out").read_text() == "TEXT 3\n"
    assert get_templates(emu) - before == 1


def test_job_unknown_to_the_journal_asks_by_job_name(session, emu, iwd):
    # Submitted straight to the server: the journal cannot name its app, so
    # each fetch asks get_templates by job name (doc/commands.md).
    emu.submit("foreign", "uppercase", [("foreign#1", [b"abc\n"], None)])
    emu.run()
    before = get_templates(emu)
    for k in range(2):
        d = iwd / str(k)
        d.mkdir()
        assert session.fetch("foreign#1", str(d), "err", "ALL")[0] == "NULL"
        assert (d / "out").read_text() == "ABC\n"
    assert get_templates(emu) - before == 2


def test_changed_output_template_is_honoured(make_session, make_emu, iwd, tmp_path):
    emu = make_emu(TWO_OUTPUTS)
    s = make_session(emu, args=("--retry-budget", "2"))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("1 2\n")
    b.write_text("3\n")
    assert s.call("BOINC_SUBMIT", "old", "tpl", 1,
                  "old#1", 0, 2, str(a), "a", str(b), "b") == ["NULL"]
    emu.run()
    fetch_all(s, ["old#1"], iwd)
    assert sorted(p.name for p in (iwd / "old_1").iterdir()) == ["err", "log", "sum"]
    assert (iwd / "old_1" / "sum").read_text() == "6\n"

    # The project changes the app: its jobs now have one output, "out".
    # Same port, so the GAHP's cache entry (project URL, app) still holds
    # the old templates, whose file 1 no longer exists.
    emu.stop()
    emu.config = str(tmp_path / "one_output.xml")
    (tmp_path / "one_output.xml").write_text(ONE_OUTPUT)
    emu.start()
    assert s.call("BOINC_SUBMIT", "new", "tpl", 1, "new#1", 0, 1, str(a), "in") == ["NULL"]
    emu.run()
    fetch_all(s, ["new#1"], iwd)
    # The failed download with cached templates made the fetch ask again,
    # and the new template named the file.
    assert sorted(p.name for p in (iwd / "new_1").iterdir()) == ["err", "out"]
    assert (iwd / "new_1" / "out").read_text() == "1 2\n"
    assert get_templates(emu) == 1 + 1      # the submit's, the fetch's refresh
    # And the refreshed entry serves the next fetch.
    d = iwd / "next"
    d.mkdir()
    assert s.fetch("new#1", str(d), "err", "ALL")[0] == "NULL"
    assert sorted(p.name for p in d.iterdir()) == ["err", "out"]
    assert get_templates(emu) == 2


# The same app renamed its outputs, their number unchanged (issue 42: a
# sampled mutant that compared the names' presence only, not the names,
# survived every net).
SAME_COUNT_NEW_NAMES = """<emu_config>
  <app><name>tpl</name><kind>twoinout</kind><input>a</input><input>b</input>
       <output>total</output><output>notes</output></app>
</emu_config>
"""


def test_renamed_outputs_are_honoured_after_a_failed_download(make_session, make_emu, iwd,
                                                              tmp_path):
    emu = make_emu(TWO_OUTPUTS)
    s = make_session(emu, args=("--retry-budget", "0"))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("1 2\n")
    b.write_text("3\n")
    assert s.call("BOINC_SUBMIT", "old", "tpl", 1,
                  "old#1", 0, 2, str(a), "a", str(b), "b") == ["NULL"]
    emu.run()
    fetch_all(s, ["old#1"], iwd)
    assert sorted(p.name for p in (iwd / "old_1").iterdir()) == ["err", "log", "sum"]

    # The cache still holds (sum, log); the project now calls them (total,
    # notes).  A download that fails makes the fetch ask for the templates
    # again; the new names differ, so it downloads again with them.
    emu.stop()
    emu.config = str(tmp_path / "renamed.xml")
    (tmp_path / "renamed.xml").write_text(SAME_COUNT_NEW_NAMES)
    emu.start()
    assert s.call("BOINC_SUBMIT", "new", "tpl", 1,
                  "new#1", 0, 2, str(a), "a", str(b), "b") == ["NULL"]
    emu.run()
    emu.fault("get_output.php", "html_error", count=1)
    fetch_all(s, ["new#1"], iwd)
    assert sorted(p.name for p in (iwd / "new_1").iterdir()) == ["err", "notes", "total"]
    assert (iwd / "new_1" / "total").read_text() == "6\n"
