"""Issue 12 (lane S): the query_batch2 reply is read by one SAX pass over
the reply, names and statuses in pooled blocks, the reply buffer sized from
the announced length.  Through the real binary against a scriptable server
on 127.0.0.1: a reply that arrives in one-byte pieces (every split across
libcurl's write callbacks) reads exactly as one sent whole, entities, CDATA
and UTF-8 included, on the SAX path and on the tree fallback; a reply at
the --max-reply-bytes limit is read, one byte over it is an error."""
import pytest

from hostile_helpers import XML_HEAD, Client, query_batch2_reply

SMALL = ("--workers", "2", "--retry-budget", "1")

# (reply text of the name, the name HTCondor must get)
NAMES = [
    ("plain_1", "plain_1"),
    ("amp&amp;lt&lt;gt&gt;", "amp&lt<gt>"),
    ("<![CDATA[cd<a>&amp;b]]>", "cd<a>&amp;b"),
    ("n\u00e9_\u20ac_&#233;", "n\u00e9_\u20ac_\u00e9"),
    ("com<!-- x -->ment", "comment"),
]
STATUSES = ["DONE", "ERROR", "IN_PROGRESS", "UNSENT", "DONE"]
# what the GAHP protocol reports for each (UNSENT is pending)
REPORTED = ["DONE", "ERROR", "IN_PROGRESS", "IN_PROGRESS", "DONE"]


def fields_reply(extra_name=None):
    """A query_batch2 reply for batches "b1" (the NAMES) and "b2" (one job,
    extra_name if given: a bare '&' sends the reply to the tree parser)."""
    jobs = "".join("<job>\n  <job_name>%s</job_name>\n  <status>%s</status>\n</job>\n"
                   % (n, s) for (n, _), s in zip(NAMES, STATUSES))
    last = extra_name or "last_job"
    return ("<query_batch2>\n<server_time>1700000000.250000</server_time>\n"
            "<batch_size>%d</batch_size>\n%s"
            "<batch_size>1</batch_size>\n<job><job_name>%s</job_name>"
            "<status>DONE</status></job>\n</query_batch2>\n"
            % (len(NAMES), jobs, last))


def expected(extra_expected="last_job"):
    # the reply's <server_time> is not passed on: the GAHP hands the client
    # its project's status change number (doc/commands.md), 0 while the
    # journal has recorded no change (these batches were never submitted
    # through it)
    toks = ["NULL", "0", str(len(NAMES))]
    for (_, name), st in zip(NAMES, REPORTED):
        toks += [name, st]
    return toks + ["1", extra_expected, "DONE"]


@pytest.mark.parametrize("extra,extra_expected", [
    (None, "last_job"),             # the SAX path
    ("bare&name", "bare&name"),     # a bare '&': the tree parser
])
@pytest.mark.parametrize("pieces", [None, 1, 7])
def test_reply_in_pieces_reads_every_field(extra, extra_expected, pieces,
                                           server, make_gahp):
    body = fields_reply(extra)
    server.cfg["post"] = lambda req: body
    if pieces:
        server.cfg["pieces"] = pieces
    g = make_gahp(SMALL)
    c = Client(g, server.url)
    toks = c.call("BOINC_QUERY_BATCHES", 0, 2, "b1", "b2")
    assert toks == expected(extra_expected)


def test_reply_at_the_limit_is_read_one_byte_over_is_an_error(server, make_gahp):
    """The buffer is sized from Content-Length only within the limit; the
    limit itself still counts the bytes that arrive."""
    body = query_batch2_reply(200)
    size = len((XML_HEAD + body).encode())
    assert size > 4096      # the smallest limit the option takes
    server.cfg["post"] = lambda req: body
    g = make_gahp(SMALL + ("--max-reply-bytes", str(size)))
    toks = Client(g, server.url).call("BOINC_QUERY_BATCHES", 0, 1, "big")
    assert toks[:5] == ["NULL", "0", "200", "job_000000", "IN_PROGRESS"]
    assert len(toks) == 3 + 2 * 200
    g2 = make_gahp(SMALL + ("--max-reply-bytes", str(size - 1)),
                   journal_path=g.journal + ".2")
    toks = Client(g2, server.url).call("BOINC_QUERY_BATCHES", 0, 1, "big")
    assert toks == ["query_batch2 failed: bad reply: query_batch2: reply larger than the "
                    "limit of %d bytes (--max-reply-bytes)" % (size - 1)], toks
