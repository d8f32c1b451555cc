"""Tests of scripts/report.py: the run's summary as the scripts read it
(portalab computes it, the scripts never again: a real run's summary
against this test's own computation from its rows), its reading of the rows
(host copy modes, SVG ids) on hand-made rows, bad inputs and files without
a summary, and the page of a real host run (and of it with a made-up GPU,
and against a slowed copy) loaded in headless Chromium.

    PORTALAB=build/host/portalab CHROMIUM=/usr/bin/chromium \
        python3 tests/scripts/test_report.py [TestClass...]

Exits 77 (ctest's skip code here) when matplotlib or jinja2 is missing, or
BrowserTest is asked for without Chromium.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The script tests' paths (scripts/ on sys.path) and runner.
from test_scripts import SCRIPTS, SKIP, SOURCE, script  # noqa: E402

from portalab import results as pr  # noqa: E402
import synthetic  # noqa: E402

DECK = os.path.join(SOURCE, "tests", "decks", "report.toml")


def report(*args):
    """Runs scripts/report.py with this Python; returns (exit code, stdout, stderr)."""
    return script("report.py", *args)


def row(space, n, total, copies="none", kernel=None, check="PASS", variant="fused",
        dtype="float32", experiment="vector_poly", host="h"):
    return {"hostname": host, "space": space, "experiment": experiment, "variant": variant,
            "dtype": dtype, "n": n, "copies": copies, "ranks": 1, "parameters": {},
            "check": check, "total_ms": total, "kernel_ms": total if kernel is None else kernel}


def summary_doc(path, host, started, commit="0123456789abcdef", **summary):
    """A document as pr.analysis reads it: provenance and a summary."""
    return (path, {"schema_version": pr.SCHEMA_VERSION, "summary": summary,
                   "provenance": {"host": {"hostname": host}, "started_at": started,
                                  "portalab": {"git_commit": commit}}}, [])


def crossover(device, smallest_n, sizes=(10, 100), **key):
    pays = {"measured": True, "smallest_n": smallest_n, "holds_above": smallest_n is not None}
    return {"experiment": "vector_poly", "variant": "fused", "dtype": "float32",
            "device": device, "ranks": 1, "sizes": list(sizes),
            **{mode: pays for mode in pr.CROSSOVER_MODES.values()}, **key}


class CrossoverTest(unittest.TestCase):
    """The run's summary as portalab_results reads it: in words, merged over
    runs, and a file without it said so; and a real run's summary against
    this test's own computation from its rows."""

    def test_pays_in_words(self):
        p = {"measured": True, "smallest_n": 10, "holds_above": True}
        self.assertEqual(pr.describe_pays(p, [1, 10, 100]), "pays from n = 10")
        p = {"measured": True, "smallest_n": 1, "holds_above": False}
        self.assertEqual(pr.describe_pays(p, [1, 10]),
                         "pays from n = 1, but not at every larger size")
        never = {"measured": True, "smallest_n": None, "holds_above": False}
        self.assertEqual(pr.describe_pays(never, [1000, 10**6]),
                         "never pays (n from 1,000 to 1,000,000)")
        self.assertEqual(pr.describe_pays({"measured": False}, []), "not measured")

    def test_the_newest_run_of_a_host_holds_each_entry(self):
        empty = {kind: [] for kind in pr.ANALYSIS}
        runs = [summary_doc("new", "h", "2026-01-02T00:00:00Z",
                            **dict(empty, gpu_crossover=[crossover("Cuda", 100)])),
                summary_doc("old", "h", "2026-01-01T00:00:00Z",
                            **dict(empty, gpu_crossover=[crossover("Cuda", 10),
                                                         crossover("HIP", 10)])),
                summary_doc("other", "g", "2026-01-01T00:00:00Z",
                            **dict(empty, gpu_crossover=[crossover("Cuda", 10)]))]
        found, missing = pr.analysis(runs)
        self.assertEqual(missing, [])
        self.assertEqual(sorted((c["hostname"], c["device"], c["without_copies"]["smallest_n"])
                                for c in found["gpu_crossover"]),
                         [("g", "Cuda", 10), ("h", "Cuda", 100), ("h", "HIP", 10)])

    def test_a_file_without_the_summary_is_named_with_its_portalab(self):
        older = {"gpu_crossover": [crossover("Cuda", 10)], "multi_rank_crossover": [],
                 "float64_over_float32": []}  # a summary of before speedups
        runs = [summary_doc("a/results.json", "h", "2026-01-01T00:00:00Z", "fedcba9876543210ff",
                            **older),
                summary_doc("b/results.json", "h", "2026-01-01T00:00:00Z",
                            incomplete="the run did not finish: rows read from its journal")]
        found, missing = pr.analysis(runs)
        self.assertEqual(found["gpu_crossover"], [])  # none of an incomplete summary
        self.assertEqual(len(missing), 2)
        self.assertRegex(missing[0], r"^a/results\.json: written by portalab fedcba987654 "
                                     r"\(schema_version \d\), before results\.json carried the "
                                     r"whole summary")
        self.assertRegex(missing[1], r"^b/results\.json: the run did not finish")

    def test_a_real_runs_summary_is_its_rows_conclusions(self):
        """portalab's summary of a host run against this test's own
        computation from the rows (reference_* below)."""
        tmp = tempfile.mkdtemp(prefix="portalab_summary_")
        try:
            doc = synthetic.real_run(DECK, os.path.join(tmp, "run"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        summary = doc["summary"]
        self.assertIsNone(pr.missing_analysis("r", doc))
        self.assertEqual(summary["gpu_crossover"], reference_crossovers(doc))  # none on a host
        self.assertEqual(summary["multi_rank_crossover"], [])
        for kind, reference in (("speedup_over_host", reference_speedups),
                                ("fusion", reference_fusion),
                                ("float64_over_float32", reference_dtype_ratios)):
            fields = pr.ANALYSIS[kind]
            mine = {tuple(e[f] for f in fields): e for e in reference(doc)}
            theirs = {tuple(e[f] for f in fields): e for e in summary[kind]}
            self.assertTrue(mine, kind)  # the deck runs each of them
            self.assertEqual(sorted(theirs), sorted(mine), kind)
            for key, e in mine.items():
                self.assertEqual(canonical(theirs[key]), canonical(e), (kind, key))
        # Hockney's fit, by numpy's least squares: the same entries, the
        # same figures to the fit's arithmetic.
        fields = pr.LATER_ANALYSIS["hockney"]
        mine = {tuple(json.dumps(e[f], sort_keys=True) for f in fields): e
                for e in reference_hockney(doc)}
        theirs = {tuple(json.dumps(e[f], sort_keys=True) for f in fields): e
                  for e in summary["hockney"]}
        self.assertTrue(mine)
        self.assertEqual(sorted(theirs), sorted(mine))
        for key, e in mine.items():
            for f in ("sizes", "r_inf_gbps", "r_inf_gflops"):
                if e[f] is None or isinstance(e[f], list):
                    self.assertEqual(theirs[key][f], e[f], (key, f))
                else:
                    self.assertAlmostEqual(theirs[key][f] / e[f], 1, 6, (key, f))
            self.assertAlmostEqual(theirs[key]["r_inf"] / e["r_inf"], 1, 6, key)
            self.assertAlmostEqual(theirs[key]["n_half"], e["n_half"], delta=1e-6 * e["n_half"]
                                   + 1e-9, msg=key)
            self.assertAlmostEqual(theirs[key]["rms_error"], e["rms_error"], 6, key)


class PageLogicTest(unittest.TestCase):
    """The report's helpers that need no run (scripts/portalab/report/)."""

    @classmethod
    def setUpClass(cls):
        from portalab.report import energy, figures, noise, rows, streams
        cls.figures, cls.rows = figures, rows
        cls.streams, cls.energy, cls.noise = streams, energy, noise
        figures.plt = pr.require_matplotlib()
        figures.plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "portalab"})

    def test_host_copy_modes_are_one_entry(self):
        rows = [row("Serial", 10, 2.0, "pageable"), row("Serial", 10, 1.0, "pinned"),
                row("Serial", 10, 0.5, "none", check="FAIL"),
                row("Serial", 20, 1.0, "pageable", check="N/A"), row("Cuda", 10, 1.0, "pinned"),
                row("Cuda", 10, 2.0, "pageable")]
        kept = self.rows.one_copy_mode(rows)
        # The fastest that passed, else the first; as "none"; devices as they are.
        self.assertEqual([(r["space"], r["n"], r["copies"], r["total_ms"], r["check"])
                          for r in kept],
                         [("Serial", 10, "none", 1.0, "PASS"), ("Serial", 20, "none", 1.0, "N/A"),
                          ("Cuda", 10, "pinned", 1.0, "PASS"),
                          ("Cuda", 10, "pageable", 2.0, "PASS")])

    def test_rows_are_said_against_their_level_and_suspect_limits_with_why(self):
        """The level and the suspect limit come from the row's limit as the
        run wrote it (never worked out again): the closest-to-the-limit
        sentence names the level; a suspect row is said as such, with why,
        never as a plain share; the roofline draws a roof per level."""
        from portalab import roofline
        from portalab.report import experiments
        roofline.plt = self.figures.plt

        def held(variant, gbps, pct_, level, suspect=None, name="memory"):
            limit = {"name": name, "value": gbps / pct_, "unit": "GB/s", "level": level}
            if suspect:
                limit["suspect"] = suspect
            return dict(row("OpenMP", 1000000, 1.0, variant=variant), gbps=gbps, gflops=1.0,
                        bytes=8e6, flops=1e6, pct_of_limit=pct_, limit=limit)
        rows = [held("fused", 90.0, 0.9, "L2"), held("unfused", 95.0, 0.95, "L3"),
                held("numpy", 463.0, 4.63, "L3", "its working set of 8 MB is in L3, yet ...")]
        self.assertEqual(pr.limit_text(rows[0]["limit"]), "L2 100 GB/s")
        self.assertEqual(pr.limit_text(dict(rows[0]["limit"], name="read")), "L2 read 100 GB/s")
        self.assertEqual(pr.limit_text({"name": "memory", "value": 15, "unit": "GB/s"}),
                         "memory 15 GB/s")
        said = experiments.limit_sentences(rows)
        self.assertEqual(len(said), 2, said)
        self.assertIn("the closest to the limit is unfused float32", said[0])
        self.assertIn("of L3 100 GB/s (its data in L3)", said[0])
        self.assertIn("numpy float32 ran at 463% of L3 100 GB/s: a suspect limit, its working "
                      "set of 8 MB is in L3", said[1])
        self.assertEqual(self.rows.limit_share(rows[2]), "463% (suspect limit)")
        self.assertEqual(self.rows.limit_share(rows[0]), "90%")
        levels = [{"name": "L2", "memory_gbps": 100.0, "read_gbps": 120.0},
                  {"name": "L3", "memory_gbps": 50.0, "read_gbps": 50.0},
                  {"name": "memory", "memory_gbps": 15.0, "read_gbps": 16.0}]
        fig = roofline.roofline({"memory_gbps": 15.0, "gemm_gflops": {"float64": 90.0},
                                 "ladder": {"levels": levels}}, rows, "OpenMP")
        labels = [line.get_label() for line in fig.axes[0].get_lines()]
        self.assertEqual([x.split(":")[0] for x in labels if x.startswith(("L", "memory"))],
                         ["L2", "L3", "memory"])
        self.figures.plt.close(fig)

    def test_copy_overlap_reads_its_own_metrics(self):
        """copy_overlap's perfect-overlap times and fractions are the
        experiment's metrics, read as written (figures here set apart from
        what the rows' times would give, so that a figure computed again
        would show)."""
        def overlap_row(variant, kernel, **metrics):
            return dict(row("Cuda", 1000, kernel + 1, "pinned", kernel=kernel, variant=variant,
                            experiment="copy_overlap"), metrics=metrics)
        rows = [overlap_row("serial", 10.0, perfect_overlap_ms=4.0, duplex_overlap_ms=3.0),
                overlap_row("pipelined_2", 5.0, speedup_over_serial=1.7, of_perfect=0.7,
                            of_duplex=0.55),
                overlap_row("pipelined_3", 4.0, speedup_over_serial=2.4, of_perfect=0.9)]
        found = {r["variant"]: rest for r, *rest in self.streams.overlap_rows(rows)}
        self.assertEqual(sorted(found), ["pipelined_2", "pipelined_3"])
        perfect, of, sentence = found["pipelined_2"]
        self.assertEqual((perfect, of), (4.0, 0.7))
        for words in ("1.70× as fast as serial", "70% of a perfect overlap", "(4 ms)",
                      "55% of one that also overlaps the two copy directions (3 ms)"):
            self.assertIn(words, sentence)
        perfect, of, sentence = found["pipelined_3"]
        self.assertEqual((perfect, of), (4.0, 0.9))
        self.assertIn("2.40× as fast as serial, 90%", sentence)
        self.assertNotIn("copy directions", sentence)  # no of_duplex: not said

    def test_instance_overlaps_read_their_own_metrics(self):
        """inverse_pair's and concurrent_small's perfect-overlap times and
        fractions are the rows' own metrics, read as written (figures set
        apart from sequential / 2 and instances_1 / k, so that a figure
        computed again would show); a file without them (written before the
        binary set them) says so and the report computes none."""
        def inst_row(experiment, variant, kernel, **metrics):
            return dict(row("Cuda", 1000, kernel + 1, "pinned", kernel=kernel, variant=variant,
                            experiment=experiment), metrics=metrics)
        rows = [inst_row("inverse_pair", "sequential", 10.0),
                inst_row("inverse_pair", "concurrent", 8.0, overlap=0.2,
                         perfect_overlap_ms=4.5, of_perfect=0.6),
                inst_row("concurrent_small", "instances_1", 12.0, vs_1=1.0),
                inst_row("concurrent_small", "instances_2", 8.0, vs_1=1.5,
                         perfect_overlap_ms=5.5, of_perfect=0.65),
                inst_row("concurrent_small", "instances_4", 4.0, vs_1=3.0)]  # an older file's
        found = {r["variant"]: rest for r, *rest in self.streams.overlap_rows(rows)}
        self.assertEqual(sorted(found), ["concurrent", "instances_2", "instances_4"])
        perfect, of, sentence = found["concurrent"]
        self.assertEqual((perfect, of), (4.5, 0.6))
        for words in ("an overlap of 20%", "60% of a perfect overlap (4.5 ms)"):
            self.assertIn(words, sentence)
        perfect, of, sentence = found["instances_2"]
        self.assertEqual((perfect, of), (5.5, 0.65))
        self.assertIn("65% of a perfect overlap (5.5 ms)", sentence)
        perfect, of, sentence = found["instances_4"]
        self.assertEqual((perfect, of), (None, None))
        self.assertIn("a perfect overlap's time is not in the results file", sentence)
        # The page's tables the same: "-" where the file has no figure.
        page = self.streams.streams_section(self.figures.Figures(), rows)
        tables = {r[0]: r[3:] for b in page["blocks"] if b.get("table")
                  for r in b["table"]["rows"]}
        self.assertEqual(tables, {"Cuda concurrent float32 pinned": ["4.5", "60%"],
                                  "Cuda instances_2 float32 pinned": ["5.5", "65%"],
                                  "Cuda instances_4 float32 pinned": ["-", "-"]})

    def test_figures_have_ids_of_their_own_and_alt_text(self):
        plt = self.figures.plt
        figs = self.figures.Figures()
        blocks = []
        for _ in range(2):
            fig, ax = plt.subplots()
            ax.plot([1, 2], [1, 2], marker="o")
            ax.set_clip_on(True)
            blocks.append(figs.block(fig, "a line <of two points>", "caption", None))
        ids = [set(re.findall(r'\bid="([^"]+)"', b["svg"])) for b in blocks]
        self.assertTrue(ids[0] and ids[1])
        self.assertFalse(ids[0] & ids[1])
        for b in blocks:
            refs = set(re.findall(r'(?:href="#|url\(#)([^")]+)', b["svg"]))
            self.assertTrue(refs <= set(re.findall(r'\bid="([^"]+)"', b["svg"])), refs)
            self.assertRegex(b["svg"], r'^<svg[^>]* role="img" aria-labelledby="f\d-alt"')
            self.assertIn("<title id=", b["svg"])
            self.assertIn("a line &lt;of two points&gt;", b["svg"])


    def test_energy_is_a_section_where_measured_and_throttled_rows_are_noise(self):
        def energy_row(space, n, total, **kw):
            r = row(space, n, total, **kw)
            r.update(reps=4, flops=2e9, bytes=0.0, baseline="")
            return r
        doc = {"provenance": {}, "results": [
            energy_row("Serial", 10, 2.0), energy_row("Cuda", 10, 1.0),
            energy_row("Cuda", 10, 1.0, copies="pageable")],
            "summary": {"gpu_crossover": [{
                "experiment": "vector_poly", "variant": "fused", "dtype": "float32",
                "device": "Cuda", "energy_sizes": [10],
                "energy_with_copies": {"measured": True, "smallest_n": None, "holds_above": False},
                "energy_without_copies": {"measured": True, "smallest_n": 10,
                                          "holds_above": True}}]}}
        rows = doc["results"]
        self.assertIsNone(self.energy.energy_section([("r", doc, rows)], rows))  # none measured
        doc = synthetic.with_energy(doc, throttled=lambda r: r["copies"] == "pageable")
        rows = doc["results"]
        s = self.energy.energy_section([("r", doc, rows)], rows)
        html = json.dumps(s)
        self.assertIn("vector_poly fused float32 on Cuda: with copies never (n from 10 to 10); "
                      "without copies from n = 10", html)
        table = next(b for b in s["blocks"] if b.get("kind") == "table" or "rows" in b)
        cells = {(r[2], r[5]): r for r in table["rows"]}
        # 300 W over 1 ms: 0.3 J; 2 GFLOP per 0.3 J (the fixture's, not measured).
        self.assertEqual(cells[("Cuda", "none")][6:9], ["GPU", "0.3", "0.3"])
        self.assertEqual(cells[("Cuda", "none")][10], "6.67 GFLOP/J")
        self.assertEqual(cells[("Serial", "none")][6:8], ["CPU", "0.3"])
        self.assertEqual(cells[("Cuda", "pageable")][14], "sw_power_cap")
        noise = json.dumps(self.noise.noise_section([("r", doc, rows)], rows))
        self.assertIn("1 row THROTTLED", noise)
        self.assertNotIn("NOISY", noise)
        # A row whose budget ran out is listed with its interval and target.
        rows[0].update(noisy=True, reps=40, rel_ci95=0.034, noise_target=0.01,
                       stopped_by="max_time")
        noise = self.noise.noise_section([("r", doc, rows)], rows)
        self.assertIn("1 row NOISY", json.dumps(noise))
        table = next(b for b in noise["blocks"] if b.get("caption") == "NOISY rows")
        self.assertEqual(table["rows"][0][6:], ["40", "3.4%", "1.0%", "max_time"])


