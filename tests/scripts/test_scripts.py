"""Tests of scripts/collect.py, plot.py and compare.py on a results.json that
the real portalab binary writes (small sizes), plus synthetic changes of it.

    PORTALAB=build/host/portalab python3 tests/scripts/test_scripts.py [TestClass...]

Exits 77 (ctest's skip code here) when PlotTest is asked for and matplotlib
is missing.
"""
import csv
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(SOURCE, "scripts")
sys.path.insert(0, HERE)
sys.path.insert(0, SCRIPTS)

import synthetic  # noqa: E402

SKIP = 77
SMALL = ["--set", "reps=3", "--set", "warmups=1", "--set", "vector_poly.sizes=[1000,10000]",
         "--set", "stream_copy.sizes=[10000]"]


def script(name, *args, env=None):
    """Runs scripts/<name> with this Python (and `env` added to the
    environment); returns (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *args],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **env) if env else None)
    return p.returncode, p.stdout, p.stderr


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="portalab_scripts_")
        cls.run_dir = os.path.join(cls.tmp, "run")
        cls.doc = synthetic.real_run(os.path.join(SOURCE, "inputs", "default.toml"),
                                     cls.run_dir, *SMALL)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def write(self, name, doc):
        path = os.path.join(self.tmp, name, "results.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        synthetic.write(doc, path)
        return path


class CollectTest(Base):
    def test_csv_has_every_row_of_every_file_with_its_machine(self):
        gpu = self.write("gpu", synthetic.with_fake_gpu(self.doc))
        out = os.path.join(self.tmp, "all.csv")
        md = os.path.join(self.tmp, "all.md")
        rc, _, err = script("collect.py", self.run_dir, gpu, "--csv", out, "--md", md)
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        with open(gpu) as f:
            n_gpu = len(json.load(f)["results"])
        self.assertEqual(len(rows), len(self.doc["results"]) + n_gpu)
        host = self.doc["provenance"]["host"]["hostname"]
        self.assertTrue(all(r["hostname"] == host for r in rows))
        self.assertEqual({r["device"] for r in rows if r["space"] == "FakeGPU"}, {"Synthetic GPU"})
        self.assertNotIn("", {r["device"] for r in rows})
        for field in ("space", "experiment", "variant", "dtype", "n", "copies",
                      "total_ms", "total_min_ms", "total_max_ms", "gbps", "source"):
            self.assertIn(field, rows[0])
        # Sorted by key: the sizes of one series ascend numerically.
        series = [int(r["n"]) for r in rows if r["space"] == "FakeGPU"
                  and r["experiment"] == "vector_poly" and r["variant"] == "fused"
                  and r["dtype"] == "float64" and r["copies"] == "none"]
        self.assertEqual(series, [1000, 10000])
        with open(md) as f:
            lines = f.read().splitlines()
        self.assertTrue(lines[0].startswith("| machine | device | space"))
        self.assertEqual(len(lines), 2 + len(rows))

    def test_latest_keeps_the_newest_run_of_a_key(self):
        newer = self.write("newer", synthetic.slowed(self.doc, 2.0, lambda r: True))
        out = os.path.join(self.tmp, "latest.csv")
        rc, _, err = script("collect.py", self.run_dir, newer, "--latest", "--csv", out)
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), len(self.doc["results"]))
        self.assertEqual({r["source"] for r in rows}, {newer})

    def test_a_version_2_file_is_read_its_paths_unknown(self):
        old = json.loads(json.dumps(self.doc))
        old["schema_version"] = 2
        for row in old["results"]:
            del row["path"]
        path = self.write("v2", old)
        out = os.path.join(self.tmp, "v2.csv")
        rc, _, err = script("collect.py", self.run_dir, path, "--csv", out)
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual({r["path"] for r in rows if r["source"] == path}, {""})
        # This run's rows say theirs: stream_copy's kernel on a host copies.
        copies = {r["path"] for r in rows if r["source"] != path
                  and (r["experiment"], r["variant"]) == ("stream_copy", "kernel")}
        self.assertTrue(copies and copies <= {"memcpy", "streaming-stores"}, copies)

    def test_missing_input_exits_2(self):
        rc, _, err = script("collect.py", os.path.join(self.tmp, "nothing_here"))
        self.assertEqual(rc, 2)
        self.assertIn("no such file", err)


def png_size(path):
    """(width, height) from a PNG's signature and IHDR chunk; fails on anything else."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    assert head[12:16] == b"IHDR", f"{path}: no IHDR chunk"
    return struct.unpack(">II", head[16:24])


