"""Every file or directory of the tree that README.md and doc/*.md name
exists (issue 28: moved files left stale paths, e.g. `src/submit_*.c`).
A path is a word starting with one of the tree's top folders; one with a
placeholder (`<...>`, `[ch]`, `N`, `NNNN`, `..`) is not checked, and a
glob (`tests/bench/bench_*.py`) must match at least one file.  And every
command line (code blocks, inline code that starts with a command) asks
make only for targets the Makefile and mk/ define, sets only make
variables they use, and names only scripts that are in the tree (issue
41).  doc/claims-checked.md is left out: it quotes an old trial's claims
as they stood."""
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


# ---- command lines (issue 41): every `make X` names a target of the
# Makefile (or mk/*.mk), every `make ... VAR=value` a variable they use,
# and every file a command names is in the tree.
# Command lines are the lines of code blocks (indented four spaces, or
# fenced) and inline code spans that start with a command.

MAKEFILES = [os.path.join(REPO, "Makefile")] + sorted(glob.glob(os.path.join(REPO, "mk", "*.mk")))
RULE = re.compile(r"^([A-Za-z0-9_.-][A-Za-z0-9_. -]*?)\s*::?(?!=)")
COMMAND_START = re.compile(r"^(?:sudo\s+)?(?:[A-Z_]+=\S*\s+)*(make|/usr/bin/python3|python3|"
                           r"tests/|tools/|build/|\./|bash|sh|nice|env|[\w-]+\.(?:py|sh)\b)")
MAKE = re.compile(r"(?:^|[;&|(]\s*|\s)make((?:\s+[^\s;&|)`#]+)*)")
SCRIPT = re.compile(r"(?<![\w./~$-])([\w-]+\.(?:py|sh))\b")
PLAIN_FILES = ("Makefile", "README.md", "pytest.ini")


def make_targets():
    targets = set()
    for mk in MAKEFILES:
        with open(mk) as f:
            for line in f:
                m = RULE.match(line)
                if m and not line.startswith("\t"):
                    targets.update(t for t in m.group(1).split() if "$" not in t and "%" not in t)
    return targets


def command_lines(text):
    """(line number, command) for each command line of a Markdown text."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    ") and line.strip():
            yield n, line.strip()
            continue
        for span in re.findall(r"`([^`]+)`", line):
            if COMMAND_START.match(span.strip()):
                yield n, span.strip()


def shell_words(text):
    """The words as the shell splits them (a quoted value with spaces is
    one word), or split on white space where the quotes do not close."""
    import shlex
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def make_goals(command):
    """The targets a `make ...` command asks for (none when it uses another makefile)."""
    for m in MAKE.finditer(command):
        words = shell_words(m.group(1))
        if any(w in ("-C", "-f") or w.startswith(("-C", "-f", "--directory", "--file"))
               for w in words):
            continue
        for w in words:
            if w.startswith("-") or "=" in w:
                continue
            if not re.fullmatch(r"[a-z][a-z0-9_.-]*", w):
                break                # prose or a placeholder after the command
            yield w


def make_variables(command):
    """The VAR of each VAR=value argument of a `make ...` command."""
    for m in MAKE.finditer(command):
        for w in m.group(1).split():
            if re.match(r"[A-Z][A-Z0-9_]*=", w):
                yield w.split("=", 1)[0]


def doc_files():
    return [os.path.join(REPO, "README.md")] + sorted(
        d for d in glob.glob(os.path.join(REPO, "doc", "*.md"))
        if not d.endswith("claims-checked.md"))


def tracked_basenames():
    names = set()
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        names.update(files)
    return names


def command_problems():
    targets, basenames = make_targets(), tracked_basenames()
    makefiles = "".join(open(mk).read() for mk in MAKEFILES)
    for doc in doc_files():
        rel = os.path.relpath(doc, REPO)
        with open(doc) as f:
            text = f.read()
        for n, cmd in command_lines(text):
            for goal in make_goals(cmd):
                if goal not in targets:
                    yield "%s:%d: `make %s`: no such target in the Makefile or mk/" % (rel, n, goal)
            for var in make_variables(cmd):
                if not re.search(r"\$[({]%s[)}]|^%s\s*[?:+]?=" % (var, var), makefiles, re.M):
                    yield "%s:%d: `make ... %s=`: the Makefile and mk/ do not use %s" % (rel, n, var, var)
            for script in SCRIPT.findall(cmd):
                if script not in basenames:
                    yield "%s:%d: %s: no such script in the tree" % (rel, n, script)
            for word in cmd.split():
                word = word.strip("`'\",;()")
                if word in PLAIN_FILES and not os.path.exists(os.path.join(REPO, word)):
                    yield "%s:%d: %s: not in the tree" % (rel, n, word)


def test_every_command_line_names_real_targets_and_files():
    problems = list(command_problems())
    assert problems == [], "\n".join(problems)


def test_the_command_check_finds_a_stale_target_and_script():
    assert list(command_lines("Then `peer_vs_gahp.py --only fig6` and `nice -n 5 x.sh`.")) == \
        [(1, "peer_vs_gahp.py --only fig6"), (1, "nice -n 5 x.sh")]
    text = ("Run `make check-nope` or:\n\n    make demo bench\n    /usr/bin/python3 tests/x.py\n"
            "    nope_driver.py --table\n\nNot a command: `make` it so.\n"
            "    make -C samples/condor boinc_gahp\n")
    cmds = list(command_lines(text))
    assert [c for _, c in cmds] == ["make check-nope", "make demo bench", "/usr/bin/python3 tests/x.py",
                                    "nope_driver.py --table", "make", "make -C samples/condor boinc_gahp"]
    goals = [g for _, c in cmds for g in make_goals(c)]
    assert goals == ["check-nope", "demo", "bench"]
    assert "check-nope" not in make_targets() and {"demo", "bench", "check-real"} <= make_targets()
    assert list(make_variables("make check-real HTC_MIRROR=/m SHARED_REAL=x")) == ["HTC_MIRROR", "SHARED_REAL"]
    makefiles = "".join(open(mk).read() for mk in MAKEFILES)
    assert "SHARED_REAL" not in makefiles and "$(HTC_MIRROR)" in makefiles
    assert SCRIPT.findall("nope_driver.py --table && tests/bench/run_all.py") == ["nope_driver.py"]
