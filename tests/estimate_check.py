#!/usr/bin/env python3
"""The dry run's estimate, end to end: calibrates (quick) into a file, then

1. estimates DECK from a copy of those limits with every rate set to 1 GB/s
   and 1 GFLOP/s (rates set, not measured) and no launch latency, and
   requires each row's kernel time
   to be its bytes or its FLOPs (the larger) at that rate, and its estimate
   to be its calls times its kernel and copy phases plus its setup and check:
   the units, the rates read from the file and the repetitions, checked
   exactly, whatever the machine is doing;
2. estimates DECK from the measured limits, runs it with them, and requires
   the run to measure the entries the dry run listed, with elapsed and left
   times on its progress lines, and the dry run to have written nothing.

How close the estimate came to the run's time is printed, not asserted: it
depends on the machine's load (a busy 2-core CI host stretched the run to 5x
its estimate), and timing belongs in benchmarks, not in a pass/fail test.

    estimate_check.py PORTALAB DECK WORK_DIR
"""
import copy
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
# One table row of the dry run: # experiment variant space dtype n copies
# memory bytes/rep flops/rep calls kernel/rep copies/rep setup check estimate
ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\S+)\s+"
                 r"([\d.]+ \w+)\s+([\d.]+) (\w+)\s+([\d.e+-]+)\s+(\d+)\s+([\d.e+-]+)\s+"
                 r"([\d.e+-]+)\s+([\d.e+-]+)\s+([\d.e+-]+)\s+([\d.e+-]+)\s+(.*)$")
# The table prints three significant figures and sizes to a tenth of a unit.
TOLERANCE = 0.01


def run(args, timeout=300):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit(f"`{' '.join(args)}` exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def close(got, want):
    return abs(got - want) <= TOLERANCE * max(abs(want), 1e-3)


def unit_rates(limits_path, out_path):
    """The limits file with every rate 1 GB/s or 1 GFLOP/s and no latency
    (set, not measured)."""
    with open(limits_path) as f:
        doc = json.load(f)
    one = copy.deepcopy(doc)
    for space in one["calibration"]["spaces"]:
        for key in ("copy_kernel_gbps", "copy_deep_copy_gbps", "triad_gbps", "read_gbps",
                    "memory_gbps"):
            space[key] = 1.0
        space["gemm_gflops"] = {t: 1.0 for t in space.get("gemm_gflops", {})} or {"float64": 1.0}
        space["launch_us"] = 0.0
        space["unsteady"] = []
        space["transfers"] = {}  # host spaces copy nothing between memories
    with open(out_path, "w") as f:
        json.dump(one, f)


def check_unit_estimates(portalab, deck, spaces, limits):
    dry = run([portalab, "run", deck, "--spaces", spaces, "--dry-run", "--limits", limits])
    rows = [m for m in map(ROW.match, dry.stdout.splitlines()) if m]
    planned = int(re.search(r"^dry run of .*: (\d+) entries", dry.stdout, re.M).group(1))
    if len(rows) != planned:
        sys.exit(f"the dry run said {planned} entries and printed {len(rows)} rows:\n{dry.stdout}")
    wrong = []
    for m in rows:
        number, experiment, variant = m.group(1), m.group(2), m.group(3)
        moved = float(m.group(9)) * UNITS[m.group(10)]
        flops = float(m.group(11))
        calls = int(m.group(12))
        kernel, copies, setup, check, estimate = (float(m.group(i)) for i in range(13, 18))
        # 1 GB/s moves 1e6 bytes a millisecond; 1 GFLOP/s does 1e6 FLOPs (not measured).
        want_kernel = max(moved, flops) / 1e6
        if not close(kernel, want_kernel):
            wrong.append(f"row {number} ({experiment} {variant}): kernel/rep {kernel} ms, "
                         f"expected {want_kernel:.4g} ms ({moved:.4g} bytes, {flops:.4g} FLOPs "
                         f"at 1 GB/s and 1 GFLOP/s)")
        want_estimate = calls * (kernel + copies) + setup + check
        if not close(estimate, want_estimate):
            wrong.append(f"row {number} ({experiment} {variant}): estimate {estimate} ms, "
                         f"expected {calls} calls x ({kernel} + {copies}) + {setup} + {check} "
                         f"= {want_estimate:.4g} ms")
    if wrong:
        sys.exit("the dry run's estimates at 1 GB/s and 1 GFLOP/s:\n  " + "\n  ".join(wrong)
                 + "\n" + dry.stdout)
    print(f"{len(rows)} rows estimated as their bytes or FLOPs at the rates of the limits file")


def main():
    portalab, deck, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    limits = os.path.join(work, "limits.json")
    # Serial and the build's parallel host space (OpenMP, or Threads).
    listed = run([portalab, "list"]).stdout
    compiled = re.search(r"^spaces compiled in: (.*)$", listed, re.M).group(1).replace(" ", "")
    spaces = ",".join(s for s in compiled.split(",") if s in ("Serial", "OpenMP", "Threads"))
    run([portalab, "calibrate", "--quick", "--spaces", spaces, "--out", limits])

    unit_limits = os.path.join(work, "limits-1gbps.json")
    unit_rates(limits, unit_limits)
    check_unit_estimates(portalab, deck, spaces, unit_limits)

    dry = run([portalab, "run", deck, "--spaces", spaces, "--dry-run", "--limits", limits])
    print(dry.stdout)
    m = re.search(r"total_ms=([0-9.]+)", dry.stdout)
    if not m:
        sys.exit("the dry run printed no total_ms=")
    estimated = float(m.group(1)) / 1e3
    planned = int(re.search(r"^dry run of .*: (\d+) entries", dry.stdout, re.M).group(1))
    if os.path.exists(os.path.join(work, "out")):
        sys.exit("the dry run wrote results")

    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    real = run([portalab, "run", deck, "--spaces", spaces, "--limits", limits,
                "--out", os.path.join(work, "out")])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - start
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(real.stderr[-3000:])
    rows = len(re.findall(r"^\[\d+/\d+\]", real.stderr, re.M))
    if rows != planned:
        sys.exit(f"the dry run listed {planned} entries, the run measured {rows}")
    if not re.search(r"^\[\d+/\d+\] .* \[[0-9.]+ m?s elapsed, ~[^]]+ left\]$", real.stderr, re.M):
        sys.exit("the progress lines carry no elapsed and left times")
    print(f"information: estimated {estimated:.2f} s; the run took {wall:.2f} s "
          f"({wall / estimated:.2f}x), {cpu:.2f} s of CPU time over all threads (Kokkos "
          f"start-up and file writing included)" if estimated > 0 else
          "information: the dry run estimated nothing")


if __name__ == "__main__":
    main()
