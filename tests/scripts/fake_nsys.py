"""Synthetic Nsight Systems SQLite exports of portalab runs, for the tests of
scripts/portalab/nsys_sqlite.py, dev/nsys_check.py and timeline.py without a GPU.

The tables and columns are named as `nsys export --type sqlite` names them
(NVIDIA's SQLite schema reference and scripts that query real exports; not
checked against a 2025.3 export here, which needs a GPU node): StringIds,
NVTX_EVENTS (eventType 59 = push/pop range; the name in `text`, or through
`textId` when text_ids is set), CUPTI_ACTIVITY_KIND_KERNEL (names as StringIds
ids), _MEMCPY (copyKind per ENUM_CUDA_MEMCPY_OPER), _GRAPH_TRACE (a CUDA graph
launch traced as a whole; columns as an nsys 2024.3 export has them), _RUNTIME
(the CUDA calls, linked by correlationId; the kernels of a graph traced per node
share their cudaGraphLaunch's), TARGET_INFO_SESSION_START_TIME. Global ids are
serialized as nsys does: pid in bits 24-47, tid in bits 0-23.

`portalab_run` lays out the ranges run_case.cpp opens for a list of result
rows and fills each phase with the GPU work a Cuda run would show; `faults`
breaks one property at a time, for the checker's tests.
"""
import os
import sqlite3

PID = 4242
MAIN_TID = (PID << 24) | PID
GLOBAL_PID = PID << 24
DEFAULT_STREAM = 13

SCHEMA = """
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE NVTX_EVENTS (
    start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
    category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
    textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
    doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL,
    jsonTextId INTEGER, jsonText TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,
    cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
    blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
    dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
    localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
    copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
    srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
    migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, graphId INTEGER, graphExecId INTEGER);
"""

COPY_OPER = [(0, "CUDA_MEMCPY_OPER_UNKNOWN", "Unknown"),
             (1, "CUDA_MEMCPY_OPER_HTOD", "Host-to-Device"),
             (2, "CUDA_MEMCPY_OPER_DTOH", "Device-to-Host"),
             (8, "CUDA_MEMCPY_OPER_DTOD", "Device-to-Device"),
             (10, "CUDA_MEMCPY_OPER_PTOP", "Peer-to-Peer")]
COPY_KIND = {"h2d": 1, "d2h": 2, "d2d": 8}


def kokkos_kernel(functor):
    """A demangled name as Kokkos' Cuda backend's kernels have it."""
    return ("void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<"
            f"{functor}, Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<long>>, "
            "Kokkos::Cuda>>(T1)")


PORTALAB_KERNEL = kokkos_kernel("portalab::kernels::Horner<Kokkos::View<float*>, Kokkos::View<float*>>")
GRAPH_NODE_KERNEL = kokkos_kernel("portalab::kernels::WriteIndex<Kokkos::View<long*>>")
# A hidden copy: deep_copy between views Kokkos cannot copy with one memcpy.
FOREIGN_KERNEL = kokkos_kernel("Kokkos::Impl::ViewCopy<Kokkos::View<float*, Kokkos::LayoutStride>, "
                               "Kokkos::View<const float*>, Kokkos::LayoutRight, Kokkos::Cuda, 1, int>")
VALUE_FILL_KERNEL = kokkos_kernel("Kokkos::Impl::ViewFill<Kokkos::View<double*, Kokkos::LayoutRight, "
                                  "Kokkos::Device<Kokkos::Cuda, Kokkos::CudaSpace>>, "
                                  "Kokkos::LayoutRight, Kokkos::Cuda, 1, int>")
KOKKOS_KERNELS_KERNEL = (
    "void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelReduce<"
    "Kokkos::Impl::CombinedFunctorReducer<KokkosBlas::Impl::DotFunctor<Kokkos::Cuda, "
    "Kokkos::View<float*>, Kokkos::View<const float*>, Kokkos::View<const float*>, int>, "
    "Kokkos::Impl::FunctorAnalysis<>::Reducer>, Kokkos::RangePolicy<Kokkos::Cuda>, Kokkos::Cuda>>(T1)")
VENDOR_KERNEL = "void getrf_pivot_kernel<float, 256>(int, float*, int, int*)"


