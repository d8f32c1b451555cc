#!/usr/bin/env python3
"""Checks an Nsight Systems profile of a portalab run against the run's
results.json: the NVTX ranges of every measured entry, the work launched in
each phase, and the overlap the streams experiments are about.

    nsys_check.py PROFILE.sqlite RESULTS.json [--require NAME,...]

PROFILE.sqlite is `nsys export --type sqlite` of a `nsys profile -t cuda,nvtx`
run that wrote RESULTS.json. One line per assertion, PASS, FAIL or SKIP
(nothing in this profile to check it on), with the details of a failure.
--require turns a SKIP of the named assertions into a failure. Exit status:
0 all passed, 1 an assertion failed, 2 bad input.

Assertions (names for --require):
  ranges          every measured row (check PASS or FAIL) has its ranges:
                  portalab/<experiment>/<space> holding cold (with its own
                  cold/kernel), warmup (with `warmups` warmup/kernel), `reps`
                  repetitions of [h2d] kernel [d2h] and verify; h2d and d2h
                  exactly where the row timed copies
  kernel_labels   on a device, every repetition's kernel phase launches GPU
                  work (kernels, copies, memsets, or a CUDA graph traced as a
                  whole), and nothing unexpected: every kernel it launches is
                  portalab's (its name holds "portalab"), Kokkos Kernels' (the
                  functor Kokkos launches is in KokkosBlas::, KokkosLapack::,
                  KokkosBatched::, KokkosSparse::, KokkosGraph::,
                  KokkosKernels::, KokkosODE::) or a Kokkos value fill
                  (Kokkos::Impl::ViewFill: deep_copy(view, value) writes a
                  constant, it moves no data); any kernel where the row's
                  library is a vendor's (cuBLAS, cuSOLVER: not "native"). A
                  hidden copy (Kokkos::Impl::ViewCopy) or any other kernel
                  fails it. A graph traced as a whole (nsys's default
                  --cuda-graph-trace=graph) counts as work, its kernels unseen
                  (profile with --cuda-graph-trace=node to check their names)
  copy_phases     copies of rows with copy phases: each h2d phase copies host
                  to device only, each d2h phase device to host only, as many
                  bytes as the row's h2d_gbps x h2d_ms says; no array copy
                  (>= 64 KiB) launched from their kernel phases
  copy_overlap    copy_overlap: with pinned memory, pipelined_* copies overlap
                  kernels of other streams in every repetition that could
                  overlap; serial copies overlap no kernel. A repetition whose
                  copies and kernels ran on the GPU, one after another, for
                  less than twice the time the host took to queue them is
                  launch-bound (each was done before much else was queued: at
                  small sizes launching costs more than the work) and is left
                  out, with an info line saying so
  streams         streams experiments run each variant on as many CUDA streams
                  as it has instances (serial, sequential: 1; concurrent: 2;
                  pipelined_k, instances_k: k)
  closed          every NVTX range in the profile ended
  tool_copies     with Kokkos Tools' nvtx-connector loaded (a range of the same
                  name directly inside another): each of portalab's ranges
                  comes exactly twice, the connector's copy of its Kokkos
                  region around portalab's own NVTX range
"""
import argparse
import os
import re
import sys

# The user package (scripts/portalab/), one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from portalab import nsys_sqlite as ns  # noqa: E402
from portalab import results as pr  # noqa: E402

HOST_SPACES = {"Serial", "OpenMP", "Threads", "HPX"}
NATIVE = "native"
ARRAY_COPY_BYTES = 64 * 1024  # below: a reduction's result, a functor, an info word
# The functor a Kokkos kernel runs, in its demangled name (any backend):
# ...Parallel{For,Reduce,Scan}<[CombinedFunctorReducer<]FUNCTOR<...
_KOKKOS_FUNCTOR = re.compile(r"Kokkos::Impl::Parallel(?:For|Reduce|Scan|ScanWithTotal)<"
                             r"(?:Kokkos::Impl::CombinedFunctorReducer<)?([\w:]+)")
_KOKKOS_KERNELS = re.compile(r"Kokkos(?:Blas|Lapack|Batched|Sparse|Graph|Kernels|ODE)::")
# copy_overlap: the GPU work of a repetition must last this many times the
# host's time to queue it for a queue to build up, so that one stream's
# copies wait beside another's kernels (a chunk queues three operations: a
# chunk's copy and kernel together must outlast the queuing of the next
# chunk's three, which twice the queuing time leaves room for).
QUEUED_FACTOR = 2
ASSERTIONS = ("ranges", "kernel_labels", "copy_phases", "copy_overlap", "streams", "closed",
              "tool_copies")


