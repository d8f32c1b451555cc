"""The result scripts on hostile files and paths (issue 49): a class of
test per class of input, each trying its cases on every script that reads
or writes them. A refusal is exit status 2 and one line naming the file and
what is wrong, never a traceback and never a hang; validate.py names a file
it can read but that breaks the schema on stdout and exits 1.

    PORTALAB=build/host/portalab python3 tests/scripts/test_hostile_files.py [TestClass...]

Exits 77 (ctest's skip code here) where matplotlib is missing.
"""
import copy
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_scripts import SCRIPTS, SKIP, Base, script  # noqa: E402
import synthetic  # noqa: E402

from portalab import results as pr  # noqa: E402

# Scripts that read results files, with the arguments that make them read FOLDER.
READERS = {
    "collect.py": lambda folder, out: [folder],
    "compare.py": lambda folder, out: [folder, folder],
    "report.py": lambda folder, out: [folder, "--out", os.path.join(out, "page.html")],
    "plot.py": lambda folder, out: [folder, "--out", os.path.join(out, "plots")],
}
# Each has matplotlib to import: the slow ones run on a sample of the cases.
# script() fails the test on a hang (its timeout).
FAST = ("collect.py", "compare.py")


class Hostile(Base):
    """A real run's results.json (small sizes) to break."""
    count = 0

    def folder(self):
        type(self).count += 1
        path = os.path.join(self.tmp, f"case{self.count}")
        os.makedirs(path)
        return path

    def put(self, data, name="results.json", folder=None):
        """A folder (a new one by default) holding data (text or bytes) as
        name; its path and the file's."""
        folder = folder or self.folder()
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return folder, path

    def with_row(self, **fields):
        doc = copy.deepcopy(self.doc)
        doc["results"][1].update(fields)
        return json.dumps(doc)

    def refused(self, name, args, names, expect=""):
        """scripts/<name> args exits 2 with one line naming `names` (and matching expect)."""
        rc, out, err = script(name, *args)
        lines = err.strip().splitlines()
        self.assertEqual(rc, 2, f"{name} {args}: {err[-2000:]}")
        self.assertEqual(len(lines), 1, f"{name}: {err[-2000:]}")
        self.assertTrue(lines[0].startswith(f"{name}: "), lines[0])
        self.assertIn(names, lines[0])
        self.assertRegex(lines[0], expect)
        self.assertLess(len(lines[0]), 1000, "a message that echoes the file")
        self.assertNotRegex(lines[0], "[\x00-\x08\x0b-\x1f\x7f]", "raw control bytes")
        return lines[0]

    def every_reader(self, folder, path, expect="", slow=True):
        """Every reader refuses the results in folder in one line naming path."""
        out = self.folder()
        for name, args in READERS.items():
            if slow or name in FAST:
                with self.subTest(script=name):
                    self.refused(name, args(folder, out), path, expect)
        self.assertEqual(os.listdir(out), [] if not os.path.exists(os.path.join(out, "plots"))
                         else ["plots"], "a refused run wrote nothing")

    def flagged(self, path, expect):
        """validate.py names the problem of path on stdout and exits 1."""
        rc, out, err = script("validate.py", path)
        self.assertEqual(rc, 1, out + err)
        self.assertIn(path, out)
        self.assertRegex(out, expect)
        self.assertNotIn("Traceback", err)


class NumbersTest(Hostile):
    """Numbers JSON does not allow or the schema does not: NaN, Infinity,
    past a double's range, beyond 64 bits, negative times, no repetitions,
    text for a number, null for a check."""

    def cases(self):
        first = self.doc["results"][1]["total_ms"]
        text = json.dumps(self.doc)
        at = text.index(f'"total_ms": {json.dumps(first)}')
        number = lambda word: text[:at] + f'"total_ms": {word}' + text[at + len(f'"total_ms": {json.dumps(first)}'):]  # noqa: E731
        return [
            (number("NaN"), "NaN is not a number JSON allows"),
            (number("Infinity"), "Infinity is not a number JSON allows"),
            (number("-Infinity"), "-Infinity is not a number JSON allows"),
            (number("1e400"), "beyond a double's range"),
            (number("1" * 5000), "digits|beyond a 64-bit"),
            (self.with_row(n=2 ** 70), "results/1/n: .* beyond a 64-bit integer"),
            (self.with_row(reps=2 ** 63), "results/1/reps: .* beyond a 64-bit integer"),
            (self.with_row(n="10"), 'results/1/n: "10" is not of type integer'),
            (self.with_row(check=None), "results/1/check: null is not one of"),
            (self.with_row(total_ms=-1.0), "results/1/total_ms: -1.0 is less than the minimum of 0"),
            (self.with_row(reps=0), "results/1/reps: 0 is less than the minimum of 1"),
            (self.with_row(total_ms=None), "results/1/total_ms: null is not of type number"),
            (self.with_row(n=True), "results/1/n: true is not of type integer"),
        ]

    def test_every_reader_refuses_them_in_one_line(self):
        for i, (text, expect) in enumerate(self.cases()):
            folder, path = self.put(text)
            with self.subTest(case=expect):
                self.every_reader(folder, path, expect, slow=i % 4 == 0)

    def test_validate_flags_them(self):
        for text, expect in self.cases():
            _, path = self.put(text)
            if expect.startswith("results/"):  # jsonschema words the rest its own way
                expect = expect.split(":")[0] + ":"
            with self.subTest(case=expect):
                self.flagged(path, expect)

    def test_negative_stats_and_rates(self):
        doc = copy.deepcopy(self.doc)
        doc["results"][1]["stats"]["kernel"]["min_ms"] = -0.5
        doc["results"][2]["gbps"] = -3.0
        folder, path = self.put(json.dumps(doc))
        self.every_reader(folder, path, "results/1/stats/kernel/min_ms: -0.5", slow=False)
        self.flagged(path, "results/2/gbps: -3.0 is less than the minimum of 0")


