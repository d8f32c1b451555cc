"""A run must never lose what it measured: signalled, killed, short of memory,
short of disk, given hostile options.

    PORTALAB=build/host/portalab PORTALAB_FAIL_ALLOC=build/host/tests/libportalab_fail_alloc.so \
        python3 tests/reliability/test_reliability.py [TestClass...]

Each test runs the real binary on tests/decks/long_run.toml (ten Serial
entries, many repetitions, so that a run lasts seconds), disturbs it, then
parses the result files it left.
"""
import csv
import glob
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
sys.path.insert(0, os.path.join(SOURCE, "scripts"))

from portalab import results as portalab_results  # noqa: E402  (reads the journal of a run that did not finish)


def compiled_spaces():
    """The spaces the binary was built with, as `portalab list` says them."""
    out = subprocess.run([os.environ["PORTALAB"], "list"], env=ENV, capture_output=True,
                         text=True, timeout=60).stdout
    for line in out.splitlines():
        if line.startswith("spaces compiled in:"):
            return [s.strip() for s in line.split(":", 1)[1].split(",")]
    raise AssertionError("portalab list names no spaces:\n" + out)


def read_results(out):
    """Both files, parsed and valid against schema/ (the journal too, if
    left); fails the test if either is missing or malformed."""
    portalab_results.check_files(out)
    with open(os.path.join(out, "results.json")) as f:
        doc = json.load(f)
    with open(os.path.join(out, "results.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    return doc, rows


def read_journal(out):
    """The rows a run recorded, read as the scripts read them (the journal
    while it lies there, else results.json), its files valid against schema/."""
    portalab_results.check_files(out)
    return portalab_results.read_document(os.path.join(out, "results.json"))


def entries_written(out):
    """Entries recorded so far by a run still writing (not validated: its
    files change as they are read)."""
    try:
        return len(portalab_results.read_document(os.path.join(out, "results.json"))["results"])
    except (OSError, ValueError, KeyError, portalab_results.ResultsError):
        return 0


def leftovers(out):
    """Temporary files a run left behind."""
    return glob.glob(os.path.join(out, "*.tmp")) + glob.glob(os.path.join(out, ".portalab-probe*"))


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
        # A finished run leaves its two files only.
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.jsonl")))
        self.assertEqual(leftovers(self.out), [])


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
        # The entry in progress; none when the signal came between two.
        if stop["abandoned"]:
            self.assertIn(" n=1000000", stop["abandoned"])

    def test_sigterm_keeps_results_and_exits_143(self):
        self.interrupt(signal.SIGTERM, 128 + signal.SIGTERM)

    def test_sigint_keeps_results_and_exits_130(self):
        self.interrupt(signal.SIGINT, 128 + signal.SIGINT)

    def test_every_signal_that_ends_a_job_is_handled_like_sigterm(self):
        # A closed terminal, a batch system's warning or CPU limit, Ctrl-\, a
        # reader of stdout gone: each would otherwise kill the run at once.
        for sig in (signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGXCPU,
                    signal.SIGQUIT, signal.SIGPIPE):
            with self.subTest(signal=sig.name):
                shutil.rmtree(self.out, ignore_errors=True)
                self.interrupt(sig, 128 + sig)

    def test_a_signal_in_a_later_pass_keeps_what_the_earlier_one_measured(self):
        # In passes, the deck's rows come with its last pass: a signal after
        # the first keeps each row as the first pass measured it, and says
        # so; none is lost, none is left without its repetitions.
        deck = os.path.join(self.tmp, "passes.toml")
        with open(deck, "w") as f:
            f.write(open(DECK).read().replace("reps = 300\nwarmups = 1\n",
                                              "min_reps = 300\nmax_reps = 300\npasses = 2\n"
                                              "warmups = 1\nmin_warmup_s = 0\n"))
        proc = subprocess.Popen([os.environ["PORTALAB"], "run", deck, "--set", "calibrate=none",
                                 "--out", self.out], env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        # The deck's two experiments run their passes together: the first
        # pass of both, then the second.
        self.wait_for_stderr(proc, "vector_poly: pass 1 of 2 done")
        self.wait_for_stderr(proc, "stream_copy: pass 1 of 2 done")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err[-2000:])
        doc, rows = read_results(self.out)
        self.assert_consistent(doc, rows)
        results = doc["results"]
        self.assertEqual([r["experiment"] for r in results],
                         ["vector_poly"] * 8 + ["stream_copy"] * 2)
        self.assertEqual(doc["summary"]["interrupted"]["not_run"], 0)
        first_pass_only = [r for r in results if "interrupted after 1 of 2 passes" in r["note"]]
        self.assertIn("stream_copy", [r["experiment"] for r in first_pass_only])
        for r in results:
            both = r not in first_pass_only
            self.assertEqual(r["reps"], 300 if both else 150, r)
            self.assertEqual("pass_kernel_ms" in r["repetitions"], both, r)

    def test_signal_during_calibration_stops_before_the_first_entry(self):
        proc = self.start(calibrate="quick")
        self.wait_for_stderr(proc, "calibrate: measuring")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err[-2000:])
        # No row began: no results file that would read as a run, and it says
        # so (issue 58: not "results so far are kept").
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.json")))
        self.assertIn("no row was measured and nothing was written in", err)

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
        # the journal holds every entry completed before, and both full
        # files parse, each holding the first entries of it (they are
        # rewritten less often than the journal grows).
        for after, delay in [(1, 0.0), (2, 0.013), (3, 0.031)]:
            shutil.rmtree(self.out, ignore_errors=True)
            proc = self.start()
            self.wait_for_entries(proc, after)
            time.sleep(delay)
            proc.kill()
            proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, -signal.SIGKILL)
            journal = read_journal(self.out)
            self.assertGreaterEqual(len(journal["results"]), after)
            self.assertIn("incomplete", journal["summary"])
            for r in journal["results"]:
                self.assertEqual(r["check"], "PASS", r)
            doc, rows = read_results(self.out)
            self.assertLessEqual(len(doc["results"]), len(journal["results"]))
            self.assertLessEqual(len(rows), len(journal["results"]))
            for row, r in zip(rows, journal["results"]):
                self.assertEqual((row["experiment"], row["variant"], row["dtype"], row["copies"]),
                                 (r["experiment"], r["variant"], r["dtype"], r["copies"]))
            self.assertEqual(doc["results"], journal["results"][:len(doc["results"])])