class BadInputTest(unittest.TestCase):
    """A missing, truncated or foreign results file: exit 2 and one line
    that names it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="portalab_report_bad_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def write(self, name, content):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(content)
        return path

    def check_one_line(self, path, expect):
        out = os.path.join(self.tmp, "page.html")
        rc, _, err = report(path, "--out", out)
        self.assertEqual(rc, 2, err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith("report.py: "), err)
        self.assertIn(path, lines[0])
        self.assertRegex(lines[0], expect)
        self.assertFalse(os.path.exists(out))

    def test_missing(self):
        self.check_one_line(os.path.join(self.tmp, "no_such", "results.json"), "no such file")

    def test_truncated(self):
        doc = json.dumps({"provenance": {"host": {"hostname": "h"}}, "summary": {},
                          "results": [row("Serial", 10, 1.0)]})
        self.check_one_line(self.write("cut.json", doc[:len(doc) // 2]),
                            "not a portalab results.json")

    def test_foreign(self):
        self.check_one_line(self.write("other.json", '{"benchmarks": []}'),
                            "not a portalab results.json \\(no 'provenance' in it\\)")
        self.check_one_line(self.write("list.json", "[1, 2]"), "not a portalab results.json")
        self.check_one_line(self.write("results.csv", "space,n\nSerial,1\n"),
                            "not a portalab results.json")

    def test_without_jinja2_one_sentence(self):
        # A module of that name that fails to import, first on PYTHONPATH.
        hide = os.path.join(self.tmp, "hide")
        os.makedirs(hide, exist_ok=True)
        self.write("hide/jinja2.py", 'raise ImportError("hidden by the test")\n')
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "report.py"),
                            os.path.join(self.tmp, "any.json")], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, PYTHONPATH=hide))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertTrue(p.stderr.startswith("report.py: needs jinja2"), p.stderr)

    def test_a_file_without_its_summary_shows_its_rows_and_says_why(self):
        doc = synthetic.complete({"schema_version": 2, "provenance": {
            "host": {"hostname": "h"}, "portalab": {"git_commit": "abcdef0123456789"}},
            "results": [{**{k: v for k, v in row(space, 10, ms).items() if k != "hostname"},
                         "h2d_ms": 0.0, "d2h_ms": 0.0,
                         "stats": {p: {"median_ms": m} for p, m in (
                             ("h2d", 0.0), ("kernel", ms), ("d2h", 0.0), ("total", ms))}}
                        for space, ms in (("Serial", 2.0), ("OpenMP", 1.0))]})
        path = self.write("old.json", json.dumps(doc))
        out = os.path.join(self.tmp, "old.html")
        rc, _, err = report(path, "--out", out)
        self.assertEqual(rc, 0, err)
        self.assertEqual(err.strip().splitlines(), [
            f"report.py: {path}: written by portalab abcdef012345 (schema_version 2), before "
            f"results.json carried the whole summary of a run's crossovers, speedups and "
            f"ratios: they are not shown; run the deck again with this portalab to have them"])
        with open(out) as f:
            page = f.read()
        self.assertIn("written by portalab abcdef012345", page)
        self.assertIn("without its summary are not shown", page)
        self.assertIn('id="exp-vector_poly"', page)  # its rows are

    def test_no_entries(self):
        self.check_one_line(self.write("empty.json", json.dumps(synthetic.complete(
            {"schema_version": pr.SCHEMA_VERSION, "provenance": {"host": {}}, "results": []}))),
            "no entries")


class DomText(HTMLParser):
    """The text of a page's paragraphs, list items and table rows; the
    attributes that could fetch something; the tags seen."""

    def __init__(self):
        super().__init__()
        self.blocks, self.rows, self.fetching, self.tags = [], [], [], []
        self.svgs, self.titles = 0, 0
        self._text, self._cells, self._in = [], None, []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        for k in ("src", "href", "xlink:href", "srcset", "data", "action", "poster"):
            if k in a and not a[k].startswith("#"):
                self.fetching.append(f"<{tag} {k}={a[k]}>")
        if tag == "svg" and a.get("role") == "img" and a.get("aria-labelledby"):
            self.svgs += 1
        if tag in ("p", "li"):
            self._text = []
            self._in.append(tag)
        if tag == "tr":
            self._cells = []
        if tag in ("td", "th"):
            self._text = []
            self._in.append(tag)

    def handle_endtag(self, tag):
        if tag in ("p", "li") and self._in and self._in[-1] == tag:
            self._in.pop()
            self.blocks.append("".join(self._text).strip())
        if tag in ("td", "th") and self._in and self._in[-1] == tag:
            self._in.pop()
            self._cells.append("".join(self._text).strip())
        if tag == "tr" and self._cells is not None:
            self.rows.append(self._cells)
            self._cells = None

    def handle_data(self, data):
        if self._in:
            self._text.append(data)


def parse(html):
    d = DomText()
    d.feed(html)
    return d


# The test's own computation of portalab's summary from a document's rows
# (miniapp/results/analysis.cpp makes it in the binary): plain loops, kept
# apart from the scripts, which read the summary and never compute it.
HOSTS = ("Serial", "OpenMP", "Threads", "HPX")


def passed_rows(doc):
    return [r for r in doc["results"] if r["check"] == "PASS"]


def keep_best(table, key, n, ms):
    if ms and ms > 0:
        t = table.setdefault(key, {})
        t[n] = min(t.get(n, ms), ms)


def reference_crossovers(doc):
    """The summary's gpu_crossover: per experiment, variant, type and
    device, the smallest n where the device's best total in each copy mode
    (or its kernel alone) beats the best host total."""
    best = {}
    for r in passed_rows(doc):
        key = (r["experiment"], r["variant"], r["dtype"], r["ranks"])
        if r["space"] in HOSTS:
            keep_best(best, ("host",) + key, r["n"], r["total_ms"])
            continue
        copies = r["copies"] != "none"
        for way, ms in (("with_copies", r["total_ms"] if copies else None),
                        ("with_pageable_copies", r["total_ms"] if r["copies"] == "pageable"
                         else None),
                        ("with_pinned_copies", r["total_ms"] if r["copies"] == "pinned" else None),
                        ("without_copies", r["kernel_ms"])):
            keep_best(best, (way, r["space"]) + key, r["n"], ms)
    out = []
    for k in sorted(k for k in best if k[0] == "without_copies"):
        space, key = k[1], k[2:]
        host = best.get(("host",) + key)
        if host is None:
            continue
        entry = {"experiment": key[0], "variant": key[1], "dtype": key[2], "device": space,
                 "ranks": key[3]}
        sizes = set()
        for way in pr.CROSSOVER_MODES.values():
            dev = best.get((way, space) + key, {})
            common = sorted(set(dev) & set(host))
            sizes |= set(common)
            wins = [n for n in common if dev[n] < host[n]]
            entry[way] = {"measured": bool(common), "smallest_n": wins[0] if wins else None,
                          "holds_above": bool(wins) and all(dev[n] < host[n] for n in common
                                                            if n >= wins[0])}
        entry["sizes"] = sorted(sizes)
        out.append(entry)
    return out


def reference_speedups(doc):
    """The summary's speedup_over_host: a device against the best host space at each
    size, a parallel host space against Serial; totals with copies (a host:
    any row), kernels in any copy mode."""
    total, kernel, spaces = {}, {}, {}
    for r in passed_rows(doc):
        key = (r["experiment"], r["variant"], r["dtype"], r["ranks"])
        spaces.setdefault(key, set()).add(r["space"])
        if r["space"] in HOSTS or r["copies"] != "none":
            keep_best(total, (key, r["space"]), r["n"], r["total_ms"])
        keep_best(kernel, (key, r["space"]), r["n"], r["kernel_ms"])
    out = []
    for key, present in spaces.items():
        hosts = present & set(HOSTS)
        for space in present:
            against = (hosts if space not in HOSTS else
                       {"Serial"} if space != "Serial" and "Serial" in hosts else set())
            if not against:
                continue
            sizes = []
            mine_total, mine_kernel = total.get((key, space), {}), kernel.get((key, space), {})
            for n in sorted(set(mine_total) | set(mine_kernel)):
                def ratio(table, mine):
                    ref = [table[key, s][n] for s in against if n in table.get((key, s), {})]
                    return min(ref) / mine[n] if ref and n in mine else None
                at = {"n": n, "total": ratio(total, mine_total), "kernel": ratio(kernel, mine_kernel)}
                if at["total"] is not None or at["kernel"] is not None:
                    sizes.append(at)
            if sizes:
                out.append({"experiment": key[0], "variant": key[1], "dtype": key[2],
                            "space": space, "ranks": key[3], "against": sorted(against),
                            "sizes": sizes})
    return out


def reference_fusion(doc):
    """The summary's fusion: the best unfused kernel over the best fused one."""
    best = {}
    for r in passed_rows(doc):
        if r["variant"] in ("fused", "unfused"):
            keep_best(best, (r["experiment"], r["space"], r["dtype"], r["ranks"], r["n"],
                             r["variant"]), 0, r["kernel_ms"])
    return [{"experiment": k[0], "space": k[1], "dtype": k[2], "ranks": k[3], "n": k[4],
             "unfused_over_fused": best[k[:5] + ("unfused",)][0] / t[0]}
            for k, t in best.items() if k[5] == "fused" and k[:5] + ("unfused",) in best]


