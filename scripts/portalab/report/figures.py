"""The page's figures: matplotlib as inline SVG, and the figures of one
experiment (its times against n, its phases on the device)."""
import html
import io
import re

from portalab import results as pr
from portalab.report.blocks import num, pct, size, table
from portalab.report.rows import by, many_hosts, measured, pr_copies_order, series_label

plt = None  # matplotlib.pyplot, imported once the arguments are read (--help needs none)


class Figures:
    """matplotlib figures as inline SVG: ids made unique per figure (one page
    holds many SVGs), text as text (selectable, printed sharp, smaller), the
    size set by the page."""

    def __init__(self):
        self.count = 0

    def block(self, fig, alt, caption, tab):
        self.count += 1
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
        svg = buf.getvalue()
        svg = svg[svg.index("<svg"):]
        prefix = f"f{self.count}-"
        svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
        svg = re.sub(r'url\(#([^)]+)\)', lambda m: f"url(#{prefix}{m.group(1)})", svg)
        svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)
        svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"',
                     lambda m: f'<svg{m.group(1)} role="img" aria-labelledby="{prefix}alt"', svg,
                     count=1)
        svg = svg.replace(">", f'><title id="{prefix}alt">{html.escape(alt)}</title>', 1)
        return {"kind": "figure", "svg": svg, "alt": alt, "caption": caption, "table": tab,
                "number": self.count}


def time_figure(figs, rows, experiment, dtype):
    """Total time against n, a line per series (or bars at one size), with
    the medians in a table beside it."""
    rows = [r for r in rows if measured(r) and r["total_ms"] > 0]
    if not rows:
        return None
    many = many_hosts(rows)
    series = {}
    for r in rows:
        series.setdefault(series_label(r, many), {})[r["n"]] = r
    sizes = sorted({r["n"] for r in rows})
    names = sorted(series)
    # A colour per space and variant, a line style per copy mode.
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    what = {nm: (lambda r: (r["hostname"], r["space"], r["variant"]))(
        next(iter(series[nm].values()))) for nm in names}
    hue = {}
    for nm in names:
        hue.setdefault(what[nm], cycle[len(hue) % len(cycle)])
    color = {nm: hue[what[nm]] for nm in names}
    style = {"host": "-", "pageable": "-", "pinned": "--", "none": ":"}
    fig, ax = plt.subplots(figsize=(6.4, 3.4 + 0.12 * max(0, len(names) - 8)) if len(sizes) > 1
                           else (6.4, 1.0 + 0.28 * len(names)))
    if len(sizes) > 1:
        for i, name in enumerate(names):
            pts = sorted(series[name].items())
            copies = pts[0][1]["copies"] if not pr.is_host_space(pts[0][1]["space"]) else "host"
            ax.plot([n for n, _ in pts], [r["total_ms"] for _, r in pts], marker="o",
                    markersize=3.5, color=color[name], linestyle=style.get(copies, "-"),
                    label=name)
        ax.set_xscale("log")
        ax.set_xlabel("n")
        ax.set_yscale("log")
        ax.set_ylabel("total time, median (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        alt = (f"{experiment} {dtype}: total time against n from {size(sizes[0])} to "
               f"{size(sizes[-1])}, log-log, one line per space, variant and copy mode.")
    else:
        vals = [series[nm][sizes[0]]["total_ms"] for nm in names]
        ax.barh(range(len(names)), vals, color=[color[nm] for nm in names])
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log" if max(vals) / max(min(vals), 1e-12) > 50 else "linear")
        ax.set_xlabel(f"total time at n = {size(sizes[0])}, median (ms)")
        ax.grid(True, axis="x", which="both", alpha=0.3)
        alt = (f"{experiment} {dtype}: total time at n = {size(sizes[0])}, one bar per space, "
               f"variant and copy mode.")
    ax.set_title(f"{experiment}, {dtype}", fontsize=10)
    fig.tight_layout()
    tab = table(["series (ms)", *[size(n) for n in sizes]],
                [[nm, *[num(series[nm][n]["total_ms"]) if n in series[nm] else "" for n in sizes]]
                 for nm in names])
    return figs.block(fig, alt, f"Total time (median of the repetitions; host spaces copy "
                      f"nothing) of {experiment}, {dtype}.", tab)


def phases_figure(figs, rows, experiment):
    """h2d / kernel / d2h stacked at the largest size a device ran with copies."""
    dev = [r for r in rows if not pr.is_host_space(r["space"]) and r["check"] == "PASS"
           and r["total_ms"] > 0]
    if not any(r["copies"] != "none" for r in dev):
        return None
    dev = [r for r in dev if r["copies"] != "none"]
    n = max(r["n"] for r in dev)
    bars = sorted(by(dev, n=n), key=lambda r: (r["dtype"], r["space"], r["variant"],
                                               pr_copies_order(r["copies"])))
    names = [f"{r['space']} {r['variant']} {r['dtype']} {r['copies']}" for r in bars]
    fig, ax = plt.subplots(figsize=(6.4, 0.9 + 0.32 * len(bars)))
    left = [0.0] * len(bars)
    colors = {"h2d": "tab:orange", "kernel": "tab:blue", "d2h": "tab:green"}
    for phase in ("h2d", "kernel", "d2h"):
        vals = [r[f"{phase}_ms"] for r in bars]
        ax.barh(range(len(bars)), vals, left=left, label=phase, color=colors[phase])
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(range(len(bars)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"median time at n = {size(n)} (ms)")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"{experiment}: where the device's time goes", fontsize=10)
    fig.tight_layout()
    tab = table(["series", "h2d ms", "kernel ms", "d2h ms", "copies' share"],
                [[nm, num(r["h2d_ms"]), num(r["kernel_ms"]), num(r["d2h_ms"]),
                  pct((r["h2d_ms"] + r["d2h_ms"]) / r["total_ms"])] for nm, r in zip(names, bars)])
    alt = (f"{experiment}: stacked bars of host-to-device copy, kernel and device-to-host copy "
           f"time at n = {size(n)} for each device series.")
    return figs.block(fig, alt, f"Phases of {experiment} on the device at n = {size(n)}.", tab)
