#!/usr/bin/env python3
"""Two sets of portalab results side by side, entry by entry (space,
experiment, variant, type, size, copy mode), on one phase's time.

A difference is called "faster" or "slower" only when it stands out of
both kinds of noise:

- within a run: the repetitions do not overlap (new max < base min, or
  new min > base max), and
- between runs: the change of the median, as a log ratio, exceeds --sigmas
  (default 4) times the run-to-run noise of entries of its size. Two runs of
  one deck on one machine differ by more than their repetitions' spread
  (clocks, thread placement, page placement, other jobs), and the shorter an
  entry the more. That noise is measured, not assumed: the robust standard
  deviation (1.4826 x the median absolute deviation) of the log ratios of
  every entry that passed in both, per decade of the BASE time (<0.01 ms,
  0.01-0.1 ms, ...: bounds, not measured; a decade of fewer than 12 takes the
  nearest measured),
  combined with each side's own standard error of the median
  (1.25 std / sqrt(reps)). A shift of every entry alike (a slower machine)
  leaves that spread small and is reported; when more than about half the
  entries of a decade changed, that decade's noise grows with them: give
  --noise-from with two runs known to be alike (the same build, back to
  back) to measure the noise there instead. --min-noise (default 1%) is its
  floor.

Anything else is "same". A check that passed in BASE and does not in NEW is
"broken".

    scripts/compare.py results/1234 results/1301 --threshold 5
    scripts/compare.py old/results.json new/results.json --phase kernel --markdown
    scripts/compare.py base new --noise-from base base-again

Exit status: 0 no regression; 1 a regression: an entry "slower" by more than
--threshold percent (median against median), or "broken"; 2 bad input.
Entries on one side only are listed and do not count. A run that did not
finish, or was interrupted, is named on stderr. Names are shown as
portalab's messages show them (control characters as \\xNN, cut past 200
bytes). Each side must hold one
row per entry: compare one machine's runs with another's, or give --host and
--device to pick one when a side mixes machines.
"""
import argparse
import math
import statistics
import sys

from portalab import results as pr
from portalab import text

SIGMAS = 4.0          # a change beyond this many noise deviations stands out
MIN_GROUP = 12        # entries a decade needs for a noise estimate of its own
MIN_NOISE = 0.01      # floor of the run-to-run noise (relative)


def median_se(row, phase):
    """Relative standard error of the row's median, from its repetitions."""
    std, med, reps = row.get(f"{phase}_std_ms"), row.get(f"{phase}_ms"), row.get("reps")
    if not std or not med or not reps or med <= 0:
        return 0.0
    return 1.2533 * std / med / math.sqrt(reps)


def decade(ms):
    return math.floor(math.log10(ms)) if ms > 0 else None


def robust_sigma(xs):
    med = statistics.median(xs)
    return 1.4826 * statistics.median(abs(x - med) for x in xs)


class Noise:
    """Run-to-run noise of one phase, as a relative (log) deviation, per
    decade of the entry's BASE time, measured on pairs of rows of one entry."""

    def __init__(self, pairs, phase, floor=MIN_NOISE):
        self.floor = floor
        by_decade, every = {}, []
        for b, n in pairs:
            if b["check"] != "PASS" or n["check"] != "PASS":
                continue
            bt, nt = b[f"{phase}_ms"], n[f"{phase}_ms"]
            if not bt or not nt or bt <= 0 or nt <= 0:
                continue
            if not 0 < nt / bt < math.inf:
                continue  # a ratio past a double's range: no measure of noise
            x = math.log(nt / bt)
            every.append(x)
            by_decade.setdefault(decade(bt), []).append(x)
        self.pooled = robust_sigma(every) if len(every) >= 2 else 0.0
        self.count = len(every)
        self.by_decade = {d: robust_sigma(xs) for d, xs in by_decade.items()
                          if len(xs) >= MIN_GROUP}

    def sigma(self, base_ms):
        """The noise of the entry's decade; for a decade of too few entries,
        the nearest decade measured (the larger of two as near), else all."""
        d = decade(base_ms)
        if d in self.by_decade or not self.by_decade or d is None:
            return max(self.floor, self.by_decade.get(d, self.pooled))
        near = min(abs(k - d) for k in self.by_decade)
        return max(self.floor, max(s for k, s in self.by_decade.items() if abs(k - d) == near))

    def describe(self):
        parts = [f"{10.0 ** d:g}-{10.0 ** (d + 1):g} ms: {s:.1%}"
                 for d, s in sorted(self.by_decade.items())]
        parts.append(f"pooled ({self.count} entries): {self.pooled:.1%}")
        return "; ".join(parts) + f"; floor {self.floor:.1%}"


def classify(base, new, phase, noise=None, sigmas=SIGMAS):
    """(verdict, relative change of the median) of one entry. Without noise,
    the repetitions' spread alone decides."""
    if base["check"] == "PASS" and new["check"] != "PASS":
        return "broken", None
    if base["check"] != "PASS" or new["check"] != "PASS":
        return new["check"].lower(), None
    b, n = base[f"{phase}_ms"], new[f"{phase}_ms"]
    change = (n - b) / b if b > 0 else None
    if change is not None and not math.isfinite(change):
        change = None  # past a double's range: no percentage to show
    ranges = [r[f"{phase}_{s}"] for r in (base, new) for s in ("min_ms", "max_ms")]
    if None in ranges:  # repetitions not recorded: the medians and the noise decide
        ranges = [b, b, n, n]
    if ranges[3] < ranges[0]:
        verdict = "faster"
    elif ranges[2] > ranges[1]:
        verdict = "slower"
    else:
        return "same", change
    if noise is not None and b > 0 and n > 0 and 0 < n / b < math.inf:
        spread = math.sqrt(noise.sigma(b) ** 2 + median_se(base, phase) ** 2
                           + median_se(new, phase) ** 2)
        if abs(math.log(n / b)) <= sigmas * spread:
            return "same", change
    return verdict, change


