#!/usr/bin/env python3
"""One HTML page of portalab results that answers the labs' questions with
the run's own numbers, in sentences and figures, with nothing outside it.

For one run, or several (a job's decks, a sweep), per experiment and type:
when the GPU pays (the crossover size with pageable copies, pinned copies and
none, or that it never pays in the sizes run, or that no GPU ran), what copies
cost, what fusion gains, what float64 costs against float32, what the first
(cold) call costs, how close each space runs to its calibrated limits
(roofline), which library served each call on how many threads; streams and
instances against serial and perfect overlap; several ranks: efficiency
against one rank, link bandwidth against its limits, the size from which k
ranks pay; seed 004's four reasons a GPU function is slow, each answered from
the rows; with --base, compare.py's verdicts. Provenance, entries that did not
pass and noise warnings (UNSTEADY limits, spreads wider than the median) are
on the page, and energy where the run measured it (joules per repetition, power,
clocks, THROTTLED rows, the crossover in joules). Figures are inline SVG, each with its numbers in a table and alt
text; styles are inline; the page prints on paper.

    scripts/report.py results/default                  # -> report.html
    scripts/report.py results/1234 --out 1234.html     # every deck of a job
    scripts/report.py results/new --base results/old   # with compare.py's verdicts

A missing, truncated or foreign results file exits 2 with one line. Needs
matplotlib and jinja2 (Debian: python3-matplotlib python3-jinja2).
"""
import argparse
import datetime
import html
import io
import os
import re
import statistics
import sys

from portalab import compare
from portalab import results as pr

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = "report.html.j2"
JINJA2_NEEDED = ("needs jinja2 to write the page: install it (Debian/Ubuntu: apt-get install "
                 "python3-jinja2; pip: python3 -m pip install jinja2) or load a module that "
                 "has it.")

plt = None  # matplotlib.pyplot, imported once the arguments are read (--help needs none)

# Wider spreads than this make a row's median doubtful: the repetitions from
# the fastest to the slowest span more than the median itself.
WIDE_SPREAD = 1.0
# Below this many FLOPs per byte an experiment is bound by memory on any
# machine portalab has run on (the gemm ceilings sit at 5-60 FLOP/byte).
LOW_INTENSITY = 1.0


# ---- Numbers in words --------------------------------------------------------

def num(v, digits=3):
    """3 significant digits, no exponent below a million, thousands grouped."""
    if v is None:
        return "-"
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}" if abs(v) < 1e7 else f"{v:.{digits}g}"
    return f"{v:.{digits}g}"


def size(n):
    return f"{n:,}"


def times(x):
    if x is None:
        return "-"
    return f"{x:.2f}×" if x < 10 else f"{x:.3g}×"


def pct(x):
    return f"{100 * x:.0f}%" if x is not None else "-"


def count(k, one, many=None):
    """'1 row', '3 rows'."""
    return f"{k} {one if k == 1 else many or one + 's'}"


def join(words):
    words = list(words)
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


# ---- The page's parts ----------------------------------------------------------
# A section holds blocks: sentences, tables, figures (an SVG with its table
# beside it) and warnings; the template renders each kind.

def section(id_, title, *blocks, lead=""):
    return {"id": id_, "title": title, "lead": lead, "blocks": [b for b in blocks if b]}


def text(*sentences):
    sentences = [s for s in sentences if s]
    return {"kind": "text", "sentences": sentences} if sentences else None


def bullets(items):
    items = list(items)
    return {"kind": "list", "entries": items} if items else None


def warning(*sentences):
    sentences = [s for s in sentences if s]
    return {"kind": "warning", "sentences": sentences} if sentences else None


def table(head, rows, caption="", numeric=None):
    """numeric: the columns to right-align (default: those after the first
    whose cells look like numbers)."""
    if not rows:
        return None
    if numeric is None:
        numeric = {i for i in range(1, len(head))
                   if all(re.fullmatch(r"[-+0-9.,×%e ]*", str(r[i])) for r in rows)}
    return {"kind": "table", "head": head, "rows": [[str(c) for c in r] for r in rows],
            "caption": caption, "numeric": sorted(numeric)}


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


# ---- Rows --------------------------------------------------------------------

def measured(r):
    return r["check"] in ("PASS", "FAIL") and r.get("total_ms") is not None


def experiments_in(rows):
    """Experiments in the order the runs measured them."""
    return list(dict.fromkeys(r["experiment"] for r in rows))


def ordered(values, order=None):
    values = set(values)
    first = [v for v in (order or []) if v in values]
    return first + sorted(values - set(first), key=str)


def by(rows, **match):
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def groups(rows, *fields):
    """{(values of fields): [rows]} in one pass (one field: its value), the
    rows of each in their order: never by() once per key (a sweep of tens
    of thousands of rows made that quadratic)."""
    out = {}
    for r in rows:
        key = tuple(pr.hashable(r.get(f)) for f in fields)
        out.setdefault(key if len(fields) > 1 else key[0], []).append(r)
    return out


def host_rows(rows):
    return [r for r in rows if pr.is_host_space(r["space"])]


def device_spaces(rows):
    return ordered({r["space"] for r in rows if not pr.is_host_space(r["space"])})


def one_copy_mode(rows):
    """Host spaces have no copies (the mirror is the data): of their copy
    modes keep one row per entry, the fastest that passed (else the first),
    as copies "none", so that figures and tables show each host entry once."""
    keep, at = [], {}  # at: where the entry's row is in keep
    for r in rows:
        if not pr.is_host_space(r["space"]):
            keep.append(r)
            continue
        k = (r["hostname"], r["space"], r["experiment"], r["variant"], r["dtype"], r["n"],
             r["ranks"], pr.hashable(r["parameters"]))
        if k not in at:
            at[k] = len(keep)
            keep.append(dict(r, copies="none"))
        elif r["check"] == "PASS" and (keep[at[k]]["check"] != "PASS"
                                       or r["total_ms"] < keep[at[k]]["total_ms"]):
            keep[at[k]] = dict(r, copies="none")
    return keep


def series_label(r, many_hosts):
    name = f"{r['hostname']}/{r['space']}" if many_hosts else r["space"]
    copies = "" if pr.is_host_space(r["space"]) else f" {r['copies']}"
    ranks = f" {r['ranks']} ranks" if r["ranks"] != 1 else ""
    return f"{name} {r['variant']}{copies}{ranks}"