def instances(variant):
    """How many instances a streams experiment's variant runs on, or None."""
    if variant in ("serial", "sequential"):
        return 1
    if variant == "concurrent":
        return 2
    head, _, k = variant.rpartition("_")
    if head in ("pipelined", "instances") and k.isdigit():
        return int(k)
    return None


def has_copy_phases(row):
    return (row["copies"] != "none" and not row.get("copies_alias")
            and (row.get("h2d_ms", 0) > 0 or row.get("d2h_ms", 0) > 0))


def is_device(row):
    return row["space"] not in HOST_SPACES


class Report:
    def __init__(self):
        self.results = {}  # name -> (status, details)

    def add(self, name, failures, checked, what):
        if not checked:
            self.results[name] = ("SKIP", [f"nothing to check: {what}"])
        else:
            self.results[name] = ("FAIL" if failures else "PASS",
                                  failures or [f"{checked} checked: {what}"])


def check_ranges(pairs, missing, extra):
    fails = [f"row without ranges: {r['experiment']} {r['variant']} {r['space']} {r['dtype']} "
             f"n={r['n']} copies={r['copies']}" for r in missing]
    fails += [f"ranges without a measured row: {m.label()} at {m.start} ns" for m in extra]
    # A row measured in passes: its warm-ups and repetitions are all its
    # passes' together.
    counts = {}
    for m, row in pairs:
        n = sum(c.name == f"{m.entry.name}/warmup/kernel" for c in m.warmup.children) \
            if m.warmup else 0
        seen = counts.setdefault(id(row), [row, m.label(), 0, 0])
        seen[2] += n
        seen[3] += len(m.reps)
    for row, where, warmups, reps in counts.values():
        if warmups != row["warmups"]:
            fails.append(f"{where}: {warmups} warmup/kernel ranges, warmups = {row['warmups']}")
        if reps != row["reps"]:
            fails.append(f"{where}: {reps} repetitions, reps = {row['reps']}")
    for m, row in pairs:
        where = m.label()
        copies = has_copy_phases(row)
        if m.cold is None:
            fails.append(f"{where}: no cold range")
        elif not any(c.name == f"{m.entry.name}/cold/kernel" for c in m.cold.children):
            fails.append(f"{where}: no cold/kernel inside cold")
        if m.warmup is None:
            fails.append(f"{where}: no warmup range")
        for i, rep in enumerate(m.reps):
            if rep.kernel is None:
                fails.append(f"{where}: repetition {i} has no kernel range")
            if copies and (rep.h2d is None or rep.d2h is None):
                fails.append(f"{where}: repetition {i} lacks h2d or d2h (the row timed copies)")
            if not copies and (rep.h2d or rep.d2h):
                fails.append(f"{where}: repetition {i} has copy ranges (the row timed none)")
        if m.verify is None:
            fails.append(f"{where}: no verify range")
        fails += [f"{where}: unexpected range {r.name} at {r.start} ns" for r in m.stray]
    return fails, len(pairs) + len(missing)


def kernel_origin(name):
    """Whose kernel a demangled kernel name is: "portalab", "Kokkos Kernels",
    "value fill" (Kokkos' deep_copy of a value into a view), or None (a
    vendor's, a Kokkos copy, anything else)."""
    if "portalab" in name:
        return "portalab"
    m = _KOKKOS_FUNCTOR.search(name)
    if not m:
        return None
    functor = m.group(1)
    if functor == "Kokkos::Impl::ViewFill":
        return "value fill"
    if _KOKKOS_KERNELS.match(functor):
        return "Kokkos Kernels"
    return None


def check_kernel_labels(profile, pairs, info):
    fails, checked = [], 0
    accepted = {"value fill": 0, "Kokkos Kernels": 0}
    graphs = 0
    for m, row in pairs:
        if not is_device(row):
            continue
        checked += 1
        vendor = row.get("library", NATIVE) != NATIVE
        for i, rep in enumerate(m.reps):
            if rep.kernel is None:
                continue
            work = profile.launched_in(rep.kernel)
            if not work:
                fails.append(f"{m.label()}: repetition {i}: no GPU work launched in its kernel phase")
            graphs += sum(a.kind == "graph" for a in work)
            if vendor:
                continue
            foreign = set()
            for a in work:
                if a.kind != "kernel":
                    continue
                origin = kernel_origin(a.name)
                if origin is None:
                    foreign.add(a.name)
                elif origin in accepted:
                    accepted[origin] += 1
            if foreign:
                fails.append(f"{m.label()}: repetition {i}: kernels neither portalab's, Kokkos "
                             "Kernels' nor a value fill: "
                             + "; ".join(n[:160] for n in sorted(foreign)[:3]))
    if any(accepted.values()):
        info.append("kernel_labels: besides portalab's, accepted by name: "
                    f"{accepted['value fill']} Kokkos value fills (ViewFill), "
                    f"{accepted['Kokkos Kernels']} Kokkos Kernels kernels")
    if graphs:
        info.append(f"kernel_labels: {graphs} CUDA graph executions traced as a whole, their "
                    "kernels' names unseen (nsys profile --cuda-graph-trace=node shows them)")
    return fails, checked


