"""figures - the one output convention of the benchmarks: besides their
human-readable lines, benches print one machine-readable line per figure,

    FIGURE<TAB>key<TAB>value<TAB>unit

which run_all.py collects into the summary table (with the machine limits
measured in the same run and the ratio of each figure to its limit)."""
import os
import statistics


def figure(key, value, unit):
    print("FIGURE\t%s\t%s\t%s" % (key, "n/a" if value is None else "%.6g" % value, unit),
          flush=True)


def median(values):
    return statistics.median(values) if values else None


def rss_kib(pid, field="VmRSS"):
    """VmRSS (or VmHWM, the peak) of a live process, in KiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def cpu_seconds(pid):
    """user + system CPU time of a live process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def emu_state_dir(name):
    """A fresh directory for an emulator's state (its database and the
    files uploaded to it), on tmpfs (/dev/shm) when there is one, else in
    the system's temporary directory; BENCH_EMU_DIR chooses another parent.
    The emulator stands for a remote server: its own disk is not the
    GAHP's work.  On ext4 after many deletions (this machine after the
    test suites), creating the emulator's 10,001 files took most of a
    submit's time and varied threefold between identical runs (the
    kernel's inode allocator, `recently_deleted`).  The GAHP's journal and
    input files stay on the real disk.  Removed at exit."""
    import atexit
    import shutil
    import tempfile
    parent = os.environ.get("BENCH_EMU_DIR")
    if not parent and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        parent = "/dev/shm"
    d = tempfile.mkdtemp(prefix="bench_emu.%s." % name, dir=parent or None)
    atexit.register(shutil.rmtree, d, True)
    return d
