#!/usr/bin/env python3
"""Two sets of portalab results side by side, entry by entry (space,
experiment, variant, type, size, copy mode), on one phase's time.

A difference is called "faster" or "slower" only when the repetitions do not
overlap: every repetition of one side took less time than every repetition of
the other (new max < base min, or new min > base max). Anything else is
"same": the change is within the spread of the repetitions. A check that
passed in BASE and does not in NEW is "broken".

    scripts/compare.py results/1234 results/1301 --threshold 5
    scripts/compare.py old/results.json new/results.json --phase kernel --markdown

Exit status: 0 no regression; 1 a regression: an entry "slower" by more than
--threshold percent (median against median), or "broken"; 2 bad input.
Entries on one side only are listed and do not count. Each side must hold one
row per entry: compare one machine's runs with another's, or give --host and
--device to pick one when a side mixes machines.
"""
import argparse
import sys

import portalab_results as pr


def classify(base, new, phase):
    """(verdict, relative change of the median) of one entry."""
    if base["check"] == "PASS" and new["check"] != "PASS":
        return "broken", None
    if base["check"] != "PASS" or new["check"] != "PASS":
        return new["check"].lower(), None
    b, n = base[f"{phase}_ms"], new[f"{phase}_ms"]
    change = (n - b) / b if b > 0 else None
    if new[f"{phase}_max_ms"] < base[f"{phase}_min_ms"]:
        return "faster", change
    if new[f"{phase}_min_ms"] > base[f"{phase}_max_ms"]:
        return "slower", change
    return "same", change


def index(rows, side):
    out = {}
    for r in rows:
        k = pr.key_of(r, pr.ENTRY_KEY)
        if k in out:
            pr.fail(f"{side} has two rows for {' '.join(map(str, k))} "
                    f"({out[k]['source']}, {r['source']}): pick one with --host/--device "
                    f"or give one run")
        out[k] = r
    return out


def pick(rows, host, device):
    return [r for r in rows if (host is None or r["hostname"] == host)
            and (device is None or device in r["device"])]


def compare(base_rows, new_rows, phase, threshold):
    """Table rows and whether any is a regression."""
    base, new = index(base_rows, "BASE"), index(new_rows, "NEW")
    table, regression = [], False
    n_at = pr.ENTRY_KEY.index("n")
    for k in sorted(set(base) | set(new),
                    key=lambda k: tuple(v if i == n_at else str(v) for i, v in enumerate(k))):
        b, n = base.get(k), new.get(k)
        if b is None or n is None:
            r = b or n
            table.append((k, r, None, "only in " + ("BASE" if b else "NEW"), None, False))
            continue
        verdict, change = classify(b, n, phase)
        regressed = verdict == "broken" or (
            verdict == "slower" and change is not None and change * 100 > threshold)
        regression |= regressed
        table.append((k, b, n, verdict, change, regressed))
    return table, regression


def fmt_ms(r, phase):
    if r is None or r["check"] not in ("PASS", "FAIL"):
        return "-"
    return f"{r[f'{phase}_ms']:.4g} [{r[f'{phase}_min_ms']:.4g}, {r[f'{phase}_max_ms']:.4g}]"


def render(table, phase, markdown):
    head = ["space", "experiment", "variant", "dtype", "n", "copies",
            f"BASE {phase} ms [min, max]", f"NEW {phase} ms [min, max]", "change", "verdict"]
    lines = []
    for k, b, n, verdict, change, regressed in table:
        cells = [*map(str, k), fmt_ms(b, phase), fmt_ms(n, phase),
                 f"{change:+.1%}" if change is not None else "",
                 verdict + (" REGRESSION" if regressed else "")]
        lines.append(cells)
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c) + " |" for c in lines]
    else:
        widths = [max(len(row[i]) for row in [head] + lines) for i in range(len(head))]
        out = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
               for row in [head] + lines]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("base", help="results.json or a folder holding them: the reference")
    ap.add_argument("new", help="results.json or a folder holding them: the candidate")
    ap.add_argument("--phase", choices=pr.PHASES, default="total")
    ap.add_argument("--threshold", type=float, default=10.0,
                    help="percent slower (median) that is a regression (default 10)")
    ap.add_argument("--host", help="only rows of this host name (both sides)")
    ap.add_argument("--device", help="only rows whose device name contains this (both sides)")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = ap.parse_args(argv)
    try:
        base = pick(pr.load([args.base]), args.host, args.device)
        new = pick(pr.load([args.new]), args.host, args.device)
    except pr.ResultsError as e:
        pr.fail(str(e))
    if not base or not new:
        pr.fail("nothing to compare: a side has no rows (check --host/--device)")
    table, regression = compare(base, new, args.phase, args.threshold)
    sys.stdout.write(render(table, args.phase, args.markdown))
    counts = {}
    for row in table:
        counts[row[3]] = counts.get(row[3], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(f"compare: {summary}; "
          f"{'REGRESSION' if regression else 'no regression'} "
          f"(threshold {args.threshold:g}% on {args.phase})", file=sys.stderr)
    return 1 if regression else 0


if __name__ == "__main__":
    sys.exit(main())
