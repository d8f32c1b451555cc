"""Reads an Nsight Systems SQLite export (`nsys export --type sqlite`) into
Python objects: NVTX ranges, kernels, memory copies, memsets and CUDA graph
executions, each GPU activity with the thread and moment its CUDA call was
made; and groups
portalab's ranges into measurements (one per measured variant).

Used by scripts/timeline.py and scripts/dev/nsys_check.py. Only the standard
library: it runs wherever the export can be read.

Tables read (nsys 2021 onwards; missing ones count as empty): NVTX_EVENTS
(eventType 59 push/pop and 60 start/end ranges; the name in `text` or, for
registered strings, `textId` into StringIds), CUPTI_ACTIVITY_KIND_KERNEL
(demangledName, shortName: StringIds), CUPTI_ACTIVITY_KIND_MEMCPY (copyKind,
ENUM_CUDA_MEMCPY_OPER), CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_GRAPH_TRACE
(a CUDA graph launch traced as a whole, nsys's default --cuda-graph-trace=graph:
its nodes are then no rows of the kernel and copy tables; traced per node, they
are, each with its graph launch's correlationId), CUPTI_ACTIVITY_KIND_RUNTIME
and _DRIVER (the calls, by correlationId), TARGET_INFO_SESSION_START_TIME.
Times are nanoseconds on the report's clock.
"""
import bisect
import re
import sqlite3
import urllib.parse
from dataclasses import dataclass, field

from portalab import results as pr
from portalab import text

NVTX_PUSH_POP = 59
NVTX_START_END = 60

# CUPTI_ACTIVITY_MEMCPY_KIND, as ENUM_CUDA_MEMCPY_OPER numbers them.
COPY_KINDS = {1: "h2d", 2: "d2h", 8: "d2d", 9: "h2h", 10: "p2p"}
_COPY_LABELS = {"host-to-device": "h2d", "device-to-host": "d2h", "device-to-device": "d2d",
                "host-to-host": "h2h", "peer-to-peer": "p2p"}

PHASES = ("setup", "cold", "warmup", "h2d", "kernel", "d2h", "verify")


class ExportError(Exception):
    """The file is not an nsys SQLite export that can be read."""


def pid_of(global_id):
    """The process id in nsys's serialized global ids (globalTid, globalPid)."""
    return (global_id >> 24) & 0xFFFFFF if global_id is not None else None


@dataclass
class Range:
    name: str
    start: int
    end: int
    tid: int  # globalTid of the thread that opened it
    kind: int  # NVTX_PUSH_POP or NVTX_START_END
    domain: int = 0
    parent: "Range" = field(default=None, repr=False, compare=False)
    children: list = field(default_factory=list, repr=False, compare=False)
    depth: int = 0
    retold: int = 0  # ranges of its name directly inside it, left out (_nest)

    @property
    def pid(self):
        return pid_of(self.tid)

    def contains(self, t):
        return self.start <= t <= self.end


@dataclass
class Activity:
    """A kernel, memcpy, memset or CUDA graph execution as it ran on the GPU."""
    kind: str  # "kernel", "memcpy", "memset" or "graph" (a graph traced as a whole)
    start: int
    end: int
    device: int
    stream: int
    pid: int
    correlation: int
    name: str = ""  # kernels: demangled name; copies: "memcpy h2d", ...; "CUDA graph <id>"
    short_name: str = ""
    bytes: int = 0
    copy: str = ""  # memcpy: h2d, d2h, d2d, h2h, p2p or other
    launch_tid: int = None  # the thread whose CUDA call queued it
    launch_time: int = None  # when that call started

    @property
    def lane(self):
        return (self.pid, self.device, self.stream)

    def overlaps(self, other):
        return self.start < other.end and other.start < self.end


