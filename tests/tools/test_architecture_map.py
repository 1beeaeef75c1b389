"""doc/architecture.md is the map of src/: every module (a .c/.h name
within its folder) must be named on it, so that a file added without a
line there fails here rather than leaving the map stale."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_src_module_is_on_the_map():
    text = (ROOT / "doc/architecture.md").read_text()
    missing = sorted({p.stem for p in (ROOT / "src").glob("*/*.[ch]")
                      if not re.search(r"\b%s\b" % re.escape(p.stem), text)})
    assert not missing, "not on doc/architecture.md's map: %s" % ", ".join(missing)