def index(rows, side):
    out = {}
    for r in rows:
        k = pr.key_of(r, pr.ENTRY_KEY)
        if k in out:
            pr.fail(f"{side} has two rows for {' '.join(text.shown(v) for v in k)} "
                    f"({text.shown(out[k]['source'])}, {text.shown(r['source'])}): pick one with "
                    f"--host/--device "
                    f"or give one run")
        out[k] = r
    return out


def pick(rows, host, device):
    return [r for r in rows if (host is None or r["hostname"] == host)
            and (device is None or device in r["device"])]


def pairs_of(base_rows, new_rows):
    base, new = index(base_rows, "BASE"), index(new_rows, "NEW")
    return [(base[k], new[k]) for k in base if k in new]


def compare(base_rows, new_rows, phase, threshold, noise=None, sigmas=SIGMAS):
    """Table rows and whether any is a regression. noise: a Noise; by
    default measured on these two sides."""
    base, new = index(base_rows, "BASE"), index(new_rows, "NEW")
    if noise is None:
        noise = Noise(pairs_of(base_rows, new_rows), phase)
    table, regression = [], False
    n_at = pr.ENTRY_KEY.index("n")
    for k in sorted(set(base) | set(new),
                    key=lambda k: tuple(v if i == n_at else str(v) for i, v in enumerate(k))):
        b, n = base.get(k), new.get(k)
        if b is None or n is None:
            r = b or n
            table.append((k, r, None, "only in " + ("BASE" if b else "NEW"), None, False))
            continue
        verdict, change = classify(b, n, phase, noise, sigmas)
        # slower past a double's range (or from 0 ms, not measured): no percentage, beyond any threshold
        regressed = verdict == "broken" or (
            verdict == "slower" and (change is None or change * 100 > threshold))
        regression |= regressed
        table.append((k, b, n, verdict, change, regressed))
    return table, regression


def fmt_ms(r, phase):
    if r is None or r["check"] not in ("PASS", "FAIL"):
        return "-"
    ms, lo, hi = (r[f"{phase}{s}"] for s in ("_ms", "_min_ms", "_max_ms"))
    text = "-" if ms is None else f"{ms:.4g}"
    return text if lo is None or hi is None else f"{text} [{lo:.4g}, {hi:.4g}]"


def render(table, phase, markdown):
    head = [*pr.ENTRY_KEY, f"BASE {phase} ms [min, max]", f"NEW {phase} ms [min, max]", "change", "verdict"]
    lines = []
    for k, b, n, verdict, change, regressed in table:
        # Names as portalab's messages show them: quoted, cut past 200 bytes.
        cells = [*map(text.shown, k), fmt_ms(b, phase), fmt_ms(n, phase),
                 f"{change:+.1%}" if change is not None else "",
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
    ap.add_argument("base", help="results.json or a folder holding them: the reference")
    ap.add_argument("new", help="results.json or a folder holding them: the candidate")
    ap.add_argument("--phase", choices=pr.PHASES, default="total")
    ap.add_argument("--threshold", type=pr.finite_number, default=10.0,
                    help="percent slower (median) that is a regression (default 10)")
    ap.add_argument("--host", help="only rows of this host name (both sides)")
    ap.add_argument("--device", help="only rows whose device name contains this (both sides)")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    ap.add_argument("--sigmas", type=pr.finite_number, default=SIGMAS,
                    help=f"run-to-run noise deviations a change must exceed (default {SIGMAS:g})")
    ap.add_argument("--min-noise", type=pr.finite_number, default=100 * MIN_NOISE,
                    help=f"floor of the run-to-run noise, percent (default {100 * MIN_NOISE:g})")
    ap.add_argument("--noise-from", nargs=2, metavar=("RUN_A", "RUN_B"),
                    help="measure the run-to-run noise on these two runs of one build "
                         "instead of on BASE and NEW")
    args = ap.parse_args(argv)
    if args.sigmas <= 0 or args.min_noise < 0:
        pr.fail("--sigmas must be > 0 and --min-noise >= 0")
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
    noise = Noise(pairs_of(*alike) if args.noise_from else pairs_of(base, new), args.phase,
                  args.min_noise / 100)
    table, regression = compare(base, new, args.phase, args.threshold, noise, args.sigmas)
    sys.stdout.write(render(table, args.phase, args.markdown))
    counts = {}
    for row in table:
        counts[row[3]] = counts.get(row[3], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(f"compare: run-to-run noise of {args.phase} (robust std of log ratios"
          f"{', from --noise-from' if args.noise_from else ''}): {noise.describe()}; "
          f"a change must exceed {args.sigmas:g} of it and the repetitions' spread",
          file=sys.stderr)
    print(f"compare: {summary}; "
          f"{'REGRESSION' if regression else 'no regression'} "
          f"(threshold {args.threshold:g}% on {args.phase})", file=sys.stderr)
    return 1 if regression else 0


if __name__ == "__main__":
    sys.exit(main())
