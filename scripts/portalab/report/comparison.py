"""Against the base run (--base): compare.py's verdicts as a section."""
from portalab import compare
from portalab import results as pr
from portalab.report.blocks import join, section, size, table, text, warning


def compare_section(base_paths, rows, phase, threshold):
    try:
        runs = pr.load_runs(base_paths)
    except pr.ResultsError as e:
        pr.fail(f"--base: {e}")
    pr.tell_incomplete(runs)
    base = pr.newest_per_key([r for _, _, rs in runs for r in rs])
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
