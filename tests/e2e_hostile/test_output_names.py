"""Issue 10 #8: server-chosen output names with control characters are
refused, and in ALL mode a name starting with '.' is refused unless a file
spec names it (a server must not replace the user's ~/.bashrc)."""
import pytest

from hostile_helpers import Client, tree, zip_bytes


@pytest.fixture
def client(server, make_gahp):
    return Client(make_gahp(), server.url)


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\tb", "a\x7fb", "a&#9;b"])
def test_control_characters_refused(bad, server, client, tmp_path):
    server.cfg.update(outputs=["good", bad], download=b"data")
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    toks = client.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and "unsafe output name from server" in toks[0], toks
    assert tree(iwd) == [] and server.srv.downloads == 0


def test_control_character_in_zip_member_refused(server, client, tmp_path):
    server.cfg.update(outputs=["out.zip"], download=zip_bytes([("ok", b"1"), ("x\ny", b"2")]))
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    toks = client.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and "unsafe member name" in toks[0], toks
    assert tree(iwd) == []


def test_hidden_name_refused_in_all_mode(server, client, tmp_path):
    server.cfg.update(outputs=["result", ".bashrc"], download=b"rm -rf ~\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the user's own\n")
    toks = client.fetch("j", str(home), "err", "ALL")
    assert len(toks) == 1 and ".bashrc starts with '.'" in toks[0], toks
    assert (home / ".bashrc").read_text() == "# the user's own\n"
    assert tree(home) == [".bashrc"]


def test_hidden_zip_member_refused_in_all_mode(server, client, tmp_path):
    server.cfg.update(outputs=["out.zip"],
                      download=zip_bytes([("ok.txt", b"1"), (".profile", b"evil")]))
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    toks = client.fetch("j", str(iwd), "err", "ALL")
    assert len(toks) == 1 and ".profile starts with '.'" in toks[0], toks
    assert tree(iwd) == []


def test_hidden_name_allowed_when_a_spec_names_it(server, client, tmp_path):
    server.cfg.update(outputs=["result", ".hidden"], download=[b"R", b"H"])
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    toks = client.fetch("j", str(iwd), "err", "ALL", [(".hidden", "visible.txt")])
    assert toks[0] == "NULL", toks
    assert (iwd / "result").read_bytes() == b"R" and (iwd / "visible.txt").read_bytes() == b"H"
    # SOME fetches only what the specs name, so a hidden name is its choice
    toks = client.fetch("j", str(iwd), "err", "SOME", [(".hidden", ".h2")])
    assert toks[0] == "NULL" and (iwd / ".h2").read_bytes() == b"H"
