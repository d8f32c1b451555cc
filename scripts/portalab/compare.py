#!/usr/bin/env python3
"""Two sets of portalab results side by side, entry by entry (space,
experiment, variant, type, size, copy mode), on one phase's time.

The verdicts are portalab's own (`portalab verdicts`, miniapp/store/
verdict.hpp: the same rule as `portalab db history`):

- Rows that kept their repetitions (results schema 5, the kernel and total
  phases): "faster" or "slower" only where the Mann-Whitney U test on the
  two runs' repetitions rejects at --alpha (default 0.01) after Holm's
  correction over every entry tested, and the medians differ by more than
  --tolerance percent (default 3) and by more than --sigmas times the
  run-to-run noise at their size; otherwise "same".
- A side may be several runs of one machine (a folder holding them: `portalab
  run DECK --out base/1`, then `--out base/2`). Its repetitions are then all
  its runs' together, and the change must also exceed --sigmas times each
  entry's own run-to-run noise: how far its runs' medians spread on each
  side. Two runs a side are worth it where runs differ more than their
  repetitions do (docs/performance.md, "Verdicts, measured"): a process keeps
  its state (its CPU's clock, its neighbours) for all its repetitions, and
  one run cannot show how that state moves between runs. A side of one run
  measured in passes (the deck's `passes`, 2 by default) is held to its
  passes' medians alike: how far a case moves with fresh arrays at another
  time, within one process.
- The run-to-run noise measured on BASE and NEW is at most 3 times the
  spread of each side's own repeats (a run's passes, a folder's runs) at
  that time: where many entries moved, unevenly, the two files spread far
  more than two runs of one build do, and that spread is the change, not
  noise. The change of NEW as a whole (the median over entries) is said.
- Older files, and the copy phases: the repetitions' ranges must not overlap
  and the change of the median, as a log ratio, must exceed --sigmas
  (default 4) times the run-to-run noise of entries of its size (the robust
  standard deviation of the log ratios of every entry that passed in both,
  per decade of the BASE time; --noise-from two runs of one build to
  measure it there instead; --min-noise percent its floor, default 1)
  combined with each side's standard error of the median, or the entry's
  runs' spread where a side was run several times and it is larger.

A check that passed in BASE and does not in NEW is "broken".

    scripts/compare.py results/1234 results/1301 --threshold 5
    scripts/compare.py old/results.json new/results.json --phase kernel --markdown
    scripts/compare.py base new --noise-from base base-again
    scripts/compare.py base/ new/    # each a folder of two runs or more

Exit status: 0 no regression; 1 a regression: an entry "slower" by more than
--threshold percent (median against median), or "broken"; 2 bad input.
Entries on one side only are listed and do not count. A run that did not
finish, or was interrupted, is named on stderr. Names are shown as
portalab's messages show them (control characters as \\xNN, cut past 200
bytes). Each side must hold one
machine's rows: compare one machine's runs with another's, or give --host and
--device to pick one when a side mixes machines. The portalab binary is
--portalab, $PORTALAB, the installed one or the source tree's host build.
"""
import argparse
import json
import math
import statistics
import sys

from portalab import results as pr
from portalab import text
from portalab.binary import find_portalab, run

SIGMAS = 4.0          # the older rule: a change beyond this many noise deviations
MIN_NOISE = 0.01      # floor of the run-to-run noise (relative)
ALPHA = 0.01          # the U test's family-wise error rate, after Holm
TOLERANCE = 0.03      # a change of the median smaller than this is no change


def finite(x):
    """x where it is a finite number, else None: JSON has no infinity (a
    file's 1e999 reads as one)."""
    number = isinstance(x, (int, float)) and not isinstance(x, bool)
    return x if number and math.isfinite(x) else None


