"""model.py - what a power loss may leave, from the recorder's log
(tests/crash_states/recorder.c), for explore.py.

The file-system model is deliberately weak (POSIX, not ext4's ordered
mode): at a crash after the first `pos` operations,
* a data operation (write, ftruncate, O_TRUNC) on a file is durable if an
  fsync/fdatasync of that file followed it before `pos`; otherwise it may
  be lost, or (a write longer than one block) torn: any subset of its
  4096-byte file blocks reached the disk;
* a name operation (creation, rename, unlink, mkdir, rmdir) is durable if
  an fsync of its directory (of both, for a rename) followed it; otherwise
  it may be undone;
* every undecided operation is decided independently of the others.
SQLite's -shm is never recorded: it is rebuilt from the WAL on open.
"""
import os
import re
import socket

BLOCK = 4096


def unesc(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "%" and len(s) >= i + 3:
            out.append(chr(int(s[i + 1:i + 3], 16)))
            i += 3
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


class Op:
    __slots__ = ("i", "kind", "path", "path2", "ino", "off", "size", "blob", "created",
                 "trunc", "isdir", "parents", "cover", "key", "result", "conn")

    def __init__(self, i, kind):
        self.i, self.kind = i, kind
        self.path = self.path2 = self.ino = self.blob = None
        self.off = self.size = 0
        self.created = self.trunc = self.isdir = False
        self.parents = ()
        self.cover = None        # index of the sync that makes it durable
        self.key = self.result = self.conn = None

    @property
    def is_data(self):
        return self.kind in ("write", "trunc") or (self.kind == "open" and self.trunc)

    @property
    def is_name(self):
        return (self.kind == "open" and self.created) or self.kind in (
            "rename", "unlink", "mkdir", "rmdir")


class State:
    """A crash state: the first pos operations happened; decided maps the
    index of each undecided operation kept to None (whole) or a set of
    block numbers (torn); undecided operations not in it were lost."""

    def __init__(self, pos, decided, how):
        self.pos, self.decided, self.how = pos, decided, how

    def describe(self, rec):
        last = rec.ops[self.pos - 1] if self.pos else None
        where = "after op %d %s %s" % (self.pos - 1, last.kind, last.path or last.key or "") \
            if last else "at the start"
        nund = len(rec.undecided(self.pos))
        torn = sum(1 for v in self.decided.values() if v is not None)
        return "%s; %s: %d of %d unsynced ops kept, %d torn" % (
            where, self.how, len(self.decided), nund, torn)


class Recording:
    def __init__(self, log, init_root, root):
        self.root = root
        self.init_root = init_root
        self.ops = []
        self._blobs = {}
        with open(log, "rb") as f:
            lines = f.read().decode("utf-8", "surrogateescape").split("\n")
        for line in lines:
            if line:
                self._parse(line.split("\t"))
        self._resolve()
        self.nsyncs = sum(1 for o in self.ops if o.kind == "sync")
        self.http = []           # request bytes, in the order they completed
        self.http_end = []       # op index of each one's last byte
        self.http_conn = []      # the connection each one was sent on
        self._parse_http()
        self._order_creates()

    def _parse(self, f):
        o = Op(len(self.ops), f[0])
        k = f[0]
        if k == "open":
            o.path = unesc(f[1])
            o.created, o.trunc, o.isdir = f[2] == "1", f[3] == "1", f[4] == "1"
        elif k == "write":
            o.path, o.off, o.size, o.blob = unesc(f[1]), int(f[2]), int(f[3]), (f[4], int(f[5]))
        elif k == "trunc":
            o.path, o.size = unesc(f[1]), int(f[2])
        elif k in ("sync", "unlink", "mkdir", "rmdir"):
            o.path = unesc(f[1])
        elif k == "rename":
            o.path, o.path2 = unesc(f[1]), unesc(f[2])
        elif k == "net":
            o.conn, o.size, o.blob = int(f[1]), int(f[2]), (f[3], int(f[4]))
        elif k == "conn":
            o.conn = int(f[1])
        elif k == "mark":
            o.kind = "mark" + f[1]
            o.key = (unesc(f[2]), unesc(f[3]))
            if f[1] == "R":
                o.result = unesc(f[4])
        else:
            raise ValueError("unknown log line %r" % f)
        self.ops.append(o)

    def data(self, o):
        name, at = o.blob
        if name not in self._blobs:
            with open(name, "rb") as f:
                self._blobs[name] = f.read()
        return self._blobs[name][at:at + o.size]

    # ---- the file system as the program saw it ----
    def _initial(self):
        """(names: path -> ino, contents: ino -> bytearray, dirs) of init_root,
        mapped to paths under root."""
        names, contents, dirs = {}, {}, {self.root}
        for d, subdirs, files in os.walk(self.init_root):
            rel = os.path.relpath(d, self.init_root)
            here = self.root if rel == "." else os.path.join(self.root, rel)
            dirs.add(here)
            for fn in files:
                ino = ("init", os.path.join(here, fn))
                with open(os.path.join(d, fn), "rb") as f:
                    contents[ino] = bytearray(f.read())
                names[os.path.join(here, fn)] = ino
        return names, contents, dirs

    def _resolve(self):
        names, _, dirs = self._initial()
        pending_data = {}        # ino -> [op]
        pending_name = {}        # dir -> [op]
        waiting = {}             # op index -> set of parents not yet synced
        for o in self.ops:
            k = o.kind
            if k == "open":
                if o.isdir:
                    o.ino = ("dir", o.path)
                elif o.created or o.path not in names:
                    o.ino = ("new", o.i)
                    names[o.path] = o.ino
                    o.created = True
                else:
                    o.ino = names[o.path]
            elif k in ("write", "trunc"):
                o.ino = names.get(o.path)
            elif k == "sync":
                o.ino = ("dir", o.path) if o.path in dirs else names.get(o.path)
            elif k == "unlink":
                o.ino = names.pop(o.path, None)
            elif k == "rename":
                o.ino = names.pop(o.path, None)
                if o.ino is not None:
                    names[o.path2] = o.ino
            elif k == "mkdir":
                dirs.add(o.path)
            elif k == "rmdir":
                dirs.discard(o.path)
            if o.is_data and o.ino is not None:
                pending_data.setdefault(o.ino, []).append(o)
            if o.is_name:
                o.parents = tuple({os.path.dirname(o.path)} |
                                  ({os.path.dirname(o.path2)} if o.path2 else set()))
                waiting[o.i] = set(o.parents)
                for p in o.parents:
                    pending_name.setdefault(p, []).append(o)
            if k == "sync" and o.ino is not None:
                if o.ino[0] == "dir":
                    for n in pending_name.pop(o.path, []):
                        waiting[n.i].discard(o.path)
                        if not waiting[n.i]:
                            n.cover = o.i
                else:
                    for d in pending_data.pop(o.ino, []):
                        d.cover = o.i
        self.final_names = names

    def undecided(self, pos):
        """Indices of the operations before pos whose durability is open."""
        return [o.i for o in self.ops[:pos]
                if (o.is_data or o.is_name) and (o.cover is None or o.cover >= pos)]

    def final_files(self, exclude=()):
        """{relative path: content} of the program's files at the end that
        are not the journal's (outputs), from the real tree."""
        out = {}
        for d, _, files in os.walk(self.root):
            for fn in files:
                p = os.path.join(d, fn)
                rel = os.path.relpath(p, self.root)
                if rel.startswith("journal.db") or rel in exclude or ".boinc_gahp." in fn:
                    continue
                with open(p, "rb") as f:
                    out[rel] = f.read()
        return out

    def client_knowledge(self, pos):
        """(set of request keys answered S, {key: result}) before pos."""
        s, r = set(), {}
        for o in self.ops[:pos]:
            if o.kind == "markS":
                s.add(o.key)
            elif o.kind == "markR":
                r[o.key] = o.result
        return s, r

    # ---- crash states ----
    def crash_states(self, rng, max_states):
        """Sampled states: at each sync point (just before and just after
        it), after each client-visible event and at the end, every unsynced
        operation kept, every one lost, and random subsets with torn
        writes; duplicates removed; at most max_states, chosen with rng."""
        positions = set()
        for o in self.ops:
            if o.kind == "sync":
                positions.add(o.i)
                positions.add(o.i + 1)
            elif o.kind in ("markS", "markR"):
                positions.add(o.i + 1)
        positions.add(len(self.ops))
        cands, seen = [], set()
        for pos in sorted(positions):
            und = self.undecided(pos)
            variants = [("all kept", {i: None for i in und}), ("all lost", {})]
            for _ in range(2 if und else 0):
                dec = {}
                for i in und:
                    if rng.random() < 0.5:
                        continue
                    o = self.ops[i]
                    blocks = self._blocks(o)
                    if o.kind == "write" and len(blocks) > 1 and rng.random() < 0.5:
                        dec[i] = set(b for b in blocks if rng.random() < 0.5)
                    else:
                        dec[i] = None
                variants.append(("subset", dec))
            know = self.client_knowledge(pos)
            for how, dec in variants:
                sig = (tuple(sorted((i, None if v is None else tuple(sorted(v))) for i, v in dec.items())),
                       frozenset(know[0]), tuple(sorted(know[1].items())),
                       self.http_before(pos), self._durable_sig(pos))
                if sig in seen:
                    continue
                seen.add(sig)
                cands.append(State(pos, dec, how))
        if len(cands) > max_states:
            cands = sorted(rng.sample(cands, max_states), key=lambda s: s.pos)
        return cands

    def _durable_sig(self, pos):
        return sum(1 for o in self.ops[:pos] if (o.is_data or o.is_name)
                   and o.cover is not None and o.cover < pos)

    @staticmethod
    def _blocks(o):
        if o.kind != "write" or o.size == 0:
            return []
        return list(range(o.off // BLOCK, (o.off + o.size - 1) // BLOCK + 1))

    def materialise(self, st, root):
        names, contents, dirs = self._initial()
        for o in self.ops[:st.pos]:
            if not (o.is_data or o.is_name):
                continue
            durable = o.cover is not None and o.cover < st.pos
            if not durable and o.i not in st.decided:
                continue
            torn = None if durable else st.decided[o.i]
            k = o.kind
            if k == "open":
                if o.trunc and o.ino in contents and not o.created:
                    del contents[o.ino][:]
                if o.created:
                    contents.setdefault(o.ino, bytearray())
                    names[o.path] = o.ino
            elif k == "write":
                if o.ino is None:
                    continue
                buf = contents.setdefault(o.ino, bytearray())
                data = self.data(o)
                if torn is None:
                    spans = [(o.off, o.off + o.size)]
                else:
                    spans = [(max(o.off, b * BLOCK), min(o.off + o.size, (b + 1) * BLOCK))
                             for b in sorted(torn)]
                for a, z in spans:
                    if len(buf) < z:
                        buf.extend(b"\0" * (z - len(buf)))
                    buf[a:z] = data[a - o.off:z - o.off]
            elif k == "trunc":
                if o.ino is None:
                    continue
                buf = contents.setdefault(o.ino, bytearray())
                if len(buf) > o.size:
                    del buf[o.size:]
                else:
                    buf.extend(b"\0" * (o.size - len(buf)))
            elif k == "rename":
                if o.ino is not None and names.get(o.path) == o.ino:
                    del names[o.path]
                    names[o.path2] = o.ino
            elif k == "unlink":
                if o.ino is not None and names.get(o.path) == o.ino:
                    del names[o.path]
            elif k == "mkdir":
                dirs.add(o.path)
            elif k == "rmdir":
                dirs.discard(o.path)
        os.makedirs(root)
        for d in sorted(dirs):
            os.makedirs(d, exist_ok=True)
        for p, ino in names.items():
            if os.path.dirname(p) not in dirs:
                continue        # its directory's creation was lost
            with open(p, "wb") as f:
                f.write(contents.get(ino, b""))

    # ---- the requests sent to the emulator ----
    def _parse_http(self):
        bufs = {}
        for o in self.ops:
            if o.kind == "conn":
                bufs[o.conn] = b""
            elif o.kind == "net":
                b = bufs.get(o.conn, b"") + self.data(o)
                while True:
                    req, rest = split_request(b)
                    if req is None:
                        break
                    self.http.append(req)
                    self.http_end.append(o.i)
                    self.http_conn.append(o.conn)
                    b = rest
                bufs[o.conn] = b

    def _order_creates(self):
        """Replay create_batch requests in the order the server numbered them.

        Two create_batch requests sent at once on two connections can be
        logged in the other order from the one the server processed them
        in (the recorder logs a send after it returned), and the server
        numbers batches in the order it processes them: replayed in log
        order, the two batches swapped ids, the journal's server batch ids
        named the other batch, and recovery met a server that never
        existed ("batch sa on the server 2 times").  A create's id is the
        batch id of the next request on its connection (its query_files);
        the creates whose id is known are replayed in the order of those
        ids, in the same list positions (the epochs do not move).
        """
        creates = [k for k, r in enumerate(self.http) if b"<create_batch>" in r]
        ids = {}
        for k in creates:
            for j in range(k + 1, len(self.http)):
                if self.http_conn[j] != self.http_conn[k]:
                    continue
                if b"<create_batch>" in self.http[j]:
                    break
                m = BATCH_ID_RE.search(self.http[j])
                if m and int(m.group(1)) > 0:
                    ids[k] = int(m.group(1))
                    break
        known = [k for k in creates if k in ids]
        by_id = sorted(known, key=lambda k: ids[k])
        moved = [(self.http[k], self.http_conn[k]) for k in by_id]
        for k, (req, conn) in zip(known, moved):
            self.http[k], self.http_conn[k] = req, conn

    def http_before(self, pos):
        return sum(1 for e in self.http_end if e < pos)


# The batch a request names (query_files, upload_files, submit_batch, ...).
BATCH_ID_RE = re.compile(rb"<batch_id>\s*(\d+)\s*</batch_id>")


def split_request(b):
    """(one complete HTTP request, the rest) or (None, b)."""
    h = b.find(b"\r\n\r\n")
    if h < 0:
        return None, b
    head = b[:h].decode("latin-1").split("\r\n")
    length, chunked = 0, False
    for line in head[1:]:
        name, _, val = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(val.strip())
        elif name.strip().lower() == "transfer-encoding" and "chunked" in val.lower():
            chunked = True
    body_at = h + 4
    if not chunked:
        if len(b) < body_at + length:
            return None, b
        return b[:body_at + length], b[body_at + length:]
    i = body_at
    while True:
        e = b.find(b"\r\n", i)
        if e < 0:
            return None, b
        n = int(b[i:e].split(b";")[0], 16)
        if n == 0:
            t = b.find(b"\r\n\r\n", e - 2 if e >= 2 else e)
            end = e + 4 if b[e:e + 4] == b"\r\n\r\n" else (t + 4 if t >= 0 else -1)
            if end < 0 or end > len(b):
                return None, b
            return b[:end], b[end:]
        i = e + 2 + n + 2
        if i > len(b):
            return None, b


def replay_http(port, req):
    """Send one recorded request to the emulator on port (Expect and
    keep-alive dropped) and read its whole answer."""
    h = req.find(b"\r\n\r\n")
    head = req[:h].split(b"\r\n")
    keep = [head[0]] + [x for x in head[1:] if x.split(b":")[0].strip().lower()
                        not in (b"expect", b"connection", b"keep-alive")]
    data = b"\r\n".join(keep + [b"Connection: close"]) + b"\r\n\r\n" + req[h + 4:]
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    try:
        s.sendall(data)
        while s.recv(1 << 16):
            pass
    finally:
        s.close()
