"""The simulator's own reading and writing rules, checked without a GAHP
(reference/htcondor-client.md, "Process and start-up" and "Lines,
escaping, timeouts")."""
from gridmanager_sim import GahpWire, client_escape


def test_client_escapes_only_space_backslash_cr_lf():
    assert client_escape("a b\\c\rd\ne") == "a\\ b\\\\c\\\rd\\\ne"
    assert client_escape("tab\there\x01") == "tab\there\x01"     # raw, as the client sends


def test_banner_rules():
    banner = GahpWire._banner_text
    assert banner(b"noise $GahpVersion: 1.0.0 x\\ y $") == "$GahpVersion: 1.0.0 x y $"
    assert banner(b"no dollar at all") == ""
    assert len(banner(b"$" + b"x" * 500)) == 149