class TypesTest(Hostile):
    """Every field of a row, and of the provenance, given a value of another
    type: each read refused, naming the field."""

    def wrong(self, value):
        return "text" if not isinstance(value, str) else 12

    def test_every_row_field(self):
        row = self.doc["results"][1]
        for field, value in row.items():
            doc = copy.deepcopy(self.doc)
            doc["results"][1][field] = self.wrong(value)
            _, path = self.put(json.dumps(doc))
            with self.subTest(field=field):
                with self.assertRaisesRegex(pr.ResultsError, f"results/1/{field}"):
                    pr.read_run(path)
        # and end to end, one field of each JSON type
        for field in ("experiment", "n", "total_ms", "copies", "parameters", "stats",
                      "first_in_process", "per_rank"):
            doc = copy.deepcopy(self.doc)
            doc["results"][1][field] = self.wrong(row[field])
            folder, path = self.put(json.dumps(doc))
            with self.subTest(field=field):
                self.every_reader(folder, path, f"results/1/{field}", slow=False)

    def test_every_provenance_field(self):
        described = pr.schemas()["results"]["$defs"]["provenance"]["properties"]
        for field, value in self.doc["provenance"].items():
            if field not in described:
                continue
            doc = copy.deepcopy(self.doc)
            doc["provenance"][field] = self.wrong(value) if not isinstance(value, dict) else []
            _, path = self.put(json.dumps(doc))
            with self.subTest(field=field):
                with self.assertRaisesRegex(pr.ResultsError, f"provenance/{field}"):
                    pr.read_run(path)

    def test_missing_fields_and_wrong_shapes(self):
        doc = copy.deepcopy(self.doc)
        del doc["results"][1]["check"]
        for text, expect in ((json.dumps(doc), "results/1: 'check' is missing"),
                             (json.dumps({**self.doc, "results": {"a": 1}}), "results"),
                             (json.dumps({**self.doc, "results": [1, 2]}), "results/0"),
                             (json.dumps([1, 2]), "not a JSON object|not a portalab"),
                             ('"just text"', "not a JSON object|not a portalab")):
            folder, path = self.put(text)
            with self.subTest(case=expect):
                self.every_reader(folder, path, expect, slow=False)

    def test_a_long_name_is_refused_and_not_echoed(self):
        folder, path = self.put(self.with_row(variant="\x1b]0;title\x07" + "v" * 1_000_000))
        line = self.refused("collect.py", [folder], path, "results/1/variant: a text of 1000010 characters")
        self.assertLess(len(line), 300)
        self.flagged(path, "results/1/variant")