class MemoryTest(Base):
    def run_deck(self, sizes, env=ENV, preexec_fn=None):
        # Serial: host memory is what these tests limit (a GPU's allocations
        # go through its driver, past the preloaded allocator).
        p = subprocess.run([os.environ["PORTALAB"], "run", DECK, "--spaces", "Serial",
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
        if os.environ.get("PORTALAB_DEVICE_BUILD"):
            # Seen on an H200 node: the 80 MB Serial row passed, so Kokkos'
            # host allocations there do not go through the preloaded operator
            # new. The host builds test the skip.
            self.skipTest("a device build's host allocations bypass the preloaded allocator")
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
        if os.environ.get("PORTALAB_DEVICE_BUILD"):
            self.skipTest("a GPU runtime reserves more address space at initialisation than "
                          "the limit leaves (Kokkos cannot start under ulimit -v 2 GiB)")
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


SMALL = ["--set", "reps=3", "--set", "warmups=0"]


class OutputTest(Base):
    """Result files that cannot be written: said why, before measuring where
    it can be known, the run going on otherwise, nothing left behind."""

    def mount_tmpfs(self, size):
        where = os.path.join(self.tmp, "small")
        os.makedirs(where)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", where],
                           capture_output=True)
        if p.returncode != 0:
            return None
        self.addCleanup(subprocess.run, ["umount", "-l", where])
        return where

    def check_cut_short(self, p, out, reason):
        self.assertEqual(p.returncode, 1, p.stderr[-2000:])
        # Said once, with the system's reason; measuring went on.
        self.assertEqual(p.stderr.count("results are no longer written"), 1, p.stderr[-2000:])
        self.assertIn(reason, p.stderr)
        self.assertIn("results INCOMPLETE", p.stdout)
        self.assertIn(reason, p.stdout)
        self.assertIn("[10/10]", p.stderr)
        for table in ("vector_poly  float64", "vector_poly  float32", "stream_copy  float64"):
            self.assertIn(table, p.stdout)
        self.assertEqual(leftovers(out), [])
        # What was written parses: the journal's lines are whole.
        journal = read_journal(out)
        self.assertLess(len(journal["results"]), 10)

    def test_full_disk_mid_run(self):
        small = self.mount_tmpfs("40k")
        if small is None:
            self.skipTest("cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN); "
                          "test_file_size_limit_mid_run covers a write failing mid-run")
        out = os.path.join(small, "out")
        p = subprocess.run([os.environ["PORTALAB"], "run", DECK, *SMALL, "--set", "calibrate=none",
                            "--out", out], env=ENV, capture_output=True, text=True, timeout=300)
        self.check_cut_short(p, out, "No space left on device")

    def test_file_size_limit_mid_run(self):
        # ulimit -f: a real write failing (EFBIG), where SIGXFSZ would
        # otherwise have killed the process without a word.
        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (12 << 10, 12 << 10))  # 19 kB are needed
        p = subprocess.run([os.environ["PORTALAB"], "run", DECK, *SMALL, "--set", "calibrate=none",
                            "--out", self.out], env=ENV, capture_output=True, text=True,
                           timeout=300, preexec_fn=limit)
        self.check_cut_short(p, self.out, "File too large")

    def test_unwritable_out_exits_2_before_measuring(self):
        afile = os.path.join(self.tmp, "a_file")
        open(afile, "w").close()
        for out, reason in [(os.path.join(afile, "out"), "Not a directory"),
                            ("/proc/portalab-out", "")]:
            start = time.monotonic()
            p = subprocess.run([os.environ["PORTALAB"], "run", DECK, "--set", "calibrate=quick",
                                "--out", out], env=ENV, capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(p.returncode, 2, p.stderr[-2000:])
            self.assertIn(out, p.stderr)
            self.assertIn(reason, p.stderr)
            self.assertNotIn("calibrate:", p.stderr)  # nothing measured first
            self.assertLess(time.monotonic() - start, 20)

    def test_calibrate_out_unwritable_exits_2_before_measuring(self):
        afile = os.path.join(self.tmp, "a_file")
        open(afile, "w").close()
        for out in (os.path.join(afile, "cal.json"), self.tmp):
            p = subprocess.run([os.environ["PORTALAB"], "calibrate", "--quick", "--out", out],
                               env=ENV, capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2, p.stderr[-2000:])
            self.assertIn(out, p.stderr)
            self.assertNotIn("measurement of", p.stderr)

    def test_two_runs_into_one_folder(self):
        # The second is refused before it measures; the first is unharmed.
        first = self.start()
        self.wait_for_entries(first, 1)
        second = subprocess.run([os.environ["PORTALAB"], "run", DECK, "--set", "calibrate=none",
                                 "--out", self.out], env=ENV, capture_output=True, text=True,
                                timeout=120)
        self.assertEqual(second.returncode, 2, second.stderr[-2000:])
        self.assertIn("another portalab run is writing", second.stderr)
        _, err = first.communicate(timeout=120)
        self.assertEqual(first.returncode, 0, err[-2000:])
        doc, rows = read_results(self.out)
        self.assert_consistent(doc, rows)
        self.assertEqual(len(rows), 10)


class NothingMeasuredTest(Base):
    """A run that measured nothing says so and exits 4."""

    def run_deck(self, text, *extra, env=ENV):
        deck = os.path.join(self.tmp, "deck.toml")
        with open(deck, "w") as f:
            f.write(text)
        return subprocess.run([os.environ["PORTALAB"], "run", deck, "--set", "calibrate=none",
                               *extra, "--out", self.out], env=env, capture_output=True,
                              text=True, timeout=300)

    def test_every_entry_skipped_for_memory(self):
        p = self.run_deck('spaces = ["Serial"]\n[vector_poly]\nsizes = [1e14]\n')
        self.assertEqual(p.returncode, 4, p.stderr[-2000:])
        self.assertIn("nothing was measured", p.stdout)
        doc, rows = read_results(self.out)
        self.assertTrue(rows and all(r["check"] == "SKIPPED" for r in rows))

    def test_every_entry_not_applicable(self):
        # Four instances on an OpenMP of two threads, or on Threads (one
        # instance only): N/A.
        space = next(s for s in ("OpenMP", "Threads") if s in compiled_spaces())
        p = self.run_deck(f'spaces = ["{space}"]\n[concurrent_small]\nsizes = [1000]\n'
                          'variants = ["instances_4", "instances_8"]\n')
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr[-2000:])
        self.assertIn("nothing was measured", p.stdout)

    def test_copies_that_apply_to_no_space_exit_2(self):
        p = self.run_deck('spaces = ["Serial"]\ncopies = ["pinned"]\n[vector_poly]\n'
                          'sizes = [1000]\n')
        self.assertEqual(p.returncode, 2, p.stderr[-2000:])
        self.assertIn("deck.toml:2:10:", p.stderr)
        self.assertIn("pinned copies apply to device spaces only", p.stderr)


