#!/usr/bin/python3
"""make check-mutants: mutation testing of the safety nets (issue 29).

Each planted defect of tests/mutants/mutants.py (a rewrite rule: a file,
a text that must occur in it exactly once, its replacement, and the nets
that should catch it) is applied in turn to a scratch copy of the tree
(the files git knows, as they are in the work tree), which is rebuilt
incrementally; the mutant's nets run until one fails.  A mutant is
killed when a net fails, and survives when every net passes.  A rule
whose text is not found exactly once, or whose build fails, is an error:
the list no longer matches the code, fix the rule.  Ends with

    mutants: K of N killed

and exit status 0 only when K = N.  Options: --only NAME[,NAME] (a
substring of the names), --keep (the scratch copy stays), --list.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import mutants  # noqa: E402


def copy_tree(dst):
    """The files git knows or would add, from the work tree (uncommitted
    edits too)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = os.path.join(REPO, rel)
        if not os.path.isfile(src):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel))


def make(tree, targets, log):
    """Build targets in the copy; True when it built."""
    r = subprocess.run(["nice", "-n", "10", "make", "-j2"] + targets, cwd=tree,
                       stdout=log, stderr=subprocess.STDOUT)
    return r.returncode == 0


def targets_for(m):
    """What the mutant's nets need built."""
    t = ["all"]
    for kind, arg in m["nets"]:
        if kind == "unit":
            t.append("build/unit/" + arg)
        elif kind == "crash":
            t.append("build/crash_states/librecorder.so")
    return t


def net_command(tree, kind, arg):
    env = dict(os.environ, BOINC_GAHP=os.path.join(tree, "build", "boinc_gahp"),
               BOINC_EMU=os.path.join(tree, "build", "boinc_emu"))
    if kind == "unit":
        return [os.path.join(tree, "build", "unit", arg)], env
    if kind == "pytest":
        return (["/usr/bin/python3", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                 "--import-mode=importlib"] + arg.split()), env
    if kind == "crash":
        env.setdefault("CRASH_STATES_MAX", "100")
        return ["/usr/bin/python3", "tests/crash_states/explore.py", "--workloads", arg], env
    raise ValueError("unknown net kind %s" % kind)


def run_nets(tree, m, log):
    """The first net that fails (its description), or None."""
    for kind, arg in m["nets"]:
        cmd, env = net_command(tree, kind, arg)
        log.write(("\n$ %s\n" % " ".join(cmd)).encode())
        log.flush()
        r = subprocess.run(cmd, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT,
                           timeout=1800)
        if r.returncode != 0:
            return "%s %s" % (kind, arg)
    return None


def apply(tree, m):
    """The original text of the file; raises when the rule does not match once."""
    path = os.path.join(tree, m["file"])
    with open(path) as f:
        text = f.read()
    n = text.count(m["old"])
    if n != 1:
        raise LookupError("%s: the text to replace occurs %d times in %s"
                          % (m["name"], n, m["file"]))
    with open(path, "w") as f:
        f.write(text.replace(m["old"], m["new"]))
    return text


def restore(tree, m, text):
    path = os.path.join(tree, m["file"])
    with open(path, "w") as f:
        f.write(text)
    # newer than the mutant's objects, so the next build recompiles it
    t = time.time() + 1
    os.utime(path, (t, t))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    todo = [m for m in mutants.MUTANTS
            if not args.only or any(s in m["name"] for s in args.only.split(","))]
    if args.list:
        for m in todo:
            print("%-45s %s" % (m["name"], ", ".join("%s %s" % n for n in m["nets"])))
        return 0
    work = tempfile.mkdtemp(prefix="mutants.")
    tree = os.path.join(work, "tree")
    copy_tree(tree)
    killed, errors = 0, 0
    t0 = time.monotonic()
    with open(os.path.join(work, "log"), "wb") as log:
        print("mutants: scratch copy %s (log: %s/log)" % (tree, work), flush=True)
        if not make(tree, ["all"], log):
            print("mutants: the unmutated copy does not build", flush=True)
            return 2
        for i, m in enumerate(todo, 1):
            log.write(("\n==== %s\n" % m["name"]).encode())
            log.flush()     # before the children's output, which goes to the fd
            try:
                text = apply(tree, m)
            except LookupError as ex:
                print("[%d/%d] ERROR %s" % (i, len(todo), ex), flush=True)
                errors += 1
                continue
            try:
                if not make(tree, targets_for(m), log):
                    print("[%d/%d] ERROR %s: does not build" % (i, len(todo), m["name"]),
                          flush=True)
                    errors += 1
                    continue
                by = run_nets(tree, m, log)
            finally:
                restore(tree, m, text)
            if by:
                killed += 1
            print("[%d/%d] %s %s%s (%.0f s)" % (i, len(todo), "killed  " if by else "SURVIVED",
                                                m["name"], " by " + by if by else "",
                                                time.monotonic() - t0), flush=True)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("mutants: %d of %d killed%s" % (killed, len(todo),
                                          ", %d errors" % errors if errors else ""))
    return 0 if killed == len(todo) else 1


if __name__ == "__main__":
    sys.exit(main())
