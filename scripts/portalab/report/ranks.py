"""Several ranks: parallel efficiency against one rank, and link bandwidth
against its calibrated limits."""
from portalab import results as pr
from portalab.report.blocks import num, pct, section, size, table, text, times
from portalab.report.rows import groups, metric, ordered


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
