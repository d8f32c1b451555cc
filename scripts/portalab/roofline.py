#!/usr/bin/env python3
"""Roofline per execution space from a portalab results.json whose run was
calibrated: the measured gemm ceilings and one bandwidth roof per level of the
space's ladder (L1 ... memory), and one point per result (kernel phase) at its
declared FLOPs per byte, in the colour of the level the run held it to (ringed
red where its limit is suspect). Needs matplotlib.

    scripts/roofline.py results/run/results.json [--out DIR]   # DIR/roofline_<space>.png
"""
import argparse
import os

from portalab import results as pr
from portalab import text

plt = None  # matplotlib.pyplot, imported once the arguments are read (--help needs none)


def roofline(space_limits, rows, space, size=(7, 5)):
    """The figure: space_limits is one space of a calibration, rows results
    (raw or flattened) of any spaces. With the space's ladder, one roof per
    level (its copy/triad bandwidth solid, its read dashed) and each row in
    its level's colour, the level the run named in the row's limit;
    without, the memory roof alone."""
    peaks = space_limits["gemm_gflops"]
    levels = (space_limits.get("ladder") or {}).get("levels") or [
        {"name": "memory", "memory_gbps": space_limits["memory_gbps"],
         "read_gbps": space_limits.get("read_gbps") or space_limits["memory_gbps"]}]
    points = [r for r in rows if r["space"] == space and r["flops"] > 0 and r["bytes"] > 0
              and r["check"] == "PASS"]
    intensities = [r["flops"] / r["bytes"] for r in points] or [1.0]
    slowest = min(v["memory_gbps"] for v in levels)
    top = max(peaks.values()) if peaks else 1.0
    lo = min(min(intensities) / 4, 1e-2)
    hi = max(max(intensities) * 4, 4 * top / slowest)
    fig, ax = plt.subplots(figsize=size)
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    colours = plt.get_cmap("viridis")
    colour = {v["name"]: colours(i / max(len(levels) - 1, 1) * 0.85)
              for i, v in enumerate(levels)}
    for v in levels:
        read = v.get("read_limit_gbps", v["read_gbps"])  # the read rows' limit, as the run held them
        ax.plot(xs, [min(top, v["memory_gbps"] * x) for x in xs], color=colour[v["name"]],
                label=f"{v['name']}: {v['memory_gbps']:.0f} GB/s (read {read:.0f})")
        if abs(read - v["memory_gbps"]) > 0.05 * v["memory_gbps"]:
            ax.plot(xs, [min(top, read * x) for x in xs], color=colour[v["name"]],
                    linestyle="--", linewidth=0.8)
    for dtype, peak in sorted(peaks.items()):
        ax.axhline(peak, color="grey", linestyle=":", linewidth=1)
        ax.annotate(f"{dtype} gemm {peak:.0f} GFLOP/s", (lo, peak), fontsize=6,
                    va="bottom", color="grey")
    markers = "os^vD<>pPh"  # filled ones: an unfilled marker ignores the suspect rows' red edge
    labels = sorted({(r["experiment"], r["variant"]) for r in points})
    last = levels[-1]["name"]
    for i, (exp, var) in enumerate(labels):
        sel = [r for r in points if (r["experiment"], r["variant"]) == (exp, var)]
        ax.scatter([r["flops"] / r["bytes"] for r in sel], [r["gflops"] for r in sel],
                   marker=markers[i % len(markers)], label=f"{exp} {var}", zorder=3,
                   c=[colour.get(pr.limit_level(r) or last, "black") for r in sel],
                   edgecolors=["red" if pr.limit_suspect(r) else "none" for r in sel])
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
