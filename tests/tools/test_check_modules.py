"""tools/check_modules.py keeps src/'s layers: it passes on the tree as it
is and refuses, on a copy of it, an include that points up or sideways
(even one that closes no cycle), a bare include of a src header, a folder
that is no layer, and a cycle inside a folder."""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "check_modules.py")


def run(src):
    return subprocess.run([sys.executable, TOOL, str(src)], capture_output=True, text=True)


def copy_src(tmp_path):
    dst = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "src"), dst)
    return dst


def add_include(path, header):
    text = path.read_text()
    path.write_text('#include "%s"\n' % header + text)


def test_the_tree_passes():
    r = run(os.path.join(ROOT, "src"))
    assert r.returncode == 0, r.stderr
    assert "every include points down" in r.stdout


def test_an_upward_include_that_closes_no_cycle_is_refused(tmp_path):
    src = copy_src(tmp_path)
    # base/strset.c using the server layer: nothing in server/ includes
    # strset back through this edge, so only the layer rule can see it.
    add_include(src / "base" / "strset.c", "server/workers.h")
    r = run(src)
    assert r.returncode == 1
    assert "base/strset.c: includes server/workers.h from a higher layer" in r.stderr


def test_a_peer_layer_include_is_refused(tmp_path):
    src = copy_src(tmp_path)
    add_include(src / "journal" / "journal_batches.c", "boinc/boinc.h")
    r = run(src)
    assert r.returncode == 1
    assert "from a peer layer" in r.stderr


def test_a_bare_include_of_a_src_header_is_refused(tmp_path):
    src = copy_src(tmp_path)
    add_include(src / "server" / "workers.c", "strbuf.h")
    r = run(src)
    assert r.returncode == 1
    assert 'must name its folder (base/strbuf.h)' in r.stderr


def test_a_folder_that_is_no_layer_is_refused(tmp_path):
    src = copy_src(tmp_path)
    (src / "misc").mkdir()
    (src / "misc" / "x.c").write_text('#include "base/log.h"\n')
    r = run(src)
    assert r.returncode == 1
    assert "folder 'misc' is not a layer" in r.stderr


def test_a_cycle_inside_a_folder_is_refused(tmp_path):
    src = copy_src(tmp_path)
    add_include(src / "base" / "strbuf.h", "base/log.h")
    add_include(src / "base" / "log.h", "base/strbuf.h")
    r = run(src)
    assert r.returncode == 1
    assert "include cycle between modules" in r.stderr
