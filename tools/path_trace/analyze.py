"""The modules a thread's run of one function walks through (issue 30's
"modules and returns a BOINC_SUBMIT's worker path enters").

    analyze.py BINARY TRACE_DIR ROOT_FUNCTION

For every per-thread trace in TRACE_DIR (tools/path_trace/tracer.c) that
enters ROOT_FUNCTION: from that entry to its return, the module (source
file under src/, without its extension) of the function on top of the
stack after each call and return, consecutive repeats folded.  Prints
the entries (the length of that sequence), the distinct modules, the
re-entries (entries - distinct), the modules in first-visit order and
the entries per module.  Addresses are mapped with addr2line (a -no-pie
build with -g).  tools/path_trace/README.md has the whole recipe."""
import sys, os, subprocess, collections
binary, trdir, root_fn = sys.argv[1], sys.argv[2], sys.argv[3]
traces = {}
addrs = set()
for f in os.listdir(trdir):
    ev = [l.split() for l in open(os.path.join(trdir, f))]
    traces[f] = ev
    addrs.update(a for _, a in ev)
addrs = sorted(addrs)
out = subprocess.run(["addr2line", "-f", "-e", binary] + ["0x" + a for a in addrs],
                     capture_output=True, text=True).stdout.splitlines()
info = {}
for i, a in enumerate(addrs):
    fn, loc = out[2 * i], out[2 * i + 1]
    path = loc.split(":")[0]
    mod = path.split("/src/", 1)[1] if "/src/" in path else path
    mod = mod.rsplit(".", 1)[0]
    info[a] = (fn, mod)
for f, ev in traces.items():
    names = [info[a][0] for _, a in ev]
    if root_fn not in names:
        continue
    start = next(i for i, (k, a) in enumerate(ev) if k == "E" and info[a][0] == root_fn)
    stack, seq = [], []
    for k, a in ev[start:]:
        if k == "E":
            stack.append(a)
        else:
            stack.pop()
        if not stack:
            break
        m = info[stack[-1]][1]
        if not seq or seq[-1] != m:
            seq.append(m)
    seen, order = set(), []
    for m in seq:
        if m not in seen:
            seen.add(m); order.append(m)
    print("%s: %d entries, %d distinct modules, %d re-entries" % (f, len(seq), len(seen), len(seq) - len(seen)))
    print("  " + " ".join(order))
    counts = collections.Counter(seq)
    print("  per module: " + ", ".join("%s %d" % kv for kv in counts.most_common()))
