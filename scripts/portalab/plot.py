#!/usr/bin/env python3
"""PNG plots of portalab results, four per experiment:

  <experiment>_time.png     total time (median, bars from min to max) versus
                            size, log-log, one line per space and copy mode
  <experiment>_speedup.png  speedup over the baseline space at one size, with
                            copies (pageable, pinned) and without (none)
  <experiment>_phases.png   h2d / kernel / d2h medians stacked, at one size
  <experiment>_rate.png     achieved GB/s or GFLOP/s of the kernel phase
                            versus size
  <experiment>_energy.png   joules per repetition versus size (the GPU's for
                            a device space, the CPU's for a host space), where
                            the run measured energy (docs/energy.md)

and, for runs over MPI ranks (portalab run under mpirun or srun):

  <experiment>_scaling.png    parallel efficiency (the group's work per second
                              over k times one rank's) versus ranks and versus
                              n, where rows on k ranks have a one-rank row
  <experiment>_bandwidth.png  GB/s versus message size (bus bandwidth for
                              allreduce, as nccl-tests), with the calibrated
                              limit the rows were compared with (sendrecv,
                              allreduce)

Each figure has one panel per type (rows) and variant (columns). Only rows
whose check passed are drawn; a key measured by several runs is drawn from
the newest. Needs matplotlib.

    scripts/plot.py results/1234 --out plots/1234
    scripts/plot.py a/results.json b/results.json --out plots --experiment vector_poly --n 1e8
"""
import argparse
import os
import sys

from portalab import results as pr
from portalab import text

plt = None  # matplotlib.pyplot, imported once the arguments are read (--help needs none)

COPIES_ORDER = ["pageable", "pinned", "none"]
LINESTYLE = {"pageable": "-", "pinned": "--", "none": ":"}
PHASE_COLOR = {"h2d": "tab:orange", "kernel": "tab:blue", "d2h": "tab:green"}


def series_name(r, many_hosts):
    # The host only when the figure mixes hosts, to keep legends short.
    return f"{r['hostname']}/{r['space']}" if many_hosts else r["space"]


def many_hosts(rows):
    return len({r["hostname"] for r in rows}) > 1


def panels(rows):
    dtypes = sorted({r["dtype"] for r in rows})
    variants = sorted({r["variant"] for r in rows})
    fig, axes = plt.subplots(len(dtypes), len(variants), squeeze=False,
                             figsize=(5.5 * len(variants), 4.2 * len(dtypes)))
    for i, d in enumerate(dtypes):
        for j, v in enumerate(variants):
            ax = axes[i][j]
            ax.set_title(f"{v}, {d}", fontsize=10)
            yield fig, ax, [r for r in rows if r["dtype"] == d and r["variant"] == v]


def colors_for(rows, many):
    names = sorted({series_name(r, many) for r in rows})
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {n: cycle[i % len(cycle)] for i, n in enumerate(names)}


def line_plot(rows, experiment, ylabel, value, spread=None, title=""):
    many = many_hosts(rows)
    color = colors_for(rows, many)
    fig = None
    for fig, ax, sub in panels(rows):
        series = {}
        for r in sub:
            series.setdefault((series_name(r, many), r["copies"]), []).append(r)
        drawn = False
        for (name, copies), pts in sorted(series.items()):
            # On log axes: only the points with a positive value (a file may
            # hold none, or null, where a rate was not measured).
            pts = [r for r in pts if isinstance(value(r), (int, float)) and value(r) > 0]
            if not pts:
                continue
            drawn = True
            pts.sort(key=lambda r: r["n"])
            x = [r["n"] for r in pts]
            y = [value(r) for r in pts]
            kw = dict(color=color[name], linestyle=LINESTYLE.get(copies, "-"), marker="o",
                      markersize=4, label=f"{name} {copies}")
            if spread:
                lo, hi = zip(*(spread(r) for r in pts))

                # A bound a file lacks (or puts on the wrong side) draws no bar.
                def bar(a, b):
                    return max(a - b, 0.0) if a is not None and b is not None else 0.0

                ax.errorbar(x, y, yerr=[[bar(a, b) for a, b in zip(y, lo)],
                                        [bar(b, a) for a, b in zip(y, hi)]], capsize=2, **kw)
            else:
                ax.plot(x, y, **kw)
        if not drawn:
            ax.text(0.5, 0.5, "nothing to draw", ha="center", va="center",
                    transform=ax.transAxes)
            continue
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (elements)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{experiment}: {title}")
    fig.tight_layout()
    return fig


def size_for(sub, n):
    sizes = sorted({r["n"] for r in sub})
    if n is None:
        return sizes[-1] if sizes else None
    return n if n in sizes else None


def bar_groups(sub, many):
    """(space label, copies) pairs present, in a stable order."""
    spaces = []
    for r in sub:
        if series_name(r, many) not in spaces:
            spaces.append(series_name(r, many))
    copies = [c for c in COPIES_ORDER if any(r["copies"] == c for r in sub)]
    return spaces, copies


