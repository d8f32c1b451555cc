"""How close to the machine's limits: each run's calibrated limits and a
roofline per space."""
from portalab import results as pr
from portalab.report.blocks import num, pct, section, size, table, text
from portalab.report.rows import groups, limit_share, one_copy_mode


def size_bytes(b):
    """Bytes for people: "48 kB", "2.1 MB", "1.07 GB"."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def limits_section(figs, runs, roofline):
    blocks = []
    for path, doc, rows in runs:
        cal = doc["provenance"].get("calibration")
        if not cal:
            blocks.append(text(f"{path}: the run was not calibrated (calibrate = \"none\" and no "
                               f"--calibration): no limits to compare with."))
            continue
        names = {d["space"]: d.get("name", "") for d in doc["provenance"].get("devices", [])}
        lim = []
        for s in cal.get("spaces", []):
            transfers = "; ".join(f"{k} {num(t['best_gbps'])} GB/s"
                                  for k, t in sorted(s.get("transfers", {}).items()))
            lim.append([s["space"], num(s["memory_gbps"]), num(s.get("copy_kernel_gbps")),
                        num(s.get("copy_deep_copy_gbps")), num(s.get("triad_gbps")),
                        "; ".join(f"{d} {num(v)}" for d, v in sorted(s["gemm_gflops"].items())),
                        "; ".join(sorted(set(s.get("gemm_library", {}).values()))),
                        num(s.get("launch_us")), transfers or "-"])
        blocks.append(table(["space", "memory GB/s", "copy kernel", "deep_copy", "triad",
                             "gemm GFLOP/s", "gemm library", "launch µs", "transfers (best)"],
                            lim, f"Limits measured by the run's {cal.get('mode', '')} calibration "
                            f"({path})", numeric={1, 2, 3, 4, 7}))
        ladder = [[s["space"], v["name"], size_bytes(v["end_bytes"]) if v["holds_up_to_bytes"]
                   else f"from {size_bytes(v['first_bytes'])}",
                   size_bytes(v["holds_up_to_bytes"]) if v["holds_up_to_bytes"] else "-",
                   num(v["read_gbps"]), num(v["memory_gbps"]), pct(v["spread"]),
                   size_bytes(v["reported_bytes"]) if v["reported_bytes"] else "-"]
                  for s in cal.get("spaces", []) for v in (s.get("ladder") or {}).get("levels", [])]
        if ladder:
            blocks.append(table(["space", "level", "ends at", "holds rows up to", "read GB/s",
                                 "copy/triad GB/s", "spread", "reported"], ladder,
                                "The bandwidth ladder each space's calibration measured: where "
                                "each level ends and its bandwidth", numeric={4, 5, 6}))
            notes = [f"{s['space']}: {n}" for s in cal.get("spaces", [])
                     for n in (s.get("ladder") or {}).get("notes", [])]
            if notes:
                blocks.append(text("Where the ladder and the system's reported caches disagree: "
                                   + " ".join(f"{n}." for n in notes)))
        points = groups([r for r in one_copy_mode(rows) if r["check"] == "PASS"
                         and r.get("flops", 0) > 0 and r.get("bytes", 0) > 0], "space")
        for s in cal.get("spaces", []):
            pts = points.get(s["space"], [])
            if not pts or not s.get("memory_gbps") or not s.get("gemm_gflops"):
                continue
            limits = dict(s, device=names.get(s["space"], ""))
            fig = roofline.roofline(limits, pts, s["space"], size=(7.4, 4.6))
            ax = fig.axes[0]  # the legend beside the plot, not over its points
            ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
            fig.tight_layout()
            tab = table(["experiment", "variant", "type", "n", "FLOP/byte", "GFLOP/s",
                         "level", "% of limit", "suspect limit"],
                        [[r["experiment"], r["variant"], r["dtype"], size(r["n"]),
                          num(r["flops"] / r["bytes"]), num(r["gflops"]),
                          pr.limit_level(r) or "-",
                          limit_share(r), pr.limit_suspect(r) or "-"]
                         for r in sorted(pts, key=lambda r: (r["flops"] / r["bytes"], r["n"]))])
            blocks.append(figs.block(
                fig, f"Roofline of {s['space']}: one bandwidth roof per level of the calibrated "
                f"ladder and the gemm ceilings, log-log, and one point per result at its FLOPs "
                f"per byte, in its level's colour.",
                f"Roofline of {s['space']} {names.get(s['space'], '')}: kernel-phase rates "
                f"against the calibrated ceilings, each row on the roof of its level.", tab))
    return section("limits", "How close to the machine's limits", *blocks)
