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
import stat
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_scripts import SKIP, Base, script  # noqa: E402

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
        self.refused("plot.py", [self.run_dir, "--out", plots], "vector_poly_time.png",
                     "a symbolic link is there")
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


if __name__ == "__main__":
    if not os.environ.get("PORTALAB"):
        sys.exit("PORTALAB (the portalab binary) is not set")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit(SKIP)
    unittest.main(verbosity=2)