def reference_hockney(doc):
    """The summary's hockney: t = a + b n by least squares relative to each
    best kernel median (numpy), at three sizes or more of the same declared
    work per element; a = 0 where it would be negative."""
    import numpy as np
    best, work = {}, {}
    for r in passed_rows(doc):
        if r["kernel_ms"] <= 0 or r["n"] == 0:
            continue
        key = (r["experiment"], r["variant"], json.dumps(r["parameters"], sort_keys=True),
               r["space"], r["dtype"], r["ranks"])
        keep_best(best, key + (r["n"],), 0, r["kernel_ms"])
        work.setdefault(key, set()).add((r["bytes"] / r["n"], r["flops"] / r["n"]))
    out = []
    for key, per_element in work.items():
        sizes = sorted(k[-1] for k in best if k[:-1] == key)
        if len(sizes) < 3 or len({(round(b, 9), round(f, 9)) for b, f in per_element}) > 1:
            continue
        n = np.array(sizes, dtype=float)
        t = np.array([best[key + (k,)][0] for k in sizes])
        (a, b), *_ = np.linalg.lstsq(np.stack([1 / t, n / t], axis=1), np.ones(len(t)),
                                     rcond=None)
        if a < 0:
            a, b = 0.0, np.sum(n / t) / np.sum((n / t) ** 2)
        if b <= 0.01 * (a + b * n[-1]) / n[-1]:
            continue
        bytes_, flops = next(iter(per_element))
        r_inf = 1e3 / b
        out.append({"experiment": key[0], "variant": key[1], "parameters": json.loads(key[2]),
                    "space": key[3], "dtype": key[4], "ranks": key[5], "sizes": sizes,
                    "r_inf": r_inf, "r_inf_gbps": r_inf * bytes_ / 1e9 or None,
                    "r_inf_gflops": r_inf * flops / 1e9 or None, "n_half": a / b,
                    "rms_error": float(np.sqrt(np.mean(((a + b * n - t) / t) ** 2)))})
    return out


