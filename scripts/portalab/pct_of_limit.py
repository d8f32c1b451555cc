#!/usr/bin/env python3
"""How close each result came to its space's limits, from a calibrated run's
results.json: the kernel's rate against the limit that bounds it (a level's
bandwidth: "L2 180 GB/s", as the run named it; why, where suspect), and each copy
against the best transfer of its kind measured by the calibration.

    scripts/pct_of_limit.py results/run/results.json [--min-n N]
"""
import argparse

from portalab import results as pr
from portalab import text


def pct(v):
    return f"{100 * v:.1f}%" if v else "-"


def rate(v):
    """A rate (null where the row measured none, as a copy it did not make)."""
    return "-" if v is None else f"{v:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--min-n", type=int, default=0, help="only rows with n >= this")
    args = parser.parse_args()
    doc = pr.load_run(args.results)  # or its run's journal, if it did not finish
    cal = doc["provenance"].get("calibration")
    devices = {d["space"]: d.get("name", "") for d in doc["provenance"]["devices"]}
    print(f"calibration: {text.shown(cal['mode']) if cal else 'none'}")
    print(f"{'space':7} {'device':22} {'experiment':12} {'variant':9} {'copies':8} {'dtype':7} "
          f"{'n':>10} {'rate':>12} {'limit':>20} {'%lim':>6} {'h2d GB/s':>9} {'%lim':>6} "
          f"{'d2h GB/s':>9} {'%lim':>6} suspect limit")
    for r in doc["results"]:
        if r["check"] != "PASS" or r["n"] < args.min_n:
            continue
        speed = (f"{rate(r['gflops'])} GF/s" if pr.limit_name(r) == "gemm"
                 else f"{rate(r['gbps'])} GB/s")
        # Names as portalab's messages show them: quoted, cut past 200 bytes.
        space, device, experiment, variant, copies, dtype = (
            text.shown(v) for v in (r["space"], devices.get(r["space"], "")[:22], r["experiment"],
                                    r["variant"], r["copies"], r["dtype"]))
        print(f"{space:7} {device:22} {experiment:12} "
              f"{variant:9} {copies:8} {dtype:7} {r['n']:>10} {speed:>12} "
              f"{text.shown(pr.limit_text(r['limit'])):>20} {pct(r['pct_of_limit']):>6} {rate(r['h2d_gbps']):>9} "
              f"{pct(r['h2d_pct_of_limit']):>6} {rate(r['d2h_gbps']):>9} {pct(r['d2h_pct_of_limit']):>6} "
              f"{text.shown(pr.limit_suspect(r))}")


if __name__ == "__main__":
    main()