def many_hosts(rows):
    return len({r["hostname"] for r in rows}) > 1


def limit_rate(r):
    return (f"{num(r['gflops'])} GFLOP/s" if pr.limit_name(r) == "gemm"
            else f"{num(r['gbps'])} GB/s")


# ---- When the GPU pays -------------------------------------------------------

# Said where a conclusion is missing because a file has no summary.
NO_SUMMARY = ("The crossovers, speedups and ratios of a results file without its summary are "
              "not shown (see “At a glance”): only its rows, tables and figures are.")

MODE_WORDS = {"pageable": "with pageable copies", "pinned": "with pinned copies",
              "copies": "with copies", "none": "kernel alone"}


def pays_of(c, mode):
    """A gpu_crossover's pays in one of pr.CROSSOVER_MODES, in words."""
    return pr.describe_pays(c[pr.CROSSOVER_MODES[mode]], c["sizes"])


def crossover_sentence(c, many):
    where = f" on {c['hostname']}" if many else ""
    ranks = f" ({c['ranks']} ranks each)" if c["ranks"] != 1 else ""
    parts = [f"{MODE_WORDS[m]}, {pays_of(c, m)}" for m in ("pageable", "pinned", "none")
             if c[pr.CROSSOVER_MODES[m]]["measured"]]
    return (f"{c['experiment']} {c['variant']} {c['dtype']} on {c['device']}{where}{ranks} "
            f"against the best host space: {'; '.join(parts)}.")


def crossover_table(found):
    rows = [[c["variant"], c["dtype"], c["device"],
             *[pays_of(c, m) for m in ("pageable", "pinned", "copies", "none")]]
            for c in found]
    return table(["variant", "type", "device", "pageable copies", "pinned copies",
                  "best with copies", "kernel alone"], rows,
                 "The smallest n at which the device's time beats the best host space's total")


# ---- One experiment ----------------------------------------------------------

def copies_sentences(rows):
    """Share of h2d and d2h in the device's total, pageable against pinned,
    at the largest size each variant and type ran with copies."""
    out, tab = [], []
    dev = [r for r in rows if not pr.is_host_space(r["space"]) and r["copies"] != "none"
           and r["check"] == "PASS" and r["total_ms"] > 0]
    series = groups(dev, "space", "variant", "dtype")
    for key in ordered(series):
        space, variant, dtype = key
        mine = series[key]
        n = max(r["n"] for r in mine)
        parts = []
        for r in sorted(by(mine, n=n), key=lambda r: pr_copies_order(r["copies"])):
            share = (r["h2d_ms"] + r["d2h_ms"]) / r["total_ms"]
            h2d, d2h = r["h2d_ms"] / r["total_ms"], r["d2h_ms"] / r["total_ms"]
            parts.append(f"{pct(share)} with {r['copies']} memory (h2d {pct(h2d)}"
                         f"{rate(r, 'h2d')}, d2h {pct(d2h)}{rate(r, 'd2h')})")
            tab.append([variant, dtype, space, r["copies"], size(n), num(r["h2d_ms"]),
                        num(r["kernel_ms"]), num(r["d2h_ms"]), num(r["total_ms"]), pct(share)])
        out.append(f"Copies take {join(parts)} of {space}'s total for {variant} {dtype} "
                   f"at n = {size(n)}.")
    return out, tab


def rate(r, phase):
    gbps = r.get(f"{phase}_gbps")
    return f" at {num(gbps)} GB/s" if gbps else ""


def pr_copies_order(c):
    return ("pageable", "pinned", "none").index(c) if c in ("pageable", "pinned", "none") else 9


def fusion_sentences(fusion):
    """fused against unfused, kernel phase (the summary's fusion), per space
    and type over the sizes run."""
    out = []
    of_space = groups([f for f in fusion if f["ranks"] == 1], "space", "dtype")
    for space, dtype in ordered(of_space):
        ratios = {f["n"]: f["unfused_over_fused"] for f in of_space[space, dtype]}
        lo, hi = min(ratios), max(ratios)
        span = (f"{times(ratios[lo])} at n = {size(lo)} and {times(ratios[hi])} at n = {size(hi)}"
                if lo != hi else f"{times(ratios[hi])} at n = {size(hi)}")
        verdict = ("fusion pays" if min(ratios.values()) > 1 else "fusion does not pay"
                   if max(ratios.values()) < 1 else "fusion pays at some sizes")
        out.append(f"Fusion on {space}, {dtype}: the unfused kernels take {span} the fused "
                   f"kernel's time: {verdict}.")
    return out


def dtype_sentences(ratios):
    """The summary's float64_over_float32 at each space's largest size."""
    out = []
    of_space = groups(ratios, "space")
    for space in ordered(of_space):
        mine = of_space[space]
        n = max(d["n"] for d in mine)
        at_n = [d for d in mine if d["n"] == n]
        vals = sorted(d["kernel_ratio"] for d in at_n)
        spread = (f"{times(vals[0])} to {times(vals[-1])}" if vals[-1] > 1.05 * vals[0]
                  else times(statistics.median(vals)))
        out.append(f"float64 against float32 on {space} at n = {size(n)}: float64's kernel takes "
                   f"{spread} float32's time" + (" (over the variants and copy modes)."
                                                   if len(vals) > 1 else "."))
    return out


def cold_sentences(rows):
    """The first call of each space: its cost against a warm call."""
    out = []
    ok = [r for r in rows if r["check"] == "PASS" and r.get("cold_ms") and r["total_ms"] > 0]
    of_space = groups(ok, "space")
    for space in ordered(of_space):
        mine = of_space[space]
        first = [r for r in mine if r.get("first_in_process")]
        r = first[0] if first else min(mine, key=lambda r: (r["n"], r["variant"]))
        why = (" (the first call of this kernel in the process: module loading, first touch "
               "and library set-up land here)" if r.get("first_in_process") else "")
        out.append(f"The first (cold) call of {r['variant']} {r['dtype']} on {space} at n = "
                   f"{size(r['n'])} took {num(r['cold_ms'])} ms against {num(r['total_ms'])} ms "
                   f"warm ({times(r['cold_ms'] / r['total_ms'])}){why}.")
    return out


