"""A section per experiment: when the GPU pays, what copies, fusion, float64
and the first call cost, which library served it, how close it ran to its limits."""
import statistics

from portalab import results as pr
from portalab.report.blocks import join, num, pct, section, size, table, text, times
from portalab.report.figures import phases_figure, time_figure
from portalab.report.rows import (by, device_spaces, groups, limit_rate, limit_share, ordered,
                                  pr_copies_order)


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


def hockney_table(fits):
    """The summary's hockney entries of one experiment: r_inf and n_half per
    variant, type and space, as portalab fitted them."""
    rows = []
    for f in sorted(fits, key=lambda f: (f["variant"], f["dtype"], f["space"], f["ranks"])):
        rate = (f"{num(f['r_inf_gbps'])} GB/s" if f.get("r_inf_gbps")
                else f"{num(f['r_inf_gflops'])} GFLOP/s" if f.get("r_inf_gflops")
                else f"{num(f['r_inf'])} elements/s")
        sizes = f["sizes"]
        beyond = " (beyond the sizes run)" if sizes and f["n_half"] > sizes[-1] else ""
        parameters = pr.parameters_text(f["parameters"])
        rows.append([f["variant"] + (f" {parameters}" if parameters else ""),
                     f["dtype"], f["space"] + (f" ({f['ranks']} ranks)" if f["ranks"] > 1 else ""),
                     rate, num(f["n_half"]) + beyond, pct(f["rms_error"]),
                     f"{size(sizes[0])} to {size(sizes[-1])}" if sizes else "-"])
    return table(["variant", "type", "space", "r∞ (rate as n grows)", "n½ (half of r∞)",
                  "fit's rms error", "sizes"], rows,
                 "Hockney's t = (n + n½) / r∞, fitted by portalab to the kernel medians: a space "
                 "reaches half its rate at n½")


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
                    limit_share(r)])
    return table(["variant", "type", "space", "copies", "library", "threads", "largest n",
                  "rate (kernel)", "limit", "% of limit"], out,
                 "Who served each call, on how many threads, and how close the largest size came "
                 "to the space's calibrated limit")


def limit_sentences(rows):
    """Per space, at its largest size, the row closest to the limit of its
    level (a row whose limit is suspect is said as such, with why)."""
    out = []
    ok = [r for r in rows if r["check"] == "PASS" and r.get("pct_of_limit")]
    of_space = groups(ok, "space")
    for space in ordered(of_space):
        mine = of_space[space]
        n = max(r["n"] for r in mine)
        at_n = by(mine, n=n)
        trusted = [r for r in at_n if not pr.limit_suspect(r)]
        if trusted:
            best = max(trusted, key=lambda r: r["pct_of_limit"])
            level = pr.limit_level(best)
            where = f" (its data in {level})" if level and level not in ("memory", "HBM") else ""
            out.append(f"On {space} at n = {size(n)}, the closest to the limit is "
                       f"{best['variant']} {best['dtype']}: {limit_rate(best)}, "
                       f"{pct(best['pct_of_limit'])} of {pr.limit_text(best['limit'])}{where}.")
        for r in at_n:
            if pr.limit_suspect(r):
                out.append(f"On {space} at n = {size(n)}, {r['variant']} {r['dtype']} ran at "
                           f"{pct(r['pct_of_limit'])} of {pr.limit_text(r['limit'])}: a suspect "
                           f"limit, {pr.limit_suspect(r)}.")
    return out


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
    blocks.append(hockney_table(summary.get("hockney", [])))
    blocks.append(service_table(passed))
    not_passed = [r for r in mine if r["check"] != "PASS"]
    if not_passed:
        blocks.append(text(f"{len(not_passed)} of its entries did not pass: see "
                           f"“Entries that did not pass”."))
    return section(f"exp-{experiment}", experiment, *blocks)
