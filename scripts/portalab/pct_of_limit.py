#!/usr/bin/env python3
"""How close each result came to its space's limits, from a calibrated run's
results.json: the kernel's rate against the limit that bounds it, and each copy
against the best transfer of its kind measured by the calibration.

    scripts/pct_of_limit.py results/run/results.json [--min-n N]
"""
import argparse

from portalab import results as pr


def pct(v):
    return f"{100 * v:.1f}%" if v else "-"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--min-n", type=int, default=0, help="only rows with n >= this")
    args = parser.parse_args()
    doc = pr.load_document(args.results)  # or its run's journal, if it did not finish
    cal = doc["provenance"].get("calibration")
    devices = {d["space"]: d.get("name", "") for d in doc["provenance"]["devices"]}
    print(f"calibration: {cal['mode'] if cal else 'none'}")
    print(f"{'space':7} {'device':22} {'experiment':12} {'variant':9} {'copies':8} {'dtype':7} "
          f"{'n':>10} {'rate':>12} {'limit':>20} {'%lim':>6} {'h2d GB/s':>9} {'%lim':>6} "
          f"{'d2h GB/s':>9} {'%lim':>6}")
    for r in doc["results"]:
        if r["check"] != "PASS" or r["n"] < args.min_n:
            continue
        rate = f"{r['gflops']:.1f} GF/s" if pr.limit_name(r) == "gemm" else f"{r['gbps']:.1f} GB/s"
        print(f"{r['space']:7} {devices.get(r['space'], '')[:22]:22} {r['experiment']:12} "
              f"{r['variant']:9} {r['copies']:8} {r['dtype']:7} {r['n']:>10} {rate:>12} "
              f"{pr.limit_text(r['limit']):>20} {pct(r['pct_of_limit']):>6} {r['h2d_gbps']:>9.1f} "
              f"{pct(r['h2d_pct_of_limit']):>6} {r['d2h_gbps']:>9.1f} {pct(r['d2h_pct_of_limit']):>6}")


if __name__ == "__main__":
    main()
