"""Issue 39's "Done when" on the real HTCondor 25.0.13 pool (`grid_resource =
batch boinc`, the BLAH commands), against the pools' emulator project
(doc/real-systems.md):

* UTF-8 text as the real grid manager writes it (octal escapes from
  sink.cpp): an Iwd named `josé`, input and error files `dàta.txt` and
  `érr.txt`, arguments `héllo wörld`, reach the job byte for byte;
* the project unreachable (the emulator answering 503 to everything) for
  OUTAGE_S seconds during the batch's submit and again while the jobs
  run: no job is ever held, all complete;
* a repeat BLAH_JOB_SUBMIT after the job's input moved away gets the same
  BOINC job.

Same fixtures and invariants as test_30 (Scenario.check: completed or held
for an allowed reason, nothing twice on the project, no unexplained
EXCEPT in the GridmanagerLog; one BOINC job per HTCondor job).
"""
import contextlib
import json
import os
import re
import shlex
import time
import urllib.parse
import urllib.request

import pytest

import realsys
import realsys25
from realsys25 import rs
from test_30_htcondor25 import FAST, emu25, pool25, scenario25  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not realsys25.available(),
                                reason="no HTCondor 25.0 pool (setup_real.sh sets it up)")

# The outage: 5 minutes.  BOINC_REAL_OUTAGE_S shortens it for a
# local run (the scenario is the same).
OUTAGE_S = int(os.environ.get("BOINC_REAL_OUTAGE_S", "300"))

# How long the new GAHP's first BLAH_PING is held back in the repeat-submit
# scenario: the grid manager re-sends no submit before its first ping
# returns (infnbatchjob.cpp GM_INIT waits for didFirstPing), while the
# GAHP's start-up puts the journaled batch on the server.  Far below the
# GAHP's http_timeout (300 s) and the grid manager's
# GRIDMANAGER_GAHP_CALL_TIMEOUT (300 s).
PING_DELAY_S = 60