def reference_dtype_ratios(doc):
    """The summary's float64_over_float32, one rank: kernel over kernel."""
    f32 = {(r["experiment"], r["variant"], r["space"], r["copies"], r["n"]): r["kernel_ms"]
           for r in passed_rows(doc) if r["dtype"] == "float32" and r["ranks"] == 1
           and r["kernel_ms"] > 0}
    out = []
    for r in passed_rows(doc):
        k = (r["experiment"], r["variant"], r["space"], r["copies"], r["n"])
        if r["dtype"] == "float64" and r["ranks"] == 1 and k in f32:
            out.append({"experiment": k[0], "variant": k[1], "space": k[2], "copies": k[3],
                        "n": k[4], "kernel_ratio": r["kernel_ms"] / f32[k]})
    return out


def canonical(entry):
    """An entry with its lists of names sorted and numbers to 12 digits."""
    def norm(v):
        if isinstance(v, float):
            return float(f"{v:.12g}")
        if isinstance(v, list):
            items = [norm(x) for x in v]
            return sorted(items) if all(isinstance(x, str) for x in items) else items
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v
    return norm(entry)


def with_reference_summary(doc):
    """doc with the summary portalab would write of its rows (a made-up
    GPU's rows never ran through the binary): the test's own computation."""
    doc = dict(doc, summary=dict(doc["summary"]))
    doc["summary"].update(gpu_crossover=reference_crossovers(doc),
                          speedup_over_host=reference_speedups(doc), fusion=reference_fusion(doc),
                          float64_over_float32=reference_dtype_ratios(doc))
    return doc