def speedup_plot(rows, experiment, n):
    many = many_hosts(rows)
    fig = None
    for fig, ax, sub in panels(rows):
        size = size_for(sub, n)
        sub = [r for r in sub if r["n"] == size and r.get("speedup_over_baseline")]
        spaces, copies = bar_groups(sub, many)
        width = 0.8 / max(len(copies), 1)
        for k, c in enumerate(copies):
            xs, ys = [], []
            for i, s in enumerate(spaces):
                for r in sub:
                    if series_name(r, many) == s and r["copies"] == c:
                        xs.append(i + (k - (len(copies) - 1) / 2) * width)
                        ys.append(r["speedup_over_baseline"])
            label = f"without copies ({c})" if c == "none" else f"with copies ({c})"
            bars = ax.bar(xs, ys, width, label=label)
            ax.bar_label(bars, fmt="%.2g", fontsize=7)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(spaces)), spaces)
        ax.set_ylabel(f"speedup over {sub[0]['baseline'] if sub else 'baseline'}")
        ax.set_title(f"{ax.get_title()}, n={size:.3g}" if size else ax.get_title(), fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle(f"{experiment}: speedup (total time, baseline / space)")
    fig.tight_layout()
    return fig


def phases_plot(rows, experiment, n):
    many = many_hosts(rows)
    fig = None
    for fig, ax, sub in panels(rows):
        size = size_for(sub, n)
        sub = [r for r in sub if r["n"] == size]
        spaces, copies = bar_groups(sub, many)
        bars = [(s, c) for s in spaces for c in copies
                if any(series_name(r, many) == s and r["copies"] == c for r in sub)]
        bottom = [0.0] * len(bars)
        for phase in ("h2d", "kernel", "d2h"):
            ys = [next(r[f"{phase}_ms"] for r in sub
                       if series_name(r, many) == s and r["copies"] == c) for s, c in bars]
            ax.bar(range(len(bars)), ys, 0.6, bottom=bottom, label=phase,
                   color=PHASE_COLOR[phase])
            bottom = [b + y for b, y in zip(bottom, ys)]
        ax.set_xticks(range(len(bars)), [f"{s}\n{c}" for s, c in bars], fontsize=8,
                      rotation=30 if many else 0)
        ax.set_ylabel("median time (ms)")
        ax.set_title(f"{ax.get_title()}, n={size:.3g}" if size else ax.get_title(), fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle(f"{experiment}: phases (host spaces copy nothing)")
    fig.tight_layout()
    return fig


def rate_metric(rows, choice):
    if choice != "auto":
        return choice
    # FLOP-bound when an experiment does more than a few FLOPs per byte.
    intensity = max((r["flops"] / r["bytes"] for r in rows if r["bytes"]), default=0.0)
    return "gflops" if intensity > 4 else "gbps"


def efficiency(r):
    return (r.get("metrics") or {}).get("parallel_efficiency")


def scaling_plot(rows, experiment):
    """Efficiency versus ranks (a line per n) and versus n (a line per rank
    count), one figure row per dtype; one-rank rows are 1 by definition."""
    scaled = [r for r in rows if efficiency(r) is not None]
    keys = sorted({(r["space"], r["variant"]) for r in scaled})
    dtypes = sorted({r["dtype"] for r in scaled})
    fig, axes = plt.subplots(len(dtypes), 2, squeeze=False, figsize=(11, 4.2 * len(dtypes)))
    for i, d in enumerate(dtypes):
        by_ranks, by_n = axes[i]
        for space, variant in keys:
            mine = [r for r in rows if r["dtype"] == d and r["space"] == space
                    and r["variant"] == variant and (r["ranks"] == 1 or efficiency(r) is not None)]
            label = f"{space} {variant}"
            for n in sorted({r["n"] for r in mine if efficiency(r) is not None}):
                pts = sorted((r["ranks"], efficiency(r) or 1.0) for r in mine if r["n"] == n)
                by_ranks.plot(*zip(*pts), marker="o", markersize=4, label=f"{label} n={n:.3g}")
            for k in sorted({r["ranks"] for r in mine if efficiency(r) is not None}):
                pts = sorted((r["n"], efficiency(r)) for r in mine if r["ranks"] == k)
                by_n.plot(*zip(*pts), marker="o", markersize=4, label=f"{label} {k} ranks")
        by_ranks.set_xlabel("ranks")
        by_ranks.xaxis.get_major_locator().set_params(integer=True)
        by_n.set_xlabel("n (elements; per rank in weak scaling)")
        by_n.set_xscale("log")
        for ax, what in ((by_ranks, "versus ranks"), (by_n, "versus n")):
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_ylabel("parallel efficiency")
            ax.set_ylim(bottom=0)
            ax.set_title(f"{d}: {what}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle(f"{experiment}: parallel efficiency (speedup over one rank / ranks)")
    fig.tight_layout()
    return fig


def message_bytes(r):
    return (r.get("metrics") or {}).get("message_bytes") or r["n"] * pr.dtype_bytes(r["dtype"])


def bandwidth_plot(rows, experiment):
    """GB/s versus message size, a line per space, variant, rank count and
    type; the limits the rows were compared with, dashed."""
    fig, ax = plt.subplots(figsize=(8, 5))
    lines = {}
    for r in rows:
        if r["gbps"] > 0:
            key = (r["space"], r["variant"], r["ranks"], r["dtype"])
            lines.setdefault(key, []).append((message_bytes(r), r["gbps"]))
    for (space, variant, k, d), pts in sorted(lines.items()):
        ax.plot(*zip(*sorted(pts)), marker="o", markersize=4, label=f"{space} {variant} {d}, {k} ranks")
    limits = {pr.limit_text(r["limit"]): r["limit"]["value"] for r in rows
              if r.get("limit") and r["limit"]["unit"] == "GB/s"}
    for name, value in sorted(limits.items()):
        ax.axhline(value, linestyle="--", linewidth=0.9, color="gray")
        ax.text(0.01, value, f"limit: {name}", transform=ax.get_yaxis_transform(), fontsize=7,
                va="bottom", color="gray")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size per rank (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)" if experiment == "allreduce" else "GB/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle(f"{experiment}: bandwidth versus message size")
    fig.tight_layout()
    return fig


def is_transfer(rows):
    """Rows held to a link's limit (peer copies, collectives)."""
    return any(pr.limit_name(r) in ("peer", "peer-duplex", "allreduce") for r in rows)


def plot_experiment(rows, experiment, out, n=None, rate="auto"):
    rows = [r for r in rows if r["experiment"] == experiment]
    metric = rate_metric(rows, rate)
    figures = {
        "time": line_plot(rows, experiment, "total time (ms)", lambda r: r["total_ms"],
                          lambda r: (r["total_min_ms"], r["total_max_ms"]),
                          "time versus size (median, min to max)"),
        "speedup": speedup_plot(rows, experiment, n),
        "phases": phases_plot(rows, experiment, n),
        "rate": line_plot(rows, experiment, {"gbps": "GB/s", "gflops": "GFLOP/s"}[metric],
                          lambda r: r[metric], None,
                          f"achieved {'bandwidth' if metric == 'gbps' else 'FLOP rate'}"
                          " of the kernel phase"),
    }
    measured = [r for r in rows if pr.joules_per_rep(r)]
    if measured:
        figures["energy"] = line_plot(measured, experiment, "joules per repetition",
                                      pr.joules_per_rep, None,
                                      "energy versus size (GPU for device spaces, CPU for host)")
    if any(efficiency(r) is not None for r in rows):
        figures["scaling"] = scaling_plot(rows, experiment)
    if is_transfer(rows) or experiment in ("allreduce", "sendrecv"):
        figures["bandwidth"] = bandwidth_plot(rows, experiment)
    written = []
    for kind, fig in figures.items():
        path = os.path.join(out, f"{pr.file_name(experiment)}_{kind}.png")
        data = pr.png(fig, 110)
        plt.close(fig)
        pr.save(path, data)
        written.append(path)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Needs matplotlib.")
    ap.add_argument("paths", nargs="+", help="results.json files or folders holding them")
    ap.add_argument("--out", required=True, help="folder for the PNGs")
    ap.add_argument("--experiment", action="append", help="only these (repeatable)")
    ap.add_argument("--n", type=pr.finite_number,
                    help="size of the bar charts, one every experiment drawn measured "
                         "(default: the largest)")
    ap.add_argument("--rate", choices=["auto", "gbps", "gflops"], default="auto")
    args = ap.parse_args(argv)
    global plt
    plt = pr.require_matplotlib()
    try:
        runs = pr.load_runs(args.paths)
    except pr.ResultsError as e:
        pr.fail(str(e))
    rows = pr.newest_per_key([r for _, _, rs in runs for r in rs if pr.passed(r)])
    experiments = sorted({r["experiment"] for r in rows})
    if not experiments:
        pr.fail_without_rows(f"{', '.join(map(text.shown, args.paths))}: no passed rows to plot",
                             runs)
    pr.tell_incomplete(runs)
    for e in args.experiment or []:
        if e not in experiments:
            pr.fail(f"no passed rows of experiment {text.shown(e)} (there are: "
                    f"{text.shown(', '.join(experiments), 1000)})")
    chosen = list(dict.fromkeys(args.experiment or experiments))
    n = None
    if args.n is not None:
        if args.n < 0 or not args.n.is_integer():
            pr.fail(f"--n {args.n:g}: not a size (a whole number of elements)")
        n = int(args.n)
        for e in chosen:
            sizes = sorted({r["n"] for r in rows if r["experiment"] == e})
            if n not in sizes:
                pr.fail(f"--n {n}: experiment {text.shown(e)} has no passed row of that size "
                        f"(its sizes: {', '.join(map(str, sizes))})")
    pr.out_folder("--out", args.out)
    for e in chosen:
        for path in plot_experiment(rows, e, args.out, n, args.rate):
            print(text.shown(path, text.PATH_MAX_BYTES))


if __name__ == "__main__":
    sys.exit(main())