# The batch window of the outage scenario: the batch's submit starts inside
# the outage (20 s for the 5 minutes, shorter for a short local run).
OUTAGE_WINDOW_S = max(1, min(20, OUTAGE_S // 3))


# ------------------------------------------------------------------ helpers
def emu_post(project, name, **params):
    """POST to the pool emulator's control API (/control/fault,
    /control/clear_faults; doc/emulator.md).  The control API itself is
    never faulted."""
    url = project.control_url + name
    if params:
        url += "?" + urllib.parse.urlencode(params)
    req = urllib.request.Request(url, data=b"", method="POST")
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=60) as r:
        body = r.read()
    return json.loads(body) if body else {}


def history(job, attrs):
    """{attr: text} of a job in condor_history, or None while it is not there."""
    out = rs.condor(["condor_history", "-af:t"] + list(attrs) +
                    ["-constraint", "ClusterId == %d && ProcId == %d" % job], timeout=60)
    line = out.splitlines()[0] if out.strip() else ""
    return dict(zip(attrs, line.split("\t"))) if line else None


def chown(path):
    os.chown(path, rs.UID, rs.GID)
    return path


# ------------------------------------------------------------------ UTF-8
IWD = "jos\u00e9"
INPUT = "d\u00e0ta.txt"
ERR = "\u00e9rr.txt"
RESULT = "r\u00e9sultat.txt"
ARGS = ("h\u00e9llo", "w\u00f6rld")

UTF8_SUBMIT = """universe = grid
grid_resource = batch boinc
batch_queue = uppercase
executable = /bin/true
transfer_executable = false
transfer_input_files = {input}
transfer_output_files = out
transfer_output_remaps = "out = {result}"
error = {err}
arguments = "{args}"
log = {log}
notification = never
queue 1
"""


def test_b25_utf8_iwd_file_names_and_arguments_reach_the_job(emu25, scenario25):
    """The 25.0 grid manager sends `é` as `\\303\\251`: the job runs in
    .../josé with dàta.txt, gets exactly the arguments héllo and wörld (the
    emulator's app echoes them on its stderr), its stderr lands in érr.txt
    and its output in résultat.txt, and nothing in Iwd has a rewritten
    name (the issue saw `303251rr.txt` and `h303251llo`)."""
    s = scenario25("utf8", emu25)
    iwd = s.dir / IWD
    iwd.mkdir()
    chown(iwd)
    data = ("d\u00e0ta of jos\u00e9, %s\n" % realsys.RUN_ID).encode("utf-8")
    (iwd / INPUT).write_bytes(data)
    chown(iwd / INPUT)
    text = UTF8_SUBMIT.format(input=INPUT, result=RESULT, err=ERR, args=" ".join(ARGS),
                              log=s.dir / "jobs.log")
    sub = iwd / "c0.sub"
    sub.write_bytes(text.encode("utf-8"))
    chown(sub)
    out = rs.condor(["condor_submit", "c0.sub"], cwd=str(iwd), timeout=120)
    m = re.search(r"submitted to cluster (\d+)", out)
    assert m, out
    job = (int(m.group(1)), 0)
    s.clusters.append(job[0])
    s.expected[job] = (None, 0)         # its output is checked here, under its UTF-8 name
    realsys.progress("    cluster %d: 1 job submitted from %s" % (job[0], iwd))

    s.wait_settled(300)
    s.check()
    s.check_once()
    h = rs.wait_until(lambda: history(job, ["JobStatus", "ExitCode"]), 60,
                      "job %d.%d in condor_history" % job, 2)
    assert h == {"JobStatus": "4", "ExitCode": "0"}, h
    # the output, whole, under its UTF-8 name (the app upper-cases ASCII only)
    assert (iwd / RESULT).read_bytes() == data.upper()
    # the job's stderr under its UTF-8 name, with its two arguments exactly
    err = (iwd / ERR).read_bytes()
    for i, a in enumerate(ARGS, 1):
        assert ("argument %d: [%s]" % (i, a)).encode("utf-8") in err, err[:2000]
    assert b"argument 3:" not in err, err[:2000]
    # nothing else in Iwd: no `out`, no name with the escapes' digits
    names = sorted(os.listdir(os.fsencode(iwd)))
    want = sorted(n.encode("utf-8") for n in ("c0.sub", INPUT, ERR, RESULT))
    assert names == want, names
    # what the grid manager sent is the unparser's text: UTF-8 as octal
    # escapes (GAHP-escaped in the log: one or two backslashes)
    assert re.search(r"<- 'BLAH_JOB_SUBMIT.*jos\\{1,2}303\\{1,2}251", s.gm.text()), \
        "no octal escape of the Iwd in the BLAH_JOB_SUBMIT the grid manager sent"


# ------------------------------------------------------------------ outages
def asked(project):
    """Requests the emulator received, faulted ones included (its RPC
    counters count an RPC when it arrives; http_requests every request to
    a project script)."""
    c = project.control("counters")
    return c["http_requests"] + sum(c["rpc"].values())


def outage(s, project, seconds, what):
    """The whole project answers 503 for `seconds` (endpoint `*`,
    probability 1); condor_q is polled every few seconds and any held job
    fails the scenario at once.  Returns ({JobStatus: times seen}, the
    requests the emulator refused meanwhile)."""
    before = asked(project)
    emu_post(project, "fault", endpoint="*", kind="http503", probability=1)
    realsys.progress("    project unreachable for %d s (%s)" % (seconds, what))
    seen = {}
    try:
        end = time.monotonic() + seconds
        while True:
            rows = s.rows()
            held = {"%d.%d" % j: r["HoldReason"] for j, r in rows.items()
                    if r["JobStatus"] == 5}
            assert not held, "job(s) held during the outage %s: %s" % (what, held)
            for r in rows.values():
                seen[r["JobStatus"]] = seen.get(r["JobStatus"], 0) + 1
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(5.0, left))
    finally:
        emu_post(project, "clear_faults")
    tried = asked(project) - before
    realsys.progress("    project back after the outage %s (%d request(s) refused, statuses "
                     "seen %s)" % (what, tried, seen))
    return seen, tried


def test_b25_outages_during_the_submit_and_while_jobs_run_hold_nothing(emu25, scenario25):
    """10 jobs; the project unreachable for OUTAGE_S from the moment the
    first job joined its batch (the batch window is OUTAGE_WINDOW_S, so
    the batch's submit runs into the outage), and again for OUTAGE_S once
    a job runs.  No job is ever held (condor_q during both outages, the user log
    after), and all complete with their outputs."""
    s = scenario25("outage", emu25, extra_config="blah_batch_window = %d\n" % OUTAGE_WINDOW_S)
    cl = s.submit(10, arguments=FAST)
    s.gahp.wait_for(r"BLAH: job \S+ is bgahp_", 180)
    seen, tried = outage(s, emu25, OUTAGE_S, "during the submit")
    assert not s.new_boinc_jobs(), "a job reached the server during the outage"
    assert tried > 0, "boinc_gahp asked the project nothing during the outage"
    assert set(seen) <= {1, 2}, seen
    # every submit was answered with a job id, outage or not
    rs.wait_until(lambda: len(s.grid_job_ids()) == 10, 180,
                  "the 10 jobs' BOINC ids in GridJobId", 2)

    # the back-off after the outage is at most 300 s; the second outage
    # starts as soon as the jobs are on the server (they run for seconds on
    # the emulator, and the grid manager may never see one at status 2:
    # waiting for that left the first run of this scenario waiting after
    # every job had completed)
    rs.wait_until(lambda: len(s.new_boinc_jobs()) == 10, OUTAGE_S + 600,
                  "the 10 BOINC jobs on the server", 1)
    realsys.progress("    the 10 BOINC jobs are on the server")
    seen, tried = outage(s, emu25, OUTAGE_S, "while jobs run")
    if OUTAGE_S >= 60:      # the scheduler's passes: every blah_status_interval (30 s)
        assert tried > 0, "boinc_gahp asked the project nothing during the outage"
    s.wait_settled(OUTAGE_S + 900)
    s.check()
    s.check_once()
    assert all((cl, p) not in s.rows() for p in range(10))