@dataclass
class Profile:
    path: str
    ranges: list  # every closed NVTX range, by start time
    kernels: list
    copies: list
    memsets: list
    graphs: list = field(default_factory=list)  # graph executions traced as a whole
    session_start_utc_ns: int = None
    warnings: list = field(default_factory=list)
    unclosed: list = field(default_factory=list)  # (name, start) of NVTX ranges never ended
    _index: dict = field(default=None, repr=False)  # launched_in's, built on first use

    def activities(self):
        return sorted(self.kernels + self.copies + self.memsets + self.graphs,
                      key=lambda a: (a.start, a.end))

    def launched_in(self, rng, activities=None):
        """The activities queued from inside rng: their CUDA call was made on
        rng's thread while it was open. Without the calls (no CUDA API trace),
        those that ran on the GPU within rng's time. activities: a subset to
        look in (default: every kernel, copy, memset and graph execution)."""
        if self._index is None:
            self._index = {}
            for a in self.activities():
                key = ("tid", a.launch_tid) if a.launch_tid is not None else ("pid", a.pid)
                self._index.setdefault(key, []).append(
                    (a.launch_time if a.launch_tid is not None else a.start, id(a), a))
            for v in self._index.values():
                v.sort(key=lambda x: (x[0], x[1]))
        wanted = None if activities is None else {id(a) for a in activities}
        out = []
        for key, in_range in ((("tid", rng.tid), lambda a: True),
                              (("pid", rng.pid), lambda a: a.end <= rng.end)):
            items = self._index.get(key, [])
            i = bisect.bisect_left(items, (rng.start, -1))
            while i < len(items) and items[i][0] <= rng.end:
                a = items[i][2]
                if in_range(a) and (wanted is None or id(a) in wanted):
                    out.append(a)
                i += 1
        return sorted(out, key=lambda a: (a.start, a.end))


def _tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")}


def _columns(db, table):
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}


def _strings(db, tables):
    if "StringIds" not in tables:
        return {}
    return dict(db.execute("SELECT id, value FROM StringIds"))


def _read_ranges(db, tables, strings):
    """(the closed ranges, nested; (name, start) of those never ended)."""
    if "NVTX_EVENTS" not in tables:
        return [], []
    cols = _columns(db, "NVTX_EVENTS")
    # Short messages are stored in `text`, registered or deduplicated ones
    # through `textId`, depending on the nsys version: take whichever is set.
    text = "text" if "text" in cols else "NULL"
    text_id = "textId" if "textId" in cols else "NULL"
    domain = "domainId" if "domainId" in cols else "0"
    tid = "globalTid" if "globalTid" in cols else "0"
    kind = "eventType" if "eventType" in cols else str(NVTX_PUSH_POP)
    rows = db.execute(
        f"SELECT start, end, {text}, {text_id}, {tid}, {kind}, {domain} FROM NVTX_EVENTS "
        f"WHERE {kind} IN ({NVTX_PUSH_POP}, {NVTX_START_END}) ORDER BY start, end DESC")
    ranges, unclosed = [], []
    for start, end, txt, txt_id, gtid, ev, dom in rows:
        name = txt if txt is not None else strings.get(txt_id, "")
        if end is None or end < start:
            unclosed.append((name or "", start))
        else:
            ranges.append(Range(name or "", start, end, gtid or 0, ev, dom or 0))
    return _nest(ranges), unclosed


def _nest(ranges):
    """Parents and depths of push/pop ranges, per thread, from their times
    (they nest by construction; start/end ranges stay at depth 0). A range
    directly inside one of the same name on its thread is that range told
    twice, and is left out: with Kokkos Tools' nvtx-connector loaded, each of
    portalab's ranges comes as the connector's copy of its Kokkos region
    around portalab's own NVTX range. Returns the ranges kept."""
    stacks, kept = {}, []
    for r in ranges:  # by start, outer first at equal starts
        if r.kind != NVTX_PUSH_POP:
            kept.append(r)
            continue
        stack = stacks.setdefault(r.tid, [])
        while stack and not (stack[-1].start <= r.start and r.end <= stack[-1].end):
            stack.pop()
        if stack and stack[-1].name == r.name:
            stack[-1].retold += 1
            continue
        if stack:
            r.parent = stack[-1]
            r.depth = stack[-1].depth + 1
            stack[-1].children.append(r)
        stack.append(r)
        kept.append(r)
    return kept