class FakeExport:
    """connector: each range also comes as the copy Kokkos Tools'
    nvtx-connector makes of portalab's Kokkos region, around portalab's own."""

    def __init__(self, path, text_ids=False, connector=False):
        if os.path.exists(path):
            os.remove(path)
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)
        self.db.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", COPY_OPER)
        self.db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')",
                        (1_700_000_000_000_000_000,))
        self.text_ids = text_ids
        self.connector = connector
        self.strings = {}
        self.correlation = 0

    def string(self, value):
        if value not in self.strings:
            self.strings[value] = len(self.strings) + 1
            self.db.execute("INSERT INTO StringIds VALUES (?, ?)", (self.strings[value], value))
        return self.strings[value]

    def range(self, name, start, end, tid=MAIN_TID):
        text, text_id = (None, self.string(name)) if self.text_ids else (name, None)
        for s, e in [(start, end)] + ([(start - 1, end + 1)] if self.connector else []):
            self.db.execute(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, "
                "globalTid, endGlobalTid, textId, domainId) VALUES (?, ?, 59, NULL, 0, NULL, ?, "
                "?, NULL, ?, 0)", (s, e, text, tid, text_id))

    def _call(self, name, at, tid):
        self.correlation += 1
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
                        (at, at + 2_000, tid, self.correlation, self.string(name)))
        return self.correlation

    def kernel(self, name, start, end, stream, launch_at, tid=MAIN_TID, device=0, graph_launch=None,
               graph_node=None):
        """graph_launch: the correlationId of the cudaGraphLaunch that ran it
        as node graph_node (traced per node), in place of a launch of its own."""
        corr = graph_launch if graph_launch is not None else \
            self._call("cudaLaunchKernel_v7000", launch_at, tid)
        short = name.split("<")[0].split()[-1]
        self.db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, NULL, ?, ?, ?, ?, ?, ?, 0, "
            "0, 32, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, ?, NULL, ?, NULL)",
            (start, end, device, stream, corr, GLOBAL_PID, self.string(name), self.string(short),
             self.string("_Z" + short), corr, graph_node))

    def graph_launch(self, launch_at, tid=MAIN_TID):
        """A cudaGraphLaunch call; its correlationId."""
        return self._call("cudaGraphLaunch_v10000", launch_at, tid)

    def graph(self, start, end, stream, corr, graph_id=1, device=0):
        """A graph execution traced as a whole (--cuda-graph-trace=graph)."""
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES "
                        "(?, ?, ?, 1, NULL, ?, ?, ?, ?, ?)",
                        (start, end, device, stream, corr, GLOBAL_PID, graph_id, graph_id))

    def copy(self, kind, nbytes, start, end, stream, launch_at, tid=MAIN_TID, device=0):
        corr = self._call("cudaMemcpyAsync_v3020", launch_at, tid)
        self.db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, 1, NULL, ?, ?, ?, ?, ?, NULL, "
            "1, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
            (start, end, device, stream, corr, GLOBAL_PID, nbytes, COPY_KIND[kind]))

    def close(self):
        self.db.commit()
        self.db.close()


def row(experiment, variant, copies="pinned", space="Cuda", reps=3, warmups=1, nbytes=4_000_000,
        library="native", check="PASS", dtype="float32", n=1_000_000):
    """A results.json row with the fields the checker reads. Copy phases
    (h2d_ms, d2h_ms > 0) where the runner would time them."""
    copy_phases = copies != "none" and space not in ("Serial", "OpenMP") \
        and experiment != "copy_overlap"
    ms = 0.08 if copy_phases else 0.0
    gbps = nbytes / (ms * 1e6) if ms else 0.0
    return {"experiment": experiment, "variant": variant, "space": space, "dtype": dtype,
            "n": n, "copies": copies, "copies_alias": space in ("Serial", "OpenMP"),
            "reps": reps, "warmups": warmups, "h2d_ms": ms, "d2h_ms": ms, "h2d_gbps": gbps,
            "d2h_gbps": gbps, "library": library, "check": check}


def streams_rows(copies=("pinned", "pageable")):
    """The rows of the streams deck on Cuda, in the order the runner records them."""
    rows = [row("inverse_pair", v, copies="none", library="cuSOLVER")
            for v in ("sequential", "concurrent")]
    for mode in copies:
        rows += [row("copy_overlap", v, copies=mode) for v in ("serial", "pipelined_2", "pipelined_3")]
    rows += [row("concurrent_small", f"instances_{k}", copies="none") for k in (1, 2, 4, 8)]
    return rows


def copy_rows():
    """vector_poly with copy phases (pageable, pinned) and without."""
    return [row("vector_poly", v, copies=mode) for mode in ("pageable", "pinned", "none")
            for v in ("fused", "unfused")]


