"""Scenarios for what the real HTCondor 9.0.19 client showed (issue 18;
reference/htcondor-client.md, "Seen running the real client"), driven by
the simulated grid manager, which now applies statuses by cluster.proc
across batches, keeps an ERROR hold sticky and does not wait for the
ping, against the real boinc_gahp and the emulator."""
from gridmanager_sim import COMPLETED, HELD, RUNNING
from sim_invariants import check_invariants


def test_released_job_completes_in_a_new_batch_and_is_never_held(make_gm, add_jobs, emulator):
    """condor_hold of a running job (one BOINC_ABORT_JOBS) while its batch's
    other jobs run, condor_release: the job joins a new batch (a new
    BOINC_SUBMIT, same cluster.proc) and both batches are polled with
    partial queries until everything is done.  With the 9.0 client's
    cross-batch matching, any status of the aborted copy in the old batch
    (ERROR above all) would hit the released job; the GAHP must never
    report an aborted job again, so the released job completes with its
    output and is never held by the grid manager."""
    emulator.default_behaviour("slow")          # every run takes delay_bound/2 = 300 s
    gm = make_gm(seed=41, max_cycles=40)
    jobs = add_jobs(gm, 4)
    target = jobs[1]
    events = {"held": None, "released": None}
    holds = []

    def hook(proc):
        cycle = gm.cycles
        if events["held"] is None and target.state == RUNNING:
            gm.hold_by_user(target)
            events["held"] = cycle
        elif events["released"] is None and target.state == HELD:
            holds.append(target.hold_reason)
            gm.release(target)
            events["released"] = cycle
        elif events["released"] is not None and target.state == HELD:
            holds.append(target.hold_reason)
            gm.release(target)                  # the user tries again (sticky?)
        emulator.advance(60)
    gm.poll_hook = hook
    gm.run(max_processes=1)

    assert events["held"] is not None and events["released"] is not None, events
    assert holds == ["via condor_hold"], holds  # never held by the grid manager
    assert gm.reholds == [] and gm.error_holds == [], (gm.reholds, gm.error_holds)
    check_invariants(gm, emulator)
    assert all(j.state == COMPLETED for j in jobs), jobs
    # one abort, for the old copy; then a new batch with the same cluster.proc
    aborts = [w[1] for w in gm.wire_log if w[1].startswith("BOINC_ABORT_JOBS")]
    assert len(aborts) == 1 and aborts[0].endswith("#" + target.id), aborts
    old_batch = aborts[0].split(" ")[2].rsplit("#", 1)[0]
    assert len(gm.submits) == 2, gm.submits
    assert gm.submits[0][1] == old_batch and gm.submits[1][1] != old_batch
    assert gm.submits[1][2] == [target.id]
    assert target.remote_name == "%s#%s" % (gm.submits[1][1], target.id)
    # the old batch was still polled, with partial queries, while the new
    # batch ran: both named in one partial query at least once
    both = [q for q in gm.queries if q[1] != "0" and old_batch in q[2]
            and gm.submits[1][1] in q[2]]
    assert both, gm.queries
    # after its abort, no reply listed the aborted copy again (whatever status)
    aborted = "%s#%s" % (old_batch, target.id)
    at = next(i for i, (_, line, _) in enumerate(gm.results_log)
              if line.startswith("BOINC_ABORT_JOBS"))
    later = [r for _, line, r in gm.results_log[at:]
             if line.startswith("BOINC_QUERY_BATCHES") and aborted in r[1:]]
    assert later == [], later
    assert gm.cross_batch_statuses == [], gm.cross_batch_statuses
    assert len(emulator.counters()["jobs_by_name"]) == 5


def test_bad_project_url_next_to_good_jobs(make_gm, add_jobs, emulator, resource, tmp_path):
    """A grid_resource URL that is not http/https (a typo) next to good jobs:
    BOINC_SELECT_PROJECT answers S (no crash loop), the bad project's
    BOINC_SUBMIT gets an error result that becomes its job's hold reason
    verbatim, and the good jobs complete.  No E anywhere."""
    gm = make_gm(seed=42)
    good = add_jobs(gm, 3)
    bad_res = ("htps://" + resource[0].split("://", 1)[1], resource[1])
    bad = add_jobs(gm, 1, res=bad_res, iwd_root=tmp_path / "badjobs")
    gm.run(max_processes=3)

    assert gm.unexpected_exits == [], gm.unexpected_exits
    assert len(gm.processes) == 1, gm.exits
    assert all(reply[0].startswith("S") for _, _, reply in gm.wire_log), \
        [w for w in gm.wire_log if not w[2][0].startswith("S")]
    assert (1, bad_res) in gm.selects
    submit_results = [r[1:] for _, line, r in gm.results_log     # r: <id> <result>
                      if line.startswith("BOINC_SUBMIT") and bad[0].id in line]
    assert len(submit_results) == 1 and len(submit_results[0]) == 1, submit_results
    reason = submit_results[0][0]
    assert reason != "NULL" and "grid_resource" in reason, reason
    assert bad[0].state == HELD and bad[0].hold_reason == reason, bad
    check_invariants(gm, emulator, allowed_holds=(reason,))
    assert all(j.state == COMPLETED for j in good), good
