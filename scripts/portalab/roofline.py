#!/usr/bin/env python3
"""Roofline per execution space from a portalab results.json whose run was
calibrated: the measured memory-bandwidth and gemm ceilings, and one point per
result (kernel phase) at its declared FLOPs per byte. Needs matplotlib.

    scripts/roofline.py results/run/results.json [--out DIR]   # DIR/roofline_<space>.png
"""
import argparse
import os

from portalab import results as pr
from portalab import text

plt = None  # matplotlib.pyplot, imported once the arguments are read (--help needs none)


def roofline(space_limits, rows, space, size=(7, 5)):
    """The figure: space_limits is one space of a calibration, rows results
    (raw or flattened) of any spaces."""
    bw = space_limits["memory_gbps"]
    peaks = space_limits["gemm_gflops"]
    points = [r for r in rows if r["space"] == space and r["flops"] > 0 and r["bytes"] > 0
              and r["check"] == "PASS"]
    intensities = [r["flops"] / r["bytes"] for r in points] or [1.0]
    lo = min(min(intensities) / 4, 1e-2)
    hi = max(max(intensities) * 4, 4 * max(peaks.values()) / bw)
    fig, ax = plt.subplots(figsize=size)
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    for dtype, peak in sorted(peaks.items()):
        ax.plot(xs, [min(peak, bw * x) for x in xs],
                label=f"{dtype}: gemm {peak:.0f} GFLOP/s, memory {bw:.0f} GB/s")
    markers = "os^vD<>px*"
    labels = sorted({(r["experiment"], r["variant"]) for r in points})
    for i, (exp, var) in enumerate(labels):
        sel = [r for r in points if (r["experiment"], r["variant"]) == (exp, var)]
        ax.scatter([r["flops"] / r["bytes"] for r in sel], [r["gflops"] for r in sel],
                   marker=markers[i % len(markers)], label=f"{exp} {var}", zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("GFLOP/s (kernel phase)")
    device = space_limits.get("device", "")
    ax.set_title(f"Roofline: {space} {device}".strip())
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="Needs matplotlib.")
    parser.add_argument("results")
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    global plt
    plt = pr.require_matplotlib()
    doc = pr.load_run(args.results)  # or its run's journal, if it did not finish
    cal = doc["provenance"].get("calibration")
    if not cal:
        pr.fail(f"{text.shown(args.results)}: the run was not calibrated (deck calibrate = \"none\" and no "
                "--calibration file); nothing to draw ceilings from")
    names = {d["space"]: d.get("name", "") for d in doc["provenance"].get("devices", [])}
    pr.out_folder("--out", args.out)
    for limits in cal["spaces"]:
        limits["device"] = names.get(limits["space"], "")
        path = os.path.join(args.out, f"roofline_{pr.file_name(limits['space'])}.png")
        fig = roofline(limits, doc["results"], limits["space"])
        data = pr.png(fig, 120)
        plt.close(fig)
        pr.save(path, data)
        print(text.shown(path, text.PATH_MAX_BYTES))


if __name__ == "__main__":
    main()
