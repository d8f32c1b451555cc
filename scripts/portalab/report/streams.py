"""Streams and instances: work spread over several execution-space
instances against the same work on one, and against a perfect overlap."""
import re

from portalab import results as pr
from portalab.report import figures
from portalab.report.blocks import num, pct, section, size, table, text, times
from portalab.report.rows import groups, metric, ordered


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