# ------------------------------------------------------------------ repeat submit
CRASH_WRAPPER = """#!/bin/sh
# test_31 (issue 39): the pool's boinc_gahp, armed once with a crash point
if rm {marker} 2>/dev/null; then
    BOINC_GAHP_TEST_CRASH_AT={point}
    export BOINC_GAHP_TEST_CRASH_AT
fi
exec {gahp} "$@"
"""

CONF_BEGIN = "# test_31 (issue 39): BOINC_GAHP armed once -- begin"
CONF_END = "# test_31 (issue 39): BOINC_GAHP armed once -- end"


def _without_block(text):
    return re.sub(r"\n?%s\n.*?%s\n" % (re.escape(CONF_BEGIN), re.escape(CONF_END)), "\n",
                  text, flags=re.S)


@contextlib.contextmanager
def pool_gahp(path):
    """The pool's BOINC_GAHP set to `path` for the grid managers started
    meanwhile (a grid manager reads its configuration when it starts): a
    block appended to the pool's condor_config (the last definition
    wins), removed afterwards, and any block an interrupted run left
    removed first."""
    conf = rs.PREFIX / "etc/condor_config"
    body = _without_block(conf.read_text())
    conf.write_text(body.rstrip("\n") + "\n\n%s\nBOINC_GAHP = %s\n%s\n" % (CONF_BEGIN, path,
                                                                          CONF_END))
    try:
        yield
    finally:
        conf.write_text(_without_block(conf.read_text()))


def test_b25_repeat_submit_after_the_input_moved_gets_the_same_job(emu25, scenario25):
    """The GAHP dies right after journaling the job, before answering
    (BOINC_GAHP_TEST_CRASH_AT=blah.joined, armed for the first GAHP only
    through a wrapper named by BOINC_GAHP).  The new GAHP's start-up puts
    the journaled batch on the server while its first BLAH_PING is held
    back (the emulator delays `ping`), so the grid manager has not re-sent
    the submit yet; then the job's input is moved away, and the re-sent
    BLAH_JOB_SUBMIT (same JobDirectory) must get the same BOINC job, not
    `input file ...: No such file`.  The job completes with the input still
    gone; one BOINC job on the project."""
    s = scenario25("repeat-moved", emu25)
    gahp = rs.condor(["condor_config_val", "BOINC_GAHP"], timeout=60).strip()
    assert gahp and "test_31" not in gahp, gahp
    marker = s.write("crash-once", "")
    wrapper = s.write("gahp-crash-once.sh", CRASH_WRAPPER.format(
        marker=shlex.quote(str(marker)), point="blah.joined", gahp=shlex.quote(gahp)))
    os.chmod(wrapper, 0o755)
    try:
        with pool_gahp(wrapper):
            cl = s.submit(1, arguments=FAST)
            job = (cl, 0)
            rs.wait_until(lambda: re.search(r"test crash point blah\.joined reached",
                                            s.gahp.text()), 180,
                          "the GAHP to die after journaling the job", 0.05)
            # before the schedd starts the next grid manager (about 9 s)
            emu_post(emu25, "fault", endpoint="ping", kind="delay",
                     delay_ms=PING_DELAY_S * 1000, probability=1)
            s.kills += 1
            realsys.progress("    GAHP died at blah.joined; the next BLAH_PING held back %d s"
                             % PING_DELAY_S)
            assert not marker.exists()
            # the new GAHP's start-up closes and submits the journaled batch
            # (recovery's submit logs no "submitted" line: the server is asked)
            s.gahp.wait_for(r"recovery: 1 BLAH batch closed and submitted", 180)
            new = rs.wait_until(lambda: s.new_boinc_jobs(), 180,
                                "the journaled batch's job on the server", 0.2)
            assert len(new) == 1, new
            (boinc_id,) = new
            subs = s.gm_lines(r"<- 'BLAH_JOB_SUBMIT")
            assert len(subs) == 1, ("the grid manager re-sent the submit before the batch "
                                    "reached the server (%d submits): the scenario's timing "
                                    "failed, not the GAHP" % len(subs))
            src = s.dir / "in0.0"
            os.rename(src, s.dir / "in0.0.moved")
            realsys.progress("    %s on the server; in0.0 moved away" % boinc_id)
            emu_post(emu25, "clear_faults")
            # the re-sent submit and its answer: the same id
            rs.wait_until(lambda: len(s.gm_lines(r"<- 'BLAH_JOB_SUBMIT")) >= 2,
                          PING_DELAY_S + 240, "the grid manager to re-send the submit", 1)
            m = s.gahp.wait_for(r"BLAH: job \S+ is already (bgahp_[^\s:]+): the same job "
                                r"id again", 120)
            assert m.group(1) == boinc_id, (m.group(1), boinc_id)
            got = rs.wait_until(lambda: s.grid_job_ids().get(job), 120,
                                "job %d.%d's BOINC id in GridJobId" % job, 1)
            assert got == boinc_id, (got, boinc_id)
            bad = re.findall(r"^.*(?:BLAH: job \S+ refused|No such file).*$", s.gahp.text(),
                             re.M)
            assert not bad, bad[:3]
            s.wait_settled(600)
    finally:
        emu_post(emu25, "clear_faults")
    s.check()
    s.check_once()
    assert not src.exists(), "the input came back"
    assert emu25.control("counters")["jobs_by_name"].get(boinc_id) == 1
    h = history(job, ["JobStatus", "ExitCode", "GridJobId"])
    assert h is not None and h["JobStatus"] == "4" and h["GridJobId"].endswith(" " + boinc_id), h