def _launches(db, tables):
    """(pid, correlationId) -> (globalTid, start) of the CUDA calls."""
    calls = {}
    for table in ("CUPTI_ACTIVITY_KIND_DRIVER", "CUPTI_ACTIVITY_KIND_RUNTIME"):  # runtime wins
        if table in tables and {"correlationId", "globalTid", "start"} <= _columns(db, table):
            for gtid, corr, start in db.execute(f"SELECT globalTid, correlationId, start FROM {table}"):
                calls[(pid_of(gtid), corr)] = (gtid, start)
    return calls


def _col(cols, name, default="0"):
    return name if name in cols else default


def _read_kernels(db, tables, strings, calls):
    table = "CUPTI_ACTIVITY_KIND_KERNEL"
    if table not in tables:
        return []
    c = _columns(db, table)
    rows = db.execute(
        f"SELECT start, end, {_col(c, 'deviceId')}, {_col(c, 'streamId')}, {_col(c, 'globalPid')}, "
        f"{_col(c, 'correlationId')}, {_col(c, 'demangledName', 'NULL')}, "
        f"{_col(c, 'shortName', 'NULL')} FROM {table} ORDER BY start")
    out = []
    for start, end, dev, stream, gpid, corr, dem, short in rows:
        a = Activity("kernel", start, end, dev, stream, pid_of(gpid), corr,
                     name=strings.get(dem) or strings.get(short) or "",
                     short_name=strings.get(short) or "")
        a.launch_tid, a.launch_time = calls.get((a.pid, corr), (None, None))
        out.append(a)
    return out


def _copy_kind_names(db, tables):
    names = dict(COPY_KINDS)
    if "ENUM_CUDA_MEMCPY_OPER" in tables:
        c = _columns(db, "ENUM_CUDA_MEMCPY_OPER")
        label = "label" if "label" in c else "name" if "name" in c else None
        if label:
            for i, text in db.execute(f"SELECT id, {label} FROM ENUM_CUDA_MEMCPY_OPER"):
                key = _COPY_LABELS.get(str(text).strip().lower())
                if key:
                    names[i] = key
    return names


def _read_copies(db, tables, calls):
    table = "CUPTI_ACTIVITY_KIND_MEMCPY"
    if table not in tables:
        return []
    kinds = _copy_kind_names(db, tables)
    c = _columns(db, table)
    rows = db.execute(
        f"SELECT start, end, {_col(c, 'deviceId')}, {_col(c, 'streamId')}, {_col(c, 'globalPid')}, "
        f"{_col(c, 'correlationId')}, {_col(c, 'bytes')}, {_col(c, 'copyKind')} "
        f"FROM {table} ORDER BY start")
    out = []
    for start, end, dev, stream, gpid, corr, nbytes, kind in rows:
        copy = kinds.get(kind, "other")
        a = Activity("memcpy", start, end, dev, stream, pid_of(gpid), corr,
                     name=f"memcpy {copy}", bytes=nbytes or 0, copy=copy)
        a.launch_tid, a.launch_time = calls.get((a.pid, corr), (None, None))
        out.append(a)
    return out


def _read_memsets(db, tables, calls):
    table = "CUPTI_ACTIVITY_KIND_MEMSET"
    if table not in tables:
        return []
    c = _columns(db, table)
    rows = db.execute(
        f"SELECT start, end, {_col(c, 'deviceId')}, {_col(c, 'streamId')}, {_col(c, 'globalPid')}, "
        f"{_col(c, 'correlationId')}, {_col(c, 'bytes')} FROM {table} ORDER BY start")
    out = []
    for start, end, dev, stream, gpid, corr, nbytes in rows:
        a = Activity("memset", start, end, dev, stream, pid_of(gpid), corr, name="memset",
                     bytes=nbytes or 0)
        a.launch_tid, a.launch_time = calls.get((a.pid, corr), (None, None))
        out.append(a)
    return out