def service_table(rows):
    """Which library served each variant in each space, on how many threads,
    and how close its largest size came to the space's limit."""
    out = []
    ok = [r for r in rows if r["check"] == "PASS"]
    series = groups(ok, "variant", "dtype", "space", "copies")
    for key in ordered(series):
        variant, dtype, space, copies = key
        r = max(series[key], key=lambda r: r["n"])
        out.append([variant, dtype, space, copies, r.get("library", ""), pr.threads_text(r),
                    size(r["n"]), limit_rate(r), pr.limit_text(r.get("limit")) or "-",
                    pct(r.get("pct_of_limit")) if r.get("pct_of_limit") else "-"])
    return table(["variant", "type", "space", "copies", "library", "threads", "largest n",
                  "rate (kernel)", "limit", "% of limit"], out,
                 "Who served each call, on how many threads, and how close the largest size came "
                 "to the space's calibrated limit")


def limit_sentences(rows):
    out = []
    ok = [r for r in rows if r["check"] == "PASS" and r.get("pct_of_limit")]
    of_space = groups(ok, "space")
    for space in ordered(of_space):
        mine = of_space[space]
        n = max(r["n"] for r in mine)
        best = max(by(mine, n=n), key=lambda r: r["pct_of_limit"])
        out.append(f"On {space} at n = {size(n)}, the closest to the limit is {best['variant']} "
                   f"{best['dtype']}: {limit_rate(best)}, {pct(best['pct_of_limit'])} of "
                   f"{pr.limit_text(best['limit'])}.")
    return out


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


def experiment_section(figs, mine, experiment, found, has_gpu, many, summary):
    """mine: the experiment's rows; found: its crossovers; summary: its
    entries of the runs' other conclusions (pr.analysis), or None where a
    file has none."""
    passed = [r for r in mine if r["check"] == "PASS"]
    if found:
        pays = [crossover_sentence(c, many) for c in found]
    elif summary is None:
        pays = [NO_SUMMARY]
    elif has_gpu and not device_spaces(passed):
        pays = ["No GPU space ran this experiment (or none passed its check): nothing to compare."]
    elif not has_gpu:
        pays = ["No GPU in this run: nothing to compare the host spaces with."]
    else:
        pays = ["No host space ran the sizes the GPU ran: nothing to compare."]
    copies, copies_tab = copies_sentences(passed)
    summary = summary or {}
    blocks = [text(*pays), text(*copies, *fusion_sentences(summary.get("fusion", [])),
                                *dtype_sentences(summary.get("float64_over_float32", [])),
                                *cold_sentences(passed), *limit_sentences(passed))]
    of_dtype = groups(mine, "dtype")
    for dtype in ordered(of_dtype, ["float32", "float64"]):
        blocks.append(time_figure(figs, of_dtype[dtype], experiment, dtype))
    blocks.append(phases_figure(figs, passed, experiment))
    if found:
        blocks.append(crossover_table(found))
    blocks.append(service_table(passed))
    not_passed = [r for r in mine if r["check"] != "PASS"]
    if not_passed:
        blocks.append(text(f"{len(not_passed)} of its entries did not pass: see "
                           f"“Entries that did not pass”."))
    return section(f"exp-{experiment}", experiment, *blocks)


# ---- Seed 004's four reasons -------------------------------------------------

def contest(rows):
    """What to set against what: each GPU space against the best host space,
    or, without a GPU, the parallel host space against Serial (the same
    lesson on the host's cores). (label, fast space(s), reference spaces)."""
    gpus = device_spaces(rows)
    if gpus:
        hosts = ordered({r["space"] for r in host_rows(rows)})
        return [(g, [g], hosts) for g in gpus]
    parallel = [s for s in ("OpenMP", "Threads", "HPX") if by(rows, space=s)]
    if parallel and by(rows, space="Serial"):
        return [(p, [p], ["Serial"]) for p in parallel]
    return []


def speedups(found, space, phase):
    """{(experiment, variant, dtype): {n: speedup}} of space on one rank in
    phase ("total" or "kernel"), from the summary's speedups."""
    out = {}
    for s in found:
        if s["space"] == space and s["ranks"] == 1:
            byn = {at["n"]: at[phase] for at in s["sizes"] if at[phase] is not None}
            if byn:
                out[s["experiment"], s["variant"], s["dtype"]] = byn
    return out


def intensity(rows):
    """FLOPs per byte of each experiment (the most of its rows)."""
    out = {}
    for r in rows:
        if r.get("bytes") and r.get("flops") is not None:
            out[r["experiment"]] = max(out.get(r["experiment"], 0.0), r["flops"] / r["bytes"])
    return out


