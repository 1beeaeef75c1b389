#!/usr/bin/env python3
"""check_modules.py - src/ keeps its layers: every include points down.

src/ has one folder per layer (doc/architecture.md).  LAYERS below lists
them bottom-up; folders on one line are peers of one rank.  A file may
include headers of its own folder and of folders of a LOWER rank only: an
include of a peer folder or of a higher one is refused, whether or not it
closes a cycle.  src/main.c sits above every folder.

Includes of src headers are written with their folder, `#include
"journal/journal.h"`; a bare `#include "x.h"` that names a src header is
refused too, so the folder of every dependency is visible where it is used.

A module is a file name without its extension within its folder
(journal/journal.c and journal/journal.h are module "journal/journal"); a
private header X_internal.h belongs to module X.  The module graph must
also have no cycle inside a folder.

  check_modules.py [SRC] [--print]   exit 0, or 1 naming every violation
Run by `make check-modules` (part of `make check`).
"""
import os
import re
import sys

# Bottom-up.  Peers (same rank) may not include each other.
LAYERS = [
    ("base",),                       # strings, logs, numbers, URLs, local files
    ("config", "wire"),              # settings; the GAHP line format and requests
    ("journal", "boinc"),            # SQLite journal; BOINC web RPC client
    ("exec", "admin"),               # the executor context and interface; the
                                     # operator's commands (check-config, journal ...)
    ("blah", "cmd", "fetch", "submit"),  # the commands' implementations
    ("server",),                     # protocol loop, command table, workers, recovery
    ("",),                           # src/main.c
]
RANK = {folder: rank for rank, peers in enumerate(LAYERS) for folder in peers}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(rel):
    base, _ = os.path.splitext(rel)
    return base[:-len("_internal")] if base.endswith("_internal") else base


def folder_of(rel):
    return os.path.dirname(rel)


def source_files(src):
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith((".c", ".h")):
                    yield os.path.join(folder, name)
        elif folder.endswith((".c", ".h")):
            yield folder


def scan(src):
    """(graph, violations): module -> set of modules it uses, and messages."""
    graph, bad = {}, []
    headers = {rel for rel in source_files(src) if rel.endswith(".h")}
    by_name = {}
    for rel in headers:
        by_name.setdefault(os.path.basename(rel), []).append(rel)
    for rel in source_files(src):
        folder = folder_of(rel)
        if folder not in RANK:
            bad.append("%s: folder %r is not a layer of tools/check_modules.py" % (rel, folder))
            continue
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        mod = module_of(rel)
        uses = graph.setdefault(mod, set())
        for inc in INCLUDE.findall(text):
            if inc not in headers:
                if "/" not in inc and inc in by_name:
                    bad.append("%s: #include \"%s\" must name its folder (%s)"
                               % (rel, inc, " or ".join(sorted(by_name[inc]))))
                continue
            dep_folder = folder_of(inc)
            if dep_folder != folder and RANK[dep_folder] >= RANK[folder]:
                kind = "a peer layer" if RANK[dep_folder] == RANK[folder] else "a higher layer"
                bad.append("%s: includes %s from %s (%s may use only %s and lower layers)"
                           % (rel, inc, kind, folder or "src/", folder or "src/"))
            dep = module_of(inc)
            if dep != mod:
                uses.add(dep)
    return graph, bad


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
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    src = args[0] if args else "src"
    graph, bad = scan(src)
    if "--print" in sys.argv:
        for mod in sorted(graph, key=lambda m: (RANK.get(folder_of(m), 99), m)):
            print("%-28s -> %s" % (mod, " ".join(sorted(graph[mod])) or "-"))
    cycle = find_cycle(graph)
    if cycle:
        bad.append("include cycle between modules: " + " -> ".join(cycle))
    for msg in bad:
        print(msg, file=sys.stderr)
    if bad:
        return 1
    print("module graph of %s: %d modules in %d layers, every include points down, no cycle"
          % (src, len(graph), len(LAYERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
