#!/usr/bin/env python3
"""Merge the results.json of many portalab runs (jobs, nodes, decks) into one
table keyed by machine (host name and device), space, experiment, variant,
type, size and copy mode: a CSV with every field and a Markdown summary.

    scripts/collect.py results/ --csv all.csv --md all.md
    scripts/collect.py results/1234 results/1235/default/results.json --latest

Folders are searched for results.json. A key measured by several runs keeps
one row per run (the run columns tell them apart) unless --latest keeps only
the most recent. With neither --csv nor --md the Markdown goes to stdout. A run that did
not finish, or was interrupted, is named on stderr (its completed rows are
read). The Markdown shows each name as portalab's messages do (control
characters as \\xNN, cut past 200 bytes); the CSV keeps every field whole.
"""
import argparse
import csv
import io
import sys

from portalab import results as pr
from portalab import text

# Every field of a row, in this order; fields a newer portalab adds follow.
CSV_FIELDS = list(pr.KEY) + [
    "check", "reps", "warmups",
    *[f"{p}_ms" for p in pr.PHASES],
    *[f"{p}_{s}" for p in pr.PHASES for s in pr.STATS],
    "cold_ms", "first_in_process", "copies_alias", "bytes", "flops", "gbps", "gflops",
    "speedup_over_baseline", "baseline", "rel_error", "tolerance", "note", *pr.RUN_FIELDS]


def merge(rows, latest=False):
    """Rows sorted by key; with latest, only the newest run of each key."""
    if latest:
        rows = pr.newest_per_key(rows)
    return sorted(rows, key=lambda r: (pr.sort_key(r), r["started_at"]))


def csv_value(v):
    # As portalab's own results.csv writes them.
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return v


def write_csv(rows, out):
    extra = sorted({k for r in rows for k in r} - set(CSV_FIELDS))
    w = csv.DictWriter(out, fieldnames=CSV_FIELDS + extra, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: csv_value(v) for k, v in r.items()})


def fmt(v, spec=".4g"):
    return "" if v is None or v == "" else format(v, spec)


def markdown(rows):
    head = ["machine", "device", "space", "experiment", "variant", "dtype", "n", "copies",
            "total ms", "± std", "kernel ms", "× baseline", "GB/s", "GFLOP/s", "check", "job"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ok = r["check"] in ("PASS", "FAIL")  # skipped and errored rows have no times
        cells = [r["hostname"], r["device"], r["space"], r["experiment"], r["variant"],
                 r["dtype"], str(r["n"]), r["copies"],
                 fmt(r["total_ms"]) if ok else "", fmt(r["total_std_ms"], ".2g") if ok else "",
                 fmt(r["kernel_ms"]) if ok else "",
                 fmt(r["speedup_over_baseline"], ".2f") + "x" if r.get("speedup_over_baseline")
                 else "",
                 fmt(r["gbps"]) if ok else "", fmt(r["gflops"]) if ok else "",
                 r["check"], r["job_id"]]
        # Each name quoted and cut as portalab's messages show it (the CSV
        # keeps every field whole).
        lines.append("| " + " | ".join(text.shown(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="results.json files or folders holding them")
    ap.add_argument("--csv", help="write every field of every row here")
    ap.add_argument("--md", help="write the Markdown table here")
    ap.add_argument("--latest", action="store_true",
                    help="keep only the newest run of each key")
    args = ap.parse_args(argv)
    try:
        runs = pr.load_runs(args.paths)
    except pr.ResultsError as e:
        pr.fail(str(e))
    pr.tell_incomplete(runs)
    rows = merge([r for _, _, rs in runs for r in rs], args.latest)
    if args.csv:
        out = io.StringIO(newline="")
        write_csv(rows, out)
        pr.save(args.csv, out.getvalue())
    if args.md:
        pr.save(args.md, markdown(rows))
    if not args.csv and not args.md:
        sys.stdout.write(markdown(rows))
    machines = {pr.key_of(r, pr.MACHINE_KEY) for r in rows}
    print(f"collect: {len(rows)} rows from {len({r['source'] for r in rows})} files, "
          f"{len(machines)} machine/device pairs", file=sys.stderr)


if __name__ == "__main__":
    main()