def reasons_section(rows, has_gpu, found):
    """found: the runs' summaries (pr.analysis)."""
    against = contest(rows)
    if not against:
        return section("reasons", "Four reasons a GPU function is slow (seed 004)", text(
            "This run has no GPU and no parallel host space beside Serial: nothing to set "
            "against anything."))
    blocks = []
    what = ("the GPU against the best host space" if has_gpu else
            "no GPU in this run: the parallel host space against Serial stands in for it "
            "(the same lessons on the host's cores)")
    blocks.append(text(f"Each reason answered from this run's rows: {what}."))
    for label, [fast], ref in against:
        others = join(ref) if len(ref) == 1 else f"the best of {join(ref)}"
        # 1. too small: the total with copies (a device's best of pageable and
        # pinned), at the smallest size against the largest
        su = speedups(found["speedups"], fast, "total")
        tab, lose_small, win_large = [], 0, 0
        for (exp, var, dt), byn in sorted(su.items()):
            small, large = min(byn), max(byn)
            if len(byn) < 2:
                continue
            lose_small += byn[small] < 1
            win_large += byn[large] > 1
            tab.append([exp, var, dt, size(small), times(byn[small]), size(large),
                        times(byn[large])])
        if tab:
            blocks.append(text(
                f"1. Input too small ({label}): over {len(tab)} series run at several sizes, "
                f"{label} is slower than {others} at the smallest size in {lose_small} and "
                f"faster at the largest in {win_large} (total times"
                f"{', copies included' if has_gpu else ''})."))
            blocks.append(table(["experiment", "variant", "type", "smallest n", "speedup",
                                 "largest n", "speedup"], tab,
                                f"{label} against {others}: speedup at the smallest and "
                                f"largest size"))
        else:
            blocks.append(text(f"1. Input too small ({label}): no series ran at several sizes "
                               f"in both: run a sweep (inputs/sweep.toml) to see it."))
        # 2. too little arithmetic: speedup of the kernel alone at the largest size
        ai = intensity(rows)
        kern = speedups(found["speedups"], fast, "kernel")
        low, high, tab = [], [], []
        for (exp, var, dt), byn in sorted(kern.items(),
                                          key=lambda kv: (ai.get(kv[0][0], 0), kv[0])):
            n = max(byn)
            if exp not in ai:
                continue
            (low if ai[exp] < LOW_INTENSITY else high).append(byn[n])
            tab.append([exp, var, dt, num(ai[exp]), size(n), times(byn[n])])

        def span(xs):
            return f"{times(min(xs))} to {times(max(xs))}" if xs else "nothing (none ran)"
        blocks.append(text(
            f"2. Too little arithmetic ({label}): below {LOW_INTENSITY:g} FLOP per byte, "
            f"{label}'s kernel alone gains {span(low)} over {others} at the largest size run; "
            f"above it, {span(high)}."))
        blocks.append(table(["experiment", "variant", "type", "FLOP/byte", "n", "kernel speedup"],
                            tab, "Arithmetic intensity against the kernel's speedup"))
        # 3. copies
        if has_gpu:
            dev = [r for r in rows if r["space"] == fast and r["copies"] != "none"
                   and r["check"] == "PASS" and r["total_ms"] > 0 and r["ranks"] == 1]
            shares = []
            for mine in groups(dev, "experiment", "variant", "dtype", "copies").values():
                r = max(mine, key=lambda r: r["n"])
                shares.append(((r["h2d_ms"] + r["d2h_ms"]) / r["total_ms"], r))
            if shares:
                shares.sort(key=lambda s: s[0])
                top = shares[-1][1]
                blocks.append(text(
                    f"3. Copies ({label}): at the largest size of each series, h2d and d2h take "
                    f"{pct(shares[0][0])} to {pct(shares[-1][0])} of the total (median "
                    f"{pct(statistics.median(s for s, _ in shares))}); the most in "
                    f"{top['experiment']} {top['variant']} {top['dtype']} with {top['copies']} "
                    f"memory at n = {size(top['n'])}."))
            else:
                blocks.append(text(f"3. Copies ({label}): no row of {label} ran with copies."))
        else:
            blocks.append(text("3. Copies: host spaces use the data where it is (the host mirror "
                               "is the data): nothing was copied in this run."))
        # 4. 64-bit types
        of_space = groups([d for d in found["float64_over_float32"]
                           if d["space"] in [fast, *ref]], "space")
        parts = []
        for space in ordered(of_space, [fast, *ref]):
            mine = of_space[space]
            n = max(d["n"] for d in mine)
            vals = [d["kernel_ratio"] for d in mine if d["n"] == n]
            parts.append(f"{times(statistics.median(vals))} on {space}")
        blocks.append(text(
            f"4. 64-bit types: float64's kernel takes {join(parts)} float32's time (median over "
            f"the experiments run in both types, at their largest size)." if parts else
            "4. 64-bit types: no experiment ran in both float32 and float64."))
    return section("reasons", "Four reasons a GPU function is slow (seed 004)", *blocks)


# ---- Streams and instances ---------------------------------------------------

def metric(r, name):
    return (r.get("metrics") or {}).get(name)


def overlap_rows(rows):
    """(row, its time, the perfect overlap's time, sentence) of each variant
    run on several instances, against its one-instance variant."""
    out = []
    ok = [r for r in rows if r["check"] == "PASS" and r["kernel_ms"] > 0]
    entry = ("hostname", "experiment", "space", "dtype", "n", "copies", "ranks", "parameters")
    of_entry = groups(ok, *entry)
    for r in ok:
        same = of_entry[tuple(pr.hashable(r[k]) for k in entry)]
        where = f"{r['space']} {r['dtype']} n = {size(r['n'])}" + (
            "" if pr.is_host_space(r["space"]) else f" ({r['copies']} memory)")
        if metric(r, "overlap") is not None:  # inverse_pair concurrent
            seq = next((s for s in same if s["variant"] == "sequential"), None)
            if seq:
                out.append((r, seq["kernel_ms"] / 2, (
                    f"{r['experiment']} on {where}: two inversions on two instances take "
                    f"{num(r['kernel_ms'])} ms against {num(seq['kernel_ms'])} ms one after the "
                    f"other, an overlap of {pct(metric(r, 'overlap'))} (a perfect one: 50%).")))
        elif metric(r, "of_perfect") is not None:  # copy_overlap pipelined_k
            serial = next((s for s in same if s["variant"] == "serial"), None)
            if serial and metric(serial, "perfect_overlap_ms"):
                out.append((r, metric(serial, "perfect_overlap_ms"), (
                    f"{r['experiment']} {r['variant']} on {where}: {times(metric(r, 'speedup'))} "
                    f"as fast as serial, {pct(metric(r, 'of_perfect'))} of a perfect overlap of "
                    f"copies with compute ({num(metric(serial, 'perfect_overlap_ms'))} ms).")))
        elif metric(r, "vs_1") is not None and r["variant"] != "instances_1":
            digits = re.sub(r"\D", "", r["variant"])
            k = int(digits) if 0 < len(digits) < 10 else 1
            one = next((s for s in same if s["variant"] == "instances_1"), None)
            if one and k > 0:
                out.append((r, one["kernel_ms"] / k, (
                    f"{r['experiment']} on {where}: {k} instances run {times(metric(r, 'vs_1'))} "
                    f"the kernels per second of one (a perfect overlap: {k}×).")))
    return out