class BrokenFilesTest(Hostile):
    """Files that are no JSON at all: nested past any limit, cut short,
    empty, garbage, not UTF-8."""

    def cases(self):
        text = json.dumps(self.doc)
        return [
            ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
            ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
            (text[:len(text) // 2], "not a portalab results.json \\(.*: line 1"),
            ("", "not a portalab results.json \\(Expecting value"),
            (bytes(range(256)) * 40, "not UTF-8 text: byte 128"),
            ("\ufeff" + text, "BOM"),
            ("\x00" * 1000, "not a portalab results.json"),
        ]

    def test_every_reader_refuses_them(self):
        for i, (data, expect) in enumerate(self.cases()):
            folder, path = self.put(data)
            with self.subTest(case=expect):
                self.every_reader(folder, path, expect, slow=i < 2)

    def test_validate_flags_them(self):
        for data, expect in self.cases():
            _, path = self.put(data)
            expect = expect.replace("not a portalab results.json", "not a JSON file")
            with self.subTest(case=expect):
                self.flagged(path, expect)


class NotAFileTest(Hostile):
    """Paths that are no regular file: missing, a folder, a FIFO, a device,
    unreadable. Refused at once (a FIFO is never opened to wait for a
    writer), by every reader and by validate.py (exit 2)."""

    def paths(self):
        folder = self.folder()
        fifo = os.path.join(folder, "results.json")
        os.mkfifo(fifo)
        as_dir = os.path.join(self.folder(), "results.json")
        os.makedirs(as_dir)
        cases = [(os.path.join(self.tmp, "none", "results.json"), "no such file or folder"),
                 (fifo, "a FIFO, not a file"), (as_dir, "a folder, not a file|no results.json"),
                 ("/dev/zero", "a character device, not a file")]
        if os.geteuid() != 0:  # root reads any file
            _, unreadable = self.put(json.dumps(self.doc))
            os.chmod(unreadable, 0)
            cases.append((unreadable, "cannot read it \\(Permission denied\\)"))
        return cases

    def test_every_reader_refuses_them(self):
        out = self.folder()
        for path, expect in self.paths():
            for name, args in READERS.items():
                with self.subTest(path=path, script=name):
                    self.refused(name, args(path, out), path, expect)

    def test_validate_refuses_them(self):
        for path, expect in self.paths():
            if "folder" in expect:
                continue  # a folder named results.json is searched, and holds nothing
            if "no such" in expect:
                expect = "no such file"
            with self.subTest(path=path):
                self.refused("validate.py", [path], path, expect)

    def test_a_fifo_in_a_folder_searched(self):
        folder = self.folder()
        os.mkfifo(os.path.join(folder, "results.json"))
        self.refused("collect.py", [folder], folder, "a FIFO, not a file")
        self.refused("validate.py", [folder], folder, "a FIFO, not a file")


class JournalTest(Hostile):
    """A run's journal (results.jsonl): a line cut by a kill is the last and
    is left out; any other line that is no update is named, never a silent
    loss of the rows after it."""

    def journal(self, lines):
        folder, path = self.put("\n".join(lines), "results.jsonl")
        return folder, path

    def lines(self):
        head = json.dumps({"schema_version": 2, "provenance": self.doc["provenance"]})
        rows = self.doc["results"]
        return [head, json.dumps({"first": 0, "rows": rows[:3]}),
                json.dumps({"first": 3, "rows": rows[3:6]})]

    def test_a_last_line_cut_short_is_left_out(self):
        lines = self.lines()
        folder, _ = self.journal(lines[:2] + [lines[2][:50]])
        rc, out, err = script("collect.py", folder)
        self.assertEqual(rc, 0, err)
        self.assertIn("3 rows from 1 files", err)

    def test_a_bad_line_before_the_last_is_named(self):
        lines = self.lines()
        for bad, expect in ((lines[1][:50], ":2: not a journal line"),
                            (lines[1].replace('"first": 0', '"first": 7'), ":2: not an update"),
                            (lines[1].replace('"first": 0', '"first": -1'), ":2: not an update"),
                            (json.dumps({"first": 0, "rows": "abc"}), ":2: not an update"),
                            ("[" * 100_000, ":2: not a journal line \\(nested too deeply"),
                            (lines[1].replace('"n": ', '"n": NaN, "x": ', 1), ":2: not a journal line \\(NaN")):
            folder, path = self.journal([lines[0], bad, lines[2], ""])
            with self.subTest(case=expect):
                self.every_reader(folder, path + ":", expect, slow=False)
                rc, out, _ = script("validate.py", path)
                self.assertEqual(rc, 1, out)
                self.assertRegex(out, expect)

    def test_a_bad_head_is_named(self):
        for head, expect in (("", ":1: not a portalab journal"), ("[1]", ":1: not a portalab journal"),
                             ('{"provenance": 5}', ":1: not a portalab journal")):
            folder, path = self.journal([head] + self.lines()[1:])
            with self.subTest(case=expect):
                self.every_reader(folder, path, expect, slow=False)

    def test_a_row_breaking_the_schema_names_the_journal(self):
        lines = self.lines()
        lines[1] = lines[1].replace('"check": "PASS"', '"check": 5', 1)
        folder, path = self.journal(lines + [""])
        self.every_reader(folder, path, "results/.*/check: 5 is not one of", slow=False)

    def test_a_journal_that_is_not_a_file(self):
        folder, _ = self.put(json.dumps(self.doc))
        os.mkfifo(os.path.join(folder, "results.jsonl"))
        self.every_reader(folder, os.path.join(folder, "results.jsonl"), "a FIFO, not a file",
                          slow=False)


class CsvTest(Hostile):
    """validate.py on results.csv: a line of the wrong width, cells that
    are no JSON number, broken JSON in an object column, NUL bytes."""

    def csv_with(self, line_edit):
        with open(os.path.join(self.run_dir, "results.csv")) as f:
            lines = f.read().split("\n")
        lines[1] = line_edit(lines[1])
        _, path = self.put("\n".join(lines), "results.csv")
        return path

    def cell(self, column, value):
        with open(os.path.join(self.run_dir, "results.csv"), newline="") as f:
            header = next(csv.reader(f))
        at = header.index(column)

        def edit(line):
            cells = next(csv.reader([line]))
            cells[at] = value
            out = io.StringIO()
            csv.writer(out, lineterminator="").writerow(cells)
            return out.getvalue()
        return edit

    def test_cases(self):
        for edit, expect in (
                (lambda line: line + ",extra", ":2: .* cells, the header has"),
                (lambda line: ",".join(line.split(",")[:5]), ":2: 5 cells, the header has"),
                (self.cell("total_ms", "nan"), ":2: total_ms: 'nan'"),
                (self.cell("total_ms", "inf"), ":2: total_ms: 'inf'"),
                (self.cell("total_ms", "1e999"), ":2: total_ms: '1e999'"),
                (self.cell("n", "1_000"), ":2: n: '1_000'"),
                (self.cell("n", " 1"), ":2: n: ' 1'"),
                (self.cell("reps", "0"), ":2: reps: 0 is less than the minimum of 1"),
                (self.cell("total_ms", "-1"), ":2: total_ms: -1(.0)? is less than the minimum"),
                (self.cell("parameters", "{"), ":2: parameters: '{'"),
                (self.cell("total_ms", "1\x00"), r":2: total_ms: '1\\x00'"),
        ):
            path = self.csv_with(edit)
            with self.subTest(case=expect):
                self.flagged(path, expect)

    def test_not_utf8(self):
        _, path = self.put(b"experiment,\xff\xfe\n", "results.csv")
        self.flagged(path, "not UTF-8 text: byte 11")


class LimitsTest(Hostile):
    """A calibration file: NaN, negative bandwidth, not JSON, not a file."""

    def test_cases(self):
        cal = self.doc["provenance"].get("calibration") or {}
        base = {"schema_version": 2, "provenance": self.doc["provenance"], "calibration": cal}
        _, path = self.put(json.dumps(base).replace("{", '{"x": NaN, ', 1), "limits.json")
        self.flagged(path, "NaN is not a number JSON allows")
        _, path = self.put(json.dumps(base)[:100], "limits.json")
        rc, out, err = script("validate.py", path)  # not JSON: not known to be a limits file
        self.assertIn(rc, (0, 1), err)
        self.assertNotIn("Traceback", err)
        folder = self.folder()
        os.mkfifo(os.path.join(folder, "limits.json"))
        self.refused("validate.py", [folder], "limits.json", "a FIFO, not a file")
        with self.assertRaisesRegex(pr.ResultsError, "NaN"):
            pr.read_limits(self.put(json.dumps(base).replace("{", '{"x": NaN, ', 1),
                                      "l.json")[1])


class WritingTest(Hostile):
    """Every file the scripts write goes to a new file of its folder,
    renamed over the path: a link there is replaced, never written through,
    and a FIFO, a device or a folder there is refused (exit 2, nothing
    written anywhere)."""

    OUTPUTS = {
        "collect --csv": lambda run, out: ("collect.py", [run, "--csv", out]),
        "collect --md": lambda run, out: ("collect.py", [run, "--md", out]),
        "report --out": lambda run, out: ("report.py", [run, "--out", out]),
    }

    def test_a_link_at_the_output_is_refused_and_its_target_untouched(self):
        for what, command in self.OUTPUTS.items():
            folder, victim = self.put("keep me\n", "victim.txt")
            out = os.path.join(folder, "out")
            os.symlink(victim, out)
            name, args = command(self.run_dir, out)
            with self.subTest(output=what):
                self.refused(name, args, out, "a symbolic link is there, not a regular file")
                with open(victim) as f:
                    self.assertEqual(f.read(), "keep me\n")
                self.assertTrue(os.path.islink(out))
                self.assertEqual(sorted(os.listdir(folder)), ["out", "victim.txt"])

    def test_a_fifo_a_device_or_a_folder_is_refused(self):
        for what, command in self.OUTPUTS.items():
            folder = self.folder()
            fifo, sub = os.path.join(folder, "fifo"), os.path.join(folder, "dir")
            os.mkfifo(fifo)
            os.makedirs(sub)
            for out, expect in ((fifo, "a FIFO is there"), (sub, "a folder is there"),
                                ("/dev/null", "a character device is there")):
                name, args = command(self.run_dir, out)
                with self.subTest(output=what, path=out):
                    self.refused(name, args, out, expect)
            self.assertEqual(sorted(os.listdir(folder)), ["dir", "fifo"])

    def test_a_file_there_is_replaced_and_no_temporary_is_left(self):
        for what, command in self.OUTPUTS.items():
            folder, out = self.put("old", "out")
            hard = os.path.join(folder, "hard")
            os.link(out, hard)  # another name of the old file keeps its text
            name, args = command(self.run_dir, out)
            with self.subTest(output=what):
                rc, _, err = script(name, *args)
                self.assertEqual(rc, 0, err)
                with open(out) as f:
                    self.assertNotEqual(f.read(), "old")
                with open(hard) as f:
                    self.assertEqual(f.read(), "old")
                self.assertEqual(sorted(os.listdir(folder)), ["hard", "out"])

    def test_a_folder_that_is_not_there_or_not_writable(self):
        missing = os.path.join(self.tmp, "no", "such", "page.html")
        self.refused("report.py", [self.run_dir, "--out", missing], missing,
                     "cannot write it \\(No such file or directory\\)")
        if os.geteuid() != 0:
            folder = self.folder()
            os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)
            out = os.path.join(folder, "all.csv")
            self.refused("collect.py", [self.run_dir, "--csv", out], out,
                         "cannot write it \\(Permission denied\\)")

    def test_plots_never_through_a_link_nor_outside_their_folder(self):
        folder, victim = self.put("keep me\n", "victim.txt")
        plots = os.path.join(folder, "plots")
        os.makedirs(plots)
        os.symlink(victim, os.path.join(plots, "vector_poly_time.png"))
        # vector_poly alone: drawing the other experiments first proves nothing more.
        self.refused("plot.py", [self.run_dir, "--out", plots, "--experiment", "vector_poly"],
                     "vector_poly_time.png", "a symbolic link is there")
        with open(victim) as f:
            self.assertEqual(f.read(), "keep me\n")
        # An experiment named "../x": its plots stay in --out.
        doc = copy.deepcopy(self.doc)
        for r in doc["results"]:
            if r["experiment"] == "stream_copy":
                r["experiment"] = "../../escaped"
        run, _ = self.put(json.dumps(doc))
        out = os.path.join(self.folder(), "deep", "plots")
        rc, stdout, err = script("plot.py", run, "--out", out, "--experiment", "../../escaped")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(os.listdir(out))[0], "_.._escaped_phases.png")
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(out), "escaped_time.png")))

    def test_plot_out_that_is_a_file(self):
        _, path = self.put("x", "file")
        self.refused("plot.py", [self.run_dir, "--out", path], path, "not a folder")
        inside = os.path.join(path, "plots")
        self.refused("plot.py", [self.run_dir, "--out", inside], inside,
                     "cannot make this folder \\(Not a directory\\)")