class PlotTest(Base):
    def test_four_valid_pngs_per_experiment(self):
        gpu = self.write("gpu", synthetic.with_fake_gpu(self.doc))
        out = os.path.join(self.tmp, "plots")
        rc, stdout, err = script("plot.py", gpu, "--out", out)
        self.assertEqual(rc, 0, err)
        experiments = {r["experiment"] for r in self.doc["results"]}  # the default deck's
        expected = {f"{e}_{k}.png" for e in experiments
                    for k in ("time", "speedup", "phases", "rate")}
        self.assertEqual(set(os.listdir(out)), expected)
        self.assertEqual({os.path.basename(p) for p in stdout.split()}, expected)
        for name in expected:
            w, h = png_size(os.path.join(out, name))
            self.assertGreater(w, 300, name)
            self.assertGreater(h, 300, name)

    def test_energy_is_drawn_where_it_was_measured(self):
        # The test above: a run without energy (no RAPL on a VM) has no energy plot.
        doc = synthetic.with_energy(synthetic.with_fake_gpu(self.doc))
        out = os.path.join(self.tmp, "energy_plots")
        rc, stdout, err = script("plot.py", self.write("energy", doc), "--out", out,
                                 "--experiment", "vector_poly")
        self.assertEqual(rc, 0, err)
        self.assertIn("vector_poly_energy.png", os.listdir(out))
        w, h = png_size(os.path.join(out, "vector_poly_energy.png"))
        self.assertGreater(w, 300)

    def test_unknown_experiment_exits_2(self):
        rc, _, err = script("plot.py", self.run_dir, "--out", os.path.join(self.tmp, "p2"),
                            "--experiment", "no_such_experiment")
        self.assertEqual(rc, 2)
        self.assertIn("no_such_experiment", err)


def fused_parallel_host(r):
    return r["space"] in synthetic.PARALLEL_HOST_SPACES and r["variant"] == "fused"


