"""htc - a small wire-faithful model of HTCondor 9.0's grid manager as a
BOINC GAHP client (facts from its 9.0 source and doc/htcondor.md): request
ids from 2, every return line within 20 s (else the client would exit),
anything but S fatal, jobs of a submit in an arbitrary order with the six
trailing fields of whichever job comes first, and the status reply loop
that stops after the first unconfirmed batch it confirms."""
import itertools
import time

from submit_client import escape, split_tokens

RESPONSE_TIMEOUT = 20       # GRIDMANAGER_GAHP_RESPONSE_TIMEOUT


class GridManager:
    def __init__(self, gahp, emulator):
        self.gahp = gahp
        self.emu = emulator
        self.ids = itertools.count(2)       # the first id is 2
        self.done = {}
        gahp.set_prefix("GAHP:")
        self.sync("ASYNC_MODE_ON")
        self.sync("BOINC_SELECT_PROJECT %s %s" % (escape(emulator.url),
                                                  escape(emulator.authenticator)))

    def sync(self, line):
        got = self.gahp.command(line, timeout=RESPONSE_TIMEOUT)
        assert got is not None and got.split(" ")[0].startswith("S"), \
            "the grid manager would exit on %r for %r" % (got, line[:80])
        return got

    def start(self, command, *tokens, raw=()):
        rid = next(self.ids)
        line = " ".join([command, str(rid)] + [escape(str(t)) for t in tokens] + list(raw))
        self.sync(line)
        return rid

    def submit(self, batch, app, jobs, trailing=("NULL",) * 6, shuffle=None):
        """jobs: list of (name, [args], [(src, dst)]); shuffle: a Random."""
        jobs = list(jobs)
        if shuffle is not None:
            shuffle.shuffle(jobs)
        toks = [batch, app, len(jobs)]
        for name, args, ins in jobs:
            toks += [name, len(args)] + list(args) + [len(ins)]
            for src, dst in ins:
                toks += [src, dst]
        return self.start("BOINC_SUBMIT", *toks, raw=[escape(t) for t in trailing])

    def wait(self, rid, timeout=120):
        deadline = time.monotonic() + timeout
        while rid not in self.done:
            head = self.sync("RESULTS")
            n = int(head.split(" ")[1])
            for _ in range(n):
                toks = split_tokens(self.gahp.read_line(RESPONSE_TIMEOUT))
                self.done[int(toks[0])] = toks[1:]
            if rid not in self.done:
                assert time.monotonic() < deadline, "no result for %d" % rid
                time.sleep(0.05)
        return self.done.pop(rid)

    def call(self, command, *tokens, timeout=120):
        return self.wait(self.start(command, *tokens), timeout)

    def query(self, min_mod_time, batches, timeout=120):
        """Raw result tokens of BOINC_QUERY_BATCHES (min_mod_time is not
        escaped by the client)."""
        rid = self.start("BOINC_QUERY_BATCHES", raw=[str(min_mod_time), str(len(batches))]
                         + [escape(b) for b in batches])
        return self.wait(rid, timeout)


def parse_groups(toks, nbatches):
    """NULL <server_time> {<n> {<job> <status>}*n}* -> (server_time, [dict])."""
    assert toks[0] == "NULL", toks[:3]
    groups, i = [], 2
    for _ in range(nbatches):
        n = int(toks[i])
        i += 1
        groups.append(dict((toks[i + 2 * k], toks[i + 2 * k + 1]) for k in range(n)))
        i += 2 * n
    assert i == len(toks), "token count does not match the group counts"
    return toks[1], groups


def client_loop(groups, unconfirmed):
    """What the real client takes from one status reply (FinishBatchStatus
    in 9.0.19's boincresource.cpp): it walks the groups in order; the first
    unconfirmed batch ends the walk (a `break`): with a 0-job group it is
    resubmitted, with jobs it is confirmed and its statuses are dropped;
    the rest of the reply is NOT read.  Statuses are keyed by job name
    here; the client itself applies them by cluster.proc, whatever batch.
    Returns (statuses seen {job: status}, confirmed batch or None, resubmit)."""
    seen, resubmit = {}, []
    for batch, group in groups:
        if batch in unconfirmed:
            if not group:
                resubmit.append(batch)
                return seen, None, resubmit
            return seen, batch, resubmit
        seen.update(group)
    return seen, None, resubmit


def make_jobs(inputs, batch, n=6):
    """n jobs of `batch` (names batch#100.0 ...), each with its own input."""
    jobs = []
    for i in range(n):
        p = inputs("%s_%d.txt" % (batch.replace("#", "_"), i), "input %d of %s\n" % (i, batch))
        jobs.append(("%s#%d.0" % (batch, 100 + i), ["-n", str(i)], [(p, "in")]))
    return jobs


def assert_once(emulator, batch, jobs):
    """The batch and each of its jobs exist exactly once on the emulator."""
    c = emulator.counters()
    assert c["batches_by_name"].get(batch) == 1, c["batches_by_name"]
    for name, _, _ in jobs:
        assert c["jobs_by_name"].get(name) == 1, (name, c["jobs_by_name"])
    assert sum(c["jobs_by_name"].values()) == len(jobs)