class ArgumentsTest(Hostile):
    """Options the scripts cannot act on: a size not measured, numbers that
    are no numbers."""

    def test_plot_n_not_measured(self):
        out = self.folder()
        self.refused("plot.py", [self.run_dir, "--out", out, "--n", "12345"], "--n 12345",
                     "no passed row of that size \\(its sizes: ")
        self.assertEqual(os.listdir(out), [])
        for n, expect in (("1.5", "not a size"), ("-1000", "not a size"), ("nan", "not a finite"),
                          ("inf", "not a finite"), ("1e999", "not a finite")):
            with self.subTest(n=n):
                rc, _, err = script("plot.py", self.run_dir, "--out", out, "--n", n)
                self.assertEqual(rc, 2, err)
                self.assertRegex(err, expect)
                self.assertNotIn("Traceback", err)

    def test_numbers_of_compare_and_report(self):
        for name, option in (("compare.py", "--threshold"), ("compare.py", "--sigmas"),
                             ("compare.py", "--min-noise"), ("report.py", "--threshold")):
            for value in ("nan", "inf", "-inf"):
                args = [self.run_dir] * (2 if name == "compare.py" else 1)
                with self.subTest(script=name, option=option, value=value):
                    rc, _, err = script(name, *args, f"{option}={value}")
                    self.assertEqual(rc, 2, err)
                    self.assertIn("is not a finite number", err)


