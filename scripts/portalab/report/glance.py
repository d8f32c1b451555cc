"""At a glance, the top of the page: when the GPU pays, failures and noise."""
from portalab.report.blocks import bullets, count, join, section, text, warning
from portalab.report.experiments import NO_SUMMARY, crossover_sentence
from portalab.report.noise import throttled_rows, unsteady_limits, wide_rows
from portalab.report.rows import ordered


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
