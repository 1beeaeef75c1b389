#!/usr/bin/python3
"""bench_limits - the machine limits the other figures are compared with,
measured in the same run and in the same temporary directory as the
journals and inputs of the other benches:

  1. fdatasync: median time of write(4 KB) + fdatasync on one file (what a
     journal commit costs at least on this disk);
  2. MD5: hashlib (OpenSSL) throughput over the bytes of the submit bench
     (one 10 MB file + N distinct 1 KB files), from memory;
  3. loopback upload: the same files POSTed as multipart/form-data, K files
     per request, over ONE reused keep-alive connection to a trivial HTTP
     sink (a separate process on 127.0.0.1 that reads each body and
     answers 200): the network floor of an upload of those files;
  4. (with --emu) the same files uploaded straight to boinc_emu from
     Python, with the emulator's PHP limits of the submit bench's case
     (20 files per request: stock with post_max_size 64M; 200: none):
     the wall time, and the emulator's own CPU time for those requests,
     which no client can avoid (the emulator stores one upload at a time).
     The submit's limit is MD5 + the larger of the sink POST and that
     emulator time (run_all.py).
Prints numbers only."""
import argparse
import hashlib
import multiprocessing
import os
import socket
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from figures import cpu_seconds, emu_state_dir, figure, median  # noqa: E402

# the emulator's --php-limits of bench_submit.py's cases, by files per request
EMU_LIMITS = {20: "max_file_uploads=20,post_max_size=64M,upload_max_filesize=64M",
              200: "none"}


def fdatasync_ms(tmp, rounds, idle_s=0.0):
    """Median write(4 KB) + fdatasync, back to back, or after idle_s of an
    idle disk each (what an isolated request meets: on a virtual disk a
    sync after 10 ms of idle costs several times a back-to-back one)."""
    path = os.path.join(tmp, "fdatasync.probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    block = os.urandom(4096)
    times = []
    try:
        for i in range(rounds):
            if idle_s:
                time.sleep(idle_s)
            os.pwrite(fd, block, (i % 16) * 4096)
            t0 = time.perf_counter()
            os.fdatasync(fd)
            times.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
    return median(times) * 1000


def md5_seconds(files):
    t0 = time.perf_counter()
    for data in files:
        hashlib.md5(data).hexdigest()
    return time.perf_counter() - t0


def _read_request(conn, buf):
    """One HTTP/1.1 request with a Content-Length body; returns the rest of
    buf, or None at EOF."""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(1 << 20)
        if not chunk:
            return None
        buf += chunk
    head, buf = buf.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(buf) < length:
        chunk = conn.recv(max(1 << 20, length - len(buf)))
        if not chunk:
            return None
        buf += chunk
    return buf[length:]


def _sink(listener):
    while True:
        conn, _ = listener.accept()
        buf = b""
        while True:
            buf = _read_request(conn, buf)
            if buf is None:
                break
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        conn.close()


def multipart(files, boundary=b"----benchboundary"):
    parts = []
    for i, data in enumerate(files):
        parts.append(b"--%s\r\nContent-Disposition: form-data; name=\"file_%d\"; "
                     b"filename=\"f%d\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                     % (boundary, i, i))
        parts.append(data)
        parts.append(b"\r\n")
    parts.append(b"--%s--\r\n" % boundary)
    return b"".join(parts)


def post_seconds(paths, per_request):
    """Read and POST the files, per_request per request, over one
    keep-alive connection to a sink process; wall time."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    sink = multiprocessing.Process(target=_sink, args=(listener,), daemon=True)
    sink.start()
    try:
        conn = socket.create_connection(("127.0.0.1", port))
        t0 = time.perf_counter()
        buf = b""
        for i in range(0, len(paths), per_request):
            files = []
            for p in paths[i:i + per_request]:
                with open(p, "rb") as f:
                    files.append(f.read())
            body = multipart(files)
            conn.sendall(b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: multipart/form-data; boundary=----benchboundary\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
            while b"\r\n\r\nok" not in buf:
                buf += conn.recv(4096)
            buf = buf.split(b"\r\n\r\nok", 1)[1]
        secs = time.perf_counter() - t0
        conn.close()
        return secs
    finally:
        sink.terminate()
        sink.join()
        listener.close()


def emu_post_seconds(emu_binary, paths, per_request):
    """The same files uploaded straight to boinc_emu (create_batch, then
    upload_files per_request files per request, from Python): (wall
    seconds, the emulator's CPU seconds), so a submit's wall time can be
    split between boinc_gahp and the server it talks to."""
    os.environ["BOINC_EMU"] = os.path.abspath(emu_binary)
    sys.path.insert(0, os.path.join(HERE, "..", "lib"))
    import emu as h
    e = h.Emulator(os.path.join(emu_state_dir("limits"), "emu"), hosts=2,
                   extra_args=["--php-limits", EMU_LIMITS[per_request]])
    e.start()
    try:
        bid = int(h.tag_value(e.rpc(h.xml_create_batch(e.authenticator, "lim", "twoinout")).body,
                              "batch_id"))
        cpu0 = cpu_seconds(e.proc.pid)
        t0 = time.perf_counter()
        for i in range(0, len(paths), per_request):
            datas = []
            for p in paths[i:i + per_request]:
                with open(p, "rb") as f:
                    datas.append(f.read())
            names = [hashlib.md5(d).hexdigest() for d in datas]
            r = e.job_file(h.xml_simple("upload_files", e.authenticator, batch_id=bid,
                                        phys_name=names), datas)
            assert b"<success/>" in r.body, r
        return time.perf_counter() - t0, cpu_seconds(e.proc.pid) - cpu0
    finally:
        e.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gahp", default=None, help="unused here")
    ap.add_argument("--emu", default=None, help="unused here")
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=200)
    args, _ = ap.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="bench_limits.") as tmp:
        fs = fdatasync_ms(tmp, args.rounds)
        print("fdatasync of a 4 KB write in %s: median %.3f ms over %d" % (tmp, fs, args.rounds))
        figure("limit.fdatasync_ms", fs, "ms")

        shared = os.urandom(10 * 1024 * 1024)
        distinct = [os.urandom(1024) for _ in range(args.jobs)]
        secs = min(md5_seconds([shared] + distinct) for _ in range(3))
        mb = (len(shared) + 1024 * args.jobs) / 1e6
        print("MD5 (hashlib/OpenSSL) of 1 x 10 MB + %d x 1 KB: %.4f s = %.0f MB/s"
              % (args.jobs, secs, mb / secs))
        figure("limit.md5_mbps", mb / secs, "MB/s")
        figure("limit.md5_submit_s", secs, "s")

        paths = [os.path.join(tmp, "shared.bin")]
        with open(paths[0], "wb") as f:
            f.write(shared)
        for i, data in enumerate(distinct):
            p = os.path.join(tmp, "in%05d.dat" % i)
            with open(p, "wb") as f:
                f.write(data)
            paths.append(p)
        for per in (20, 200):
            secs = min(post_seconds(paths, per) for _ in range(2))
            print("loopback POST of the same %d files, %d per request, one connection: %.3f s"
                  % (len(paths), per, secs))
            figure("limit.post%d_s" % per, secs, "s")
        if args.emu:
            for per in (20, 200):
                secs, cpu = min(emu_post_seconds(args.emu, paths, per) for _ in range(2))
                print("the same %d files uploaded straight to boinc_emu, %d per request: %.3f s "
                      "(emulator CPU %.3f s)" % (len(paths), per, secs, cpu))
                figure("limit.emu_post%d_s" % per, secs, "s")
                figure("limit.emu_cpu%d_s" % per, cpu, "s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