class ExtremesTest(Hostile):
    """Valid numbers at the edges: a change past a double's range is no
    "+inf%" and no "same"; zero times take no division."""

    def test_a_change_past_a_doubles_range(self):
        base, new = copy.deepcopy(self.doc), copy.deepcopy(self.doc)
        for doc, scale in ((base, 1e-300), (new, 1e300)):
            for r in doc["results"]:
                if r["check"] == "PASS":
                    for p in ("h2d", "kernel", "d2h", "total"):
                        r[f"{p}_ms"] *= scale
                        for s in r["stats"][p]:
                            if r["stats"][p][s] is not None:
                                r["stats"][p][s] *= scale
                    synthetic.scale_repetitions(r, scale)
        b, _ = self.put(json.dumps(base))
        n, _ = self.put(json.dumps(new))
        rc, out, err = script("compare.py", b, n)
        self.assertEqual(rc, 1, err)
        self.assertNotIn("inf%", out)
        self.assertIn("slower", out)
        self.assertNotIn(" same", out)

    def test_zero_times_are_reported(self):
        doc = copy.deepcopy(self.doc)
        for r in doc["results"]:
            if r["check"] == "PASS":
                for p in ("h2d", "kernel", "d2h", "total"):
                    r[f"{p}_ms"] = 0.0
                    r["stats"][p] = {s: 0.0 for s in r["stats"][p]}
                r["gbps"] = r["gflops"] = 0.0
        folder, _ = self.put(json.dumps(doc))
        out = self.folder()
        for name, args in READERS.items():
            with self.subTest(script=name):
                rc, _, err = script(name, *args(folder, out))
                self.assertIn(rc, (0, 1, 2), err)
                self.assertNotIn("Traceback", err)


# Bytes a terminal acts on: C0 controls but \n and \t, DEL, C1 controls
# (as UTF-8), the bidirectional overrides and isolates.
TERMINAL_BYTES = "[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]"


