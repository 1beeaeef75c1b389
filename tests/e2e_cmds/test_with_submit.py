"""The whole life of a batch through the GAHP alone, as HTCondor drives
it: BOINC_SUBMIT, BOINC_QUERY_BATCHES (which updates the jobs rows the
submit created), BOINC_FETCH_OUTPUT, BOINC_SET_LEASE, BOINC_RETIRE_BATCH."""
import sqlite3

from cmds_helpers import parse_query


def test_batch_life_cycle_through_the_gahp(make_session, emu, journal, iwd, tmp_path):
    s = make_session(emu)
    src = tmp_path / "input file.txt"
    src.write_text("life cycle\n")
    toks = s.call("BOINC_SUBMIT", "lc", "uppercase", 2,
                  "lc#1", 0, 1, str(src), "in",
                  "lc#2", 0, 1, str(src), "in")
    assert toks == ["NULL"], toks

    db = sqlite3.connect(journal, timeout=10)

    def job_rows():
        return dict(db.execute("SELECT jobs.name, jobs.status FROM jobs JOIN batches"
                               " ON jobs.batch_id = batches.id WHERE batches.name = 'lc'"))

    assert set(job_rows()) == {"lc#1", "lc#2"}
    t0, (jobs,) = parse_query(s.query("0", "lc"), 1)
    assert jobs == {"lc#1": "IN_PROGRESS", "lc#2": "IN_PROGRESS"}
    # The journal keeps the server's own word.
    assert job_rows() == {"lc#1": "UNSENT", "lc#2": "UNSENT"}

    emu.advance(5)
    emu.run()
    _, (jobs,) = parse_query(s.query(t0, "lc"), 1)
    assert jobs == {"lc#1": "DONE", "lc#2": "DONE"}
    assert job_rows() == {"lc#1": "DONE", "lc#2": "DONE"}

    toks = s.fetch("lc#2", str(iwd), "lc.err", "ALL", [("out", "result 2.txt")])
    assert toks[0] == "NULL" and len(toks) == 4, toks
    assert (iwd / "result 2.txt").read_text() == "LIFE CYCLE\n"

    lease = int(emu.state()["time"]) + 3600
    assert s.call("BOINC_SET_LEASE", "lc", lease) == ["NULL"]
    assert s.call("BOINC_RETIRE_BATCH", "lc") == ["NULL"]
    assert db.execute("SELECT retired, lease FROM batches WHERE name = 'lc'").fetchone() == (1, lease)
    (b,) = emu.batch_state("lc")
    assert b["retired"] is True and b["expire_time"] == lease
    db.close()