def streams_section(figs, rows):
    found = overlap_rows(rows)
    if not found:
        return None
    blocks = [text("Work spread over several execution-space instances (CUDA streams, host "
                   "thread pools) against the same work on one, and against a perfect overlap.")]
    of_experiment = {}
    for f in found:
        of_experiment.setdefault(f[0]["experiment"], []).append(f)
    for experiment in ordered(of_experiment):
        mine = of_experiment[experiment]
        names = [f"{r['space']} {r['variant']} {r['dtype']}"
                 + ("" if pr.is_host_space(r["space"]) else f" {r['copies']}") for r, _, _ in mine]
        # Sentences and bars at each series' largest size (a sweep's every
        # size would be thousands of bars); the table has every row.
        largest = {}
        for i, (r, _, _) in enumerate(mine):
            k = (names[i], r["hostname"], r["ranks"], pr.hashable(r["parameters"]))
            if k not in largest or r["n"] > mine[largest[k]][0]["n"]:
                largest[k] = i
        shown = sorted(largest.values())
        bars = [mine[i] for i in shown]
        blocks.append(text(*[s for _, _, s in bars]))
        fig, ax = plt.subplots(figsize=(6.4, 0.9 + 0.32 * len(bars)))
        ax.barh(range(len(bars)), [r["kernel_ms"] for r, _, _ in bars], color="tab:blue",
                label="measured")
        ax.scatter([p for _, p, _ in bars], range(len(bars)), marker="|", s=300, color="black",
                   zorder=3, label="perfect overlap")
        ax.set_yticks(range(len(bars)), [f"{names[i]} n = {size(mine[i][0]['n'])}" for i in shown],
                      fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("time of the work (ms, median)")
        ax.legend(fontsize=7, loc="lower right")
        ax.set_title(f"{experiment}: measured against a perfect overlap", fontsize=10)
        fig.tight_layout()
        tab = table(["series", "n", "ms", "perfect ms", "of perfect"],
                    [[nm, size(r["n"]), num(r["kernel_ms"]), num(p), pct(p / r["kernel_ms"])]
                     for nm, (r, p, _) in zip(names, mine)])
        blocks.append(figs.block(
            fig, f"{experiment}: bars of the measured time of each variant on several instances "
            f"at its largest size, with a tick at the time a perfect overlap would take.",
            f"{experiment} on several instances: measured time and a perfect overlap's (the "
            f"figure at each series' largest size, the table at every size).", tab))
    return section("streams", "Streams and instances: overlap", *blocks)


# ---- Several ranks -------------------------------------------------------------

def ranks_section(figs, rows, plot, found):
    """found: the runs' summaries (pr.analysis)."""
    multi = [r for r in rows if r["ranks"] > 1 and r["check"] == "PASS"]
    if not multi:
        return None
    blocks = []
    eff = [r for r in multi if metric(r, "parallel_efficiency") is not None]
    sentences, tab = [], {}
    series = groups(eff, "experiment", "variant", "space", "dtype", "copies", "ranks")
    fields = ("experiment", "variant", "space", "dtype", "copies", "ranks")
    crossover = {(c["hostname"], *(c.get(f) for f in fields)): c
                 for c in found["multi_rank_crossover"]}
    for key in ordered(series):
        mine = sorted(series[key], key=lambda r: r["n"])
        exp, var, space, dt, copies, k = key
        top = mine[-1]
        c = crossover.get((top["hostname"], *key))
        pays = (pr.describe_pays(c["pays"], c["sizes"]) if c
                else "not in the results file's summary")
        sentences.append(f"{exp} {var} {space} {dt}, {k} ranks against one: "
                         f"{pays}; at n = {size(top['n'])} they run "
                         f"{times(metric(top, 'speedup_over_1_rank'))} one rank's rate, an "
                         f"efficiency of {pct(metric(top, 'parallel_efficiency'))}.")
        tab.setdefault(exp, []).extend([exp, var, space, dt, str(k), size(r["n"]),
                 times(metric(r, "speedup_over_1_rank")), pct(metric(r, "parallel_efficiency")),
                 pct(r.get("imbalance")) if r.get("imbalance") is not None else "-"]
                for r in mine)
    blocks.append(text(*sentences))
    of_experiment = groups(rows, "experiment")
    for experiment in ordered(tab):
        blocks.append(figs.block(
            plot.scaling_plot(of_experiment[experiment], experiment),
            f"{experiment}: parallel efficiency against the number of ranks and against n.",
            f"Parallel efficiency of {experiment} (speedup over one rank / ranks).",
            table(["experiment", "variant", "space", "type", "ranks", "n", "× one rank",
                   "efficiency", "imbalance"], tab[experiment])))
    links = [r for r in multi if r.get("pct_of_limit")
             and pr.limit_name(r) in ("peer", "peer-duplex", "allreduce")]
    sentences = []
    series = groups(links, "experiment", "variant", "ranks", "dtype")
    for key in ordered(series):
        r = max(series[key], key=lambda r: r["n"])
        sentences.append(f"{key[0]} {key[1]} {key[3]} on {key[2]} ranks at "
                         f"{num(plot.message_bytes(r) / 2**20)} MiB: {num(r['gbps'])} GB/s, "
                         f"{pct(r['pct_of_limit'])} of {pr.limit_text(r['limit'])}.")
    if sentences:
        blocks.append(text(*sentences))
    links_of, multi_of = groups(links, "experiment"), groups(multi, "experiment")
    for experiment in ordered(links_of):
        mine = links_of[experiment]
        blocks.append(figs.block(
            plot.bandwidth_plot(multi_of[experiment], experiment),
            f"{experiment}: bandwidth against message size, one line per variant and rank count, "
            f"the calibrated link limits dashed.",
            f"Bandwidth of {experiment} against its limits.",
            table(["variant", "ranks", "type", "bytes", "GB/s", "limit", "% of limit"],
                  [[r["variant"], str(r["ranks"]), r["dtype"], size(int(plot.message_bytes(r))),
                    num(r["gbps"]), pr.limit_text(r["limit"]), pct(r["pct_of_limit"])]
                   for r in sorted(mine, key=lambda r: (r["variant"], r["ranks"], r["n"]))])))
    return section("ranks", "Several ranks: scaling and links", *blocks)


# ---- Limits ------------------------------------------------------------------

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


# ---- Noise, failures, comparison, provenance ---------------------------------

def unsteady_limits(runs):
    """Table rows of the calibrated limits each run found UNSTEADY."""
    out = []
    for path, doc, _ in runs:
        for s in (doc["provenance"].get("calibration") or {}).get("spaces", []):
            for u in s.get("unsteady", []):
                what = u.get("dtype") or (f"at {size(u['bytes'])} bytes" if u.get("bytes") else "")
                out.append([s["space"], f"{u['limit']} {what}".strip(),
                            f"{num(u['fastest'])} {u['unit']}", f"{num(u['slowest'])} {u['unit']}",
                            str(u["repetitions"]), path])
    return out


def wide_rows(rows):
    """Rows whose repetitions spread wider than their median."""
    return [r for r in rows if measured(r) and r["total_ms"] > 0
            and r.get("total_max_ms") is not None
            and r["total_max_ms"] - r["total_min_ms"] > WIDE_SPREAD * r["total_ms"]]


def throttled_rows(rows):
    """Rows whose GPU clocks were held down (power cap, thermal, hardware
    slowdown) during their timed repetitions."""
    return [r for r in rows if measured(r) and isinstance(r.get("energy"), dict)
            and r["energy"].get("throttled")]


def joules_pay(p, sizes):
    """A crossover in joules from the run's summary, in words."""
    if not p.get("measured"):
        return "not measured"
    if p.get("smallest_n") is None:
        return f"never (n from {sizes[0]:,} to {sizes[-1]:,})"
    return f"from n = {p['smallest_n']:,}" + ("" if p.get("holds_above") else
                                              ", but not at every larger size")


def energy_section(runs, rows):
    """Joules per repetition, power and clocks where the run measured them,
    and the crossover in joules from the run's own summary; None where no row
    has energy."""
    found = [r for r in rows if measured(r) and pr.own_energy(r)]
    if not found:
        return None
    blocks = [text("Energy of the timed repetitions, read outside their timing: a device "
                   "space's GPU (NVML), a host space's CPU packages (RAPL); docs/energy.md "
                   "says what is measured and how to read it.")]
    lines = []
    for _, doc, _ in runs:
        for c in doc.get("summary", {}).get("gpu_crossover", []):
            if c.get("energy_with_copies", {}).get("measured") or \
                    c.get("energy_without_copies", {}).get("measured"):
                sizes = c.get("energy_sizes") or [0]
                lines.append(f"{c['experiment']} {c['variant']} {c['dtype']} on {c['device']}: "
                             f"with copies {joules_pay(c['energy_with_copies'], sizes)}; "
                             f"without copies {joules_pay(c['energy_without_copies'], sizes)}")
    if lines:
        blocks.append(text("When the GPU takes fewer joules than the CPU (the smallest n):"))
        blocks.append(bullets(lines))
    rows_out = []
    for r in found:
        e, own = r["energy"], pr.own_energy(r)
        per_j = e.get("gflop_per_j") or e.get("gb_per_j")
        rows_out.append([r["experiment"], r["variant"], r["space"], r["dtype"], size(r["n"]),
                         r["copies"], "GPU" if "gpu" in e else "CPU",
                         num(own["joules_per_rep"]), num(own["kernel_joules_per_rep"]),
                         num(own["mean_power_w"]),
                         (num(per_j) + (" GFLOP/J" if e.get("gflop_per_j") else " GB/J"))
                         if per_j else "-",
                         num(e.get("sm_clock_mhz")), num(e.get("mem_clock_mhz")),
                         num(e.get("temperature_c")),
                         ", ".join(e.get("clock_event_reasons", [])) or "-"])
    blocks.append(table(["experiment", "variant", "space", "type", "n", "copies", "source",
                         "J/rep", "kernel J/rep", "W", "per joule", "SM MHz", "mem MHz", "°C",
                         "clock events"], rows_out,
                        "Energy per repetition (median), mean power, clocks and temperature"))
    return section("energy", "Energy", *blocks)


def noise_section(runs, rows):
    blocks = []
    throttled = throttled_rows(rows)
    if throttled:
        blocks.append(warning(f"{count(len(throttled), 'row')} THROTTLED: the GPU's clocks were "
                              f"held down (power cap, thermal, hardware slowdown) while they were "
                              f"timed: their times may not repeat."))
        blocks.append(table(["experiment", "variant", "space", "type", "n", "copies", "reasons"],
                            [[r["experiment"], r["variant"], r["space"], r["dtype"], size(r["n"]),
                              r["copies"], ", ".join(r["energy"].get("clock_event_reasons", []))]
                             for r in throttled], "THROTTLED rows"))
    unsteady = unsteady_limits(runs)
    if unsteady:
        blocks.append(warning(f"{count(len(unsteady), 'calibrated limit')} UNSTEADY (the slowest "
                              f"repetition over 1.5 times the fastest, as a busy machine makes "
                              f"them): rows compared with them are not to be trusted."))
        blocks.append(table(["space", "limit", "fastest", "slowest", "repetitions", "run"],
                            unsteady, "UNSTEADY limits"))
    wide = wide_rows(rows)
    if wide:
        blocks.append(warning(f"{count(len(wide), 'row')} with repetitions spread wider than "
                              f"their median (slowest − fastest > median): their medians are "
                              f"doubtful; run them again with more repetitions, on a quiet "
                              f"machine."))
        blocks.append(table(["experiment", "variant", "space", "type", "n", "copies", "median ms",
                             "min ms", "max ms"],
                            [[r["experiment"], r["variant"], r["space"], r["dtype"], size(r["n"]),
                              r["copies"], num(r["total_ms"]), num(r["total_min_ms"]),
                              num(r["total_max_ms"])] for r in wide],
                            "Rows whose repetitions spread wider than their median"))
    if not blocks:
        blocks.append(text("No calibrated limit was unsteady, no row was throttled and no row's "
                           "repetitions spread wider than its median."))
    return section("noise", "Noise", *blocks)


def failures_section(runs, rows):
    blocks = []
    for path, doc, _ in runs:
        s = doc.get("summary", {})
        if s.get("incomplete"):
            blocks.append(warning(f"{path}: {s['incomplete']}."))
        if s.get("interrupted"):
            i = s["interrupted"]
            blocks.append(warning(f"{path}: interrupted by {i.get('signal')}: "
                                  f"{i.get('abandoned', 0)} entries abandoned, "
                                  f"{i.get('not_run', 0)} not run."))
    bad = [r for r in rows if r["check"] != "PASS"]
    counts = {}
    for r in bad:
        counts[r["check"]] = counts.get(r["check"], 0) + 1
    if bad:
        blocks.append((warning if any(r["check"] in ("FAIL", "ERROR") for r in bad) else text)(
            f"{len(bad)} of {len(rows)} entries did not pass: "
            + join(f"{v} {k}" for k, v in sorted(counts.items())) + "."))
        blocks.append(table(["check", "experiment", "variant", "space", "type", "n", "copies",
                             "reason"],
                            [[r["check"], r["experiment"], r["variant"], r["space"], r["dtype"],
                              size(r["n"]), r["copies"], r.get("note") or ""] for r in bad],
                            numeric=set()))
    else:
        blocks.append(text(f"Every one of the {len(rows)} entries passed its check."))
    return section("failures", "Entries that did not pass", *blocks)


def compare_section(base_paths, rows, phase, threshold):
    try:
        base = pr.newest_per_key(pr.load(base_paths))
    except pr.ResultsError as e:
        pr.fail(f"--base: {e}")
    noise = compare.Noise(compare.pairs_of(base, rows), phase)
    table_rows, regression = compare.compare(base, rows, phase, threshold, noise)
    counts = {}
    for t in table_rows:
        counts[t[3]] = counts.get(t[3], 0) + 1
    shown = [t for t in table_rows if t[3] != "same"]
    at = {k: i for i, k in enumerate(pr.ENTRY_KEY)}
    blocks = [(warning if regression else text)(
        f"Against {join(base_paths)} on the {phase} phase: "
        + join(f"{v} {k}" for k, v in sorted(counts.items()))
        + f"; {'a REGRESSION' if regression else 'no regression'} (slower by more than "
          f"{threshold:g}%, or broken)."),
        text(f"Run-to-run noise (robust deviation of the log ratios): {noise.describe()}. "
             f"A change is “faster” or “slower” only where the repetitions do not overlap "
             f"and it exceeds {compare.SIGMAS:g} such deviations (scripts/compare.py).")]
    blocks.append(table(["verdict", "experiment", "variant", "space", "type", "n", "copies",
                         "ranks", "base ms", "new ms", "change"],
                        [[v + (" REGRESSION" if reg else ""), k[at["experiment"]],
                          k[at["variant"]], k[at["space"]], k[at["dtype"]], size(k[at["n"]]),
                          k[at["copies"]], str(k[at["ranks"]]), compare.fmt_ms(b, phase),
                          compare.fmt_ms(n, phase), f"{c:+.1%}" if c is not None else ""]
                         for k, b, n, v, c, reg in shown],
                        "Entries that are not the same within noise", numeric={5, 7, 10}))
    return section("compare", "Against the base run", *blocks)


def provenance_section(runs):
    blocks = []
    for path, doc, rows in runs:
        p = doc["provenance"]
        host, kk, build = p.get("host", {}), p.get("kokkos", {}), p.get("build", {})
        deck, kernels = p.get("deck", {}), p.get("kokkos_kernels", {})
        slurm = p.get("slurm", {})
        devices = "; ".join(f"{d['space']}: {d.get('name', '')}" + (
            f" ({d['multiprocessors']} SMs, {num(d['memory_bytes'] / 2**30)} GiB)"
            if d.get("multiprocessors") else "") for d in p.get("devices", []))
        ranks = p.get("ranks") or []
        cal = p.get("calibration")
        items = [
            ("results", path),
            ("started", p.get("started_at", "")),
            ("command", " ".join(p["command"]) if isinstance(p.get("command"), list)
             else str(p.get("command", ""))),
            ("deck", f"{deck.get('path', '-')} (hash {deck.get('hash', '-')})"),
            ("machine", f"{host.get('hostname', '')}: {host.get('cpu_model', '')}, "
                        f"{host.get('hardware_threads', '')} hardware threads, host space on "
                        f"{host.get('host_space_threads', '')}"),
            ("devices", devices),
            ("Kokkos", f"{kk.get('version', '')}, spaces {', '.join(kk.get('spaces', []))}, "
                       f"default {kk.get('default_execution_space', '')}"),
            ("Kokkos Kernels", f"{kernels.get('version', '')}, TPLs "
                               f"{', '.join(kernels.get('tpls', [])) or 'none'}"),
            ("BLAS / LAPACK", f"{host.get('blas', '')} / {host.get('lapack', '')}; threads: "
                              f"{host.get('blas_threads', '')}"),
            ("build", f"{build.get('compiler_id', '')} {build.get('compiler_version', '')} "
                      f"{build.get('build_type', '')}: {build.get('flags', '')}"),
            ("git", p.get("portalab", {}).get("git_commit", "")),
            ("OMP_* / KOKKOS_*", " ".join(f"{k}={v}" for k, v in sorted(
                {**host.get("omp_env", {}), **host.get("kokkos_env", {})}.items())) or "none set"),
            ("Slurm", f"job {slurm['job_id']}"
                      + (f" task {slurm['array_task_id']}" if slurm.get("array_task_id") else "")
                      + f" on {slurm.get('nodelist', '')} ({slurm.get('partition', '')})"
             if slurm.get("job_id") else "not a Slurm job"),
            ("ranks", f"{len(ranks)}: " + "; ".join(
                f"rank {x.get('rank')} on {x.get('host')} device {x.get('device_id', '-')}"
                for x in ranks) if ranks else "1 (no MPI)"),
            ("calibration", f"{cal.get('mode')} ({num(cal.get('seconds'))} s)" if cal
             else "none"),
            ("entries", f"{len(rows)}"),
        ]
        blocks.append(table(["", ""], [[k, v] for k, v in items], f"Run {path}", numeric=set()))
    return section("provenance", "Provenance", *blocks)


def glance_section(rows, crossovers, has_gpu, many, runs, missing):
    """missing: pr.analysis's sentences of the files without a summary."""
    blocks = [warning(*missing, NO_SUMMARY)] if missing else []
    if not has_gpu:
        spaces = ordered({r["space"] for r in rows})
        blocks.append(text(f"No GPU in this run (spaces: {join(spaces)}): the page answers "
                           f"what the host spaces can, and uses the parallel host space "
                           f"against Serial where the labs set the GPU against the CPU."))
    elif crossovers:
        blocks.append(text("When the GPU pays, the smallest size at which it beats the best "
                           "host space:"))
        blocks.append(bullets(crossover_sentence(c, many) for c in crossovers))
    elif not missing:
        blocks.append(text("A GPU ran, but no host space ran the same entries: nothing to "
                           "compare."))
    bad = [r for r in rows if r["check"] in ("FAIL", "ERROR")]
    if bad:
        blocks.append(warning(f"{count(len(bad), 'entry', 'entries')} failed a check or raised an "
                              f"error: see “Entries that did not pass”."))
    noise = [count(len(unsteady_limits(runs)), "UNSTEADY calibrated limit"),
             count(len(throttled_rows(rows)), "THROTTLED row"),
             count(len(wide_rows(rows)), "row")
             + " whose repetitions spread wider than their median"]
    noise = [w for w in noise if not w.startswith("0 ")]
    if noise:
        blocks.append(warning(f"Noise: {join(noise)}: see “Noise” before trusting the numbers "
                              f"below."))
    return section("glance", "At a glance", *blocks,
                   lead=f"{sum(len(rs) for _, _, rs in runs)} entries from {len(runs)} results file"
                        f"{'s' if len(runs) != 1 else ''}.")


# ---- The page ------------------------------------------------------------------

def build(runs, base_paths=None, phase="total", threshold=10.0, store=None):
    """The page's model: title and sections. store: store_report.query_store's
    answers, for its history and fleet sections (alone where runs is empty)."""
    from portalab import store_report
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if not runs:
        return {"title": "portalab: the results store", "generated": generated,
                "sources": [store["db"]],
                "sections": store_report.sections(sys.modules[__name__], Figures(), store)}
    from portalab import plot
    from portalab import roofline
    plot.plt = roofline.plt = plt
    every = pr.newest_per_key([r for _, _, rs in runs for r in rs])
    order = experiments_in([r for _, _, rs in runs for r in rs])
    rank = {e: i for i, e in enumerate(order)}
    every.sort(key=lambda r: (rank[r["experiment"]], pr.sort_key(r)))
    rows = one_copy_mode(every)
    figs = Figures()
    has_gpu = bool(device_spaces(rows))
    many = many_hosts(rows)
    found, missing = pr.analysis(runs)
    for why in missing:
        print(f"{os.path.basename(sys.argv[0])}: {pr.printable(why)}", file=sys.stderr)
    crossovers = sorted(found["gpu_crossover"],
                        key=lambda c: (rank.get(c["experiment"], len(rank)), c["variant"],
                                       c["dtype"], c["device"], c["hostname"]))
    sections = [glance_section(rows, crossovers, has_gpu, many, runs, missing),
                reasons_section(rows, has_gpu, found)]
    if missing:
        sections[1]["blocks"].insert(1, text(NO_SUMMARY))
    of_experiment, crossovers_of = groups(rows, "experiment"), groups(crossovers, "experiment")
    of_kind = {kind: groups(found[kind], "experiment") for kind in ("fusion", "float64_over_float32")}
    for e in order:
        summary = None if missing else {k: of_kind[k].get(e, []) for k in of_kind}
        sections.append(experiment_section(figs, of_experiment.get(e, []), e,
                                           crossovers_of.get(e, []), has_gpu, many, summary))
    sections += [streams_section(figs, rows), ranks_section(figs, rows, plot, found),
                 limits_section(figs, runs, roofline), energy_section(runs, rows),
                 noise_section(runs, rows),
                 failures_section(runs, every)]
    if base_paths:
        sections.append(compare_section(base_paths, every, phase, threshold))
    if store:
        sections += store_report.sections(sys.modules[__name__], figs, store)
    sections.append(provenance_section(runs))
    hosts = join(ordered({r["hostname"] for r in rows}))
    decks = join(ordered({os.path.basename(r["deck"] or "") for r in rows} - {""}))
    return {"title": f"portalab: {decks or 'results'} on {hosts}",
            "generated": generated,
            "sources": [p for p, _, _ in runs] + ([store["db"]] if store else []),
            "sections": [s for s in sections if s]}


def render(page):
    import jinja2
    import markupsafe  # jinja2's own dependency
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    return env.get_template(TEMPLATE).render(page=page, Markup=markupsafe.Markup)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("paths", nargs="*", metavar="RESULTS",
                    help="results.json files or folders holding them (a run, a job, a sweep)")
    ap.add_argument("--out", default="report.html", help="the page (default report.html)")
    ap.add_argument("--base", action="append", metavar="RESULTS",
                    help="a run to compare with (compare.py's verdicts as a section); repeatable")
    ap.add_argument("--phase", choices=pr.PHASES, default="total",
                    help="the phase --base compares (default total)")
    ap.add_argument("--threshold", type=pr.finite_number, default=10.0,
                    help="percent slower that is a regression against --base (default 10)")
    ap.add_argument("--db", metavar="FILE",
                    help="the results store (portalab db): its history and fleet sections; "
                         "alone, a page of the store")
    ap.add_argument("--portalab", metavar="BIN",
                    help="the portalab that reads --db (default: $PORTALAB, the installed one "
                         "beside these scripts, build/host, or PATH)")
    args = ap.parse_args(argv)
    if not args.paths and not args.db:
        pr.fail("nothing to report: give RESULTS, or --db FILE")
    global plt
    plt = pr.require_matplotlib()
    try:
        import jinja2  # noqa: F401
    except ImportError:
        pr.fail(JINJA2_NEEDED)
    store = None
    if args.db:
        from portalab import store_report
        store = store_report.query_store(args.db, args.portalab)
    try:
        runs = pr.load_runs(args.paths) if args.paths else []
    except pr.ResultsError as e:
        pr.fail(str(e))
    if args.paths and not any(rows for _, _, rows in runs):
        pr.fail(f"{join(args.paths)}: no entries in the results: nothing to report")
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "portalab",
                         "font.family": "sans-serif"})
    page = render(build(runs, args.base, args.phase, args.threshold, store))
    pr.save(args.out, page)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