class CompareTest(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Measured spreads of tiny sizes are wide: narrow them so that a 3x
        # slow-down is "slower" whatever this machine's noise was.
        cls.doc = synthetic.tight(cls.doc)
        cls.run_dir = os.path.join(cls.tmp, "tight")
        os.makedirs(cls.run_dir)
        synthetic.write(cls.doc, os.path.join(cls.run_dir, "results.json"))

    def test_same_results_are_no_regression(self):
        rc, out, err = script("compare.py", self.run_dir, self.run_dir)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("slower", out)
        self.assertNotIn("faster", out)

    def test_slowed_entries_are_a_regression(self):
        slow = self.write("slow", synthetic.slowed(self.doc, 3.0, fused_parallel_host))
        rc, out, err = script("compare.py", self.run_dir, slow, "--threshold", "20")
        self.assertEqual(rc, 1, out + err)
        verdicts = {tuple(line.split()[:3]): line for line in out.splitlines()[1:]}
        parallel = synthetic.PARALLEL_HOST_SPACES
        slowed_lines = [v for k, v in verdicts.items() if k[0] in parallel and k[2] == "fused"]
        self.assertTrue(slowed_lines)
        for line in slowed_lines:
            self.assertIn("+200.0%", line)
            self.assertTrue(line.endswith("slower REGRESSION") or " 0 [0, 0] " in line, line)
        self.assertTrue(any("slower REGRESSION" in v for v in slowed_lines))
        others = [v for k, v in verdicts.items() if not (k[0] in parallel and k[2] == "fused")]
        # Rows a space cannot run (N/A: an OpenMP of 2 threads in 4 instances) compare as n/a.
        self.assertTrue(all(v.endswith("same") or v.endswith(" n/a") for v in others), others)
        self.assertTrue(any(v.endswith("same") for v in others), others)
        # Faster the other way round, and never a regression.
        rc, out, _ = script("compare.py", slow, self.run_dir, "--threshold", "20")
        self.assertEqual(rc, 0)
        self.assertIn("faster", out)

    def test_threshold_above_the_change_passes(self):
        slow = self.write("slow2", synthetic.slowed(self.doc, 1.5, fused_parallel_host))
        rc, out, err = script("compare.py", self.run_dir, slow, "--threshold", "60")
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(out, r"\+50\.0%\s+slower\n")  # the older rule: nothing "needed"

    def test_a_failed_check_is_a_regression(self):
        doc = json.loads(json.dumps(self.doc))
        doc["results"][0]["check"] = "FAIL"
        broken = self.write("broken", doc)
        rc, out, _ = script("compare.py", self.run_dir, broken)
        self.assertEqual(rc, 1)
        self.assertIn("broken REGRESSION", out)

    def test_runs_of_one_machine_are_a_side_run_several_times(self):
        self.write("runs/a", self.doc)
        self.write("runs/b", self.doc)
        rc, out, err = script("compare.py", os.path.join(self.tmp, "runs"), self.run_dir)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("slower", out)
        self.assertIn("times: a change must also exceed 4 deviations of their runs' spread", err)

    def test_two_machines_or_one_run_twice_on_a_side_exit_2(self):
        other = json.loads(json.dumps(self.doc))
        other["provenance"]["host"]["hostname"] = "elsewhere"
        self.write("machines/a", self.doc)
        self.write("machines/b", other)
        rc, _, err = script("compare.py", os.path.join(self.tmp, "machines"), self.run_dir)
        self.assertEqual(rc, 2, err)
        self.assertIn("two rows", err)
        self.assertIn("from two machines", err)
        twice = json.loads(json.dumps(self.doc))
        twice["results"].append(twice["results"][0])
        rc, _, err = script("compare.py", self.write("twice", twice), self.run_dir)
        self.assertEqual(rc, 2, err)
        self.assertIn("in one run", err)

    def test_an_entry_within_its_runs_spread_is_the_same(self):
        """Two runs a side: entries whose base runs differ by 25% are not
        slower by 25% (one run a side they are); tripled, they are. The
        factors are set, not measured."""
        def where(r):
            return r["space"] in synthetic.PARALLEL_HOST_SPACES and r["variant"] == "fused"
        # Twelve repetitions a run, so that the U test can reject after
        # Holm's correction over every entry.
        doc = json.loads(json.dumps(self.doc))
        for r in doc["results"]:
            r["reps"] = 12
        doc = synthetic.tight(doc)
        spread = synthetic.slowed(doc, 1.25, where)
        self.write("base2/1", doc)
        self.write("base2/2", spread)
        self.write("new2/1", spread)
        self.write("new2/2", spread)
        self.write("tripled/1", synthetic.slowed(doc, 3.0, where))
        self.write("tripled/2", synthetic.slowed(doc, 3.0, where))
        base, new = os.path.join(self.tmp, "base2"), os.path.join(self.tmp, "new2")
        rc, out, err = script("compare.py", os.path.join(base, "1"), os.path.join(new, "1"))
        self.assertIn("slower", out, err)
        rc, out, err = script("compare.py", base, new)
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn("slower", out)
        rc, out, err = script("compare.py", base, os.path.join(self.tmp, "tripled"))
        self.assertEqual(rc, 1, out + err)
        self.assertIn("slower REGRESSION", out)
        # Each line judged by the test says what its change had to exceed:
        # here the runs' spread (the base's 25%, times 4 deviations), not the 3%.
        for line in out.splitlines():
            if line.endswith("slower REGRESSION"):
                change, needed = (float(x.strip("+%")) for x in line.split()[-4:-2])
                self.assertGreater(needed, 25)
                self.assertGreater(change, needed)


class NamedChoicesTest(unittest.TestCase):
    def test_numbers_of_older_files_read_as_names(self):
        """Files before choices were saved by name held scaling 0 or 1; they
        read as "strong" and "weak", so old and new rows compare."""
        from portalab import results as pr
        rows = [{"experiment": "dot_distributed", "space": "Cuda", "parameters": {"scaling": v}}
                for v in (0, 1, "strong")]
        rows.append({"experiment": "copy_overlap", "space": "OpenMP", "parameters": {"chunks": 1}})
        flat = pr.rows_of("results.json", {}, rows)
        self.assertEqual([r["parameters"] for r in flat],
                         [{"scaling": "strong"}, {"scaling": "weak"}, {"scaling": "strong"},
                          {"chunks": 1}])


class NoiseTest(unittest.TestCase):
    """compare.py on two runs drawn from one distribution: run-to-run noise
    far wider than each run's repetitions, as back-to-back runs show."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="portalab_noise_")
        template = synthetic.complete({"schema_version": 2,
                    "provenance": {"host": {"hostname": "h"}, "devices": [],
                                   "started_at": "2000-01-01T00:00:00Z"},
                    "summary": {},
                    "results": [{"experiment": "vector_poly", "variant": "fused",
                                 "space": "Serial", "dtype": "float64", "n": 1,
                                 "copies": "none", "check": "PASS", "reps": 10,
                                 "h2d_ms": 0, "kernel_ms": 1, "d2h_ms": 0, "total_ms": 1,
                                 "stats": {p: {} for p in ("h2d", "kernel", "d2h", "total")}}]})
        cls.population, cls.truth = synthetic.population(template, 250)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_file(self, name, seed, slow=()):
        doc = synthetic.noisy_run(self.population, self.truth, seed)
        if slow:
            # Beyond 4 deviations of the noise between two runs: 3x where
            # that noise is 3-8% (1 ms and longer), 20x where it is 15-30% (the
            # synthetic file's, not measured).
            doc = synthetic.slowed(doc, 3.0, lambda r: r["n"] in slow and self.truth[r["n"]] >= 1)
            doc = synthetic.slowed(doc, 20.0, lambda r: r["n"] in slow and self.truth[r["n"]] < 1)
        path = os.path.join(self.tmp, name, "results.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        synthetic.write(doc, path)
        return path

    def test_two_samples_of_one_distribution_are_no_regression(self):
        # Every pair of seeds: the old verdict (repetitions apart and 10%
        # slower) called dozens of these regressions.
        for seeds in [(1, 2), (3, 4), (5, 6)]:
            a, b = (self.run_file(f"s{s}", s) for s in seeds)
            rc, out, err = script("compare.py", a, b)
            self.assertEqual(rc, 0, out + err)
            self.assertNotIn("REGRESSION", out)
            self.assertIn("run-to-run noise", err)

    def test_a_slowed_entry_stands_out_of_the_noise(self):
        # Entries of every length, 1 us (30% noise) to 100 ms (3%): set, not measured.
        slow = sorted(self.truth, key=self.truth.get)[::25]
        base = self.run_file("base", 11)
        new = self.run_file("slow", 12, slow=set(slow))
        rc, out, err = script("compare.py", base, new)
        self.assertEqual(rc, 1, out + err)
        flagged = {int(line.split()[4]) for line in out.splitlines()[1:]
                   if line.endswith("slower REGRESSION")}
        self.assertEqual(flagged, set(slow))

    def test_noise_from_two_alike_runs(self):
        a, b = self.run_file("a", 21), self.run_file("b", 22)
        new = self.run_file("c", 23)
        rc, out, err = script("compare.py", a, new, "--noise-from", a, b)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("from --noise-from", err)


class ClassifyTest(unittest.TestCase):
    """compare.judge on hand-made rows, through `portalab verdicts`: without
    repetitions the spread decides, not the median; with them, the U test."""

    @staticmethod
    def row(median, lo, hi, check="PASS", repetitions=None):
        return {"check": check, "total_ms": median, "total_min_ms": lo, "total_max_ms": hi,
                "repetitions": {"total_ms": repetitions} if repetitions else None}

    @staticmethod
    def verdict(base, new, **settings):
        from portalab import compare
        return compare.judge([(base, new)], "total", settings, [])["verdicts"][0]

    def test_overlapping_ranges_are_the_same_whatever_the_medians(self):
        v = self.verdict(self.row(1.0, 0.9, 1.6), self.row(1.5, 1.4, 1.7))
        self.assertEqual((v["verdict"], v["rule"]), ("same", "spread"))
        self.assertAlmostEqual(v["change"], 0.5)

    def test_disjoint_ranges_are_slower_or_faster(self):
        self.assertEqual(self.verdict(self.row(1.0, 0.9, 1.1), self.row(1.2, 1.15, 1.3))["verdict"],
                         "slower")
        self.assertEqual(self.verdict(self.row(1.0, 0.9, 1.1), self.row(0.8, 0.7, 0.85))["verdict"],
                         "faster")

    def test_the_answer_says_how_new_moved_as_a_whole(self):
        from portalab import compare
        pairs = [(self.row(1.0, 0.9, 1.1), self.row(m, m, m)) for m in (1.1, 1.5, 3.0)]
        answer = compare.judge(pairs, "total", {}, [])
        self.assertAlmostEqual(answer["shift"], 0.5)
        self.assertEqual(answer["shift_pairs"], 3)
        self.assertIsNone(answer["noise"]["within"])  # no side repeated

    def test_repetitions_are_judged_by_the_u_test(self):
        # Six a side, apart, 10% slower: p = 2/924 (exact), below alpha 0.01;
        # the same within a tolerance of 15% is no change.
        base = [1.0, 1.01, 1.02, 1.03, 1.04, 1.05]
        new = [x * 1.1 for x in base]
        b, n = self.row(1.025, 1.0, 1.05, repetitions=base), self.row(1.13, 1.1, 1.16, repetitions=new)
        v = self.verdict(b, n)
        self.assertEqual((v["verdict"], v["rule"]), ("slower", "test"))
        self.assertAlmostEqual(v["p"], 2 / 924)
        self.assertEqual(self.verdict(b, n, tolerance=0.15)["verdict"], "same")
        # Six a side cannot reach 0.001 (the least p is 2/924): the older rule.
        self.assertEqual(self.verdict(b, n, alpha=0.001)["rule"], "spread")


class KernelsLimitsTest(unittest.TestCase):
    """scripts/dev/kernels_limits.py on Google Benchmark output of the host's gemm."""

    def bench(self, native_ms, dtypes=("float32", "float64")):
        rows = []
        for dtype in dtypes:
            for variant, ms in (("vendor", 10.0), ("native", native_ms)):
                rows.append({"name": f"gemm_{variant}/OpenMP/{dtype}/2048/manual_time_median",
                             "run_name": f"gemm_{variant}/OpenMP/{dtype}/2048/manual_time",
                             "run_type": "aggregate", "aggregate_name": "median",
                             "real_time": ms, "time_unit": "ms"})
        tmp = tempfile.mkdtemp(prefix="portalab_limits_")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        path = os.path.join(tmp, "bench.json")
        with open(path, "w") as f:
            json.dump({"benchmarks": rows}, f)
        return path

    def test_host_gemm_at_half_of_the_blas_passes(self):
        rc, out, _ = script("dev/kernels_limits.py", "--bench", self.bench(18.0), "--space", "OpenMP")
        self.assertEqual(rc, 0, out)
        self.assertIn("PASS     bench gemm native / vendor float64 2048 (OpenMP): 0.556", out)

    def test_host_gemm_below_half_fails(self):
        rc, out, _ = script("dev/kernels_limits.py", "--bench", self.bench(25.0), "--space", "OpenMP")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL     bench gemm native / vendor float32 2048 (OpenMP): 0.400", out)

    def test_absent_figures_are_missed(self):
        rc, out, _ = script("dev/kernels_limits.py", "--bench", self.bench(18.0, ("float32",)),
                            "--space", "OpenMP")
        self.assertEqual(rc, 1, out)
        self.assertIn("MISSING  bench gemm native / vendor float64 2048", out)

    def test_nothing_to_check_exits_2(self):
        rc, _, err = script("dev/kernels_limits.py")
        self.assertEqual(rc, 2)
        self.assertIn("results.json, --bench", err)


class HostPeersTest(unittest.TestCase):
    """scripts/dev/host_peers.py: Numba's prange loops beside a real run's host rows."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="portalab_peers_")
        cls.run_dir = os.path.join(cls.tmp, "run")
        deck = os.path.join(cls.tmp, "copy.toml")
        with open(deck, "w") as f:
            f.write('calibrate = "none"\nreps = 3\ncopies = "none"\n'
                    '[stream_copy]\nsizes = [100000]\ndtypes = ["float32", "float64"]\n')
        doc = synthetic.real_run(deck, cls.run_dir)
        # The build's parallel host space (OpenMP or Threads), else Serial.
        spaces = {r["space"] for r in doc["results"]}
        cls.space = next((s for s in ("OpenMP", "Threads") if s in spaces), "Serial")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @staticmethod
    def need_numba():
        try:
            import numba  # noqa: F401
        except ImportError:
            sys.exit(SKIP)

    def wrapper_logging(self, name, command):
        """A portalab that first appends what `command` prints (with $LOG
        the log, $2 the rerun's deck) to a log: (wrapper, log)."""
        log = os.path.join(self.tmp, name + ".log")
        wrapper = os.path.join(self.tmp, name + ".sh")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nLOG={log}\n{command}\nexec {os.environ["PORTALAB"]} "$@"\n')
        os.chmod(wrapper, 0o755)
        return wrapper, log

    def test_each_host_row_gets_its_numba_peer_and_a_verdict(self):
        self.need_numba()
        # One experiment: Numba compiles each parallel loop in seconds.
        rc, out, err = script("dev/host_peers.py", os.path.join(self.run_dir, "results.json"),
                              "--space", self.space, "--min-n", "0", "--reps", "2",
                              "--timed-ms", "0", "--experiment", "stream_copy")
        self.assertIn(rc, (0, 1), err)  # 1: a ratio below its target (small sizes, busy host)
        rows = [line for line in out.splitlines() if line.startswith("stream_")]
        self.assertTrue(rows, out)
        for r in rows:
            self.assertRegex(r, r" (PASS|FAIL)$")
            self.assertGreater(float(r.split()[6]), 0.0)  # Numba's median time, ms
        self.assertRegex(out, r"rows: [1-9]")

    def test_rounds_run_each_row_again_beside_its_peer(self):
        self.need_numba()
        # A wrapper that keeps the variants of each rerun's deck.
        wrapper, decks = self.wrapper_logging("rerun_variants", 'grep "^variants" "$2" >> $LOG')
        rc, out, err = script("dev/host_peers.py", os.path.join(self.run_dir, "results.json"),
                              "--space", self.space, "--min-n", "0", "--reps", "2",
                              "--timed-ms", "0", "--experiment", "stream_copy",
                              "--portalab", wrapper, "--rounds", "2")
        self.assertIn(rc, (0, 1), err)
        rows = [line for line in out.splitlines() if line.startswith("stream_")]
        self.assertEqual(len(rows), 6, out)  # three variants, two types
        for r in rows:  # a ratio per round, then the verdict
            self.assertRegex(r, r" [0-9.]+ / [0-9.]+ (PASS|FAIL)$")
        self.assertIn("2 rounds", out)
        # Each row alone in its rerun, once a round: 6 rows, 2 rounds.
        with open(decks) as f:
            runs = f.read().splitlines()
        self.assertEqual(len(runs), 12, runs)
        for line in runs:
            self.assertRegex(line, r'^variants = \["[a-z_]+"\]$')
        self.assertEqual(sorted(set(runs)), [f'variants = ["{v}"]'
                                             for v in ("deep_copy", "kernel", "naive")])
        # An uncalibrated run's loops had plain stores; so have the reruns.
        self.assertIn("portalab runs again with plain stores", err)

    def test_rows_under_the_timed_window_repeat_until_they_fill_it(self):
        self.need_numba()
        # A wrapper that keeps the repetitions of each rerun's deck, a line each.
        wrapper, decks = self.wrapper_logging(
            "rerun_reps", 'grep -E "^(reps|variants|dtypes)" "$2" | tr "\\n" " " >> $LOG; echo >> $LOG')
        results = os.path.join(self.run_dir, "results.json")
        rc, out, err = script("dev/host_peers.py", results, "--space", self.space, "--min-n", "0",
                              "--reps", "2", "--timed-ms", "20", "--experiment", "stream_copy",
                              "--portalab", wrapper, "--rounds", "1")
        self.assertIn(rc, (0, 1), err)
        with open(results) as f:
            rows = [r for r in json.load(f)["results"] if r["space"] == self.space]
        with open(decks) as f:
            runs = f.read().splitlines()
        self.assertEqual(len(runs), len(rows), runs)
        for r in rows:
            # At least --reps, else enough for 20 ms at the run's median, at most 5000
            # (the script's setting, not measured).
            want = max(2, min(5000, math.ceil(20 / r["kernel_ms"])))
            line = f'reps = {want} dtypes = ["{r["dtype"]}"] variants = ["{r["variant"]}"] '
            self.assertIn(line, runs, (r["kernel_ms"], runs))

    def test_one_thread_rows_run_both_sides_on_one_cpu(self):
        self.need_numba()
        results = os.path.join(self.run_dir, "results.json")
        with open(results) as f:
            if not any(r["space"] == "Serial" for r in json.load(f)["results"]):
                self.skipTest("no Serial rows in this build's run")
        # A wrapper that keeps the CPUs each rerun may use.
        wrapper, cpus = self.wrapper_logging("rerun_cpus", "grep Cpus_allowed_list /proc/$$/status >> $LOG")
        rc, out, err = script("dev/host_peers.py", results, "--space", "Serial", "--min-n", "0",
                              "--reps", "2", "--timed-ms", "0", "--experiment", "stream_copy",
                              "--portalab", wrapper, "--rounds", "1")
        self.assertIn(rc, (0, 1), err)
        first = min(os.sched_getaffinity(0))
        self.assertIn(f"portalab and Numba on CPU {first}", err)
        with open(cpus) as f:
            allowed = f.read().split()
        self.assertTrue(allowed, err)
        self.assertEqual(set(allowed) - {"Cpus_allowed_list:"}, {str(first)})

    def test_reruns_use_the_stores_the_run_chose(self):
        self.need_numba()
        # A calibration whose stores are streaming (forced: no probe to wait
        # for), as the run's own: the reruns must take it, whatever the
        # environment says.
        limits = os.path.join(self.tmp, "streaming.json")
        done = subprocess.run([os.environ["PORTALAB"], "calibrate", "--quick", "--spaces", self.space,
                               "--out", limits], capture_output=True, text=True,
                              env=dict(os.environ, PORTALAB_STREAMING_STORES="1"))
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(self.run_dir, "results.json")) as f:
            doc = json.load(f)
        with open(limits) as f:
            doc["provenance"]["calibration"] = json.load(f)
        doc["provenance"]["host_stores"] = {self.space: {
            "stores": "streaming", "copy_stores": "streaming", "from_bytes": 1 << 25,
            "why": "PORTALAB_STREAMING_STORES=1"}}
        streamed = os.path.join(self.tmp, "streamed.json")
        with open(streamed, "w") as f:
            json.dump(doc, f)
        # A wrapper that keeps what each rerun said on stderr.
        said = os.path.join(self.tmp, "rerun.err")
        wrapper = os.path.join(self.tmp, "portalab_wrapper.sh")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\n{os.environ["PORTALAB"]} "$@" 2> {said}; rc=$?\n'
                    f'cat {said} >&2\nexit $rc\n')
        os.chmod(wrapper, 0o755)
        rc, out, err = script("dev/host_peers.py", streamed, "--space", self.space, "--min-n", "0",
                              "--reps", "2", "--timed-ms", "0", "--experiment", "stream_copy",
                              "--portalab", wrapper, "--rounds", "1", env={"PORTALAB_STREAMING_STORES": "0"})
        self.assertIn(rc, (0, 1), err)
        self.assertIn("portalab runs again with streaming stores in loops and streaming in copies",
                      err)
        with open(said) as f:
            self.assertIn(f"stores: {self.space} streaming in loops, streaming in copies", f.read())

    def test_a_limit_the_reruns_measured_again_holds_the_rows(self):
        self.need_numba()
        # The run's limits far too low and every row beyond the cache: each
        # rerun's row outruns them, the rerun re-measures them, and the table
        # holds the rows to what it measured, not to the run's.
        limits = os.path.join(self.tmp, "low.json")
        done = subprocess.run([os.environ["PORTALAB"], "calibrate", "--quick", "--spaces", self.space,
                               "--out", limits], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(limits) as f:
            cal = json.load(f)["calibration"]
        for s in cal["spaces"]:
            for k in ("memory_gbps", "copy_kernel_gbps", "copy_deep_copy_gbps", "triad_gbps",
                      "read_gbps"):
                s[k] = 1e-3
            s["cache_bytes"] = 1
        with open(os.path.join(self.run_dir, "results.json")) as f:
            doc = json.load(f)
        doc["provenance"]["calibration"] = cal
        for r in doc["results"]:
            r["limit"] = {"name": "memory", "value": 1e-3, "unit": "GB/s"}
            r["pct_of_limit"] = r["gbps"] / 1e-3
        low = os.path.join(self.tmp, "low_results.json")
        with open(low, "w") as f:
            json.dump(doc, f)
        rc, out, err = script("dev/host_peers.py", low, "--space", self.space, "--min-n", "0",
                              "--reps", "2", "--timed-ms", "0", "--experiment", "stream_copy",
                              "--portalab", os.environ["PORTALAB"], "--rounds", "1")
        self.assertIn(rc, (0, 1), err)
        rows = [line for line in out.splitlines() if line.startswith("stream_")]
        self.assertEqual(len(rows), 6, out)
        for r in rows:
            pct = [t for t in r.split() if t.endswith("%")]
            self.assertEqual(len(pct), 1, r)
            # 1e-3 GB/s would make it millions of percent (not measured).
            self.assertLess(float(pct[0][:-1]), 10000, r)

    def test_a_binary_that_fails_exits_2_naming_it(self):
        self.need_numba()
        rc, _, err = script("dev/host_peers.py", os.path.join(self.run_dir, "results.json"),
                            "--space", self.space, "--min-n", "0", "--experiment", "stream_copy",
                            "--portalab", "/bin/false")
        self.assertEqual(rc, 2, err)
        self.assertIn("/bin/false run", err)

    def test_missing_results_exit_2(self):
        rc, _, err = script("dev/host_peers.py", os.path.join(self.tmp, "none", "results.json"))
        self.assertEqual(rc, 2, err)
        self.assertIn("none/results.json: cannot read it (No such file", err)


class ValidateTest(Base):
    """scripts/validate.py: a real run's files pass; a field broken in each
    kind of file (results.json, results.csv, the journal, a calibration file)
    is named with its file; an older file is named with its version."""

    def setUp(self):
        from portalab import results as portalab_results
        if not portalab_results.have_jsonschema():
            sys.exit(SKIP)

    def validate(self, *paths):
        return script("validate.py", *paths)

    def broken(self, name, change):
        """A copy of the run's results.json with change(doc) applied."""
        doc = json.loads(json.dumps(self.doc))
        change(doc)
        return self.write(name, doc)

    def test_a_real_run_is_valid(self):
        rc, out, err = self.validate(self.run_dir)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("2 files checked against schema/, 0 with problems", err)

    def test_text_for_a_number_is_named_by_file_and_field(self):
        def change(doc):
            doc["results"][2]["threads"] = "1"
            doc["results"][0]["limit"] = "gemm 93 GFLOP/s"
        path = self.broken("text_threads", change)
        rc, out, _ = self.validate(path)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{path}: results/2/threads: '1' is not of type 'integer'", out)
        self.assertIn(f"{path}: results/0/limit: ", out)

    def broken_csv(self, name, change):
        """A copy of the run's results.csv with change(lines) applied."""
        with open(os.path.join(self.run_dir, "results.csv"), newline="") as f:
            rows = list(csv.reader(f))
        change(rows)
        path = os.path.join(self.tmp, name, "results.csv")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="") as f:
            csv.writer(f).writerows(rows)
        return path

    def test_a_csv_cell_is_named_by_line_and_column(self):
        def change(rows):
            rows[2][rows[0].index("threads")] = "one"
        path = self.broken_csv("csv", change)
        rc, out, _ = self.validate(path)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{path}:3: threads: 'one' is not of type 'integer'", out)

    def test_a_journal_row_is_named_by_line(self):
        path = os.path.join(self.tmp, "journal", "results.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        row = dict(self.doc["results"][0], n="1000")
        with open(path, "w") as f:
            f.write(json.dumps({"schema_version": 2, "provenance": self.doc["provenance"]}) + "\n")
            f.write(json.dumps({"first": 0, "rows": [self.doc["results"][0], row]}) + "\n")
            f.write('{"first": 2, "rows": [')  # cut short by a kill: not a problem
        rc, out, _ = self.validate(path)
        self.assertEqual(rc, 1, out)
        self.assertEqual(out.strip(), f"{path}:2: rows/1/n: '1000' is not of type 'integer'")

    def test_a_calibration_file_is_checked_against_the_limits_schema(self):
        cal = os.path.join(self.tmp, "limits.json")
        p = subprocess.run([os.environ["PORTALAB"], "calibrate", "--quick", "--spaces", "Serial",
                            "--out", cal], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        rc, out, err = self.validate(cal)
        self.assertEqual(rc, 0, out + err)
        with open(cal) as f:
            doc = json.load(f)
        doc["calibration"]["spaces"][0]["memory_gbps"] = "20 GB/s"
        synthetic.write(doc, cal)
        rc, out, _ = self.validate(cal)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{cal}: calibration/spaces/0/memory_gbps: '20 GB/s' is not of type", out)

    def test_an_older_file_is_named_by_its_version(self):
        path = self.broken("old", lambda doc: doc.pop("schema_version"))
        rc, out, _ = self.validate(path)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{path}: a results file of schema_version 1, written before", out)

    def test_a_version_2_file_is_valid_without_the_rows_path(self):
        def older(doc):
            doc["schema_version"] = 2
            for row in doc["results"]:
                del row["path"]
        rc, out, err = self.validate(self.broken("v2", older))
        self.assertEqual(rc, 0, out + err)
        path = self.broken("v3_no_path", lambda doc: doc["results"][0].pop("path"))
        rc, out, _ = self.validate(path)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{path}: results/0: 'path' is a required property", out)

    def test_a_version_3_file_is_read_under_version_4_names(self):
        """Version 3 named a row's speedup_over_baseline `speedup`, the
        summary's speedup_over_host `speedups` and copy_overlap's metric
        speedup_over_serial `speedup`: its files are valid still (results.json
        and results.csv), and read under the new names."""
        from portalab import results as pr

        def older(doc):
            doc["schema_version"] = 3
            doc["summary"]["speedups"] = doc["summary"].pop("speedup_over_host")
            for row in doc["results"]:
                row["speedup"] = row.pop("speedup_over_baseline")
        path = self.broken("v3", older)
        rc, out, err = self.validate(path)
        self.assertEqual(rc, 0, out + err)
        doc, rows = pr.read_run(path)
        self.assertEqual(doc["summary"]["speedup_over_host"], self.doc["summary"]["speedup_over_host"])
        self.assertEqual([r["speedup_over_baseline"] for r in rows],
                         [r["speedup_over_baseline"] for r in self.doc["results"]])
        self.assertTrue(any(r["speedup_over_baseline"] for r in rows))
        self.assertNotIn("speedup", rows[0])
        self.assertEqual(pr.upgraded_row({"metrics": {"speedup": 2.0, "of_perfect": 0.9}}, 3),
                         {"metrics": {"speedup_over_serial": 2.0, "of_perfect": 0.9}})
        self.assertEqual(pr.upgraded_row({"metrics": {"speedup": 2.0}}, 4),
                         {"metrics": {"speedup": 2.0}})  # a version 4 metric of that name is its own
        def older_header(rows):
            rows[0][rows[0].index("speedup_over_baseline")] = "speedup"
        rc, out, err = self.validate(self.broken_csv("csv_v3", older_header))
        self.assertEqual(rc, 0, out + err)
        # A version 4 file knows one name.
        path = self.broken("v4_old_name", lambda doc: doc["results"][0].update(speedup=1.0))
        rc, out, _ = self.validate(path)
        self.assertEqual(rc, 1, out)
        self.assertIn("speedup", out)

    def test_every_reader_names_the_version_of_another_file(self):
        old = self.broken("v1", lambda doc: doc.pop("schema_version"))
        new = self.broken("v6", lambda doc: doc.update(schema_version=6))
        plots = os.path.join(self.tmp, "plots")
        for name, *args in (("collect.py", old), ("compare.py", old, new), ("plot.py", old, "--out", plots),
                            ("roofline.py", old, "--out", plots), ("pct_of_limit.py", old),
                            ("report.py", old, "--out", os.path.join(plots, "r.html")),
                            ("dev/kernels_limits.py", old), ("dev/host_peers.py", old)):
            rc, _, err = script(name, *args)
            if "needs " in err:
                continue  # matplotlib, jinja2 or Numba missing: said before reading
            self.assertEqual((rc, len(err.strip().splitlines())), (2, 1), f"{name}: {err}")
            self.assertIn(f"{old}: a results file of schema_version 1, written before", err)
        rc, _, err = script("collect.py", new)
        self.assertEqual(rc, 2, err)
        self.assertIn(f"{new}: a results file of schema_version 6, these scripts read versions 2 to 5",
                      err)

    def test_a_missing_path_exits_2(self):
        rc, _, err = self.validate(os.path.join(self.tmp, "none"))
        self.assertEqual(rc, 2, err)
        self.assertIn("none: no such file or folder", err)


class NeedsMatplotlibTest(unittest.TestCase):
    """Without matplotlib (hidden by a module of that name that fails to
    import, first on PYTHONPATH), the drawing scripts say what they need in
    one sentence and exit 2; --help still works."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="portalab_nompl_")
        with open(os.path.join(cls.tmp, "matplotlib.py"), "w") as f:
            f.write('raise ImportError("No module named \'matplotlib\' (hidden by the test)")\n')
        cls.env = dict(os.environ, PYTHONPATH=cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_hidden(self, name, *args):
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *args],
                           capture_output=True, text=True, timeout=60, env=self.env)
        return p.returncode, p.stdout, p.stderr

    def test_drawing_scripts_name_matplotlib_and_exit_2(self):
        results = os.path.join(self.tmp, "results.json")
        for name, args in (("plot.py", [results, "--out", self.tmp]),
                           ("roofline.py", [results, "--out", self.tmp]),
                           ("report.py", [results, "--out", os.path.join(self.tmp, "r.html")])):
            with self.subTest(script=name):
                rc, _, err = self.run_hidden(name, *args)
                self.assertEqual(rc, 2, err)
                self.assertNotIn("Traceback", err)
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertTrue(lines[0].startswith(f"{name}: needs matplotlib"), err)

    def test_help_needs_no_matplotlib_and_says_it_is_needed(self):
        for name in ("plot.py", "roofline.py", "report.py"):
            with self.subTest(script=name):
                rc, out, err = self.run_hidden(name, "--help")
                self.assertEqual(rc, 0, err)
                self.assertIn("matplotlib", out)

    def test_scripts_without_drawing_run_without_it(self):
        for name in ("collect.py", "compare.py", "pct_of_limit.py"):
            with self.subTest(script=name):
                rc, _, err = self.run_hidden(name, "--help")
                self.assertEqual(rc, 0, err)


if __name__ == "__main__":
    names = sys.argv[1:]
    if "PlotTest" in names:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(f"SKIP: {sys.executable} has no matplotlib (python3-matplotlib)")
            sys.exit(SKIP)
    # Cannot pass: these tests need a real results file.
    if "PORTALAB" not in os.environ and not set(names) <= {"ClassifyTest", "NeedsMatplotlibTest"}:
        sys.exit("PORTALAB (the portalab binary) is not set")
    unittest.main(argv=[sys.argv[0], "-v", *names])