class CommandLineTest(unittest.TestCase):
    """Options Kokkos would abort or crash on are refused first, exit 2."""

    def portalab(self, *args, env=ENV):
        return subprocess.run([os.environ["PORTALAB"], *args], env=env, capture_output=True,
                              text=True, timeout=120)

    def test_info_is_one_json_document(self):
        p = self.portalab("info")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)  # nothing else on stdout
        self.assertIn("kokkos_configuration", doc)

    def test_bad_kokkos_options_exit_2(self):
        for arg in ["--kokkos-num-threads=0", "--kokkos-num-threads=-1",
                    "--kokkos-num-threads=four", "--kokkos-num-threads=4x",
                    "--kokkos-num-threads=4294967297", "--kokkos-num-threads=100000",
                    "--kokkos-num-threads=", "--kokkos-num-threads",
                    "--kokkos-device-id=-1", "--kokkos-map-device-id-by=nearest",
                    "--kokkos-disable-warnings=maybe", "--kokkos-numthreads=2",
                    "--kokkos-help=1"]:
            for command in (["info"], ["run", DECK, "--set", "calibrate=none"],
                            ["calibrate", "--quick"]):
                with self.subTest(arg=arg, command=command[0]):
                    p = self.portalab(*command, arg)
                    self.assertEqual(p.returncode, 2, p.stderr[-2000:])
                    self.assertIn(arg.split("=")[0], p.stderr)
                    self.assertNotIn("Kokkos::abort", p.stderr)
                    self.assertNotIn("Backtrace", p.stderr)

    def test_bad_kokkos_variables_exit_2(self):
        bad = [("KOKKOS_NUM_THREADS", "0"), ("KOKKOS_NUM_THREADS", "lots"),
               ("KOKKOS_DEVICE_ID", "-3"), ("KOKKOS_MAP_DEVICE_ID_BY", "x"),
               ("KOKKOS_DISABLE_WARNINGS", "perhaps")]
        # Read by Kokkos' OpenMP space only; a Threads build leaves it to OpenMP.
        if "OpenMP" in compiled_spaces():
            bad += [("OMP_NUM_THREADS", "100000"), ("OMP_NUM_THREADS", "0")]
        for name, value in bad:
            with self.subTest(variable=name, value=value):
                p = self.portalab("info", env=dict(ENV, **{name: value}))
                self.assertEqual(p.returncode, 2, p.stderr[-2000:])
                self.assertIn(f"{name}={value}", p.stderr)

    def test_a_limit_a_row_outran_is_measured_again_and_said(self):
        # Limits far too low and a cache that ends at 2 MiB: the second row,
        # beyond it, outruns them; the run measures them again, says so on stderr
        # and at the end, records it in the summary, and its files stay
        # valid. The first row, in the cache, was written before: it keeps
        # the limit it was held to (a row is final when written).
        tmp = tempfile.mkdtemp(prefix="portalab_recheck_")
        self.addCleanup(shutil.rmtree, tmp, True)
        measured = os.path.join(tmp, "cal.json")
        p = self.portalab("calibrate", "--quick", "--spaces", "Serial", "--out", measured)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        with open(measured) as f:
            cal = json.load(f)
        for space in cal["calibration"]["spaces"]:
            for key in ("memory_gbps", "copy_kernel_gbps", "copy_deep_copy_gbps", "triad_gbps",
                        "read_gbps"):
                space[key] = 1e-3
            space["cache_bytes"] = 256 << 10  # beyond it: from 8 times (2 MiB)
        deck = os.path.join(tmp, "copy.toml")
        with open(deck, "w") as f:
            f.write('calibrate = "none"\nreps = 2\nwarmups = 0\ncopies = "none"\n'
                    'spaces = ["Serial"]\n[stream_copy]\nsizes = [10000, 1000000]\n'
                    'variants = ["kernel"]\n')
        # A file with a ladder of two levels as low, a cache up to 2 MiB and
        # memory; and one written before the ladder (the cache's size
        # decides).
        memory = {"name": "memory", "first_bytes": 2 << 20, "end_bytes": 2 << 20,
                  "holds_up_to_bytes": None, "read_gbps": 1e-3, "copy_gbps": 1e-3,
                  "triad_gbps": 1e-3, "memory_gbps": 1e-3, "read_limit_gbps": 1e-3,
                  "spread": 0.0, "points": 1, "reported_bytes": 0, "reported_source": ""}
        cache = dict(memory, name="L2", first_bytes=4096, end_bytes=1 << 20,
                     holds_up_to_bytes=2 << 20)
        for form in ("ladder", "no ladder"):
            with self.subTest(form=form):
                for space in cal["calibration"]["spaces"]:
                    if form == "ladder" and "ladder" in space:
                        space["ladder"]["levels"] = [cache, memory]
                    else:
                        space.pop("ladder", None)
                low = os.path.join(tmp, "low.json")
                with open(low, "w") as f:
                    json.dump(cal, f)
                out = os.path.join(tmp, "out-" + form.replace(" ", "-"))
                p = self.portalab("run", deck, "--calibration", low, "--out", out)
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                row = "stream_copy kernel float64 n=1000000"
                self.assertIn(f"limits: Serial memory limit re-measured after {row}", p.stderr)
                self.assertIn(f"limits of Serial re-measured after {row}", p.stdout)
                doc, _ = read_results(out)
                [done] = doc["summary"]["limits_rechecked"]
                self.assertEqual((done["space"], done["after"], done["limit"]),
                                 ("Serial", row, "memory"))
                self.assertNotIn("error", done)
                in_cache, beyond = doc["results"]
                self.assertEqual(in_cache["limit"]["value"], 1e-3)
                self.assertGreater(beyond["limit"]["value"], 1e-3)

    def test_calibration_file_bounded_before_parsing(self):
        # A million '[' overflowed nlohmann::json's stack (exit 139).
        tmp = tempfile.mkdtemp(prefix="portalab_cal_")
        self.addCleanup(shutil.rmtree, tmp, True)
        deep = os.path.join(tmp, "deep.json")
        with open(deep, "w") as f:
            f.write("[" * 1000000 + "]" * 1000000)
        big = os.path.join(tmp, "big.json")
        with open(big, "w") as f:
            f.truncate(17 << 20)  # past the 16 MiB limit, without writing it
        for path, expect in [(deep, "deep.json:1:65: nested more than 64"),
                             (big, "more than"),
                             ("/dev/zero", "a character device, not a calibration file"),
                             (tmp, "a folder, not a calibration file")]:
            p = self.portalab("run", DECK, "--calibration", path)
            self.assertEqual(p.returncode, 2, p.stderr[-2000:])
            self.assertIn(expect, p.stderr)

    def test_good_kokkos_options_run(self):
        p = self.portalab("info", "--kokkos-num-threads=2", "--kokkos-disable-warnings",
                          "--kokkos-print-configuration=false")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        json.loads(p.stdout)


if __name__ == "__main__":
    if "PORTALAB" not in os.environ:
        sys.exit("PORTALAB (the portalab binary) is not set")
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])