def kokkos_rows():
    """Rows whose kernel phases launch more than portalab's kernels, as the
    tools deck has them: array_ops creation (a value fill), dot through
    Kokkos Kernels' own kernel (library native), launch_overhead replaying a
    Kokkos Graph."""
    return [row("array_ops", "creation", copies="none"),
            row("dot", "kokkos_kernels", copies="none"),
            row("launch_overhead", "graph", copies="none")]


class Clock:
    def __init__(self, t=1_000_000):
        self.t = t

    def tick(self, dt=1_000):
        self.t += dt
        return self.t


US = 1_000


def _fill_kernel_phase(fx, r, t, faults):
    """GPU work of one kernel phase starting at t (CPU); returns when its
    fence returns."""
    e, v = r["experiment"], r["variant"]
    launch = t + 1 * US
    if e == "copy_overlap":
        chunks, chunk = 6, 400_000
        k = 1 if v == "serial" else int(v.rsplit("_", 1)[1])
        pinned = r["copies"] == "pinned"
        streams = [DEFAULT_STREAM + 2 * i for i in range(k)]
        if k == 1:
            gpu = t + 5 * US
            for c in range(chunks):  # each phase fenced: nothing overlaps
                fx.copy("h2d", chunk, gpu, gpu + 8 * US, streams[0], gpu - 2 * US)
                kernel_end = gpu + 18 * US
                fx.kernel(PORTALAB_KERNEL, gpu + 9 * US, kernel_end, streams[0], gpu + 8 * US + 500)
                if "serial_overlap" in faults:  # a copy running under the kernel
                    fx.copy("d2h", chunk, gpu + 10 * US, gpu + 17 * US, streams[0] + 1,
                            gpu + 9 * US + 500)
                else:
                    fx.copy("d2h", chunk, kernel_end + US, kernel_end + 9 * US, streams[0],
                            kernel_end + 500)
                gpu = kernel_end + 11 * US
            return gpu + 2 * US
        if "launch_bound" in faults:
            # Small chunks: each operation done before the host queues the
            # next, so nothing overlaps though every chunk is pinned.
            gpu = t + 5 * US
            for c in range(chunks):
                s = streams[c % k]
                for j, op in enumerate(("h2d", "kernel", "d2h")):
                    at = gpu + (3 * c + j) * 12 * US
                    if op == "kernel":
                        fx.kernel(PORTALAB_KERNEL, at + 3 * US, at + 5 * US, s, at)
                    else:
                        fx.copy(op, 20_000, at + 3 * US, at + 5 * US, s, at)
            return gpu + 3 * chunks * 12 * US
        # Pipelined: everything queued at once; with pinned memory chunk c's
        # copies run under chunk c-1's kernel on the other stream.
        starts = [t + 5 * US + c * (10 * US if pinned and "no_overlap" not in faults else 30 * US)
                  for c in range(chunks)]
        end = t
        for c in range(chunks):
            s = streams[c % k]
            g = starts[c]
            fx.copy("h2d", chunk, g, g + 8 * US, s, launch + c * 300)
            fx.kernel(PORTALAB_KERNEL, g + 9 * US, g + 19 * US, s, launch + c * 300 + 100)
            fx.copy("d2h", chunk, g + 20 * US, g + 28 * US, s, launch + c * 300 + 200)
            end = max(end, g + 28 * US)
        return end + 2 * US
    if e == "inverse_pair":
        k = 2 if v == "concurrent" else 1
        end = t
        for i in range(2):
            s = DEFAULT_STREAM + 2 * (i if k == 2 else 0)
            g = t + 5 * US + (0 if k == 2 else i * 40 * US)
            for j in range(3):
                fx.kernel(VENDOR_KERNEL, g + j * 12 * US, g + j * 12 * US + 10 * US, s,
                          launch + i * 500 + j * 100)
            end = max(end, g + 36 * US)
        return end + 2 * US
    if e == "concurrent_small":
        k = int(v.rsplit("_", 1)[1])
        end = t
        for j in range(16):
            s = DEFAULT_STREAM + 2 * (j % k)
            g = t + 5 * US + (j // k) * 6 * US
            fx.kernel(PORTALAB_KERNEL, g, g + 5 * US, s, launch + j * 100)
            end = max(end, g + 5 * US)
        return end + 2 * US
    if e == "launch_overhead" and v == "graph":
        # The graph's n nodes, one cudaGraphLaunch: traced per node (nsys
        # --cuda-graph-trace=node) or as a whole (graph_traced_whole).
        if "graph_lost" in faults:  # nothing in the export for it
            return t + 22 * US
        corr = fx.graph_launch(launch)
        if "graph_traced_whole" in faults:
            fx.graph(t + 3 * US, t + 20 * US, DEFAULT_STREAM, corr)
        else:
            for node in range(4):
                g = t + 3 * US + node * 4 * US
                fx.kernel(GRAPH_NODE_KERNEL, g, g + 3 * US, DEFAULT_STREAM, launch,
                          graph_launch=corr, graph_node=node + 1)
        return t + 22 * US
    name = {"array_ops": VALUE_FILL_KERNEL, "dot": KOKKOS_KERNELS_KERNEL}.get(e, PORTALAB_KERNEL)
    if "foreign_kernel" in faults:
        name = FOREIGN_KERNEL
    fx.kernel(name, t + 3 * US, t + 20 * US, DEFAULT_STREAM, launch)
    if "copy_in_kernel_phase" in faults and r["copies"] != "none":
        fx.copy("h2d", 1 << 20, t + 21 * US, t + 40 * US, DEFAULT_STREAM, launch + 100)
        return t + 42 * US
    return t + 22 * US


def _fill_copy_phase(fx, r, phase, t, faults):
    nbytes = round(r[f"{phase}_gbps"] * r[f"{phase}_ms"] * 1e6)
    if "wrong_bytes" in faults:
        nbytes //= 2
    kind = phase
    if "d2h_in_h2d" in faults and phase == "h2d":
        kind = "d2h"
    fx.copy(kind, nbytes, t + 3 * US, t + 80 * US, DEFAULT_STREAM, t + 1 * US)
    return t + 82 * US


def _repetition(fx, r, prefix, clock, faults, copies):
    for phase in (("h2d", "kernel", "d2h") if copies else ("kernel",)):
        start = clock.tick()
        if phase == "kernel":
            end = _fill_kernel_phase(fx, r, start, faults)
        else:
            end = _fill_copy_phase(fx, r, phase, start, faults)
        fx.range(f"{prefix}/{phase}", start, end)
        clock.t = end


def portalab_run(fx, rows, faults=()):
    """The ranges and GPU work of a run that recorded rows (an entry is a run
    of rows with the same experiment, space, dtype, n and copies). faults:
    serial_overlap, no_overlap (pipelined copies after the kernels, queued at
    once), launch_bound (pipelined operations each done before the next is
    queued), foreign_kernel (a Kokkos ViewCopy), graph_traced_whole (no
    fault: the graph as one execution), graph_lost (no trace of the graph),
    copy_in_kernel_phase, wrong_bytes, d2h_in_h2d,
    missing_verify (of the first measured row), missing_rep (one repetition
    fewer than reps, first measured row)."""
    clock = Clock()
    entries = []
    for r in rows:
        key = (r["experiment"], r["space"], r["dtype"], r["n"], r["copies"])
        if entries and entries[-1][0] == key:
            entries[-1][1].append(r)
        else:
            entries.append((key, [r]))
    first = True
    spans = {}  # experiment -> [start, end]: its range encloses its entries
    for (experiment, space, _, _, _), entry_rows in entries:
        span = spans.setdefault(experiment, [clock.tick(), None])
        measured = [r for r in entry_rows if r["check"] in ("PASS", "FAIL")]
        if measured:
            name = f"portalab/{experiment}/{space}"
            entry_start = clock.tick()
            s = clock.tick()
            fx.range(f"{name}/setup", s, clock.tick(50 * US))
            for r in measured:
                copies = r["h2d_ms"] > 0 or r["d2h_ms"] > 0
                cold = clock.tick()
                _repetition(fx, r, f"{name}/cold", clock, faults, copies)
                fx.range(f"{name}/cold", cold, clock.tick())
                warm = clock.tick()
                for _ in range(r["warmups"]):
                    _repetition(fx, r, f"{name}/warmup", clock, faults, copies)
                fx.range(f"{name}/warmup", warm, clock.tick())
                reps = r["reps"] - (1 if first and "missing_rep" in faults else 0)
                for _ in range(reps):
                    _repetition(fx, r, name, clock, faults, copies)
                if not (first and "missing_verify" in faults):
                    v = clock.tick()
                    fx.range(f"{name}/verify", v, clock.tick(30 * US))
                first = False
            fx.range(name, entry_start, clock.tick())
        span[1] = clock.tick()
    for experiment, (start, end) in spans.items():
        fx.range(f"portalab/{experiment}", start, end)
    return clock.tick()


def write(path, rows, faults=(), text_ids=False, connector=False):
    fx = FakeExport(path, text_ids=text_ids, connector=connector)
    portalab_run(fx, rows, faults)
    fx.close()
    return path
