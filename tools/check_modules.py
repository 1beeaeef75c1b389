#!/usr/bin/env python3
"""check_modules.py - the module include graph of src/ has no cycles.

A module is a file name without its extension (src/exec.c and src/exec.h
are module "exec"); a private header X_internal.h (the interface between
the files of one library, e.g. boinc_internal.h) belongs to module X.
Module A uses module B when a file of A has `#include "B.h"`.  Prints the graph with --print; exits 1 and names a
cycle when there is one.  Run by `make check-modules` (part of `make check`).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)


def module_of(base):
    return base[:-len("_internal")] if base.endswith("_internal") else base


def module_graph(src):
    graph = {}
    for name in sorted(os.listdir(src)):
        base, ext = os.path.splitext(name)
        base = module_of(base)
        if ext not in (".c", ".h"):
            continue
        with open(os.path.join(src, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        uses = graph.setdefault(base, set())
        for dep in INCLUDE.findall(text):
            dep = os.path.basename(dep)
            if not os.path.exists(os.path.join(src, dep + ".h")):
                continue
            dep = module_of(dep)
            if dep != base:
                uses.add(dep)
    return graph


def find_cycle(graph):
    """A list of modules forming a cycle, or None (iterative DFS)."""
    state = {}  # 1 = on the stack, 2 = done
    for root in sorted(graph):
        if state.get(root):
            continue
        stack = [(root, iter(sorted(graph[root])))]
        path = [root]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))
    return None


def main():
    src = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "src"
    graph = module_graph(src)
    if "--print" in sys.argv:
        for mod in sorted(graph):
            print("%-20s -> %s" % (mod, " ".join(sorted(graph[mod])) or "-"))
    cycle = find_cycle(graph)
    if cycle:
        print("include cycle between modules: " + " -> ".join(cycle), file=sys.stderr)
        return 1
    print("module graph of %s: %d modules, no cycle" % (src, len(graph)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
