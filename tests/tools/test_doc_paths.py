"""Every file or directory of the tree that README.md and doc/*.md name
exists (issue 28: moved files left stale paths, e.g. `src/submit_*.c`).
A path is a word starting with one of the tree's top folders; one with a
placeholder (`<...>`, `[ch]`, `N`, `NNNN`, `..`) is not checked, and a
glob (`tests/bench/bench_*.py`) must match at least one file.  doc/claims-checked.md is left out: it quotes an old trial's
claims as they stood."""
import glob
import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOP = ("src", "tests", "doc", "tools", "schema", "migrations", "man", "examples",
       "debian", "mk")
PATH = re.compile(r"(?<![\w./~$-])((?:%s)/[\w./+*-]*)" % "|".join(TOP))


def named_paths():
    docs = [os.path.join(REPO, "README.md")] + sorted(
        d for d in glob.glob(os.path.join(REPO, "doc", "*.md"))
        if not d.endswith("claims-checked.md"))
    for doc in docs:
        with open(doc) as f:
            for lineno, line in enumerate(f, 1):
                for path in paths_in(line):
                    yield os.path.relpath(doc, REPO), lineno, path


def paths_in(line):
    for m in PATH.finditer(line):
        path = m.group(1).rstrip(".,:;)")
        rest = line[m.end():m.end() + 1]
        if rest in ("<", "{", "[") or re.search(r"(\.\.|<|\bN+\b|_N+\b|\bN+_)", path):
            continue
        yield path


def test_every_path_named_in_the_docs_exists():
    missing = ["%s:%d: %s" % (doc, n, p) for doc, n, p in named_paths()
               if not glob.glob(os.path.join(REPO, p))]
    assert missing == [], "\n".join(missing)


def test_the_check_finds_a_stale_path():
    """The pattern would have caught the stale path the trial found."""
    assert list(paths_in("The executors are in `src/submit_x.c` and doc/nope.md.")) == \
        ["src/submit_x.c", "doc/nope.md"]
    assert list(paths_in("`migrations/NNNN_name.sql`, `tests/unit/x.[ch]`")) == []
    assert not glob.glob(os.path.join(REPO, "src/submit_*.c"))     # the trial's claim 19
