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
