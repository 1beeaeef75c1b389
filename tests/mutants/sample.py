#!/usr/bin/python3
"""make check-mutants-sampled: sampled mutation over the C files of src/
(issue 42; doc/testing.md, "Sampled mutation").

make check-mutants (run.py) plants hand-written defects where a rule list
points; this runner plants machine-made ones anywhere.  Every C file of
the chosen modules (a folder or file of src/) is scanned for mutation
sites, with comments, string and character literals and preprocessor
lines left out.  The operators:

    rel       <  <=  >  >=  flipped to the neighbour (< to <=, >= to >, ...)
    eq        == and != swapped
    const     an integer constant n made n+1 or n-1 (an octal one in octal)
    negate    the condition of an if or while negated
    andor     && and || swapped
    dropcall  a call tested by an if made the constant 0 (its result ignored,
              and the call not made)
    dropstmt  a one-line call or assignment statement removed
    swaparg   the two arguments of a two-argument call swapped

From a SEED, N mutants per module are picked (deterministic: the same
seed, N and source give the same mutants; an operator is drawn first,
uniformly among those with sites in the module, then a site of it).  Each
is applied in turn to a scratch copy of the tree (run.py's copy: the files
git knows, as in the work tree), rebuilt incrementally (the mutated file
is recompiled, the binaries relinked) and the nets mapped to the module in
tests/mutants/nets.txt are run, cheapest first, until one fails:

    killed      a net failed
    timeout     a net ran past --timeout seconds (killed by timeout: a
                mutant that hangs)
    survived    every net passed (with --full, `make check-suites` in the
                copy passed too)
    stillborn   the mutant does not compile: not counted in the rate
    equivalent  its id is in tests/mutants/equivalent.txt (a mutant shown
                to behave like the original): not counted in the rate

The nets first run once on the unmutated copy: a net that fails there
would kill every mutant, so the runner stops.  The report gives, per
module, the counts and the kill rate (killed + timeout over the mutants
neither stillborn nor equivalent), then each survivor's id and diff.
Exit status 0, whatever the rate, unless the runner itself broke (2) or
--min-rate R was given and a rate is under R per cent (1).

    sample.py --seed 42 --n 10 --modules src/wire,src/base
    sample.py --seed 42 --n 10 --modules src/wire --list   # the mutants only
    sample.py --seed 42 --n 10 --modules src/wire --only src/wire/request.c:452:33
                                          # one picked mutant again (its id's start)
"""
import argparse
import difflib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import run  # noqa: E402  (copy_tree, make, restore of make check-mutants)

NETS_FILE = os.path.join(HERE, "nets.txt")
EQUIV_FILE = os.path.join(HERE, "equivalent.txt")
OPERATORS = ("rel", "eq", "const", "negate", "andor", "dropcall", "dropstmt", "swaparg")


# ---- the source with comments, literals and preprocessor lines blanked

def mask(text):
    """The text with every character of a comment, a string or character
    literal and a preprocessor line replaced by a space (newlines kept), so
    that offsets found in it are offsets in the text."""
    out = list(text)
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if at_line_start and c == "#":
            # a directive, with its backslash continuations
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                out[i] = " "
                i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for k in range(i, end):
                if out[k] != "\n":
                    out[k] = " "
            i = end
            continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        if c in "\"'":
            k = i + 1
            while k < n and text[k] != c and text[k] != "\n":
                k += 2 if text[k] == "\\" else 1
            for m in range(i, min(k + 1, n)):
                out[m] = " "
            i = k + 1
            continue
        i += 1
    return "".join(out)


def close_paren(m, start):
    """The offset just after the parenthesis matching the one at start, or -1."""
    depth = 0
    for k in range(start, len(m)):
        if m[k] == "(":
            depth += 1
        elif m[k] == ")":
            depth -= 1
            if depth == 0:
                return k + 1
    return -1


def in_function(m, pos):
    """True when pos lies inside braces (a function body, in C): constants
    at file level are array sizes and table entries, mostly stillborn."""
    return m.count("{", 0, pos) > m.count("}", 0, pos)


