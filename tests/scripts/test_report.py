"""Tests of scripts/report.py: its reading of the rows (crossovers per copy
mode, host copy modes, SVG ids) on hand-made rows, bad inputs, and the page
of a real host run (and of it with a made-up GPU, and against a slowed copy)
loaded in headless Chromium.

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

import portalab_results as pr  # noqa: E402
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


class CrossoverTest(unittest.TestCase):
    """portalab_results.pays and gpu_crossovers on hand-made rows."""

    def test_pays_from_the_first_faster_size(self):
        p = pr.pays({1: 1.0, 10: 2.0, 100: 3.0}, {1: 2.0, 10: 1.0, 100: 1.0})
        self.assertEqual((p["smallest_n"], p["holds_above"], p["sizes"]), (10, True, [1, 10, 100]))
        self.assertEqual(pr.describe_pays(p), "pays from n = 10")

    def test_a_loss_above_the_crossover_is_said(self):
        p = pr.pays({1: 1.0, 10: 2.0, 100: 3.0}, {1: 0.5, 10: 3.0, 100: 1.0})
        self.assertEqual((p["smallest_n"], p["holds_above"]), (1, False))
        self.assertEqual(pr.describe_pays(p), "pays from n = 1, but not at every larger size")

    def test_never_and_not_measured(self):
        never = pr.pays({1000: 1.0, 10**6: 2.0}, {1000: 2.0, 10**6: 3.0})
        self.assertEqual(pr.describe_pays(never), "never pays (n from 1,000 to 1,000,000)")
        self.assertEqual(pr.describe_pays(pr.pays({1: 1.0}, {2: 0.1})), "not measured")

    def test_each_copy_mode_against_the_best_host_space(self):
        rows = [row("Serial", 10, 4.0), row("OpenMP", 10, 2.0), row("OpenMP", 100, 20.0),
                row("Serial", 100, 30.0),
                # pageable pays at 100 only, pinned at 10, the kernel alone at 10
                row("Cuda", 10, 3.0, "pageable", kernel=1.0),
                row("Cuda", 100, 10.0, "pageable", 1.0),
                row("Cuda", 10, 1.5, "pinned", kernel=1.0), row("Cuda", 100, 9.0, "pinned", 1.0),
                # a failed row is no measurement
                row("Cuda", 10, 0.1, "none", check="FAIL")]
        [c] = pr.gpu_crossovers(rows)
        self.assertEqual(c["device"], "Cuda")
        self.assertEqual({m: c[m]["smallest_n"] for m in pr.CROSSOVER_MODES},
                         {"pageable": 100, "pinned": 10, "copies": 10, "none": 10})

    def test_no_host_space_no_crossover(self):
        self.assertEqual(pr.gpu_crossovers([row("Cuda", 10, 1.0)]), [])


class PageLogicTest(unittest.TestCase):
    """report.py's helpers that need no run."""

    @classmethod
    def setUpClass(cls):
        import report
        cls.report = report
        report.plt = pr.require_matplotlib()
        report.plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "portalab"})

    def test_host_copy_modes_are_one_entry(self):
        rows = [row("Serial", 10, 2.0, "pageable"), row("Serial", 10, 1.0, "pinned"),
                row("Serial", 10, 0.5, "none", check="FAIL"),
                row("Serial", 20, 1.0, "pageable", check="N/A"), row("Cuda", 10, 1.0, "pinned"),
                row("Cuda", 10, 2.0, "pageable")]
        kept = self.report.one_copy_mode(rows)
        # The fastest that passed, else the first; as "none"; devices as they are.
        self.assertEqual([(r["space"], r["n"], r["copies"], r["total_ms"], r["check"])
                          for r in kept],
                         [("Serial", 10, "none", 1.0, "PASS"), ("Serial", 20, "none", 1.0, "N/A"),
                          ("Cuda", 10, "pinned", 1.0, "PASS"),
                          ("Cuda", 10, "pageable", 2.0, "PASS")])

    def test_figures_have_ids_of_their_own_and_alt_text(self):
        plt = self.report.plt
        figs = self.report.Figures()
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
        self.assertIsNone(self.report.energy_section([("r", doc, rows)], rows))  # none measured
        doc = synthetic.with_energy(doc, throttled=lambda r: r["copies"] == "pageable")
        rows = doc["results"]
        s = self.report.energy_section([("r", doc, rows)], rows)
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
        noise = json.dumps(self.report.noise_section([("r", doc, rows)], rows))
        self.assertIn("1 row THROTTLED", noise)


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


def reference_crossovers(doc):
    """The summary's gpu_crossover of a document, as portalab's
    miniapp/results/analysis.cpp makes it, computed here by plain loops (the test's
    own reference): per experiment, variant, type and device, the smallest n
    where the device's best total with copies (or its kernel alone) beats the
    best host total."""
    hosts = {"Serial", "OpenMP", "Threads"}
    best = {}
    for r in doc["results"]:
        if r["check"] != "PASS":
            continue
        key = (r["experiment"], r["variant"], r["dtype"])
        if r["space"] in hosts:
            t = best.setdefault(("host",) + key, {})
            t[r["n"]] = min(t.get(r["n"], r["total_ms"]), r["total_ms"])
        else:
            for way, ms in (("with_copies", r["total_ms"] if r["copies"] != "none" else None),
                            ("without_copies", r["kernel_ms"])):
                if ms:
                    t = best.setdefault((way, r["space"]) + key, {})
                    t[r["n"]] = min(t.get(r["n"], ms), ms)
    out = []
    for k in sorted(k for k in best if k[0] == "without_copies"):
        space, key = k[1], k[2:]
        entry = {"experiment": key[0], "variant": key[1], "dtype": key[2], "device": space,
                 "ranks": 1}
        for way in ("with_copies", "without_copies"):
            dev, host = best.get((way, space) + key, {}), best.get(("host",) + key, {})
            sizes = sorted(set(dev) & set(host))
            wins = [n for n in sizes if dev[n] < host[n]]
            entry[way] = {"measured": bool(sizes), "smallest_n": wins[0] if wins else None,
                          "holds_above": bool(wins) and all(dev[n] < host[n] for n in sizes
                                                            if n >= wins[0])}
            entry["sizes"] = sizes
        out.append(entry)
    return out


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
        doc = synthetic.tight(synthetic.with_fake_gpu(self.doc))
        doc["summary"]["gpu_crossover"] = reference_crossovers(doc)
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
        self.assertFalse(any("differ from the run's own summary" in b for b in d.blocks))
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
                self.assertTrue(r[5].startswith(words(c["with_copies"])), (r, c))
                self.assertTrue(r[6].startswith(words(c["without_copies"])), (r, c))
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
