"""One HTML page of portalab results that answers the labs' questions with
the run's own numbers, in sentences and figures, with nothing outside it.

For one run, or several (a job's decks, a sweep), per experiment and type:
when the GPU pays (the crossover size with pageable copies, pinned copies and
none, or that it never pays in the sizes run, or that no GPU ran), what copies
cost, what fusion gains, what float64 costs against float32, what the first
(cold) call costs, how close each space runs to its calibrated limits
(roofline), which library served each call on how many threads; streams and
instances against serial and perfect overlap; several ranks: efficiency
against one rank, link bandwidth against its limits, the size from which k
ranks pay; seed 004's four reasons a GPU function is slow, each answered from
the rows; with --base, compare.py's verdicts. Provenance, entries that did not
pass and noise warnings (UNSTEADY limits, spreads wider than the median) are
on the page, and energy where the run measured it (joules per repetition, power,
clocks, THROTTLED rows, the crossover in joules). Figures are inline SVG, each with its numbers in a table and alt
text; styles are inline; the page prints on paper.

    scripts/report.py results/default                  # -> report.html
    scripts/report.py results/1234 --out 1234.html     # every deck of a job
    scripts/report.py results/new --base results/old   # with compare.py's verdicts

A missing, truncated or foreign results file exits 2 with one line. Needs
matplotlib and jinja2 (Debian: python3-matplotlib python3-jinja2).
"""
import argparse

from portalab import results as pr
from portalab import text
from portalab.report import figures
from portalab.report.blocks import join
from portalab.report.page import build, render

JINJA2_NEEDED = ("needs jinja2 to write the page: install it (Debian/Ubuntu: apt-get install "
                 "python3-jinja2; pip: python3 -m pip install jinja2) or load a module that "
                 "has it.")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("paths", nargs="*", metavar="RESULTS",
                    help="results.json files or folders holding them (a run, a job, a sweep)")
    ap.add_argument("--out", default="report.html", help="the page (default report.html)")
    ap.add_argument("--base", action="append", metavar="RESULTS",
                    help="a run to compare with (compare.py's verdicts as a section); repeatable")
    ap.add_argument("--phase", choices=pr.PHASES, default="total",
                    help="the phase --base compares (default total)")
    ap.add_argument("--threshold", type=pr.finite_number, default=10.0,
                    help="percent slower that is a regression against --base (default 10)")
    ap.add_argument("--db", metavar="FILE",
                    help="the results store (portalab db): its history and fleet sections; "
                         "alone, a page of the store")
    ap.add_argument("--portalab", metavar="BIN",
                    help="the portalab that reads --db (default: $PORTALAB, the installed one "
                         "beside these scripts, build/host, or PATH)")
    args = ap.parse_args(argv)
    if not args.paths and args.db is None:
        pr.fail("nothing to report: give RESULTS, or --db FILE")
    figures.plt = pr.require_matplotlib()
    try:
        import jinja2  # noqa: F401
    except ImportError:
        pr.fail(JINJA2_NEEDED)
    store = None
    if args.db is not None:
        from portalab import store_report
        store = store_report.query_store(args.db, args.portalab)
    try:
        runs = pr.load_runs(args.paths) if args.paths else []
    except pr.ResultsError as e:
        pr.fail(str(e))
    if args.paths and not any(rows for _, _, rows in runs):
        pr.fail(f"{join(map(text.shown, args.paths))}: no entries in the results: nothing to report")
    figures.plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "portalab",
                         "font.family": "sans-serif"})
    page = render(build(runs, args.base, args.phase, args.threshold, store))
    pr.save(args.out, page)
    print(text.shown(args.out, text.PATH_MAX_BYTES))
    return 0