# ---- the operators: each yields (start, end, replacement)

REL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}


def op_rel(m):
    for x in re.finditer(r"(?<![<>\-=])(<=|>=|<|>)(?![<>=])", m):
        # skip -> and generics-looking things: a > preceded by - is caught above
        yield x.start(), x.end(), REL[x.group(1)]


def op_eq(m):
    for x in re.finditer(r"(==|!=)", m):
        yield x.start(), x.end(), "!=" if x.group(1) == "==" else "=="


def op_const(m):
    for x in re.finditer(r"(?<![\w.])(\d+)(?![\w.])", m):
        if not in_function(m, x.start()):
            continue
        t = x.group(1)
        octal = len(t) > 1 and t[0] == "0"      # 077: a mode, in octal
        v = int(t, 8) if octal else int(t)
        fmt = (lambda n: "0%o" % n) if octal else str
        yield x.start(), x.end(), fmt(v + 1)
        if v > 0:
            yield x.start(), x.end(), fmt(v - 1)


def op_negate(m):
    for x in re.finditer(r"\b(if|while)\s*\(", m):
        open_at = x.end() - 1
        end = close_paren(m, open_at)
        if end < 0:
            continue
        yield open_at + 1, end - 1, "!(" + m[open_at + 1:end - 1] + ")"


def op_andor(m):
    for x in re.finditer(r"(&&|\|\|)", m):
        yield x.start(), x.end(), "||" if x.group(1) == "&&" else "&&"


KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "defined"}


def op_dropcall(m):
    for x in re.finditer(r"\bif\s*\(\s*!?\s*([A-Za-z_]\w*)\s*\(", m):
        if x.group(1) in KEYWORDS:
            continue
        call_at = x.start(1)
        end = close_paren(m, x.end() - 1)
        if end < 0:
            continue
        yield call_at, end, "0"


STMT = re.compile(r"(?m)^([ \t]+)([A-Za-z_][\w.\->\[\]]*\s*(?:\(|=[^=]|\+=|-=|\|=|&=|\+\+|--)[^;{}]*;)[ \t]*$")


def op_dropstmt(m):
    for x in STMT.finditer(m):
        word = re.match(r"[A-Za-z_]\w*", x.group(2)).group(0)
        if word in KEYWORDS or word in ("break", "continue", "goto", "else", "case", "default"):
            continue
        s = x.group(2)
        if s.count("(") != s.count(")"):
            continue
        yield x.start(2), x.end(2), ";"


def op_swaparg(m, text=None):
    text = m if text is None else text
    for x in re.finditer(r"\b([A-Za-z_]\w*)\(\s*([^(),;{}]+?)\s*,\s*([^(),;{}]+?)\s*\)", m):
        # at file level it is a declaration's parameter list, not a call
        if x.group(1) in KEYWORDS or not in_function(m, x.start()):
            continue
        a, b = text[x.start(2):x.end(2)], text[x.start(3):x.end(3)]
        if a == b:
            continue
        yield x.start(2), x.end(3), b + ", " + a


OPS = {"rel": op_rel, "eq": op_eq, "const": op_const, "negate": op_negate, "andor": op_andor,
       "dropcall": op_dropcall, "dropstmt": op_dropstmt, "swaparg": op_swaparg}


def sites(path):
    """Every mutant of one file: dicts with file, op, start, end, new, id."""
    with open(os.path.join(REPO, path)) as f:
        text = f.read()
    m = mask(text)
    out = []
    for op in OPERATORS:
        found = op_swaparg(m, text) if op == "swaparg" else OPS[op](m)
        for start, end, new in found:
            new_text = new
            if op == "negate":
                new_text = "!(" + text[start:end] + ")"
            line = text.count("\n", 0, start) + 1
            col = start - (text.rfind("\n", 0, start) + 1) + 1
            out.append({"file": path, "op": op, "start": start, "end": end, "new": new_text,
                        "id": "%s:%d:%d:%s:%s" % (path, line, col, op,
                                                  re.sub(r"\s+", " ", new_text)[:40])})
    return out


