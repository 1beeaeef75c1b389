"""Drive one BOINC_SUBMIT of N one-input jobs (default 1) through a
traced boinc_gahp against the emulator; the per-thread traces go to
OUT/tr (tools/path_trace/README.md).

    run.py TRACED_BOINC_GAHP OUT [N]"""
import sys, os, shutil, pathlib
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path[:0] = [os.path.join(ROOT, "tests", "lib"), os.path.join(ROOT, "tests")]
import emu
from gahp_client import Gahp, escape, split_tokens
gahp, out = sys.argv[1], pathlib.Path(sys.argv[2])
shutil.rmtree(out, ignore_errors=True); out.mkdir(parents=True)
os.environ["BOINC_GAHP"] = gahp
e = emu.Emulator(out / "emu", hosts=2); e.start()
tr = out / "tr"; tr.mkdir()
p = out / "in.txt"; p.write_bytes(b"hello\n")
g = Gahp(str(out / "j.db"), env={"BOINC_TRACE_DIR": str(tr)})
assert g.command("ASYNC_MODE_ON") == "S"
assert g.command("BOINC_SELECT_PROJECT %s %s" % (escape(e.url), escape(e.authenticator))) == "S"
jobs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
toks = ["BOINC_SUBMIT", "2", "b", "uppercase", str(jobs)]
for i in range(jobs):
    q = out / ("in%d.txt" % i); q.write_bytes(b"hello %d\n" % i)
    toks += ["b#%d" % i, "0", "1", str(q), "in"]
assert g.command(" ".join(escape(t) for t in toks)) == "S"
print(g.wait_results(1, timeout=60))
g.quit(); e.stop()