def words(p):
    """What the page must say of one of the summary's crossovers."""
    if not p["measured"]:
        return "not measured"
    if p["smallest_n"] is None:
        return "never pays"
    return f"pays from n = {p['smallest_n']:,}" + (
        "" if p["holds_above"] else ", but not at every larger size")


class BrowserTest(unittest.TestCase):
    """The page of a real host run, loaded in headless Chromium."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="portalab_report_")
        cls.run_dir = os.path.join(cls.tmp, "run")
        cls.doc = synthetic.real_run(DECK, cls.run_dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def browse(self, page, name):
        """(DOM after rendering, Chromium's log, screenshot path, net log), from
        one launch."""
        profile = os.path.join(self.tmp, f"profile_{name}")
        shot = os.path.join(self.tmp, f"{name}.png")
        netlog = os.path.join(self.tmp, f"{name}.netlog.json")
        chromium = [os.environ["CHROMIUM"], "--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                  "--host-resolver-rules=MAP * ~NOTFOUND", f"--log-net-log={netlog}",
                  "--window-size=1280,1600"]
        url = "file://" + os.path.abspath(page)
        p = subprocess.run([*chromium, "--dump-dom", f"--screenshot={shot}", url],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        with open(netlog) as f:
            net = json.load(f)
        return p.stdout, p.stderr, shot, net

    def check_page(self, page, name):
        """Renders with no console message, requests nothing, and shows
        something; returns its parsed DOM."""
        dom, log, shot, net = self.browse(page, name)
        console = [line for line in log.splitlines() if ":CONSOLE" in line]
        self.assertEqual(console, [], "console messages while rendering the page")
        # The page's own requests carry its file:// origin; Chromium's
        # background requests (updates, time) carry none.
        fetched = {e["params"]["url"] for e in net["events"]
                   if "url" in e.get("params", {})
                   and "file://" in str(e["params"].get("network_isolation_key", ""))}
        self.assertEqual(fetched, set(), "the page requested something")
        d = parse(dom)
        self.assertEqual(d.fetching, [], "attributes that fetch")
        for tag in ("script", "link", "img", "iframe", "object", "embed"):
            self.assertNotIn(tag, d.tags)
        # Every figure: an SVG with alt text and a table beside it.
        with open(page) as f:
            html = f.read()
        self.assertGreater(d.svgs, 0)
        self.assertEqual(d.svgs, html.count("<svg"))
        self.assertEqual(html.count('<div class="fig">'), html.count("<svg"))
        beside = r'<div class="fig">\s*<figure>.*?</figure>\s*<div class="scroll">'
        self.assertEqual(len(re.findall(beside, html, re.S)), html.count("<svg"))
        self.assertIn("@media print", html)
        self.check_screenshot(shot)
        return d

    def check_screenshot(self, shot):
        import matplotlib.image
        px = matplotlib.image.imread(shot)[:, :, :3]
        self.assertGreater(px.shape[0], 500)
        colours = {tuple(c) for c in (px[::7, ::7] * 255).astype(int).reshape(-1, 3)}
        self.assertGreater(len(colours), 30, "the screenshot has almost no colours: blank?")
        ink = (px.min(axis=2) < 0.8).mean()
        self.assertGreater(ink, 0.02, f"the screenshot is {1 - ink:.1%} white: blank?")

    def test_host_run_says_no_gpu_and_renders(self):
        page = os.path.join(self.tmp, "host.html")
        rc, out, err = report(self.run_dir, "--out", page)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.strip(), page)
        self.assertEqual(self.doc["summary"]["gpu_crossover"], [])
        d = self.check_page(page, "host")
        self.assertTrue(any(b.startswith("No GPU in this run") for b in d.blocks), d.blocks[:5])
        for reason in ("1. Input too small", "2. Too little arithmetic", "3. Copies",
                       "4. 64-bit types"):
            self.assertTrue(any(b.startswith(reason) for b in d.blocks), reason)
        # Each experiment has its section and figures; provenance names the host.
        for e in {r["experiment"] for r in self.doc["results"]}:
            with open(page) as f:
                self.assertIn(f'id="exp-{e}"', f.read())
        host = self.doc["provenance"]["host"]["hostname"]
        self.assertIn(["machine", f"{host}: {self.doc['provenance']['host']['cpu_model']}, "
                       f"{self.doc['provenance']['host']['hardware_threads']} hardware threads, "
                       f"host space on {self.doc['provenance']['host']['host_space_threads']}"],
                      d.rows)

    def test_gpu_crossovers_of_the_summary_are_named_and_compared(self):
        # A made-up GPU (synthetic.py) with the summary portalab would write,
        # against a base run where one series was 3x faster: one page.
        doc = with_reference_summary(synthetic.tight(synthetic.with_fake_gpu(self.doc)))
        self.assertTrue(any(c["without_copies"]["smallest_n"]
                            for c in doc["summary"]["gpu_crossover"]))
        gpu = os.path.join(self.tmp, "gpu", "results.json")
        base = os.path.join(self.tmp, "base", "results.json")
        for path, d in ((gpu, doc), (base, synthetic.slowed(
                doc, 1 / 3, lambda r: r["experiment"] == "vector_poly"
                and r["variant"] == "fused" and r["space"] == "Serial"))):
            os.makedirs(os.path.dirname(path))
            synthetic.write(d, path)
        page = os.path.join(self.tmp, "gpu.html")
        rc, _, err = report(gpu, "--base", base, "--out", page)
        self.assertEqual(rc, 0, err)
        d = self.check_page(page, "gpu")
        self.assertFalse(any("without its summary" in b for b in d.blocks))
        for c in doc["summary"]["gpu_crossover"]:
            head = f"{c['experiment']} {c['variant']} {c['dtype']} on {c['device']} against"
            said = [b for b in d.blocks if b.startswith(head)]
            self.assertTrue(said, head)
            for s in said:
                self.assertIn(f"kernel alone, {words(c['without_copies'])}", s)
            # The crossover table: variant, type, device, pageable, pinned, best with copies, alone
            cells = [r for r in d.rows if r[:3] == [c["variant"], c["dtype"], c["device"]]
                     and len(r) == 7]
            self.assertTrue(cells, c)
            for r in cells:
                self.assertTrue(r[3].startswith(words(c["with_pageable_copies"])), (r, c))
                self.assertTrue(r[4].startswith(words(c["with_pinned_copies"])), (r, c))
                self.assertTrue(r[5].startswith(words(c["with_copies"])), (r, c))
                self.assertTrue(r[6].startswith(words(c["without_copies"])), (r, c))
        # The four reasons set the made-up GPU against the host spaces, from the summary.
        self.assertTrue(any(b.startswith("1. Input too small (FakeGPU): over ") for b in d.blocks),
                        [b for b in d.blocks if b.startswith("1.")])
        # compare.py's verdicts: the series 3x faster in the base is slower here.
        self.assertTrue(any(b.startswith(f"Against {base}") and "a REGRESSION" in b
                            for b in d.blocks), [b for b in d.blocks if "Against" in b])
        slower = [r for r in d.rows if r and r[0] == "slower REGRESSION"]
        self.assertTrue(slower)
        self.assertTrue(all(r[1:4] == ["vector_poly", "fused", "Serial"] for r in slower), slower)


if __name__ == "__main__":
    names = sys.argv[1:]
    for module, package in (("matplotlib", "python3-matplotlib"), ("jinja2", "python3-jinja2")):
        try:
            __import__(module)
        except ImportError:
            if names != ["CrossoverTest"]:  # the one class that draws nothing
                print(f"SKIP: {sys.executable} has no {module} ({package})")
                sys.exit(SKIP)
    if "BrowserTest" in names or not names:
        if not os.environ.get("CHROMIUM") or not os.access(os.environ["CHROMIUM"], os.X_OK):
            print("SKIP: no Chromium (CHROMIUM; Debian: apt-get install chromium)")
            sys.exit(SKIP)
        if "PORTALAB" not in os.environ:
            sys.exit("PORTALAB (the portalab binary) is not set")
    unittest.main(argv=[sys.argv[0], "-v", *names])
