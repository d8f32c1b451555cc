#!/usr/bin/env python3
"""The dry run's estimate against the real run: calibrates (quick) into a
file, estimates DECK from it with --dry-run, runs DECK with the same limits,
and requires the run's CPU time (user + system, all its threads) within
FACTOR_LO to FACTOR_HI of the estimated total. The bound is loose on purpose:
it checks the estimate's magnitude (units, repetitions, setup and check
counted once each), not its precision. CPU time rather than wall time because
on a shared machine a loaded core stretches every fence by a time slice
(16 ms entries where 2 ms were measured unloaded), which no estimate from the
machine's limits can foresee; the wall time is printed beside it.

    estimate_check.py PORTALAB DECK WORK_DIR
"""
import os
import re
import resource
import shutil
import subprocess
import sys
import time

FACTOR_LO, FACTOR_HI = 0.2, 5.0


def run(args, timeout=300):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit(f"`{' '.join(args)}` exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


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
    measured = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(real.stderr[-3000:])
    rows = len(re.findall(r"^\[\d+/\d+\]", real.stderr, re.M))
    if rows != planned:
        sys.exit(f"the dry run listed {planned} entries, the run measured {rows}")
    if not re.search(r"^\[\d+/\d+\] .* \[[0-9.]+ m?s elapsed, ~[^]]+ left\]$", real.stderr, re.M):
        sys.exit("the progress lines carry no elapsed and left times")

    ratio = measured / estimated if estimated > 0 else float("inf")
    print(f"estimated {estimated:.2f} s; the run took {measured:.2f} s of CPU time (Kokkos "
          f"start-up and file writing included), {ratio:.2f}x the estimate, allowed {FACTOR_LO}x "
          f"to {FACTOR_HI}x; wall time {wall:.2f} s ({wall / estimated:.2f}x)")
    if not FACTOR_LO <= ratio <= FACTOR_HI:
        sys.exit(f"the run took {ratio:.2f}x its estimate, outside {FACTOR_LO}x..{FACTOR_HI}x")


if __name__ == "__main__":
    main()
