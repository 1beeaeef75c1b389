"""Issue 10 #10: one stalled project cannot occupy the whole worker pool.
With 8 workers, requests of one project run at most 4 at a time, so a
ping to a healthy project (the real emulator) is answered while the slow
project's requests are all still held by the server: causality, not
timing, is asserted (the slow server answers only after the test has the
healthy result)."""
import time

import pytest

from hostile_helpers import Client, split_tokens


@pytest.fixture
def healthy(emulator):
    return emulator


def wait_posts(server, n, timeout=60):
    deadline = time.monotonic() + timeout
    while len(server.posts()) < n:
        assert time.monotonic() < deadline, "server saw %d requests" % len(server.posts())
        time.sleep(0.05)


@pytest.mark.parametrize("args,cap", [((), 4), (("--project-workers", "2"), 2)])
def test_stalled_project_does_not_block_a_healthy_one(args, cap, server, healthy, make_gahp):
    server.cfg["post"] = "slow"
    g = make_gahp(("--workers", "8", "--retry-budget", "1") + args)
    c = Client(g, server.url)
    slow_ids = [c.start("BOINC_PING") for _ in range(10)]
    wait_posts(server, cap)
    c.select(healthy.url, healthy.authenticator)
    hid = c.start("BOINC_PING")
    # Answered while every slow request is still held by the server.
    line = g.wait_results(1, timeout=60)[0]
    assert split_tokens(line) == [str(hid), "NULL"], line
    assert not server.srv.release.is_set()
    assert len(server.posts()) == cap           # the cap held all along
    server.srv.release.set()
    lines = g.wait_results(len(slow_ids), timeout=120)
    assert sorted(int(split_tokens(x)[0]) for x in lines) == slow_ids
    assert all(split_tokens(x)[1] == "NULL" for x in lines)


def test_each_authenticator_of_a_server_has_its_own_cap(server, make_gahp):
    """A project is a (URL, authenticator) pair, as the journal numbers
    them: a second user of the stalled server is not held behind the
    first one's cap (issue 42: a sampled mutant that compared project 1
    by its URL alone passed every net)."""
    server.cfg["post"] = "slow"
    g = make_gahp(("--workers", "8", "--retry-budget", "1", "--project-workers", "2"))
    c = Client(g, server.url, "first-user-authenticator")
    first = [c.start("BOINC_PING") for _ in range(4)]
    wait_posts(server, 2)
    c.select(server.url, "second-user-authenticator")
    second = [c.start("BOINC_PING") for _ in range(2)]
    wait_posts(server, 4)                   # the second user's two run too
    time.sleep(0.3)
    assert len(server.posts()) == 4         # and each cap held
    server.srv.release.set()
    lines = g.wait_results(len(first) + len(second), timeout=120)
    assert sorted(int(split_tokens(x)[0]) for x in lines) == sorted(first + second)