def run(args, timeout=60, env=None):
    """(exit code, stdout, stderr) of a command, decoded as UTF-8 strictly
    (output that is not UTF-8 fails the test); a hang past timeout fails it."""
    try:
        p = subprocess.run(args, capture_output=True, timeout=timeout,
                           env=dict(os.environ, **env) if env else None,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{args}: no answer in {timeout} s (blocked)") from None
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


def run_script(name, *args, **kw):
    return run([sys.executable, os.path.join(SCRIPTS, name), *args], **kw)


class TerminalTest(Hostile):
    """Names from a results file (host name, device, experiment, variant,
    job id, the reason a run stopped) that would retitle or clear the
    terminal, reverse its text or fill it: every script shows them quoted
    (\\xNN) and cut past 200 bytes, as portalab's own messages do; the
    CSV keeps them whole and the report's page keeps them escaped."""

    TITLE = "\x1b]0;owned\x07"
    CLEAR = "\x1b[2J"

    def hostile_doc(self):
        doc = copy.deepcopy(self.doc)
        prov = doc["provenance"]
        prov["host"]["hostname"] = self.TITLE + "node\u202e" + "\u00e9" * 120  # 255 characters at most
        prov["host"]["cpu_model"] = self.CLEAR + "cpu" * 100_000
        prov["slurm"] = {"job_id": self.CLEAR + "9" * 5000, "array_task_id": ""}
        prov["devices"] = [dict(d, name=self.TITLE + "dev\u009b") for d in prov["devices"]]
        for r in doc["results"]:
            r["variant"] = self.CLEAR + "v\u2066" + "w" * 150
        return doc

    def assertSafe(self, output, what):
        self.assertNotRegex(output, TERMINAL_BYTES, f"{what}: raw bytes a terminal acts on")
        self.assertIn("\\x1b", output, f"{what}: the names are quoted, not dropped")
        longest = max(map(len, output.splitlines()), default=0)
        self.assertLess(longest, 4000, f"{what}: a line of {longest} characters")

    def test_every_script_quotes_and_cuts_names(self):
        doc = self.hostile_doc()
        folder, path = self.put(json.dumps(doc))
        out = self.folder()
        for name, args in (("collect.py", [folder]), ("compare.py", [folder, folder]),
                           ("compare.py", [folder, folder, "--markdown"]),
                           ("pct_of_limit.py", [path]),
                           ("plot.py", [folder, "--out", out, "--experiment", self.TITLE])):
            with self.subTest(script=name, args=args[-1]):
                rc, stdout, err = run_script(name, *args)
                self.assertIn(rc, (0, 1, 2), err)
                self.assertNotIn("Traceback", err)
                self.assertSafe(stdout + err, name)

    def test_two_rows_of_an_entry_are_named_quoted(self):
        doc = self.hostile_doc()
        folder = self.folder()
        for run_name in ("a", "b"):
            os.makedirs(os.path.join(folder, run_name))
            self.put(json.dumps(doc), folder=os.path.join(folder, run_name))
        rc, _, err = run_script("compare.py", folder, self.run_dir)
        self.assertEqual(rc, 2, err)
        self.assertSafe(err, "compare.py")

    def test_validate_quotes_the_fields_it_names(self):
        doc = self.hostile_doc()
        doc["results"][1]["check"] = self.TITLE
        _, path = self.put(json.dumps(doc))
        rc, stdout, err = run_script("validate.py", path)
        self.assertEqual(rc, 1, stdout + err)
        self.assertNotRegex(stdout + err, TERMINAL_BYTES)

    def test_the_reason_a_run_stopped(self):
        doc = self.hostile_doc()
        doc["summary"]["incomplete"] = self.TITLE + "disk full" + "!" * 100_000
        folder, path = self.put(json.dumps(doc))
        for name, args in (("collect.py", [folder]), ("pct_of_limit.py", [path]),
                           ("report.py", [folder, "--out", os.path.join(folder, "page.html")])):
            with self.subTest(script=name):
                rc, stdout, err = run_script(name, *args, timeout=300)
                self.assertEqual(rc, 0, err)
                self.assertSafe(stdout + err, name)
                self.assertIn("the run did not finish", err)

    def test_the_csv_keeps_names_whole_and_the_page_escapes_them(self):
        doc = self.hostile_doc()
        folder, _ = self.put(json.dumps(doc))
        table = os.path.join(folder, "all.csv")
        rc, _, err = run_script("collect.py", folder, "--csv", table)
        self.assertEqual(rc, 0, err)
        with open(table, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(rows[0]["hostname"], doc["provenance"]["host"]["hostname"])
        self.assertEqual(rows[0]["job_id"], doc["provenance"]["slurm"]["job_id"])
        page = os.path.join(folder, "page.html")
        rc, _, err = run_script("report.py", folder, "--out", page, timeout=300)
        self.assertEqual(rc, 0, err)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertNotIn("\x1b", html)
        self.assertNotIn("<script", html.lower().replace("<script>", ""))

    def test_the_rule_is_portalabs(self):
        from portalab import text
        for given, expect in (("plain", "plain"), ("a\x1bb", "a\\x1bb"), ("\n\t\r", "\\n\\t\\r"),
                              ("\u202e", "\\xe2\\x80\\xae"), ("\u009b", "\\xc2\\x9b"),
                              ("\u00e9", "\u00e9"), (b"\xff\xc3", "\\xff\\xc3"),
                              ("bad\udcff", "bad\\xff"), ("x" * 201, "x" * 200 + "... (201 bytes)"),
                              ("\u00e9" * 101, "\u00e9" * 100 + "... (202 bytes)")):
            with self.subTest(given=given):
                self.assertEqual(text.shown(given), expect)
        self.assertEqual(text.terminal_safe("a\nb\x07"), "a\nb\\x07")


class TracebackTest(Hostile):
    """What once raised a traceback: report.py --db where the binary fails
    (a store missing a table, --portalab /bin/false), a folder whose name is
    not UTF-8. One line and exit 2, or the page."""

    def store(self):
        db = os.path.join(self.folder(), "s.sqlite")
        p = subprocess.run([os.environ["PORTALAB"], "db", "import", "--db", db, self.run_dir],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db

    def refused_db(self, args, expect):
        rc, stdout, err = run_script("report.py", *args, "--out",
                                     os.path.join(self.folder(), "page.html"), timeout=300)
        lines = err.strip().splitlines()
        self.assertEqual(rc, 2, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(lines), 1, err)
        self.assertRegex(lines[0], expect)
        return lines[0]

    def test_a_binary_that_fails(self):
        db = self.store()
        self.refused_db(["--db", db, "--portalab", "/bin/false"],
                        "^report.py: /bin/false db history --db .* failed \\(exit status 1\\)$")
        fake = os.path.join(self.folder(), "fake")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho '{\"half\": '\nexit 0\n")
        os.chmod(fake, 0o755)
        self.refused_db(["--db", db, "--portalab", fake], "not a JSON answer")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\nkill -9 $$\n")
        self.refused_db(["--db", db, "--portalab", fake], "killed by signal 9")

    def test_a_store_missing_a_table(self):
        db = self.store()
        with sqlite3.connect(db) as c:
            tables = [t for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            c.execute(f"DROP TABLE {tables[0]}")
        self.refused_db(["--db", db], "db history --db .* failed \\(exit status [12]\\)")

    def test_a_folder_whose_name_is_not_utf8(self):
        folder = os.path.join(self.folder(), "bad\udcff\udcfeout")  # b"bad\xff\xfeout"
        shutil.copytree(self.run_dir, folder)
        page = os.path.join(folder, "page.html")
        rc, stdout, err = run_script("report.py", folder, "--out", page, timeout=300)
        self.assertEqual(rc, 0, err)
        self.assertIn("bad\\xff\\xfeout", stdout)
        with open(page, "rb") as f:
            f.read().decode("utf-8")  # the page is UTF-8, the name quoted in it
        for name, args in (("collect.py", [folder]), ("compare.py", [folder, folder]),
                           ("plot.py", [folder, "--out", os.path.join(folder, "plots")]),
                           ("validate.py", [folder]),
                           ("collect.py", [os.path.join(folder, "no\udcff")])):
            with self.subTest(script=name, args=args):
                rc, stdout, err = run_script(name, *args, timeout=300)
                self.assertIn(rc, (0, 2), err)
                self.assertNotIn("Traceback", err)


class BlockingTest(Hostile):
    """Files that would block a read or never end it: a FIFO, /dev/zero, a
    folder, an empty path, where report.py --db, its store's journal or
    timeline.py's report is; a file past the bound of what is read. Refused
    in one line, exit 2, before any open that waits."""

    def test_the_store_and_its_journal(self):
        folder = self.folder()
        fifo = os.path.join(folder, "fifo.sqlite")
        os.mkfifo(fifo)
        db = os.path.join(folder, "s.sqlite")
        p = subprocess.run([os.environ["PORTALAB"], "db", "import", "--db", db, self.run_dir],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        os.mkfifo(db + "-journal")
        out = os.path.join(folder, "page.html")
        for path, expect in ((fifo, "a FIFO, not a results store"),
                             ("/dev/zero", "a character device, not a results store"),
                             (folder, "a folder, not a results store"),
                             ("", "'' is not a results store"),
                             (db, "s.sqlite-journal: a FIFO, not a file of SQLite")):
            with self.subTest(db=path):
                rc, _, err = run_script("report.py", "--db", path, "--out", out, timeout=60)
                self.assertEqual(rc, 2, err)
                self.assertRegex(err, expect)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertFalse(os.path.exists(out))

    def test_a_profile_that_is_no_file(self):
        folder = self.folder()
        fifo = os.path.join(folder, "report.sqlite")
        os.mkfifo(fifo)
        for path, expect in ((fifo, "a FIFO, not an Nsight Systems export"),
                             ("/dev/zero", "a character device"), (folder, "a folder")):
            with self.subTest(report=path):
                rc, _, err = run_script("timeline.py", path, "--out",
                                        os.path.join(folder, "t.png"), timeout=60)
                self.assertEqual(rc, 2, err)
                self.assertRegex(err, expect)

    def test_references_and_results_past_the_bound(self):
        _, path = self.put("x" * 101)
        with self.assertRaisesRegex(pr.ResultsError, "more than 100 bytes"):
            pr.read_bytes(path, 100)
        self.assertEqual(len(pr.read_bytes(path, 101)), 101)
        # A calibration file is read as portalab reads it: 16 MiB at most.
        _, big = self.put(b" " * (pr.LIMITS_MAX_BYTES + 1), "limits.json")
        with self.assertRaisesRegex(pr.ResultsError, "more than 16777216 bytes"):
            pr.read_limits(big)


class IncompleteTest(Hostile):
    """A run that did not finish (killed: its journal; out of disk: its
    summary's "incomplete") or was interrupted: every script that reads it
    says so on stderr, as report.py does, and reads its completed rows."""

    def runs(self):
        stopped = copy.deepcopy(self.doc)
        stopped["summary"]["incomplete"] = "results.json could not be written (No space left on device)"
        interrupted = copy.deepcopy(self.doc)
        interrupted["summary"]["interrupted"] = {"signal": "SIGTERM", "abandoned": "", "not_run": 4}
        killed = json.dumps({"schema_version": self.doc["schema_version"],
                             "provenance": self.doc["provenance"]}) + "\n" + json.dumps(
            {"first": 0, "rows": self.doc["results"][:3]}) + "\n"
        return [(self.put(json.dumps(stopped))[0], "the run did not finish \\(results.json could not"),
                (self.put(json.dumps(interrupted))[0], "the run was interrupted by SIGTERM: .* 4 not run"),
                (self.put(killed, "results.jsonl")[0], "the run did not finish \\(the run did not finish: rows read from its journal")]

    def test_every_reader_says_so(self):
        out = self.folder()
        for folder, expect in self.runs():
            path = os.path.join(folder, "results.json")
            for name, args in (("collect.py", [folder]), ("compare.py", [folder, self.run_dir]),
                               ("compare.py", [self.run_dir, folder]),
                               # One experiment's rows drawn are rows read (the
                               # killed run's are vector_poly's, the deck's first).
                               ("plot.py", [folder, "--out", os.path.join(out, "plots"),
                                            "--experiment", "vector_poly"]),
                               ("pct_of_limit.py", [path]),
                               ("roofline.py", [path, "--out", out])):
                with self.subTest(script=name, run=expect):
                    rc, _, err = run_script(name, *args, timeout=300)
                    self.assertIn(rc, (0, 1, 2), err)
                    self.assertNotIn("Traceback", err)
                    self.assertRegex(err, f"{name}: {re.escape(folder)}/results.json: {expect}")

    def test_no_rows_left_is_one_line_saying_why(self):
        # A journal killed before its first row: the refusal for want of
        # rows carries the reason in its one line, with no warning before it.
        killed = json.dumps({"schema_version": self.doc["schema_version"],
                             "provenance": self.doc["provenance"]}) + "\n"
        folder, _ = self.put(killed, "results.jsonl")
        out = self.folder()
        for name, args in (("compare.py", [self.run_dir, folder]),
                           ("plot.py", [folder, "--out", os.path.join(out, "plots")])):
            with self.subTest(script=name):
                self.refused(name, args, folder, "the run did not finish")


class EnvironmentTest(Hostile):
    """The variables of the environment the scripts read (PORTALAB, the
    binary report.py --db runs): an empty or wrong value is refused in one
    line naming it, never skipped for another binary."""

    def test_portalab(self):
        db = os.path.join(self.folder(), "s.sqlite")
        p = subprocess.run([os.environ["PORTALAB"], "db", "import", "--db", db, self.run_dir],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        for value, expect in (("", "PORTALAB=: empty"),
                              ("/no/such/portalab", "PORTALAB=/no/such/portalab: no executable"),
                              (self.tmp, "no executable"),
                              ("\x1b[2J", "PORTALAB=\\\\x1b\\[2J: no executable")):
            with self.subTest(value=value):
                rc, _, err = run_script("report.py", "--db", db, "--out",
                                        os.path.join(self.folder(), "p.html"),
                                        env={"PORTALAB": value}, timeout=300)
                self.assertEqual(rc, 2, err)
                self.assertRegex(err, expect)
                self.assertNotRegex(err, TERMINAL_BYTES)
        rc, _, err = run_script("report.py", "--db", db, "--portalab", "",
                                "--out", os.path.join(self.folder(), "p.html"))
        self.assertEqual(rc, 2, err)
        self.assertIn("--portalab ''", err)


if __name__ == "__main__":
    if not os.environ.get("PORTALAB"):
        sys.exit("PORTALAB (the portalab binary) is not set")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit(SKIP)
    unittest.main(verbosity=2)