def _read_graphs(db, tables, calls):
    table = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
    if table not in tables:
        return [], 0
    c = _columns(db, table)
    rows = db.execute(
        f"SELECT start, end, {_col(c, 'deviceId')}, {_col(c, 'streamId')}, {_col(c, 'globalPid')}, "
        f"{_col(c, 'correlationId')}, {_col(c, 'graphId', 'NULL')} FROM {table} ORDER BY start")
    out, untimed = [], 0
    for start, end, dev, stream, gpid, corr, graph in rows:
        if not start and not end:  # CUPTI: no time could be collected for it
            untimed += 1
            continue
        a = Activity("graph", start, end, dev, stream, pid_of(gpid), corr,
                     name=f"CUDA graph {graph}" if graph is not None else "CUDA graph")
        a.launch_tid, a.launch_time = calls.get((a.pid, corr), (None, None))
        out.append(a)
    return out, untimed


def load(path):
    """The Profile in the SQLite export at path; ExportError if it is none."""
    try:
        pr.sqlite_file(path, "an Nsight Systems export")
    except pr.ResultsError as e:
        raise ExportError(str(e)) from None
    try:
        db = sqlite3.connect(f"file:{urllib.parse.quote(path, errors='surrogateescape')}?mode=ro",
                             uri=True)
        tables = _tables(db)
    except sqlite3.Error as e:
        raise ExportError(f"{text.shown(path)}: not an SQLite database ({e})") from None
    try:
        if not tables & {"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                         "StringIds"}:
            raise ExportError(f"{text.shown(path)}: no NVTX or CUDA tables: not an nsys export, or a "
                              "profile without -t cuda,nvtx")
        strings = _strings(db, tables)
        calls = _launches(db, tables)
        ranges, unclosed = _read_ranges(db, tables, strings)
        graphs, untimed = _read_graphs(db, tables, calls)
        p = Profile(path, ranges, _read_kernels(db, tables, strings, calls),
                    _read_copies(db, tables, calls), _read_memsets(db, tables, calls),
                    graphs=graphs, unclosed=unclosed)
        if untimed:
            p.warnings.append(f"{untimed} CUDA graph executions without GPU times left out")
        if "TARGET_INFO_SESSION_START_TIME" in tables:
            row = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
            p.session_start_utc_ns = row[0] if row else None
        if not calls and (p.kernels or p.copies or p.graphs):
            p.warnings.append("no CUDA API calls in the export: activities are placed in ranges "
                              "by their GPU times")
        return p
    except sqlite3.Error as e:
        raise ExportError(f"{text.shown(path)}: {e}") from None
    finally:
        db.close()


# --- portalab's ranges -------------------------------------------------------

_ENTRY = re.compile(r"^portalab/([^/]+)/([^/]+)$")


@dataclass
class Rep:
    """One repetition: its phase ranges (h2d and d2h only with copies)."""
    kernel: Range = None
    h2d: Range = None
    d2h: Range = None

    @property
    def start(self):
        return min(r.start for r in (self.h2d, self.kernel, self.d2h) if r)

    @property
    def end(self):
        return max(r.end for r in (self.h2d, self.kernel, self.d2h) if r)

    def phases(self):
        return [(p, r) for p, r in (("h2d", self.h2d), ("kernel", self.kernel), ("d2h", self.d2h)) if r]


@dataclass
class Measurement:
    """One variant of one entry as the runner measures it: cold call, warm-ups,
    measured repetitions, check; all inside the entry's range
    portalab/<experiment>/<space>. Ranges do not name the variant: match
    measurements with result rows in order (match_rows)."""
    experiment: str
    space: str
    entry: Range
    cold: Range = None
    warmup: Range = None
    reps: list = field(default_factory=list)
    verify: Range = None
    stray: list = field(default_factory=list)  # ranges out of the expected order
    row: dict = None  # the results.json row, once matched

    @property
    def start(self):
        firsts = [r.start for r in (self.cold, self.warmup) if r] + [r.start for r in self.reps]
        return min(firsts) if firsts else self.entry.start

    @property
    def end(self):
        ends = [r.end for r in (self.verify,) if r] + [r.end for r in self.reps]
        return max(ends) if ends else self.entry.end

    @property
    def variant(self):
        return self.row["variant"] if self.row else None

    def label(self):
        v = f" {self.row['variant']} copies={self.row['copies']}" if self.row else ""
        return f"{self.experiment}/{self.space}{v}"


def entries(profile):
    """portalab/<experiment>/<space> ranges, by start."""
    return [r for r in profile.ranges if r.kind == NVTX_PUSH_POP and _ENTRY.match(r.name)]


def measurements(profile):
    """Every measurement in the profile, by start: the children of each entry
    range cut at each verify range. A measurement interrupted before its check
    has no verify."""
    out = []
    for entry in entries(profile):
        experiment, space = _ENTRY.match(entry.name).groups()
        prefix = entry.name + "/"
        current = None
        for child in sorted(entry.children, key=lambda r: r.start):
            if not child.name.startswith(prefix):
                continue
            phase = child.name[len(prefix):]
            if phase == "setup":
                continue
            # A cold range after repetitions starts the next measurement even
            # when the previous one has no verify (interrupted, or a range lost).
            if current is not None and phase in ("cold", "warmup") and (
                    current.reps or (phase == "cold" and current.cold)):
                out.append(current)
                current = None
            if current is None:
                current = Measurement(experiment, space, entry)
            if phase == "cold" and current.cold is None and not current.reps:
                current.cold = child
            elif phase == "warmup" and current.warmup is None and not current.reps:
                current.warmup = child
            elif phase == "h2d":
                current.reps.append(Rep(h2d=child))
            elif phase == "kernel":
                last = current.reps[-1] if current.reps else None
                if last and last.h2d and not last.kernel and not last.d2h:
                    last.kernel = child
                else:
                    current.reps.append(Rep(kernel=child))
            elif phase == "d2h":
                last = current.reps[-1] if current.reps else None
                if last and last.kernel and not last.d2h:
                    last.d2h = child
                else:
                    current.stray.append(child)
            elif phase == "verify":
                current.verify = child
                out.append(current)
                current = None
            else:
                current.stray.append(child)
        if current is not None:
            out.append(current)
    return out


MEASURED = ("PASS", "FAIL")  # rows whose entry ran its repetitions


def passes_of(row):
    """How many passes measured a row (a deck's `passes`): each is a
    measurement of its own in a profile."""
    reps = row.get("repetitions")
    kept = reps.get("pass_kernel_ms") if isinstance(reps, dict) else None
    return len(kept) if isinstance(kept, list) and len(kept) > 1 else 1


def match_rows(found, rows):
    """Pairs measurements with the results.json rows that were measured
    (check PASS or FAIL), per experiment and space, in order: the runner
    measures an entry's variants in the order it records their rows, and
    in passes all of an experiment's rows once, then again (a row's every
    pass is a pair). Returns (pairs, unmatched rows, unmatched
    measurements)."""
    by_key, pairs, missing, extra = {}, [], [], []
    for m in found:
        by_key.setdefault((m.experiment, m.space), []).append(m)
    wanted = {}
    for r in rows:
        if r.get("check") in MEASURED:
            wanted.setdefault((r["experiment"], r["space"]), []).append(r)
    for key in sorted(set(by_key) | set(wanted)):
        ms, rs = by_key.get(key, []), wanted.get(key, [])
        passes = max((passes_of(r) for r in rs), default=1)
        expected = rs * passes
        for m, r in zip(ms, expected):
            m.row = r
            pairs.append((m, r))
        matched = {id(r) for r in expected[:len(ms)]}
        missing += [r for r in rs if id(r) not in matched]
        extra += ms[len(expected):]
    return pairs, missing, extra
