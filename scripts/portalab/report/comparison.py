"""Against the base run (--base): compare.py's verdicts as a section."""
from portalab import compare
from portalab import results as pr
from portalab.report.blocks import join, section, size, table, text, warning


def compare_section(base_paths, rows, phase, threshold, portalab=None):
    try:
        runs = pr.load_runs(base_paths)
    except pr.ResultsError as e:
        pr.fail(f"--base: {e}")
    pr.tell_incomplete(runs)
    base = pr.newest_per_key([r for _, _, rs in runs for r in rs])
    table_rows, regression, answer = compare.compare(base, rows, phase, threshold,
                                                     portalab=portalab)
    rules = [v["rule"] for v in answer["verdicts"]]
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
        text(f"{rules.count('test')} entries judged by the Mann-Whitney U test on their "
             f"repetitions: “faster” or “slower” only where it rejects at "
             f"{answer['alpha']:g} after Holm's correction and the medians differ by more than "
             f"“needed”: {100 * answer['tolerance']:g}%, or {compare.SIGMAS:g} deviations of "
             f"the run-to-run noise where larger. "
             + (f"{rules.count('spread')} without repetitions (older files) by the run-to-run "
                f"noise (robust deviation of the log ratios): "
                f"{compare.describe_noise(answer['noise'])}: their repetitions must not overlap "
                f"and the change exceed {compare.SIGMAS:g} such deviations. "
                if "spread" in rules else "")
             + "(scripts/compare.py; the rule: portalab verdicts)")]
    blocks.append(table(["verdict", "experiment", "variant", "space", "type", "n", "copies",
                         "ranks", "base ms", "new ms", "change", "needed"],
                        [[v + (" REGRESSION" if reg else ""), k[at["experiment"]],
                          k[at["variant"]], k[at["space"]], k[at["dtype"]], size(k[at["n"]]),
                          k[at["copies"]], str(k[at["ranks"]]), compare.fmt_ms(b, phase),
                          compare.fmt_ms(n, phase), f"{c:+.1%}" if c is not None else "",
                          f"{need:.1%}" if need is not None else ""]
                         for k, b, n, v, c, reg, need in shown],
                        "Entries that are not the same within noise", numeric={5, 7, 10, 11}))
    return section("compare", "Against the base run", *blocks)
