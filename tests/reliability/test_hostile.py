"""What portalab writes and prints, in a hostile place: a link, a pipe or a
folder where a result file goes, a folder holding an earlier run's results,
a full or closed standard stream, control bytes and megabyte names in what
it echoes. Each class of case is a test class; every case runs the real
binary, under a timeout (a pipe must never make it hang).

    PORTALAB=build/host/portalab python3 tests/reliability/test_hostile.py [TestClass...]
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_reliability import ENV  # noqa: E402

from portalab import results as portalab_results  # noqa: E402  (scripts/, on the path test_reliability set)

RESULT_FILES = ("results.jsonl", "results.json", "results.csv")
# Two small Serial entries: a run of a second or two.
SMALL_DECK = ('calibrate = "none"\nreps = 2\nwarmups = 0\ncopies = "none"\nspaces = ["Serial"]\n'
              '[vector_poly]\nsizes = [1000]\nvariants = ["fused"]\ndtypes = ["float64"]\n'
              '[stream_copy]\nsizes = [1000]\nvariants = ["kernel"]\n')
VICTIM_TEXT = "another user's file\n"


def portalab(*args, env=ENV, timeout=120, **kw):
    return subprocess.run([os.path.abspath(os.environ["PORTALAB"]), *args], env=env,
                          capture_output=True, text=True, timeout=timeout, **kw)


def through_shell(redirect, *args, timeout=120):
    """portalab run under `sh -c 'exec portalab ARGS REDIRECT'` (a closed or
    full stream); stdout and stderr captured where the redirect leaves them."""
    command = "exec \"$0\" \"$@\" " + redirect
    return subprocess.run(["sh", "-c", command, os.path.abspath(os.environ["PORTALAB"]), *args],
                          env=ENV, capture_output=True, text=True, timeout=timeout)


class Case(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_hostile_")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.deck = self.path("deck.toml")
        with open(self.deck, "w") as f:
            f.write(SMALL_DECK)
        self.out = self.path("out")
        self.victim = self.path("victim.txt")
        with open(self.victim, "w") as f:
            f.write(VICTIM_TEXT)

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def run_deck(self, *extra, out=None, **kw):
        return portalab("run", self.deck, *extra, "--out", out or self.out, **kw)

    def assert_refused(self, p, *said):
        self.assertEqual(p.returncode, 2, p.stdout[-1000:] + p.stderr[-2000:])
        for s in said:
            self.assertIn(s, p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def assert_victim_untouched(self):
        with open(self.victim) as f:
            self.assertEqual(f.read(), VICTIM_TEXT)

    def assert_complete(self, p, out=None):
        """A run that exited 0 with both files whole and its journal gone."""
        out = out or self.out
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        portalab_results.check_files(os.path.join(out, "results.json"),
                                     os.path.join(out, "results.csv"))
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(len(doc["results"]), 2)
        self.assertFalse(os.path.exists(os.path.join(out, "results.jsonl")))
        return doc


class LinkTest(Case):
    """A symbolic link where a file is written is refused (exit 2, the path
    and what it is said, nothing measured); its target is never written."""

    def test_a_link_at_each_result_file(self):
        for name in RESULT_FILES:
            for target in (self.victim, self.path("no-such-file")):
                with self.subTest(name=name, target=target):
                    shutil.rmtree(self.out, ignore_errors=True)
                    os.makedirs(self.out)
                    os.symlink(target, os.path.join(self.out, name))
                    p = self.run_deck()
                    self.assert_refused(p, os.path.join(self.out, name), "is a symbolic link",
                                        f"(to '{target}')")
                    self.assertNotIn("[1/2]", p.stderr)  # refused before measuring
                    self.assert_victim_untouched()
                    self.assertFalse(os.path.exists(self.path("no-such-file")))
                    self.assertTrue(os.path.islink(os.path.join(self.out, name)))

    def test_a_link_as_the_calibration_file(self):
        cal = self.path("cal.json")
        os.symlink(self.victim, cal)
        p = portalab("calibrate", "--quick", "--spaces", "Serial", "--out", cal)
        self.assert_refused(p, cal, "is a symbolic link")
        self.assertNotIn("measurement of", p.stderr)  # before 30 s of measuring
        self.assert_victim_untouched()

    def test_a_link_as_the_store_or_its_journal(self):
        # `portalab db import` writes one SQLite file and, beside it, its journal.
        self.assert_complete(self.run_deck())
        for name in ("store.sqlite", "store.sqlite-journal", "store.sqlite-wal"):
            with self.subTest(name=name):
                link = self.path(name)
                os.symlink(self.victim, link)
                p = portalab("db", "import", self.out, "--db", self.path("store.sqlite"))
                self.assert_refused(p, f"{link} is a symbolic link")
                self.assert_victim_untouched()
                os.remove(link)

    def test_a_linked_out_folder_is_followed_and_nothing_in_it(self):
        # The --out path is the user's own: a link to a folder is followed;
        # inside it, a link at a result file is refused all the same.
        real = self.path("real")
        os.makedirs(real)
        os.symlink(real, self.out)
        self.assert_complete(self.run_deck())
        self.assertTrue(os.path.isfile(os.path.join(real, "results.json")))
        shutil.rmtree(real)
        os.makedirs(real)
        os.symlink(self.victim, os.path.join(real, "results.csv"))
        self.assert_refused(self.run_deck(), "results.csv is a symbolic link")
        self.assert_victim_untouched()


class SpecialFileTest(Case):
    """A named pipe, a folder or a device where a file is written is refused
    at once, saying what is there: never opened (a pipe would block)."""

    def test_a_pipe_or_a_folder_at_each_result_file(self):
        for name in RESULT_FILES:
            for kind, make, said in (("pipe", os.mkfifo, "is a named pipe (FIFO)"),
                                     ("folder", os.makedirs, "is a folder")):
                with self.subTest(name=name, kind=kind):
                    shutil.rmtree(self.out, ignore_errors=True)
                    os.makedirs(self.out)
                    make(os.path.join(self.out, name))
                    p = self.run_deck(timeout=60)
                    self.assert_refused(p, os.path.join(self.out, name), said)

    def test_a_device_through_a_link(self):
        os.makedirs(self.out)
        os.symlink("/dev/null", os.path.join(self.out, "results.json"))
        self.assert_refused(self.run_deck(), "results.json is a symbolic link (to '/dev/null')")

    def test_special_files_as_the_out_folder(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        for out, said in ((fifo, "is a named pipe (FIFO), not a folder"),
                          ("/dev/null", "is a character device, not a folder"),
                          (self.victim, "is a file, not a folder")):
            with self.subTest(out=out):
                self.assert_refused(self.run_deck(out=out, timeout=60), out, said)
        self.assert_victim_untouched()

    def test_special_files_as_the_calibration_file(self):
        fifo = self.path("cal.json")
        os.mkfifo(fifo)
        for cal, said in ((fifo, "is a named pipe (FIFO)"), (self.tmp, "is a folder"),
                          ("/dev/null", "is a character device")):
            with self.subTest(cal=cal):
                p = portalab("calibrate", "--quick", "--spaces", "Serial", "--out", cal,
                             timeout=60)
                self.assert_refused(p, said)

    def test_a_pipe_as_the_deck_never_blocks(self):
        fifo = self.path("pipe.toml")
        os.mkfifo(fifo)
        for extra in ([], ["--dry-run"]):
            self.assert_refused(portalab("run", fifo, *extra, timeout=60),
                                "a named pipe (FIFO), not a deck file")


class EarlierResultsTest(Case):
    """A folder holding an earlier run's results, finished or not, is kept:
    its files are moved into previous-<time>/ there, said, never replaced."""

    def previous(self):
        return sorted(glob.glob(os.path.join(self.out, "previous-*")))

    def test_a_finished_run_is_moved_aside(self):
        first = self.assert_complete(self.run_deck())
        with open(os.path.join(self.out, "results.json")) as f:
            first_text = f.read()
        p = self.run_deck()
        self.assert_complete(p)
        [aside] = self.previous()
        self.assertIn(f"moved to {aside}/", p.stderr)
        with open(os.path.join(aside, "results.json")) as f:
            self.assertEqual(f.read(), first_text)  # byte for byte
        self.assertTrue(os.path.isfile(os.path.join(aside, "results.csv")))
        portalab_results.check_files(aside)
        self.assertEqual(len(first["results"]), 2)
        # A third run keeps both earlier ones.
        self.assert_complete(self.run_deck())
        self.assertEqual(len(self.previous()), 2)

    def test_a_killed_runs_journal_is_moved_aside_whole(self):
        deck = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "decks",
                            "long_run.toml")
        proc = subprocess.Popen([os.environ["PORTALAB"], "run", deck, "--set", "calibrate=none",
                                 "--out", self.out], env=ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        journal = os.path.join(self.out, "results.jsonl")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if len(portalab_results.read_document(
                        os.path.join(self.out, "results.json"))["results"]) >= 2:
                    break
            except (OSError, ValueError, KeyError, portalab_results.ResultsError):
                pass
            time.sleep(0.02)
        proc.kill()
        proc.wait(timeout=60)
        with open(journal) as f:
            journal_text = f.read()
        rows = len(portalab_results.read_document(os.path.join(self.out, "results.json"))["results"])
        self.assertGreaterEqual(rows, 2)
        p = self.run_deck()
        self.assert_complete(p)
        [aside] = self.previous()
        self.assertIn("its journal says it did not finish", p.stderr)
        with open(os.path.join(aside, "results.jsonl")) as f:
            self.assertEqual(f.read(), journal_text)
        kept = portalab_results.read_document(os.path.join(aside, "results.json"))
        self.assertEqual(len(kept["results"]), rows)

    def test_a_dry_run_and_a_refused_run_move_nothing(self):
        self.assert_complete(self.run_deck())
        self.assertEqual(self.run_deck("--dry-run", "--set", "calibrate=none").returncode, 0)
        self.assert_refused(self.run_deck("--set", "reps=0"), "reps")
        self.assertEqual(self.previous(), [])


class StdoutTest(Case):
    """A failed write to stdout is an error in every command: exit 1 (or the
    worse code the command had), said on stderr; the result files stand."""

    def test_every_command_into_dev_full(self):
        for args in (["run", self.deck, "--out", self.out], ["run", self.deck, "--dry-run"],
                     ["info"], ["list"], ["list", "--decks"], ["list", "--format", "json"],
                     ["help"], ["help", "run"], ["run", "--help"], ["--version"],
                     ["calibrate", "--quick", "--spaces", "Serial"]):
            with self.subTest(args=args):
                shutil.rmtree(self.out, ignore_errors=True)
                p = through_shell(">/dev/full", *args)
                self.assertEqual(p.returncode, 1, p.stderr[-2000:])
                self.assertIn("error: standard output could not be written", p.stderr)
                if "--out" in args:
                    self.assertEqual(len(json.load(open(os.path.join(self.out,
                                                                     "results.json")))["results"]), 2)

    def test_bad_input_keeps_its_own_code(self):
        p = through_shell(">/dev/full", "run", self.path("no-such-deck.toml"))
        self.assertEqual(p.returncode, 2, p.stderr[-2000:])


class ClosedStreamTest(Case):
    """A closed stdin, stdout or stderr stops nothing and loses no file."""

    def test_closed_stderr(self):
        p = through_shell("2>&-", "run", self.deck, "--out", self.out)
        self.assert_complete(p)  # no message landed in a result file
        with open(os.path.join(self.out, "results.csv")) as f:
            self.assertTrue(f.readline().startswith("experiment"))

    def test_closed_stdin(self):
        self.assert_complete(through_shell("<&-", "run", self.deck, "--out", self.out))

    def test_closed_stdout(self):
        p = through_shell(">&-", "run", self.deck, "--out", self.out)
        self.assertEqual(p.returncode, 1, p.stderr[-2000:])
        self.assertIn("error: standard output was closed", p.stderr)
        with open(os.path.join(self.out, "results.json")) as f:
            self.assertEqual(len(json.load(f)["results"]), 2)
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.jsonl")))

    def test_all_three_closed_and_a_bad_deck(self):
        p = through_shell("<&- >&- 2>&-", "run", self.path("missing.toml"))
        self.assertEqual(p.returncode, 2)
        p = through_shell("<&- >&- 2>&-", "run", self.deck, "--out", self.out)
        self.assertEqual(p.returncode, 1)  # stdout closed
        with open(os.path.join(self.out, "results.json")) as f:
            self.assertEqual(len(json.load(f)["results"]), 2)


def control_free(testcase, text, most=4096):
    """No terminal control in text, and not the megabyte it was given."""
    for byte in ("\x1b", "\x07", "\x9b", "\r", "\x00", "\u202e"):
        testcase.assertNotIn(byte, text)
    testcase.assertLess(len(text), most)


class UntrustedTextTest(Case):
    """Whatever a deck, the command line or a file puts in a message is shown
    with its control bytes quoted (\\x1b) and cut past 200 bytes."""

    def deck_with(self, text):
        with open(self.deck, "w") as f:
            f.write(text)
        return self.deck

    def test_deck_values(self):
        # TOML refuses raw control bytes in a string; its escapes make them.
        esc = "a\\u001b]0;pwned\\u0007\\u001b[2J"
        big = "v" * 1_000_000
        for text, said in (
                (f'[vector_poly]\nvariants = ["{esc}"]\n', "'a\\x1b]0;pwned\\x07\\x1b[2J' is not one of"),
                (f'[vector_poly]\nvariants = ["{big}"]\n', "... (1000000 bytes)' is not one of"),
                (f'[vector_poly]\n"{esc}" = 1\n', "unknown key 'a\\x1b]0;pwned"),
                (f'["{esc}"]\n', "unknown experiment [a\\x1b]0;pwned"),
                (f'"{big}" = 1\n[vector_poly]\n', "... (1000000 bytes)' at the top"),
                (f'[vector_poly]\ndtypes = ["{esc}"]\n', "'a\\x1b]0;pwned"),
                (f'[dot_distributed]\nscaling = "{esc}"\n', "got \"a\\x1b]0;pwned"),
                (f'[vector_poly]\nsizes = {{ from = 1, to = 2, factor = 2, "{esc}" = 3 }}\n',
                 "unknown key 'a\\x1b"),
                ('[vector_poly]\nsizes = [1\x1b]\n', "invalid TOML"),
                ('[vector_poly]\nvariants = ["a\x1b"]\n', "invalid TOML"),
                ('[vector_poly]\nvariants = ["\u202eevil"]\n', "'\\xe2\\x80\\xaeevil'"),
                ('[vector_poly]\nvariants = ["\\u009b2J"]\n', "'\\xc2\\x9b2J'")):
            with self.subTest(said=said):
                p = portalab("run", self.deck_with(text))
                self.assert_refused(p, said)
                control_free(self, p.stderr)

    def test_command_line_values(self):
        esc = "x\x1b[31mred\x07"
        big = "y" * 100_000
        for args, said in (
                (["run", self.deck, "--set", f"vector_poly.variants={esc}"], "'--set vector_poly"),
                (["run", self.deck, "--set", f"vector_poly.variants=[\"{esc}\"]"], "x\\x1b[31mred"),
                (["run", self.deck, "--set", f"vector_poly.{esc}=1"], "x\\x1b[31mred"),
                (["run", self.deck, "--set", f"{esc}.sizes=1"], "x\\x1b[31mred"),
                (["run", self.deck, "--set", f"vector_poly.variants={big}"], "(100021 bytes)"),
                (["run", self.path(esc)], "x\\x1b[31mred"),
                (["run", self.path(big)], "bytes)"),
                ([esc], "'x\\x1b[31mred\\x07' is not a portalab command"),
                ([big], "(100000 bytes)' is not a portalab command"),
                (["run", self.deck, f"--{esc}"], "unknown option '--x\\x1b"),
                (["run", self.deck, "--energy", esc], "x\\x1b[31mred"),
                (["run", self.deck, "--spaces", esc], "'x\\x1b[31mred\\x07' is not one of"),
                (["run", self.deck, f"--kokkos-num-threads={esc}"], "got 'x\\x1b[31mred"),
                (["info", f"--kokkos-{esc}"], "'--kokkos-x\\x1b[31mred\\x07': unknown Kokkos"),
                (["run", self.deck, "--calibration", self.path(esc)], "x\\x1b[31mred"),
                (["run", self.deck, "--out", os.path.join(self.victim, esc)], "x\\x1b[31mred"),
                (["help", esc], "x\\x1b[31mred")):
            with self.subTest(args=[a[:40] for a in args]):
                p = portalab(*args)
                self.assert_refused(p, said)
                control_free(self, p.stderr)

    def test_environment_values(self):
        p = portalab("info", env=dict(ENV, KOKKOS_NUM_THREADS="2\x1b]0;x\x07"))
        self.assert_refused(p, "KOKKOS_NUM_THREADS=2\\x1b]0;x\\x07")
        control_free(self, p.stderr)

    def test_a_calibration_file_of_hostile_text(self):
        cal = self.path("cal.json")
        with open(cal, "w") as f:
            json.dump({"schema_version": "\x1b]0;x\x07" + "z" * 100_000}, f)
        p = portalab("run", self.deck, "--calibration", cal)
        self.assert_refused(p, "schema_version")
        control_free(self, p.stderr)

    def test_a_written_path_of_control_bytes(self):
        out = self.path("out\x1b[2J")
        p = portalab("run", self.deck, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn("out\\x1b[2J/results.csv", p.stdout)
        control_free(self, p.stdout, most=100_000)
        control_free(self, p.stderr)


class LeftoversTest(Case):
    """Last round's cases: each names its real source."""

    def test_a_table_given_to_a_top_level_key_by_set(self):
        for value in ("reps={a=1}", "warmups={}", "spaces={x=1}"):
            with self.subTest(value=value):
                p = portalab("run", self.deck, "--set", value)
                self.assert_refused(p, f"error: '--set {value}'")
                self.assertNotIn("deck.toml:", p.stderr)

    def test_top_level_keys_are_named_as_such(self):
        for text, said in (("reps = 0\n", "deck.toml:1:8: top-level reps expects"),
                           ("warmups = -1\n", "deck.toml:1:11: top-level warmups expects"),
                           ('dtypes = ["float16"]\n',
                            "deck.toml:1:11: top-level dtypes (for [vector_poly]): 'float16'"),
                           ('copies = ["zero"]\n', "deck.toml:1:11: top-level copies: 'zero'"),
                           ("ranks = 0\n", "deck.toml:1:9: top-level ranks expects")):
            with self.subTest(text=text):
                with open(self.deck, "w") as f:
                    f.write(text + "[vector_poly]\nsizes = [10]\n")
                self.assert_refused(portalab("run", self.deck), said)
        with open(self.deck, "w") as f:
            f.write("reps = 5\n[vector_poly]\nreps = 0\n")
        self.assert_refused(portalab("run", self.deck), "deck.toml:3:8: [vector_poly] reps expects")

    def test_a_signal_during_calibration_abandons_no_entry(self):
        proc = subprocess.Popen([os.environ["PORTALAB"], "run", self.deck, "--set",
                                 "calibrate=quick", "--out", self.out], env=ENV,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in proc.stderr:
            if "calibrate: measuring" in line:
                break
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err[-2000:])
        # Stopped before any row: it says so, and leaves no file that would
        # read as a run (issue 58: not "results so far are kept").
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.json")))
        self.assertIn("no row was measured and nothing was written in", err)


if __name__ == "__main__":
    if "PORTALAB" not in os.environ:
        sys.exit("PORTALAB (the portalab binary) is not set")
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])
