"""A run must never lose what it measured: signalled, killed, short of memory.

    PORTALAB=build/host/portalab PORTALAB_FAIL_ALLOC=build/host/tests/libportalab_fail_alloc.so \
        python3 tests/reliability/test_reliability.py [TestClass...]

Each test runs the real binary on tests/decks/long_run.toml (ten Serial
entries, many repetitions, so that a run lasts seconds), disturbs it, then
parses the result files it left.
"""
import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECK = os.path.join(SOURCE, "tests", "decks", "long_run.toml")
ENV = dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false")


def read_results(out):
    """Both files, parsed; fails the test if either is missing or malformed."""
    with open(os.path.join(out, "results.json")) as f:
        doc = json.load(f)
    with open(os.path.join(out, "results.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    return doc, rows


def entries_written(out):
    try:
        with open(os.path.join(out, "results.json")) as f:
            return len(json.load(f)["results"])
    except (OSError, ValueError, KeyError):
        return 0


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_reliability_")
        self.out = os.path.join(self.tmp, "out")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self, *extra, calibrate="none", env=ENV, **kw):
        return subprocess.Popen([os.environ["PORTALAB"], "run", DECK, *extra,
                                 "--set", f"calibrate={calibrate}",
                                 "--out", self.out], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)

    def wait_for_entries(self, proc, count, timeout=120):
        deadline = time.monotonic() + timeout
        while entries_written(self.out) < count:
            self.assertIsNone(proc.poll(), "the run ended before it could be disturbed")
            self.assertLess(time.monotonic(), deadline, "no results appeared")
            time.sleep(0.02)

    def assert_consistent(self, doc, rows, same_length=True):
        results = doc["results"]
        # The CSV is renamed into place before the JSON: killed between the
        # two, it may hold one entry more.
        extra = len(rows) - len(results)
        self.assertEqual(extra, 0) if same_length else self.assertIn(extra, (0, 1))
        for row, r in zip(rows, results):
            self.assertEqual((row["experiment"], row["variant"], row["dtype"], row["copies"]),
                             (r["experiment"], r["variant"], r["dtype"], r["copies"]))
        self.assertEqual(doc["summary"]["entries"], len(results))
        for r in results:
            self.assertEqual(r["check"], "PASS", r)
            self.assertGreater(r["kernel_ms"], 0)


class SignalTest(Base):
    def interrupt(self, sig, code):
        proc = self.start()
        self.wait_for_entries(proc, 2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)  # the entry in progress is abandoned
        self.assertEqual(proc.returncode, code, err[-2000:])
        self.assertIn("stopping at the next safe point", err)
        doc, rows = read_results(self.out)
        self.assert_consistent(doc, rows)
        stop = doc["summary"]["interrupted"]
        self.assertEqual(stop["signal"], signal.Signals(sig).name)
        self.assertGreaterEqual(len(rows), 2)
        self.assertEqual(len(rows) + stop["not_run"], 10)
        self.assertNotEqual(stop["abandoned"], "")

    def test_sigterm_keeps_results_and_exits_143(self):
        self.interrupt(signal.SIGTERM, 128 + signal.SIGTERM)

    def test_sigint_keeps_results_and_exits_130(self):
        self.interrupt(signal.SIGINT, 128 + signal.SIGINT)

    def test_signal_during_calibration_stops_before_the_first_entry(self):
        proc = self.start(calibrate="quick")
        self.wait_for_stderr(proc, "calibrate: measuring")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err[-2000:])
        doc, rows = read_results(self.out)
        self.assertEqual((len(rows), len(doc["results"])), (0, 0))
        self.assertEqual(doc["summary"]["interrupted"]["not_run"], 10)

    def test_second_signal_stops_at_once(self):
        # Calibration has no safe point: the first signal waits for its end,
        # the second (not merged with the first: it comes after the message)
        # ends the process as SIGTERM's default action does.
        proc = self.start(calibrate="quick")
        self.wait_for_stderr(proc, "calibrate: measuring")
        proc.send_signal(signal.SIGTERM)
        self.wait_for_stderr(proc, "stopping at the next safe point")
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, -signal.SIGTERM)

    def wait_for_stderr(self, proc, text):
        for line in proc.stderr:
            if text in line:
                return
        self.fail(f"the run ended without printing '{text}'")


class Kill9Test(Base):
    def test_kill_9_leaves_valid_files(self):
        # Killed at several moments, one of them likely mid-write: each time
        # the files hold every entry completed before, and parse.
        for after, delay in [(1, 0.0), (2, 0.013), (3, 0.031)]:
            shutil.rmtree(self.out, ignore_errors=True)
            proc = self.start()
            self.wait_for_entries(proc, after)
            time.sleep(delay)
            proc.kill()
            proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, -signal.SIGKILL)
            doc, rows = read_results(self.out)
            self.assert_consistent(doc, rows, same_length=False)
            self.assertGreaterEqual(len(doc["results"]), after)


class MemoryTest(Base):
    def run_deck(self, sizes, env=ENV, preexec_fn=None):
        p = subprocess.run([os.environ["PORTALAB"], "run", DECK,
                            "--set", "calibrate=none", "--set", "reps=2", "--set", "warmups=0",
                            "--set", f"vector_poly.sizes={sizes}", "--set",
                            "vector_poly.variants=[\"fused\"]", "--set", "vector_poly.dtypes=[\"float64\"]",
                            "--set", "stream_copy.sizes=[1000]", "--set", 'copies=["none"]',
                            "--out", self.out], env=env, preexec_fn=preexec_fn,
                           capture_output=True, text=True, timeout=300)
        doc, rows = read_results(self.out)
        self.assertEqual(len(rows), len(doc["results"]))
        return p, {(r["experiment"], r["n"]): r for r in doc["results"]}

    def test_failed_allocation_is_skipped_and_the_run_goes_on(self):
        library = os.environ.get("PORTALAB_FAIL_ALLOC")
        if not library:
            self.skipTest("PORTALAB_FAIL_ALLOC (the preload library) is not set")
        # 1e7 float64 = 80 MB per array: past the check, refused by the allocator.
        env = dict(ENV, LD_PRELOAD=library, PORTALAB_FAIL_ALLOC_BYTES=str(64 << 20))
        p, results = self.run_deck("[1000,10000000,2000]", env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        failed = results[("vector_poly", 10000000)]
        self.assertEqual(failed["check"], "SKIPPED")
        self.assertIn("allocation of", failed["note"])
        self.assertIn("failed to allocate", failed["note"])
        for key in [("vector_poly", 1000), ("vector_poly", 2000), ("stream_copy", 1000)]:
            self.assertEqual(results[key]["check"], "PASS", key)
        self.assertIn("1 skipped", p.stdout)

    def test_address_space_limit_is_checked_before_allocating(self):
        # ulimit -v 2 GiB: 1e8 float64 needs 4 GB, which MemAvailable alone
        # would allow on most machines; the check must see the limit.
        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        p, results = self.run_deck("[1000,100000000]", preexec_fn=limit)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        big = results[("vector_poly", 100000000)]
        self.assertEqual(big["check"], "SKIPPED")
        self.assertIn("needs 3.73 GiB", big["note"])
        self.assertEqual(results[("vector_poly", 1000)]["check"], "PASS")


if __name__ == "__main__":
    if "PORTALAB" not in os.environ:
        sys.exit("PORTALAB (the portalab binary) is not set")
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])
