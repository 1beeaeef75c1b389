"""Issue 8 points 3 and 4, issue 18 point 1: status replies the real
client can neither lose nor apply to the wrong job.

The grid manager stops reading a status reply after the first unconfirmed
batch it confirms (dropping that reply's statuses), resubmits an
unconfirmed batch whose group has 0 jobs, only remembers server_time of
partial queries, applies a status to whichever job has that cluster.proc
whatever the batch, and the server compares whole-second modification
times.  boinc_gahp hands the client its journal's change number as
server_time; a partial query lists the jobs changed since the number it
brings back (for a batch the client knows as submitted in this session),
a batch the client may be unsure of gets every job, an aborted job is
never listed again, and the server is asked incrementally with a margin
below the last server_time recorded."""
import random

import emu
from htc import client_loop, parse_groups


class StatusPoller:
    """The grid manager's status polling after a restart: every batch
    unconfirmed, a full query first, then partial queries passing back the
    previous partial query's server_time verbatim."""

    def __init__(self, gm, batches, unconfirmed=True):
        self.gm = gm
        self.batches = list(batches)
        self.unconfirmed = set(batches) if unconfirmed else set()
        self.statuses = {}
        self.resubmits = []
        self.full = True
        self.partial_time = "0"

    def poll(self):
        toks = self.gm.query("0" if self.full else self.partial_time, self.batches)
        server_time, groups = parse_groups(toks, len(self.batches))
        seen, confirmed, resubmit = client_loop(list(zip(self.batches, groups)),
                                                self.unconfirmed)
        self.statuses.update(seen)
        self.resubmits += resubmit
        if confirmed is not None:
            self.unconfirmed.discard(confirmed)
        if not self.full:
            self.partial_time = server_time
        self.full = False
        return groups


def submit_batches(gm, inputs, nbatches, njobs, tag):
    shared = inputs("shared_%s" % tag, "shared input\n")
    names = {}
    for b in range(nbatches):
        batch = "condor#s#uppercase#%s%d" % (tag, b)
        jobs = [("%s#%d.%d" % (batch, b + 1, j), [], [(shared, "in")]) for j in range(njobs)]
        assert gm.wait(gm.submit(batch, "uppercase", jobs, shuffle=random.Random(b))) == ["NULL"]
        names[batch] = [j[0] for j in jobs]
    return names


def test_every_done_reaches_the_early_stopping_client(make_gm, emulator, inputs):
    gm = make_gm()
    names = submit_batches(gm, inputs, 4, 4, "e")
    emulator.run(7200)
    emulator.advance(30)
    gm.gahp.kill()                              # GAHP dies; grid manager restarts
    poller = StatusPoller(make_gm(), names)
    for _ in range(8):
        poller.poll()
        if not poller.unconfirmed and len(poller.statuses) == 16:
            break
        emulator.advance(60)                    # the client polls every 60 s
    assert poller.resubmits == []               # never a 0-job group for a real batch
    assert not poller.unconfirmed
    want = {j: "DONE" for jobs in names.values() for j in jobs}
    assert poller.statuses == want


def test_change_in_the_same_second_as_server_time_is_reported(make_gm, emulator, inputs):
    gm = make_gm()
    names = submit_batches(gm, inputs, 1, 3, "s")
    (batch, jobs), = names.items()
    poller = StatusPoller(gm, [batch], unconfirmed=False)
    poller.poll()                               # full
    poller.poll()                               # first partial: remembers server_time
    # the emulator's clock stands still: the project aborts the job (not
    # the client) in the same second as that server_time
    r = emulator.rpc(emu.xml_simple("abort_jobs", emulator.authenticator, job_name=jobs[1]))
    assert b"<success>1</success>" in r.body, r.body
    poller.poll()
    assert poller.statuses.get(jobs[1]) == "ERROR", poller.statuses


def test_polling_an_unchanged_batch_does_not_list_it_again(make_gm, emulator, inputs):
    gm = make_gm()
    names = submit_batches(gm, inputs, 1, 300, "u")
    (batch, jobs), = names.items()
    emulator.run(7200)
    emulator.advance(30)
    _, (group,) = parse_groups(gm.query("0", [batch]), 1)
    assert set(group.values()) == {"DONE"} and len(group) == 300
    emulator.advance(30)
    before = emulator.counters()["query_batch2_jobs"]
    t = "0"
    for i in range(5):
        # full queries get the full list, partial ones what changed since
        # the number they bring back: nothing...
        full = i % 2 == 1 or t == "0"
        toks = gm.query("0" if i % 2 else t, [batch])
        new_t, (group,) = parse_groups(toks, 1)
        if full:
            assert len(group) == 300 and set(group.values()) == {"DONE"}
        else:
            assert group == {} and toks[2:] == ["0"], toks[:5]
        if i % 2 == 0:
            t = new_t                   # only partial queries update it
        emulator.advance(60)
    # ...but the server listed nothing: nothing changed
    assert emulator.counters()["query_batch2_jobs"] - before == 0


def test_a_new_batch_does_not_make_the_server_relist_the_others(make_gm, emulator, inputs):
    gm = make_gm()
    old = submit_batches(gm, inputs, 2, 200, "o")
    emulator.run(7200)
    emulator.advance(30)
    _, groups = parse_groups(gm.query("0", list(old)), 2)
    assert all(len(g) == 200 for g in groups)
    emulator.advance(30)
    new = submit_batches(gm, inputs, 1, 3, "n")
    batches = list(old) + list(new)
    before = emulator.counters()["query_batch2_jobs"]
    _, groups = parse_groups(gm.query("0", batches), 3)
    assert [len(g) for g in groups] == [200, 200, 3]
    # only the new batch's jobs were listed by the server
    assert emulator.counters()["query_batch2_jobs"] - before == 3


def test_a_batch_after_a_resubmitted_one_is_not_taken_as_read(make_gm, emulator, inputs):
    """Found by the simulator's SIGKILLs at random instants: after a restart
    the client's first status reply starts with a batch whose group is
    empty (never submitted: the client resubmits it and reads no further).
    A batch listed after it was still taken as read by the client, so later
    partial replies listed none of its jobs: their DONE never reached the
    client, which polled for ever."""
    gm = make_gm()
    names = submit_batches(gm, inputs, 1, 3, "r")
    done_batch = next(iter(names))
    empty = "condor#s#uppercase#r_empty"
    shared = inputs("shared_empty", "another input\n")
    empty_jobs = [("%s#9.%d" % (empty, j), [], [(shared, "in")]) for j in range(2)]
    emulator.fault("submit_batch", "http500", count=1000)
    assert gm.wait(gm.submit(empty, "uppercase", empty_jobs)) != ["NULL"]
    emulator.clear_faults()                     # created on the server, no jobs
    emulator.run(7200)
    gm.gahp.kill()                              # GAHP dies; grid manager restarts

    gm2 = make_gm()
    poller = StatusPoller(gm2, [empty, done_batch])
    poller.poll()
    assert poller.resubmits == [empty]          # the walk stopped there
    assert gm2.wait(gm2.submit(empty, "uppercase", empty_jobs)) == ["NULL"]
    poller.unconfirmed.discard(empty)           # the resubmit confirmed it
    want = {j: "DONE" for j in names[done_batch]}
    for _ in range(6):
        emulator.advance(60)
        poller.poll()
        if all(poller.statuses.get(j) == s for j, s in want.items()):
            break
    assert not poller.unconfirmed
    assert {j: poller.statuses.get(j) for j in want} == want