def _row_bytes(row, phase):
    # The runner's rate is bytes / median time: its product gives the bytes back.
    return row.get(f"{phase}_gbps", 0) * row.get(f"{phase}_ms", 0) * 1e6


def check_copy_phases(profile, pairs):
    fails, checked = [], 0
    copies = profile.copies
    for m, row in pairs:
        if not is_device(row) or row["copies"] == "none":
            continue
        if not has_copy_phases(row):
            # The experiment moves its arrays in its kernel phase (copy_overlap).
            checked += 1
            for i, rep in enumerate(m.reps):
                if rep.kernel is None:
                    continue
                kinds = {c.copy for c in profile.launched_in(rep.kernel, copies)}
                if not {"h2d", "d2h"} <= kinds:
                    fails.append(f"{m.label()}: repetition {i}: copies in its kernel phase "
                                 f"are {sorted(kinds) or 'none'}, not both h2d and d2h")
            continue
        checked += 1
        for i, rep in enumerate(m.reps):
            for phase in ("h2d", "d2h"):
                rng = getattr(rep, phase)
                if rng is None:
                    continue
                moved = profile.launched_in(rng, copies)
                wrong = sorted({c.copy for c in moved if c.copy != phase})
                if wrong:
                    fails.append(f"{m.label()}: repetition {i}: {phase} phase copies {wrong}")
                want = _row_bytes(row, phase)
                got = sum(c.bytes for c in moved if c.copy == phase)
                if abs(got - want) > max(1.0, 1e-6 * want):
                    fails.append(f"{m.label()}: repetition {i}: {phase} phase copied {got} bytes, "
                                 f"the row's rate says {want:.0f}")
            if rep.kernel is not None:
                stray = [c for c in profile.launched_in(rep.kernel, copies)
                         if c.copy in ("h2d", "d2h") and c.bytes >= ARRAY_COPY_BYTES]
                if stray:
                    fails.append(f"{m.label()}: repetition {i}: {len(stray)} array copies launched "
                                 f"in its kernel phase ({stray[0].copy}, {stray[0].bytes} bytes)")
    return fails, checked


def _overlap(copies, kernels, other_stream):
    """Nanoseconds of copy time during which a kernel ran (on another stream
    when other_stream), summed over copies; and the copies' total time."""
    overlapped = total = 0
    for c in copies:
        total += c.end - c.start
        spans = sorted((max(c.start, k.start), min(c.end, k.end)) for k in kernels
                       if k.overlaps(c) and (not other_stream or k.lane != c.lane))
        covered, reach = 0, c.start
        for s, e in spans:
            s = max(s, reach)
            if e > s:
                covered += e - s
                reach = e
        overlapped += covered
    return overlapped, total


def _launch_bound(work):
    """Why the copies and kernels of a repetition could not overlap, or None:
    their GPU time, added up, under QUEUED_FACTOR times the time the host
    took to queue them (from the first call to the last): the GPU then
    mostly waits for the host, each copy done before much else is queued,
    and no hardware promises an overlap. None too where the profile has no
    CUDA calls to tell."""
    launches = [a.launch_time for a in work if a.launch_time is not None]
    if len(launches) < 2 or len(launches) < len(work):
        return None
    busy = sum(a.end - a.start for a in work)
    queued = max(launches) - min(launches)
    if busy >= QUEUED_FACTOR * queued:
        return None
    return (f"launch-bound: its copies and kernels ran {busy / 1e3:.1f} us on the GPU, "
            f"queued over {queued / 1e3:.1f} us")


