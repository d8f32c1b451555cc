#!/usr/bin/env python3
"""scripts/report.py's time against the number of rows: a benchmark, not a
test (timings are not pass/fail). Made-up sweeps of each --rows count
(tests/scripts/synthetic.py's sweep: a real run's rows, a made-up GPU
added, each again at many sizes) are written and report.py timed on each;
the page's figures cost a fixed time, so the slope between the smallest and
the largest sweep is what one more row costs: it prints the seconds per
10,000 rows (docs/report.md). The time must grow linearly with the rows.

    PORTALAB=build/host/portalab tests/bench/report_bench.py [--rows 2000 10000 20000]
    tests/bench/report_bench.py --template results/default/results.json
    cmake --build --preset host --target bench_report

Each page must say it read every row (its "At a glance" lead), or the
benchmark stops: a fast page that dropped rows measures nothing.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE, "tests", "scripts"))
sys.path.insert(0, os.path.join(SOURCE, "scripts"))

import synthetic  # noqa: E402

SMALL = ["--set", "reps=3", "--set", "warmups=1", "--set", "vector_poly.sizes=[1000,10000]",
         "--set", "stream_copy.sizes=[10000]"]


def template(args, tmp):
    if args.template:
        with open(args.template) as f:
            return json.load(f)
    if not os.environ.get("PORTALAB"):
        sys.exit("report_bench.py: give --template RESULTS.json or set PORTALAB to the binary")
    return synthetic.real_run(os.path.join(SOURCE, "inputs", "default.toml"),
                              os.path.join(tmp, "template"), *SMALL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[2000, 10000, 20000])
    ap.add_argument("--template", help="a results.json to make the sweeps of (default: a run of "
                                       "inputs/default.toml by $PORTALAB)")
    ap.add_argument("--keep", help="leave the sweeps and pages in this folder")
    args = ap.parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix="portalab_report_bench_")
    os.makedirs(tmp, exist_ok=True)
    try:
        doc = template(args, tmp)
        times = {}
        print(f"{'rows':>8} {'seconds':>9} {'s / 10,000 rows':>16}")
        for count in sorted(args.rows):
            folder = os.path.join(tmp, f"sweep{count}")
            os.makedirs(folder, exist_ok=True)
            synthetic.write(synthetic.sweep(doc, count), os.path.join(folder, "results.json"))
            page = os.path.join(folder, "report.html")
            start = time.monotonic()
            p = subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "report.py"),
                                folder, "--out", page], capture_output=True, text=True)
            times[count] = time.monotonic() - start
            if p.returncode != 0:
                sys.exit(f"report_bench.py: report.py on {count} rows exited {p.returncode}: "
                         f"{p.stderr[-2000:]}")
            with open(page, encoding="utf-8") as f:
                lead = re.search(r"(\d+) entries from 1 results file", f.read())
            if not lead or int(lead.group(1)) != count:
                sys.exit(f"report_bench.py: the page of {count} rows does not say it read them all")
            print(f"{count:>8} {times[count]:>9.1f} {times[count] / count * 1e4:>16.1f}")
        lo, hi = min(times), max(times)
        if hi > lo:
            slope = (times[hi] - times[lo]) / (hi - lo) * 1e4
            print(f"report.py: {slope:.1f} s per 10,000 rows beyond the first {lo:,} "
                  f"({times[lo]:.1f} s, mostly the figures), measured from {lo:,} to {hi:,} rows")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
