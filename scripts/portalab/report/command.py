"""`python3 -m portalab.report` and scripts/report.py: the arguments, the
runs and the store read, the page written (the package's docstring is the
command's help)."""
import argparse

from portalab import report
from portalab import results as pr
from portalab import text
from portalab.report import figures, store as store_sections
from portalab.report.blocks import join
from portalab.report.page import build, render

JINJA2_NEEDED = ("needs jinja2 to write the page: install it (Debian/Ubuntu: apt-get install "
                 "python3-jinja2; pip: python3 -m pip install jinja2) or load a module that "
                 "has it.")


def main(argv=None):
    ap = argparse.ArgumentParser(description=report.__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=report.__doc__.split("\n\n", 1)[1])
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
                    help="the portalab that reads --db and judges against --base (default: "
                         "$PORTALAB, the installed one beside these scripts, build/host, or PATH)")
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
        store = store_sections.query_store(args.db, args.portalab)
    try:
        runs = pr.load_runs(args.paths) if args.paths else []
    except pr.ResultsError as e:
        pr.fail(str(e))
    if args.paths and not any(rows for _, _, rows in runs):
        pr.fail(f"{join(map(text.shown, args.paths))}: no entries in the results: nothing to report")
    figures.plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "portalab",
                         "font.family": "sans-serif"})
    page = render(build(runs, args.base, args.phase, args.threshold, store, args.portalab))
    pr.save(args.out, page)
    print(text.shown(args.out, text.PATH_MAX_BYTES))
    return 0
