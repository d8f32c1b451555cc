"""The sections over the whole run: seed 004's four reasons, streams and
instances, several ranks, limits, energy, noise, failures, the comparison with
--base, provenance and the glance at the top."""
import re
import statistics

from portalab import compare
from portalab import results as pr
from portalab.report import figures
from portalab.report.blocks import (bullets, count, join, num, pct, section, size, table, text,
                                    times, warning)
from portalab.report.rows import (by, device_spaces, groups, host_rows, measured, one_copy_mode,
                                  ordered)
from portalab.report.experiments import NO_SUMMARY, crossover_sentence

# Wider spreads than this make a row's median doubtful: the repetitions from
# the fastest to the slowest span more than the median itself.
WIDE_SPREAD = 1.0

# Below this many FLOPs per byte an experiment is bound by memory on any
# machine portalab has run on (the gemm ceilings sit at 5-60 FLOP/byte).
LOW_INTENSITY = 1.0


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
    phase ("total" or "kernel"), from the summary's speedup_over_host."""
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
        su = speedups(found["speedup_over_host"], fast, "total")
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
        kern = speedups(found["speedup_over_host"], fast, "kernel")
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


def perfect_said(r):
    """A row's fraction of a perfect overlap and the overlap's time, from its
    own metrics (inverse_pair, concurrent_small); a file written before the
    binary set them says so rather than the report computing them."""
    if metric(r, "of_perfect") is None or metric(r, "perfect_overlap_ms") is None:
        return " (a perfect overlap's time is not in the results file)"
    return (f", {pct(metric(r, 'of_perfect'))} of a perfect overlap "
            f"({num(metric(r, 'perfect_overlap_ms'))} ms)")


def overlap_rows(rows):
    """(row, the perfect overlap's time, its fraction of it, sentence) of
    each variant run on several instances, against its one-instance variant.
    The figures are the experiments' own metrics, read as the binary wrote
    them: copy_overlap's serial row's perfect_overlap_ms and
    duplex_overlap_ms, its pipelined rows' speedup_over_serial, of_perfect
    and of_duplex; inverse_pair's concurrent row's overlap,
    perfect_overlap_ms and of_perfect; concurrent_small's rows' vs_1,
    perfect_overlap_ms and of_perfect. A time and a fraction not in the file
    (one written before the binary set them) are None."""
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
                out.append((r, metric(r, "perfect_overlap_ms"), metric(r, "of_perfect"), (
                    f"{r['experiment']} on {where}: two inversions on two instances take "
                    f"{num(r['kernel_ms'])} ms against {num(seq['kernel_ms'])} ms one after the "
                    f"other, an overlap of {pct(metric(r, 'overlap'))} (a perfect one: 50%)"
                    f"{perfect_said(r)}.")))
        elif metric(r, "vs_1") is not None:  # concurrent_small instances_k
            digits = re.sub(r"\D", "", r["variant"])
            k = int(digits) if 0 < len(digits) < 10 else 1
            if k > 1:
                out.append((r, metric(r, "perfect_overlap_ms"), metric(r, "of_perfect"), (
                    f"{r['experiment']} on {where}: {k} instances run {times(metric(r, 'vs_1'))} "
                    f"the kernels per second of one (a perfect overlap: {k}×){perfect_said(r)}.")))
        elif metric(r, "of_perfect") is not None:  # copy_overlap pipelined_k
            serial = next((s for s in same if s["variant"] == "serial"), None)
            if serial and metric(serial, "perfect_overlap_ms"):
                duplex = (f", {pct(metric(r, 'of_duplex'))} of one that also overlaps the two "
                          f"copy directions ({num(metric(serial, 'duplex_overlap_ms'))} ms)"
                          if metric(r, "of_duplex") and metric(serial, "duplex_overlap_ms")
                          else "")
                out.append((r, metric(serial, "perfect_overlap_ms"), metric(r, "of_perfect"), (
                    f"{r['experiment']} {r['variant']} on {where}: "
                    f"{times(metric(r, 'speedup_over_serial'))} as fast as serial, "
                    f"{pct(metric(r, 'of_perfect'))} of a perfect overlap of "
                    f"copies with compute ({num(metric(serial, 'perfect_overlap_ms'))} ms)"
                    f"{duplex}.")))
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
                 + ("" if pr.is_host_space(r["space"]) else f" {r['copies']}") for r, *_ in mine]
        # Sentences and bars at each series' largest size (a sweep's every
        # size would be thousands of bars); the table has every row.
        largest = {}
        for i, (r, *_) in enumerate(mine):
            k = (names[i], r["hostname"], r["ranks"], pr.hashable(r["parameters"]))
            if k not in largest or r["n"] > mine[largest[k]][0]["n"]:
                largest[k] = i
        shown = sorted(largest.values())
        bars = [mine[i] for i in shown]
        blocks.append(text(*[s for *_, s in bars]))
        fig, ax = figures.plt.subplots(figsize=(6.4, 0.9 + 0.32 * len(bars)))
        ax.barh(range(len(bars)), [r["kernel_ms"] for r, *_ in bars], color="tab:blue",
                label="measured")
        ticks = [(i, p) for i, (_, p, *_) in enumerate(bars) if p is not None]
        ax.scatter([p for _, p in ticks], [i for i, _ in ticks], marker="|", s=300,
                   color="black", zorder=3, label="perfect overlap")
        ax.set_yticks(range(len(bars)), [f"{names[i]} n = {size(mine[i][0]['n'])}" for i in shown],
                      fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("time of the work (ms, median)")
        ax.legend(fontsize=7, loc="lower right")
        ax.set_title(f"{experiment}: measured against a perfect overlap", fontsize=10)
        fig.tight_layout()
        tab = table(["series", "n", "ms", "perfect ms", "of perfect"],
                    [[nm, size(r["n"]), num(r["kernel_ms"]), num(p), pct(of)]
                     for nm, (r, p, of, _) in zip(names, mine)])
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
