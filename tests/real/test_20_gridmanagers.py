"""Several grid managers of one user (GRIDMANAGER_SELECTION_EXPR) with the
real HTCondor 9.0.19 schedd: it starts one condor_gridmanager per value of
the expression, each starting its own boinc_gahp.  Each must get a journal
of its own (doc/operating.md, "Several grid managers"), every job must
complete, and a grid manager started again must find its journal again.

Against the emulator only: the question is HTCondor's, not the server's.
"""
import os
import pathlib
import signal
import time

import realsys
from realsys import condor, progress, wait_until

FAST = "--cpu_time 1"
CONFIG = realsys.PREFIX / "etc/condor_config"
JOURNAL_DIR = realsys.HOME / ".local/state/boinc_gahp"
GROUPS = ("alpha", "beta gamma")   # a value with a space: cleaned in the name
SETTING = "GRIDMANAGER_SELECTION_EXPR = GmGroup\n"


def _journals():
    return sorted(p.name for p in JOURNAL_DIR.glob("journal.*.db"))


def _journals_used_since(start):
    """Journals written since start: the pool keeps its journals across
    runs, so a second run opens the first run's journals again rather
    than making new ones (the third run of this scenario found that)."""
    def written(db):
        # In WAL mode a write reaches the -wal file first, the .db file
        # only at a checkpoint.
        wal = db.with_name(db.name + "-wal")
        times = [db.stat().st_mtime] + ([wal.stat().st_mtime] if wal.exists() else [])
        return max(times)
    return {p.name for p in JOURNAL_DIR.glob("journal.*.db") if written(p) >= start}


def _gridmanager_of(group):
    """pid of the condor_gridmanager whose -A value is group, or None."""
    for pid in realsys.pids_named("condor_gridmanager", realsys.UID):
        try:
            argv = pathlib.Path("/proc/%d/cmdline" % pid).read_bytes().split(b"\0")
        except OSError:
            continue
        if b"-A" in argv and argv[argv.index(b"-A") + 1].decode() == group:
            return pid
    return None


def _reconfig(text):
    CONFIG.write_text(text)
    condor(["condor_reconfig"], timeout=60)


def test_one_journal_per_grid_manager(emu_project, scenario_factory):
    original = CONFIG.read_text()
    start = time.time() - 1
    _reconfig(original + SETTING)
    try:
        s = scenario_factory("gridmanagers", emu_project)
        # Each group its own app: HTCondor 9.0 names a batch by schedd, app
        # and second, so two grid managers starting a batch of one app in
        # the same second give both the same name, and the server answers
        # a query of that name with one of them (the first run of this
        # scenario hit it; doc/operating.md).  quorum2 is uppercase with a
        # quorum of 2 on the pool's emulator.
        for g, app in zip(GROUPS, ("uppercase", "quorum2")):
            s.submit(3, arguments=FAST, extra='+GmGroup = "%s"' % g, app=app)
        wait_until(lambda: all(_gridmanager_of(g) for g in GROUPS), 120,
                   "a grid manager per selection value", 1)
        wait_until(lambda: len(realsys.gahp_pids()) >= 2, 120,
                   "a boinc_gahp per grid manager", 1)
        progress("    grid managers %s, boinc_gahp %s" % (
            [_gridmanager_of(g) for g in GROUPS], realsys.gahp_pids()))
        s.wait_settled(300)
        s.check()
        used = _journals_used_since(start)
        assert len(used) == 2, "expected one journal per grid manager: %s" % sorted(used)
        assert any(n.startswith("journal.alpha-") for n in used), used
        assert any(n.startswith("journal.beta_gamma-") for n in used), used
        existing = set(_journals())

        # The grid manager of "alpha" is killed; the schedd starts it again
        # for the next jobs of that group, and its GAHP opens the same journal.
        # A grid manager whose jobs have all left may have exited already
        # (the third run found it gone): then the next jobs start a new one
        # all the same.
        pid = _gridmanager_of("alpha")
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            progress("    SIGKILL condor_gridmanager %d (alpha)" % pid)
        else:
            progress("    the grid manager of alpha has exited by itself")
        s.submit(2, arguments=FAST, extra='+GmGroup = "alpha"')
        wait_until(lambda: _gridmanager_of("alpha") not in (None, pid), 180,
                   "a new grid manager for alpha", 1)
        s.wait_settled(300)
        s.check()
        assert set(_journals()) == existing, "a restarted grid manager made a new journal"
        assert _journals_used_since(start) == used, "a restarted grid manager used another journal"
    finally:
        _reconfig(original)
