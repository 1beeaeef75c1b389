"""tests/bench/peer_vs_gahp.py, the side-by-side driver of `make bench`,
runs the figures that need no real sample GAHP on tiny sizes and prints
its table.  A stand-in "peer" (boinc_gahp behind a shell wrapper: the
same protocol, its own journal in the peer's directory) takes the sample
GAHP's turns; fig1 and fig8 run boinc_gahp alone (fig1 tells the real
peer's completion by its thread count, which the stand-in does not
share)."""
import json
import os
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DRIVER = os.path.join(REPO, "tests", "bench", "peer_vs_gahp.py")
GAHP = os.environ.get("BOINC_GAHP") or os.path.join(REPO, "build", "boinc_gahp")
EMU = os.environ.get("BOINC_EMU") or os.path.join(REPO, "build", "boinc_emu")
TINY = ["--reps", "1", "--reps-big", "1", "--rounds", "3", "--pings", "20,40",
        "--jobs", "8", "--qb-jobs", "8", "--fo-jobs", "4", "--startup-requests", "50",
        "--no-perf"]


def drive(work, *args):
    env = dict(os.environ, PVG_EMU_ARGS="--php-limits none")
    return subprocess.run(["/usr/bin/python3", DRIVER, "--gahp", GAHP, "--emu", EMU,
                           "--work", str(work)] + TINY + list(args),
                          capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.serial
def test_side_by_side_figures(tmp_path):
    if not (os.access(GAHP, os.X_OK) and os.access(EMU, os.X_OK)):
        pytest.skip("build first: no %s or %s" % (GAHP, EMU))
    peer = tmp_path / "peer"
    peer.write_text("#!/bin/sh\nexec '%s' --journal ./peer.db\n" % GAHP)
    peer.chmod(0o755)
    work = tmp_path / "work"
    both = drive(work, "--peer", str(peer), "--only", "fig2,fig45,fig6,fig7")
    assert both.returncode == 0, both.stdout[-3000:] + both.stderr[-3000:]
    alone = drive(work, "--progs", "gahp", "--targets", "emu", "--only", "fig1,fig8")
    assert alone.returncode == 0, alone.stdout[-3000:] + alone.stderr[-3000:]

    rows = [json.loads(l) for l in (work / "results.jsonl").read_text().splitlines()]
    by = {(r["metric"], r["prog"]): r for r in rows}
    for prog in ("peer", "gahp"):
        assert by[("fig4 8-job submit: wall", prog)]["value"] is not None
        assert by[("fig4 8-job submit: bytes uploaded", prog)]["value"] > 10 << 20
        assert by[("fig5 8-job submit again (same inputs, new batch): bytes uploaded", prog)]["value"] == 0
        assert by[("fig6 QUERY_BATCHES 10 x 8 jobs", prog)]["value"] is not None
        assert by[("fig7 4 pipelined FETCH_OUTPUT: wall", prog)]["ok"] == 4
        assert by[("fig2 isolated ping return line p50", prog)]["value"] > 0
    assert by[("fig1 40 pings emu: every result delivered", "gahp")]["delivered"] == 40
    assert by[("fig3 RSS holding 40 undelivered results", "gahp")]["value"] > 0
    assert any(m.startswith("fig8 start-up to banner") for m, _ in by)

    table = drive(work, "--table")
    assert table.returncode == 0, table.stderr
    assert "| fig4 8-job submit: wall | s |" in table.stdout
    assert "boinc_gahp / peer" in table.stdout.splitlines()[0]


def test_refuses_a_missing_program(tmp_path):
    out = subprocess.run(["/usr/bin/python3", DRIVER, "--work", str(tmp_path), "--emu", EMU,
                          "--gahp", GAHP, "--peer", str(tmp_path / "none"), "--only", "fig2"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--peer must name an executable" in out.stderr
