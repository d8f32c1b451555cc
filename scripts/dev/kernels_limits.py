#!/usr/bin/env python3
"""Issue 13's ratios from a run of inputs/kernels-limits.toml (and, if given,
portalab_bench's JSON output): each printed with its target; exit 1 if any
target is missed or its figures are absent, 2 if a file cannot be read.

    scripts/dev/kernels_limits.py results/run/results.json [--bench bench.json] [--space Cuda]
    scripts/dev/kernels_limits.py --bench bench.json --space OpenMP   # the host's gemm alone

Targets (on a GPU): stream_copy kernel / deep_copy >= 0.95 in float32 and
float64, and the calibration's copy kernel / deep_copy >= 0.95; broadcast_add
10000² row and column >= 0.80 of the copy limit; dot native 1e8 float32 >=
0.90 of the limit; gemm native / vendor >= 0.50 (float32), >= 0.35 (float64).
The bench's figures are printed beside the run's and held to the same targets.
On the host (the bench's entries of --host-space, or --space if it is a host
space): gemm native / vendor (BLAS) >= 0.50 at 2048, float32 and float64.
"""
import argparse
import os
import re
import sys

# The user package (scripts/portalab/), one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from portalab import results as pr  # noqa: E402


class Report:
    def __init__(self):
        self.missed = 0

    def ratio(self, what, value, target, detail=""):
        if value is None:
            print(f"MISSING  {what}: no figures {detail}")
            self.missed += 1
            return
        ok = value >= target
        self.missed += not ok
        print(f"{'PASS' if ok else 'FAIL':8} {what}: {value:.3f} (target >= {target:.2f}) {detail}")

    def info(self, what, value, detail=""):
        print(f"{'INFO':8} {what}: {'-' if value is None else f'{value:.3f}'} {detail}")


def check_run(path, space, report):
    doc = pr.read_document(path)
    rows = [r for r in doc["results"] if r["space"] == space and r["check"] == "PASS"]

    def row(experiment, variant, dtype, n):
        for r in rows:
            if (r["experiment"], r["variant"], r["dtype"], r["n"]) == (experiment, variant, dtype, n):
                return r
        return None

    def div(a, b):
        return a / b if a and b else None

    cal = (doc["provenance"].get("calibration") or {}).get("spaces", [])
    limits = next((s for s in cal if s["space"] == space), None)
    limit = limits["memory_gbps"] if limits else None
    print(f"== {path}: {space}, copy limit {limit or 0:.0f} GB/s")
    if limits:
        report.ratio("calibrate copy kernel / deep_copy (float64)",
                     div(limits["copy_kernel_gbps"], limits["copy_deep_copy_gbps"]), 0.95,
                     f"({limits['copy_kernel_gbps']:.0f} / {limits['copy_deep_copy_gbps']:.0f} GB/s)")
    else:
        report.ratio("calibrate copy kernel / deep_copy", None, 0.95, "(run without calibration)")

    n = 100_000_000
    for dtype in ("float32", "float64"):
        kernel, deep = row("stream_copy", "kernel", dtype, n), row("stream_copy", "deep_copy", dtype, n)
        naive = row("stream_copy", "naive", dtype, n)
        k, d = (kernel or {}).get("gbps"), (deep or {}).get("gbps")
        report.ratio(f"stream_copy kernel / deep_copy {dtype} 1e8", div(k, d), 0.95,
                     f"({k or 0:.0f} / {d or 0:.0f} GB/s)")
        if naive:
            report.info(f"stream_copy naive / deep_copy {dtype} 1e8", div(naive["gbps"], d),
                        f"({naive['gbps']:.0f} GB/s)")
    for variant in ("row", "column"):
        r = row("broadcast_add", variant, "int64", 10000)
        g = (r or {}).get("gbps")
        report.ratio(f"broadcast_add {variant} 10000² int64 / copy limit", div(g, limit), 0.80,
                     f"({g or 0:.0f} GB/s, {(r or {}).get('kernel_ms') or 0:.3f} ms)")
    native, vendor = row("dot", "native", "float32", n), row("dot", "vendor", "float32", n)
    g = (native or {}).get("gbps")
    report.ratio("dot native 1e8 float32 / copy limit", div(g, limit), 0.90,
                 f"({g or 0:.0f} GB/s, {(native or {}).get('kernel_ms') or 0:.3f} ms)")
    if vendor:
        report.info("dot native / vendor (time of vendor / time of native)",
                    div(vendor["kernel_ms"], (native or {}).get("kernel_ms")),
                    f"(vendor {vendor['kernel_ms']:.3f} ms, {div(vendor['gbps'], limit) or 0:.3f} of the limit)")
    for dtype, target in (("float32", 0.50), ("float64", 0.35)):
        nat, ven = row("gemm", "native", dtype, 4096), row("gemm", "vendor", dtype, 4096)
        a, b = (nat or {}).get("gflops"), (ven or {}).get("gflops")
        report.ratio(f"gemm native / vendor {dtype} 4096", div(a, b), target,
                     f"({a or 0:.0f} / {b or 0:.0f} GFLOP/s)")