def side(row, phase):
    """What `portalab verdicts` reads of one side of a pair: a side run
    several times gives every run's repetitions together, and each run's
    median apart; one run, each of its passes' medians."""
    runs = row.get("runs") or [row]
    times = [r.get("repetitions") for r in runs]
    times = [t.get(f"{phase}_ms") if isinstance(t, dict) else None for t in times]
    medians = [finite(r.get(f"{phase}_ms")) for r in runs]
    if len(runs) == 1:
        # One run in passes (AdaptiveReps::passes): each pass's median, as
        # portalab took it, stands for a run.
        reps = row.get("repetitions")
        passes = reps.get(f"pass_{phase}_ms") if isinstance(reps, dict) else None
        if isinstance(passes, list) and len(passes) > 1:
            medians = [finite(x) for x in passes]
    return {"check": row["check"], "ms": finite(row.get(f"{phase}_ms")),
            "min_ms": finite(row.get(f"{phase}_min_ms")),
            "max_ms": finite(row.get(f"{phase}_max_ms")),
            "std_ms": finite(row.get(f"{phase}_std_ms")), "reps": finite(row.get("reps")),
            "repetitions": ([finite(x) for t in times for x in t]
                            if all(isinstance(t, list) for t in times) else None),
            "runs": medians if len(medians) > 1 and None not in medians else None}


def repeated(rows):
    """One row standing for an entry's rows from several runs of one side:
    its check the first that did not pass, each phase's median the median
    of the runs' medians, its least and most theirs; the runs kept under
    "runs" for side()."""
    if len(rows) == 1:
        return rows[0]
    out = dict(rows[0], runs=rows)
    out["check"] = next((r["check"] for r in rows if r["check"] != "PASS"), "PASS")
    for phase in pr.PHASES:
        medians = [finite(r.get(f"{phase}_ms")) for r in rows]
        lows = [finite(r.get(f"{phase}_min_ms")) for r in rows]
        highs = [finite(r.get(f"{phase}_max_ms")) for r in rows]
        out[f"{phase}_ms"] = None if None in medians else statistics.median(medians)
        out[f"{phase}_min_ms"] = None if None in lows else min(lows)
        out[f"{phase}_max_ms"] = None if None in highs else max(highs)
        out[f"{phase}_std_ms"] = None  # of the runs apart: "runs" holds them
    reps = [finite(r.get("reps")) for r in rows]
    out["reps"] = None if None in reps else sum(reps)
    return out


def medians(pairs, phase):
    """(base ms, new ms) of the entries that passed in both: the run-to-run
    noise of the older rule is measured on them."""
    return [(finite(b[f"{phase}_ms"]), finite(n[f"{phase}_ms"])) for b, n in pairs
            if b["check"] == "PASS" and n["check"] == "PASS"
            and finite(b[f"{phase}_ms"]) is not None and finite(n[f"{phase}_ms"]) is not None]


def judge(pairs, phase, settings, noise_pairs, portalab=None):
    """`portalab verdicts` on the pairs (base row, new row): its answer,
    {"verdicts": [{verdict, change, p, p_adjusted, rule}], "noise", ...}."""
    request = {**settings, "noise_pairs": medians(noise_pairs, phase),
               "pairs": [{"base": side(b, phase), "new": side(n, phase)} for b, n in pairs]}
    binary = find_portalab(portalab, "no portalab binary to judge the rows")
    data = json.dumps(request, allow_nan=False).encode()
    status, stdout, said = run(binary, ["verdicts"], stdin=data)
    try:
        answer = json.loads(stdout.decode("utf-8")) if status == 0 else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        answer = None
    if not isinstance(answer, dict) or len(answer.get("verdicts", ())) != len(pairs):
        pr.fail(f"{text.shown(binary)} verdicts failed (exit status {status})"
                + (f": {text.shown(said, 1000)}" if said else ""))
    return answer


def describe_noise(noise):
    parts = [f"{10.0 ** int(d):g}-{10.0 ** (int(d) + 1):g} ms: {s:.1%}"
             for d, s in sorted(noise["by_decade"].items(), key=lambda kv: int(kv[0]))]
    parts.append(f"pooled ({noise['pairs']} entries): {noise['pooled']:.1%}")
    return "; ".join(parts) + f"; floor {noise['floor']:.1%}"


def index(rows, side):
    """The rows of one side by entry. Rows of one entry from several runs
    of one machine are that side run several times (repeated()); from
    several machines, or twice in one run, they are refused."""
    groups = {}
    for r in rows:
        k = pr.key_of(r, pr.ENTRY_KEY)
        group = groups.setdefault(k, [])
        other = next((o for o in group if o["source"] == r["source"]
                      or (o["hostname"], o["device"]) != (r["hostname"], r["device"])), None)
        if other is not None:
            pr.fail(f"{side} has two rows for {' '.join(text.shown(v) for v in k)} "
                    f"({text.shown(other['source'])}, {text.shown(r['source'])}) "
                    f"{'in one run' if other['source'] == r['source'] else 'from two machines'}: "
                    f"pick one with --host/--device or give one machine's runs")
        group.append(r)
    return {k: repeated(group) for k, group in groups.items()}


