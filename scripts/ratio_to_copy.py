#!/usr/bin/env python3
"""Bandwidth of each streaming result's kernel phase as a fraction of the best
copy (stream_copy: a kernel or Kokkos::deep_copy) measured in the same run, in
the same space, type and size.

    scripts/ratio_to_copy.py results/bandwidth/results.json
"""
import json
import sys


def main(path):
    with open(path) as f:
        doc = json.load(f)
    rows = [r for r in doc["results"] if r["check"] == "PASS"]
    copy = {}
    for r in rows:
        if r["experiment"] == "stream_copy":
            key = (r["space"], r["dtype"], r["n"])
            copy[key] = max(copy.get(key, 0.0), r["gbps"])
    devices = {d["space"]: d.get("name", "") for d in doc["provenance"]["devices"]}
    print(f"{'space':8} {'device':24} {'experiment':12} {'variant':8} {'copies':8} "
          f"{'dtype':8} {'n':>11} {'GB/s':>9} {'copy GB/s':>9} {'ratio':>6}")
    for r in rows:
        key = (r["space"], r["dtype"], r["n"])
        if r["experiment"] == "stream_copy" or key not in copy:
            continue
        print(f"{r['space']:8} {devices.get(r['space'], '')[:24]:24} {r['experiment']:12} "
              f"{r['variant']:8} {r['copies']:8} {r['dtype']:8} {r['n']:>11} {r['gbps']:>9.1f} "
              f"{copy[key]:>9.1f} {r['gbps'] / copy[key]:>6.1%}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