def module_files(module):
    p = os.path.join(REPO, module)
    if os.path.isfile(p):
        return [module]
    files = []
    for root, _, names in os.walk(p):
        for n in names:
            if n.endswith(".c"):
                files.append(os.path.relpath(os.path.join(root, n), REPO))
    return sorted(files)


def pick(module, seed, n):
    """N mutants of the module, from the seed."""
    by_op = {}
    for f in module_files(module):
        for s in sites(f):
            by_op.setdefault(s["op"], []).append(s)
    rng = random.Random("%s/%s" % (seed, module))
    for op in by_op:
        rng.shuffle(by_op[op])
    chosen = []
    while len(chosen) < n:
        ops = [op for op in OPERATORS if by_op.get(op)]
        if not ops:
            break
        chosen.append(by_op[rng.choice(ops)].pop())
    return chosen


# ---- the nets of a module

def read_nets(path=NETS_FILE):
    """[(module, kind, arg)] in file order."""
    nets = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            module, kind, arg = line.split(None, 2)
            nets.append((module.rstrip("/"), kind, arg))
    return nets


def nets_for(path, nets):
    """The nets of the longest module of nets.txt that holds path."""
    best = None
    for module, _, _ in nets:
        if path == module or path.startswith(module + "/"):
            if best is None or len(module) > len(best):
                best = module
    return [(k, a) for mod, k, a in nets if mod == best]


def read_equivalent(path=EQUIV_FILE):
    ids = set()
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("  #", 1)[0].strip()
                if line and not line.startswith("#"):
                    ids.add(line)
    return ids


def net_command(tree, kind, arg):
    if kind == "check":
        return ["make", "-j2", "check-suites"], dict(os.environ)
    return run.net_command(tree, kind, arg)


def run_net(tree, kind, arg, log, timeout):
    """'pass', 'fail' or 'timeout'.  The net runs in its own process group,
    killed whole at the timeout (servers and emulators it started too)."""
    cmd, env = net_command(tree, kind, arg)
    log.write(("\n$ %s\n" % " ".join(cmd)).encode())
    log.flush()
    p = subprocess.Popen(["nice", "-n", "10"] + cmd, cwd=tree, env=env, stdout=log,
                         stderr=subprocess.STDOUT, start_new_session=True)
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        return "timeout"
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)    # anything it left running
        except ProcessLookupError:
            pass
    return "pass" if rc == 0 else "fail"


def targets(nets):
    t = ["all"]
    for kind, arg in nets:
        if kind == "unit":
            t.append("build/unit/" + arg)
    return t


