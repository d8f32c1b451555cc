#!/usr/bin/env python3
"""The results store at scale (a benchmark, not a test): RUNS synthetic runs
of ROWS rows (default 10,000 of 100: 50 jobs, each 50 nodes of 4 GPUs),
imported with `portalab db import`, then `db history` and `db fleet` timed.

    tests/bench/store_bench.py --portalab build/host/portalab [--runs 10000] [--rows 100] [--dir D [--reuse]]

Prints the import rate and each query's time (the best of three); the
numbers go in docs/results-store.md with the machine they ran on."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import store_synthetic as ss  # noqa: E402


def generate(top, runs, rows, nodes=50, gpus=4):
    per_job = nodes * gpus
    for i in range(runs):
        job, k = divmod(i, per_job)
        node, gpu = divmod(k, gpus)
        host = f"node{node:03d}"
        uuid = f"GPU-{node:03d}-{gpu}"
        doc = ss.run([ss.row(experiment=f"e{r % 10}", n=1000 * (1 + r // 10),
                             ms=1.0 + 0.01 * ((i + r) % 7)) for r in range(rows)],
                     host=host, job=str(1000 + job),
                     started=f"2026-{1 + job // 28 % 12:02d}-{1 + job % 28:02d}T{gpu:02d}:{node % 60:02d}:00Z",
                     gpu={"uuid": uuid, "name": "NVIDIA H100 80GB HBM3", "pcie_link_width": 16},
                     limits=[ss.gpu_limits(triad=2990.0 - gpu), ss.host_limits()], tag=str(i))
        ss.write(doc, os.path.join(top, str(1000 + job), host, f"gpu{gpu}"))


def timed(cmd, repeat=3):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t
        if p.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr}")
        best = dt if best is None else min(best, dt)
    return best, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--portalab", required=True)
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--dir", help="where the runs and the store go (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true",
                    help="the runs generated before in --dir, if there (the store is made anew)")
    args = ap.parse_args()
    top = args.dir or tempfile.mkdtemp(prefix="portalab_store_bench_")
    runs_dir, db = os.path.join(top, "runs"), os.path.join(top, "store.sqlite")
    if not (args.reuse and os.path.isdir(runs_dir)):
        t = time.perf_counter()
        generate(runs_dir, args.runs, args.rows)
        print(f"generated {args.runs} runs of {args.rows} rows in {time.perf_counter() - t:.1f} s")
    for stale in (db, db + "-journal"):
        if os.path.exists(stale):
            os.remove(stale)
    t = time.perf_counter()
    p = subprocess.run([args.portalab, "db", "import", "--db", db, "--quiet", runs_dir],
                       capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode:
        sys.exit(p.stderr)
    print(p.stdout.strip())
    print(f"import: {dt:.1f} s, {args.runs / dt:.0f} runs/s, {args.runs * args.rows / dt:.0f} rows/s; "
          f"store {os.path.getsize(db) / 2**20:.0f} MiB")
    pl = [args.portalab, "db"]
    for name, cmd in (
            ("history, every row, last 20 runs", [*pl, "history", "--db", db, "--json"]),
            ("history, one machine", [*pl, "history", "--db", db, "--json", "--machine", "node007"]),
            ("history, one experiment", [*pl, "history", "--db", db, "--json", "--experiment", "e3"]),
            ("fleet, the latest job", [*pl, "fleet", "--db", db, "--json"]),
            ("fleet, one job by id", [*pl, "fleet", "--db", db, "--json", "--job", "1010"]),
            ("fleet, a date range (3 days)", [*pl, "fleet", "--db", db, "--json", "--since", "2026-01-05",
                                              "--until", "2026-01-07"])):
        best, out = timed(cmd)
        doc = json.loads(out)
        size = len(doc.get("rows", doc.get("gpus", [])))
        print(f"{name}: {best:.3f} s ({size} {'rows' if 'rows' in doc else 'GPUs'})")
    if not args.dir:
        shutil.rmtree(top)


if __name__ == "__main__":
    main()