def pick(rows, host, device):
    return [r for r in rows if (host is None or r["hostname"] == host)
            and (device is None or device in r["device"])]


def pairs_of(base_rows, new_rows):
    base, new = index(base_rows, "BASE"), index(new_rows, "NEW")
    return [(base[k], new[k]) for k in base if k in new]


def compare(base_rows, new_rows, phase, threshold, settings=None, noise_rows=None, portalab=None):
    """Table rows, whether any is a regression, and portalab's answer.
    noise_rows: the (BASE, NEW) rows whose pairs measure the older rule's
    run-to-run noise; by default these two sides."""
    base, new = index(base_rows, "BASE"), index(new_rows, "NEW")
    n_at = pr.ENTRY_KEY.index("n")
    keys = sorted(set(base) | set(new),
                  key=lambda k: tuple(v if i == n_at else str(v) for i, v in enumerate(k)))
    both = [k for k in keys if k in base and k in new]
    answer = judge([(base[k], new[k]) for k in both], phase, settings or {},
                   pairs_of(*noise_rows) if noise_rows else [(base[k], new[k]) for k in both],
                   portalab)
    verdicts = dict(zip(both, answer["verdicts"]))
    table, regression = [], False
    for k in keys:
        b, n = base.get(k), new.get(k)
        if b is None or n is None:
            r = b or n
            table.append((k, r, None, "only in " + ("BASE" if b else "NEW"), None, False, None))
            continue
        verdict, change = verdicts[k]["verdict"], verdicts[k]["change"]
        needed = verdicts[k].get("min_change") if verdicts[k]["rule"] == "test" else None
        # slower past a double's range (or from 0 ms, not measured): no percentage, beyond any threshold
        regressed = verdict == "broken" or (
            verdict == "slower" and (change is None or change * 100 > threshold))
        regression |= regressed
        table.append((k, b, n, verdict, change, regressed, needed))
    return table, regression, answer


def fmt_ms(r, phase):
    if r is None or r["check"] not in ("PASS", "FAIL"):
        return "-"
    ms, lo, hi = (r[f"{phase}{s}"] for s in ("_ms", "_min_ms", "_max_ms"))
    text = "-" if ms is None else f"{ms:.4g}"
    return text if lo is None or hi is None else f"{text} [{lo:.4g}, {hi:.4g}]"