def diff_of(text, mut):
    new = text[:mut["start"]] + mut["new"] + text[mut["end"]:]
    d = difflib.unified_diff(text.splitlines(), new.splitlines(), "a/" + mut["file"],
                             "b/" + mut["file"], n=1, lineterm="")
    return new, "\n".join(d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", default="1")
    ap.add_argument("--n", type=int, default=10, help="mutants per module")
    ap.add_argument("--modules", default="src/wire,src/base,src/journal",
                    help="folders or files of src/, comma-separated")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per net run")
    ap.add_argument("--full", action="store_true", help="make check-suites for survivors")
    ap.add_argument("--min-rate", type=float, default=None, help="per cent, per module")
    ap.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--report", default=None, help="also write the report to this file")
    ap.add_argument("--only", action="append", default=[],
                    help="run only the picked mutants whose id starts with this (repeatable:"
                         " a survivor again, after its test was added)")
    args = ap.parse_args()

    modules = [x.strip().rstrip("/") for x in args.modules.split(",") if x.strip()]
    nets = read_nets()
    equivalent = read_equivalent()
    plan = []
    for mod in modules:
        if not os.path.exists(os.path.join(REPO, mod)):
            print("sample: no module %s" % mod)
            return 2
        for mut in pick(mod, args.seed, args.n):
            if args.only and not any(mut["id"].startswith(o) for o in args.only):
                continue
            mut["module"] = mod
            mut["nets"] = nets_for(mut["file"], nets)
            if not mut["nets"]:
                print("sample: no nets for %s in %s" % (mut["file"], NETS_FILE))
                return 2
            plan.append(mut)
    if args.list:
        for mut in plan:
            with open(os.path.join(REPO, mut["file"])) as f:
                print("%s\n%s\n" % (mut["id"], diff_of(f.read(), mut)[1]))
        return 0

    work = tempfile.mkdtemp(prefix="mutants-sampled.")
    # the multi-user tests (test_log_placement) run the scratch binary as
    # other users: mkdtemp's 0700 would stop them at the door
    os.chmod(work, 0o755)
    tree = os.path.join(work, "tree")
    run.copy_tree(tree)
    results = []
    try:
        t0 = time.monotonic()
        with open(os.path.join(work, "log"), "wb") as log:
            print("sample: seed %s, %d per module, %d mutants; scratch copy %s (log: %s/log)"
                  % (args.seed, args.n, len(plan), tree, work), flush=True)
            all_nets = []
            for mut in plan:
                all_nets += [n for n in mut["nets"] if n not in all_nets]
            if not run.make(tree, targets(all_nets), log):
                print("sample: the unmutated copy does not build", flush=True)
                return 2
            for kind, arg in all_nets:
                r = run_net(tree, kind, arg, log, args.timeout)
                if r != "pass":
                    print("sample: the net %s %s does not pass (%s) on the unmutated copy"
                          % (kind, arg, r), flush=True)
                    return 2
            for i, mut in enumerate(plan, 1):
                path = os.path.join(tree, mut["file"])
                with open(path) as f:
                    text = f.read()
                new, mut["diff"] = diff_of(text, mut)
                log.write(("\n==== %s\n%s\n" % (mut["id"], mut["diff"])).encode())
                log.flush()
                if mut["id"] in equivalent:
                    mut["result"], by = "equivalent", ""
                else:
                    with open(path, "w") as f:
                        f.write(new)
                    t = time.time() + 2     # newer than any object built before
                    os.utime(path, (t, t))
                    try:
                        if not run.make(tree, targets(mut["nets"]), log):
                            mut["result"], by = "stillborn", ""
                        else:
                            mut["result"], by = "survived", ""
                            for kind, arg in mut["nets"] + ([("check", "")] if args.full else []):
                                r = run_net(tree, kind, arg, log, args.timeout)
                                if r != "pass":
                                    mut["result"] = "killed" if r == "fail" else "timeout"
                                    by = "%s %s" % (kind, arg)
                                    break
                    finally:
                        run.restore(tree, {"file": mut["file"]}, text)
                mut["by"] = by
                results.append(mut)
                print("[%d/%d] %-10s %s%s (%.0f s)" % (i, len(plan), mut["result"], mut["id"],
                                                       " by " + by if by else "",
                                                       time.monotonic() - t0), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    lines = ["", "sampled mutation: seed %s, %d per module" % (args.seed, args.n), "",
             "| module | mutants | stillborn | equivalent | killed | timeout | survived | kill rate |",
             "|---|---|---|---|---|---|---|---|"]
    low = False
    for mod in modules:
        rs = [r for r in results if r["module"] == mod]
        c = {k: sum(1 for r in rs if r["result"] == k)
             for k in ("stillborn", "equivalent", "killed", "timeout", "survived")}
        counted = c["killed"] + c["timeout"] + c["survived"]
        rate = 100.0 * (c["killed"] + c["timeout"]) / counted if counted else 100.0
        if args.min_rate is not None and rate < args.min_rate:
            low = True
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %.0f %% |"
                     % (mod, len(rs), c["stillborn"], c["equivalent"], c["killed"],
                        c["timeout"], c["survived"], rate))
    survivors = [r for r in results if r["result"] == "survived"]
    lines += ["", "survivors: %d" % len(survivors)]
    for r in survivors:
        lines += ["", r["id"], r["diff"]]
    report = "\n".join(lines)
    print(report)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report + "\n")
    return 1 if low else 0


if __name__ == "__main__":
    # make's or a user's SIGTERM: the scratch copy goes (main's finally)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        raise
    except Exception:   # the runner broke: not a verdict on the nets
        import traceback
        traceback.print_exc()
        sys.exit(2)