# ------------------------------------------------------------------ per-job isolation
BIG = 4 * 1024 * 1024       # twice a stock PHP's upload_max_filesize (2M)


def test_b25_one_too_large_input_holds_its_job_alone(emu25, scenario25):
    """Issue 39 item 3's "Done when": a cluster of 10 where job 3's input is
    4 MB.  The pools' emulator keeps a stock PHP's upload limits (2M), so
    upload_files refuses that input as a real BOINC server does: job 3 is
    held alone with a reason naming the file and its size; the other 9 are
    submitted again as a new batch without it and complete with their
    outputs.  Nothing is created twice: 9 BOINC jobs, the refused batch
    (created, never submitted) and the one that ran."""
    s = scenario25("isolation", emu25)
    batches_before = realsys25.project_batch_names(emu25)
    # s.submit writes every input then submits at once: its submit file is
    # written here instead, with job 3's input 4 MB before condor_submit
    k = len(s.clusters)
    for i in range(10):
        s.write("in%d.%d" % (k, i), b"x" * BIG if i == 3 else s.content(1000 * k + i))
    text = rs.SUBMIT_TEMPLATE.format(app="uppercase", inputs="in%d.$(Process)" % k,
                                     extra="arguments = %s" % FAST, n=10)
    text = text.replace('"out = out.$(Process)"', '"out = out%d.$(Process)"' % k)
    text = text.replace("err.$(Process)", "err%d.$(Process)" % k)
    sub = s.write("c%d.sub" % k, text)
    out = rs.condor(["condor_submit", sub.name], cwd=str(s.dir), timeout=120)
    m = re.search(r"submitted to cluster (\d+)", out)
    assert m, out
    cl = int(m.group(1))
    s.clusters.append(cl)
    for i in range(10):
        s.expected[(cl, i)] = (None, k) if i == 3 else (s.content(1000 * k + i).upper(), k)
    big = (cl, 3)
    s.allowed_holds[big] = r"in%d\.3 is %d bytes.*upload_max_filesize" % (k, BIG)
    realsys.progress("    cluster %d: 10 jobs submitted, job 3's input %d bytes" % (cl, BIG))

    s.wait_settled(900)
    rows = s.rows()
    assert rows[big]["JobStatus"] == 5, rows.get(big)
    reason = rows[big]["HoldReason"]
    assert str(s.dir / ("in%d.3" % k)) in reason and str(BIG) in reason, reason
    assert len(reason.encode()) <= 300, reason
    nine = [(cl, i) for i in range(10) if i != 3]
    # the 9 completed with their outputs (check reads out<k>.<i>), job 3
    # held for its input only; nothing twice on the emulator
    s.check(must_complete=nine)
    assert not (s.dir / ("out%d.3" % k)).exists()
    new = s.new_boinc_jobs()
    assert len(new) == 9, "%d BOINC jobs for the 9 jobs that fit: %s" % (len(new), sorted(new))
    ids = s.grid_job_ids()
    assert set(ids.get(j) for j in nine if ids.get(j)) <= new
    batches = realsys25.project_batch_names(emu25) - batches_before
    assert len(batches) == 2, batches
    assert re.search(r"BLAH: batch \S+ was refused for input \S*in%d\.3: 1 job held" % k,
                     s.gahp.text()), "no split of the refused batch in the GAHP's log"