def render(table, phase, markdown):
    head = [*pr.ENTRY_KEY, f"BASE {phase} ms [min, max]", f"NEW {phase} ms [min, max]", "change",
            "needed", "verdict"]
    lines = []
    for k, b, n, verdict, change, regressed, needed in table:
        # Names as portalab's messages show them: quoted, cut past 200 bytes.
        cells = [*map(text.shown, k), fmt_ms(b, phase), fmt_ms(n, phase),
                 f"{change:+.1%}" if change is not None else "",
                 f"{needed:.1%}" if needed is not None else "",
                 verdict + (" REGRESSION" if regressed else "")]
        lines.append(cells)
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in lines]
    else:
        widths = [max(len(row[i]) for row in [head] + lines) for i in range(len(head))]
        out = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
               for row in [head] + lines]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("base", help="results.json or a folder holding one run or several: the "
                                 "reference")
    ap.add_argument("new", help="results.json or a folder holding one run or several: the "
                                "candidate")
    ap.add_argument("--phase", choices=pr.PHASES, default="total")
    ap.add_argument("--threshold", type=pr.finite_number, default=10.0,
                    help="percent slower (median) that is a regression (default 10)")
    ap.add_argument("--host", help="only rows of this host name (both sides)")
    ap.add_argument("--device", help="only rows whose device name contains this (both sides)")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    ap.add_argument("--alpha", type=pr.finite_number, default=ALPHA,
                    help=f"the U test's level, after Holm's correction (default {ALPHA:g})")
    ap.add_argument("--tolerance", type=pr.finite_number, default=100 * TOLERANCE,
                    help=f"percent change of the median that is no change (default "
                         f"{100 * TOLERANCE:g})")
    ap.add_argument("--sigmas", type=pr.finite_number, default=SIGMAS,
                    help=f"older files: run-to-run noise deviations a change must exceed "
                         f"(default {SIGMAS:g})")
    ap.add_argument("--min-noise", type=pr.finite_number, default=100 * MIN_NOISE,
                    help=f"older files: floor of the run-to-run noise, percent (default "
                         f"{100 * MIN_NOISE:g})")
    ap.add_argument("--noise-from", nargs=2, metavar=("RUN_A", "RUN_B"),
                    help="older files: measure the run-to-run noise on these two runs of one "
                         "build instead of on BASE and NEW")
    ap.add_argument("--portalab", help="the portalab binary that judges (default: $PORTALAB, "
                                       "the installed one, the source tree's host build)")
    args = ap.parse_args(argv)
    if args.sigmas <= 0 or args.min_noise < 0:
        pr.fail("--sigmas must be > 0 and --min-noise >= 0")
    if not 0 < args.alpha < 1 or args.tolerance < 0:
        pr.fail("--alpha must lie between 0 and 1, and --tolerance be >= 0")
    try:
        sides = [pr.load_runs([p]) for p in (args.base, args.new, *(args.noise_from or ()))]
    except pr.ResultsError as e:
        pr.fail(str(e))
    base, new, *alike = [pick([r for _, _, rs in runs for r in rs], args.host, args.device)
                         for runs in sides]
    if not base or not new:
        pr.fail_without_rows(f"{text.shown(args.base if not base else args.new)}: no rows to "
                             f"compare (check --host/--device)", sides[0 if not base else 1])
    for runs in sides:
        pr.tell_incomplete(runs)
    settings = {"alpha": args.alpha, "tolerance": args.tolerance / 100, "sigmas": args.sigmas,
                "min_noise": args.min_noise / 100}
    table, regression, answer = compare(base, new, args.phase, args.threshold, settings,
                                        alike if args.noise_from else None, args.portalab)
    sys.stdout.write(render(table, args.phase, args.markdown))
    counts = {}
    for row in table:
        counts[row[3]] = counts.get(row[3], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    rules = [v["rule"] for v in answer["verdicts"]]
    if "test" in rules:
        print(f"compare: {rules.count('test')} entries by the U test on their repetitions "
              f"(alpha {args.alpha:g} after Holm's correction); each changed past its "
              f"'needed': the tolerance ({args.tolerance:g}%) or {args.sigmas:g} deviations of "
              f"the run-to-run noise, the larger", file=sys.stderr)
    runs = [max(len(b.get("runs") or [b]), len(n.get("runs") or [n]))
            for _, b, n, *_ in table if b is not None and n is not None]
    if any(r > 1 for r in runs):
        print(f"compare: {sum(r > 1 for r in runs)} entries of sides run up to {max(runs)} "
              f"times: a change must also exceed {args.sigmas:g} deviations of their runs' "
              f"spread", file=sys.stderr)
    if "spread" in rules:
        print(f"compare: {rules.count('spread')} entries without repetitions by the run-to-run "
              f"noise of {args.phase} (robust std of log ratios"
              f"{', from --noise-from' if args.noise_from else ''}): "
              f"{describe_noise(answer['noise'])}; a change must exceed {args.sigmas:g} of it "
              f"and the repetitions' spread", file=sys.stderr)
    if answer.get("shift") is not None:
        print(f"compare: NEW against BASE as a whole: {answer['shift']:+.1%} (the median change "
              f"of the {answer['shift_pairs']} entries that passed in both)", file=sys.stderr)
    within = answer["noise"].get("within")
    if within and within["capped"]:
        print(f"compare: the two sides differ by more than repeats of one build do: for "
              f"{within['capped']} entries the run-to-run noise is held to {within['ratio']:g} "
              f"times the spread of each side's own passes or runs ({within['pooled']:.1%})",
              file=sys.stderr)
    print(f"compare: {summary}; "
          f"{'REGRESSION' if regression else 'no regression'} "
          f"(threshold {args.threshold:g}% on {args.phase})", file=sys.stderr)
    return 1 if regression else 0


if __name__ == "__main__":
    sys.exit(main())