HOST_SPACES = ("Serial", "OpenMP", "Threads")


def check_bench(path, space, host_space, report):
    try:
        bench = pr.read_json(path, "benchmark file")
    except pr.ResultsError as e:
        print(f"kernels_limits: {e}", file=sys.stderr)
        sys.exit(2)
    if not isinstance(bench, dict):
        print(f"kernels_limits: {path}: not a benchmark file (not a JSON object)", file=sys.stderr)
        sys.exit(2)
    # Mean real time (ms) per benchmark, by name without the /manual_time tail.
    times = {}
    for b in bench.get("benchmarks", []):
        if b.get("run_type", "iteration") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = re.sub(r"(/manual_time)?(_median)?$", "", b.get("run_name", b["name"]))
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        times[name] = b["real_time"] * unit

    def ratio_of(slow, fast):  # time(fast) / time(slow): slow's rate against fast's
        t_slow, t_fast = times.get(slow), times.get(fast)
        return t_fast / t_slow if t_slow and t_fast else None

    def host_gemm(host):
        for dtype in ("float32", "float64"):
            report.ratio(f"bench gemm native / vendor {dtype} 2048 ({host})",
                         ratio_of(f"gemm_native/{host}/{dtype}/2048",
                                  f"gemm_vendor/{host}/{dtype}/2048"), 0.50)

    if space in HOST_SPACES:
        print(f"== {path}: {space} (Google Benchmark)")
        host_gemm(space)
        return
    print(f"== {path}: {space} and {host_space} (Google Benchmark)")
    host_gemm(host_space)
    for dtype in ("float32", "float64"):
        deep = f"stream_copy_1e8/{space}/{dtype}"
        report.ratio(f"bench stream_copy / deep_copy {dtype} 1e8",
                     ratio_of(f"stream_copy/{space}/{dtype}/100000000", deep), 0.95)
        report.info(f"bench stream_copy_naive / deep_copy {dtype} 1e8",
                    ratio_of(f"stream_copy_naive/{space}/{dtype}/100000000", deep))
    deep = f"stream_copy_1e8/{space}/float64"  # int64 moves as many bytes as float64
    for variant in ("row", "column"):
        t = times.get(f"broadcast_add_{variant}/{space}/int64/10000")
        td = times.get(deep)
        # broadcast moves (2·10000² + 10000)·8 bytes, the copy 2·1e8·8.
        r = (td / 1.6e9 * (2e8 + 1e4) * 8) / t if t and td else None
        report.ratio(f"bench broadcast_add {variant} 10000² / deep_copy's rate", r, 0.80)
    report.ratio("bench dot native 1e8 float32 / deep_copy's rate",
                 (times[f"stream_copy_1e8/{space}/float32"] / times[f"dot_native/{space}/float32"])
                 if f"dot_native/{space}/float32" in times and f"stream_copy_1e8/{space}/float32" in times
                 else None, 0.90)
    report.info("bench dot native / vendor 1e8 float32",
                ratio_of(f"dot_native/{space}/float32", f"dot_vendor/{space}/float32"))
    for dtype, target in (("float32", 0.50), ("float64", 0.35)):
        report.ratio(f"bench gemm native / vendor {dtype} 4096",
                     ratio_of(f"gemm_native/{space}/{dtype}/4096", f"gemm_vendor/{space}/{dtype}/4096"),
                     target)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?",
                        help="results.json of a run of inputs/kernels-limits.toml")
    parser.add_argument("--bench", help="portalab_bench --benchmark_out=FILE (JSON)")
    parser.add_argument("--space", default="Cuda")
    parser.add_argument("--host-space", default="OpenMP",
                        help="the host space whose gemm the bench's figures hold (default OpenMP)")
    args = parser.parse_args()
    report = Report()
    if not args.results and not args.bench:
        parser.error("give a results.json, --bench, or both")
    try:
        if args.results:
            check_run(args.results, args.space, report)
    except (pr.ResultsError, OSError, ValueError, KeyError) as e:
        print(f"kernels_limits: {e}", file=sys.stderr)
        return 2
    if args.bench:
        check_bench(args.bench, args.space, args.host_space, report)
    print(f"{report.missed} target(s) missed" if report.missed else "every target met")
    return 1 if report.missed else 0


if __name__ == "__main__":
    sys.exit(main())
