"""How close to the machine's limits: each run's calibrated limits and a
roofline per space."""
from portalab.report.blocks import num, pct, section, size, table, text
from portalab.report.rows import groups, one_copy_mode


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
                         "% of limit"],
                        [[r["experiment"], r["variant"], r["dtype"], size(r["n"]),
                          num(r["flops"] / r["bytes"]), num(r["gflops"]),
                          pct(r.get("pct_of_limit")) if r.get("pct_of_limit") else "-"]
                         for r in sorted(pts, key=lambda r: (r["flops"] / r["bytes"], r["n"]))])
            blocks.append(figs.block(
                fig, f"Roofline of {s['space']}: the calibrated memory-bandwidth slope and gemm "
                f"ceilings, log-log, and one point per result at its FLOPs per byte.",
                f"Roofline of {s['space']} {names.get(s['space'], '')}: kernel-phase rates "
                f"against the calibrated ceilings.", tab))
    return section("limits", "How close to the machine's limits", *blocks)