def check_copy_overlap(profile, pairs, info):
    fails, checked = [], 0
    for m, row in pairs:
        if m.experiment != "copy_overlap" or not is_device(row) or row["copies"] == "none":
            continue
        variant = row["variant"]
        pipelined = variant.startswith("pipelined_")
        must_overlap = pipelined and row["copies"] == "pinned"
        per_rep, applied = [], variant == "serial"
        for i, rep in enumerate(m.reps):
            if rep.kernel is None:
                continue
            work = profile.launched_in(rep.kernel)
            cps = [a for a in work if a.kind == "memcpy" and a.copy in ("h2d", "d2h")]
            kns = [a for a in work if a.kind == "kernel"]
            if variant == "serial":
                ov, tot = _overlap(cps, kns, other_stream=False)
                if ov > 0:
                    fails.append(f"{m.label()}: repetition {i}: copies overlap kernels for "
                                 f"{ov / 1e3:.1f} us (serial must not overlap)")
            else:
                ov, tot = _overlap(cps, kns, other_stream=True)
                why_not = _launch_bound(cps + kns) if must_overlap else None
                if why_not:
                    info.append(f"copy_overlap {variant} copies={row['copies']}: repetition {i} "
                                f"not checked: {why_not}")
                elif must_overlap:
                    applied = True
                    if ov <= 0:
                        fails.append(f"{m.label()}: repetition {i}: no copy overlaps a kernel on "
                                     "another stream")
            per_rep.append(ov / tot if tot else 0.0)
        checked += applied
        if per_rep:
            info.append(f"copy_overlap {variant} copies={row['copies']}: share of copy time "
                        f"overlapping kernels{' of other streams' if variant != 'serial' else ''}: "
                        + " ".join(f"{x:.2f}" for x in per_rep))
    return fails, checked


def check_streams(profile, pairs, info):
    fails, checked = [], 0
    for m, row in pairs:
        if not is_device(row) or m.experiment not in ("copy_overlap", "inverse_pair",
                                                      "concurrent_small"):
            continue
        k = instances(row["variant"])
        if k is None:
            continue
        checked += 1
        for i, rep in enumerate(m.reps):
            if rep.kernel is None:
                continue
            lanes = {a.lane for a in profile.launched_in(rep.kernel) if a.kind != "memset"}
            if len(lanes) != k:
                fails.append(f"{m.label()}: repetition {i}: work on {len(lanes)} streams, "
                             f"the variant has {k} instances")
            if i == 0:
                info.append(f"{m.label()}: streams {sorted(s for _, _, s in lanes)}")
    return fails, checked


def check_closed(profile):
    fails = [f"{name or '(unnamed)'} at {start} ns never ended" for name, start in profile.unclosed]
    return fails, len(profile.ranges) + len(profile.unclosed)


def check_tool_copies(profile):
    ours = [r for r in profile.ranges
            if r.kind == ns.NVTX_PUSH_POP and r.name.startswith("portalab/")]
    if not any(r.retold for r in profile.ranges):
        return [], 0  # no tool copies ranges: nothing to check
    fails = [f"{r.name} at {r.start} ns: {'no copy' if not r.retold else f'{r.retold + 1} copies'}"
             for r in ours if r.retold != 1]
    return fails, len(ours)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile", help="nsys export --type sqlite of the run")
    ap.add_argument("results", help="the run's results.json")
    ap.add_argument("--require", default="",
                    help="comma-separated assertions that must have something to check")
    a = ap.parse_args(argv)
    required = [x for x in a.require.split(",") if x]
    unknown = [x for x in required if x not in ASSERTIONS]
    if unknown:
        print(f"nsys_check.py: --require: unknown {unknown}; known: {', '.join(ASSERTIONS)}",
              file=sys.stderr)
        return 2
    try:
        profile = ns.load(a.profile)
    except (ns.ExportError, OSError) as e:
        print(f"nsys_check.py: {e}", file=sys.stderr)
        return 2
    rows = pr.load_document(a.results)["results"]  # else one line and exit status 2

    pairs, missing, extra = ns.match_rows(ns.measurements(profile), rows)
    info = list(profile.warnings)
    report = Report()
    report.add("ranges", *check_ranges(pairs, missing, extra), "measured rows and their ranges")
    report.add("kernel_labels", *check_kernel_labels(profile, pairs, info),
               "device rows' kernel phases")
    report.add("copy_phases", *check_copy_phases(profile, pairs), "device rows with copies")
    report.add("copy_overlap", *check_copy_overlap(profile, pairs, info),
               "copy_overlap serial, and pipelined with pinned copies not launch-bound, on a device")
    report.add("streams", *check_streams(profile, pairs, info), "streams experiments on a device")
    report.add("closed", *check_closed(profile), "NVTX ranges")
    report.add("tool_copies", *check_tool_copies(profile),
               "portalab's ranges, each with the nvtx-connector's copy")

    failed = False
    for name in ASSERTIONS:
        status, details = report.results[name]
        if status == "SKIP" and name in required:
            status = "FAIL"
        failed |= status == "FAIL"
        print(f"{status} {name}: {details[0] if status != 'FAIL' else f'{len(details)} problem(s)'}")
        if status == "FAIL":
            for d in details[:20]:
                print(f"    {d}")
            if len(details) > 20:
                print(f"    ... {len(details) - 20} more")
    for line in info:
        print(f"  info: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
