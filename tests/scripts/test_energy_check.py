"""Tests of scripts/dev/energy_check.py (issue 30's GPU-node check) on synthetic
nvidia-smi samples and results, and of scripts/dev/energy-check.sh end to end
with a fake nvidia-smi and a fake portalab (tests/scripts/fake_*.py).

    python3 tests/scripts/test_energy_check.py [TestClass...]
"""
import contextlib
import datetime
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(SOURCE, "scripts")
sys.path[:0] = [SCRIPTS, os.path.join(SCRIPTS, "dev")]  # the package; energy_check.py

import energy_check as ec  # noqa: E402
from portalab import results as pr  # noqa: E402

T0 = 1795571962.0  # 2026-11-25 02:39:22 UTC
HEADER = "timestamp, uuid, power.draw.instant [W], power.draw [W], clocks.sm [MHz], clocks.mem [MHz]"


def stamp(t):
    """t (UNIX seconds) as nvidia-smi writes it under TZ=UTC."""
    ms = round(t * 1000)
    return datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc).strftime(
        "%Y/%m/%d %H:%M:%S") + f".{ms % 1000:03d}"


def samples_csv(power, seconds=10.0, step=0.02, uuid="GPU-fake", sm=lambda t: 1980, other=None):
    """nvidia-smi's CSV from T0 for `seconds`: power(t) watts (instant and
    averaged alike) at t seconds after T0; `other` adds a second GPU's lines."""
    lines = [HEADER]
    for k in range(int(seconds / step) + 1):
        t = k * step
        lines.append(f"{stamp(T0 + t)}, {uuid}, {power(t):.3f}, {power(t):.3f}, {sm(t)}, 2619")
        if other:
            lines.append(f"{stamp(T0 + t)}, {other}, 9999.0, 9999.0, 100, 100")
    return "\n".join(lines) + "\n"


def row(experiment="gemm", dtype="float32", start=2.0, end=7.0, joules=1500.0, reps=100,
        kernel_ms=20.0, sm=1980.0, energy=True, **extra):
    r = {"experiment": experiment, "variant": "vendor", "space": "Cuda", "dtype": dtype,
         "n": 8192, "copies": "none", "reps": reps, "check": "PASS", "kernel_ms": kernel_ms,
         "total_ms": kernel_ms, "energy": None}
    if energy:
        r["energy"] = {"gpu": {"joules": joules, "seconds": end - start, "reps": reps},
                       "cpu": {"not_available": "a VM"},
                       "start_unix_s": T0 + start, "end_unix_s": T0 + end,
                       "sm_clock_mhz": sm, "mem_clock_mhz": 2619.0, "temperature_c": 60.0,
                       "clock_event_reasons": [], "throttled": False, "gflop_per_j": 12.5}
        r["energy"].update(extra)
    return r


def doc(*rows):
    device = {"space": "Cuda", "name": "Fake H100", "uuid": "GPU-fake", "cuda_driver": 13000}
    return {"schema_version": pr.SCHEMA_VERSION,
            "provenance": {"ranks": [{"device": device}], "devices": [device],
                           "energy": {"gpu": {"name": "Fake H100"}}},
            "results": list(rows)}


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_energy_check_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def file(self, name, content):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def check(self, *args):
        """energy_check.main(args): (exit code, stdout, stderr)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = ec.main(list(args))
            except SystemExit as e:
                code = e.code
        return code, out.getvalue(), err.getvalue()


class SamplesTest(Base):
    def test_timestamps_are_utc_and_units_are_left_out_of_the_header(self):
        s = ec.read_samples(self.file("s.csv", samples_csv(lambda t: 300.0, seconds=1)))
        self.assertEqual(s.column, "power.draw.instant")
        self.assertEqual(s.lag, 0.0)
        self.assertAlmostEqual(s.t[0], T0, places=3)
        self.assertAlmostEqual(s.t[-1], T0 + 1.0, places=3)
        self.assertEqual(len(s), 51)
        self.assertEqual(s.sm[0], 1980.0)

    def test_the_integral_of_a_ramp_is_exact_between_samples(self):
        # 100 + 10 t W: linear, so trapezoids are exact, ends interpolated
        # (to the 1e-7 s a double keeps of a UNIX time).
        s = ec.read_samples(self.file("s.csv", samples_csv(lambda t: 100 + 10 * t, step=0.5)))
        a, b = 1.2, 3.6
        self.assertAlmostEqual(s.integral(T0 + a, T0 + b),
                               100 * (b - a) + 5 * (b * b - a * a), delta=1e-3)
        self.assertAlmostEqual(s.integral(T0 + 2, T0 + 7), 500 + 5 * (49 - 4), delta=1e-3)
        self.assertEqual(s.count(T0 + 2, T0 + 3), 3)
        self.assertTrue(s.covers(T0 + 2, T0 + 3))
        self.assertFalse(s.covers(T0 + 2, T0 + 11))

    def test_only_the_runs_gpu_and_only_numbers(self):
        text = samples_csv(lambda t: 300.0, seconds=1, other="GPU-other")
        text = text.replace("300.000, 300.000, 1980", "[N/A], [N/A], 1980", 1)  # first line
        s = ec.read_samples(self.file("s.csv", text), uuid="GPU-fake")
        self.assertEqual(len(s), 50)  # 51 of GPU-fake, one with no power
        self.assertEqual(set(s.power), {300.0})

    def test_without_power_draw_instant_the_one_second_mean_is_moved_back(self):
        text = samples_csv(lambda t: 300.0, seconds=1).replace(", power.draw.instant [W]", "")
        text = "\n".join(", ".join(line.split(", ")[:2] + line.split(", ")[3:])
                         if k else line for k, line in enumerate(text.splitlines())) + "\n"
        s = ec.read_samples(self.file("s.csv", text))
        self.assertEqual(s.column, "power.draw")
        self.assertEqual(s.lag, ec.AVERAGED_LAG_S)
        self.assertAlmostEqual(s.t[0], T0 - 0.5, places=3)

    def test_a_last_line_cut_short_is_left_out_and_any_other_is_an_error(self):
        text = samples_csv(lambda t: 300.0, seconds=0.1)
        s = ec.read_samples(self.file("cut.csv", text + f"{stamp(T0 + 1)}, GPU-fa"))
        self.assertEqual(len(s), 6)
        bad = self.file("bad.csv", text.replace(", 2619\n", "\n", 2))
        with self.assertRaisesRegex(Exception, r"bad.csv:2: 5 fields, expected 6"):
            ec.read_samples(bad)
        with self.assertRaisesRegex(Exception, r"no clocks.sm column"):
            ec.read_samples(self.file("h.csv", "timestamp, power.draw [W]\n"))


class CheckTest(Base):
    def setUp(self):
        super().setUp()
        self.samples = self.file("s.csv", samples_csv(lambda t: 300.0, seconds=60))

    def test_joules_within_ten_percent_of_the_integral_pass_and_beyond_fail(self):
        # 300 W over 5 s: 1500 J.
        ok = self.file("ok/results.json", doc(row(joules=1500 * 1.08),
                                              row(experiment="stream_copy", start=8, end=10,
                                                  joules=600 * 0.93)))
        code, out, _ = self.check("--samples", self.samples, "--entries", ok,
                                  "--markdown", os.path.join(self.tmp, "ok.md"))
        self.assertEqual(code, 0, out)
        self.assertIn("PASS: 0 of 3 checks failed", out)
        with open(os.path.join(self.tmp, "ok.md")) as f:
            md = f.read()
        self.assertIn("on Fake H100, CUDA driver 13000", md)
        self.assertIn("| gemm vendor float32 n=8192 copies=none | 5.00 | 251 | 1620 | 1500 | 1.08 | PASS |",
                      md)
        # (b): 300 W × 5 s, and the row's GFLOP/J.
        self.assertIn("| 1620 | 300 | 5 | 1500 | 1.08 | 12.5 | PASS |", md)
        off = self.file("off/results.json", doc(row(joules=1500 * 1.12)))
        code, out, _ = self.check("--samples", self.samples, "--entries", off)
        self.assertEqual(code, 1, out)
        self.assertIn("FAIL  gemm vendor float32 n=8192 copies=none | 5.00 | 251 | 1680 | 1500 | 1.12", out)

    def test_a_row_without_energy_or_samples_fails_and_says_why(self):
        path = self.file("r/results.json", doc(
            row(energy=False), row(dtype="float64", start=59, end=70)))
        with open(path) as f:
            path_doc = json.load(f)
        path_doc["results"][0]["energy"] = {"gpu": {"not_available": "NVML not loaded"}}
        path = self.file("r/results.json", path_doc)
        code, out, _ = self.check("--samples", self.samples, "--entries", path)
        self.assertEqual(code, 1)
        self.assertIn("(NVML not loaded)", out)
        self.assertIn("the sampler did not cover it", out)

    def test_the_long_run_records_its_clocks(self):
        entries = self.file("e/results.json", doc(row()))
        good = self.file("l/results.json", doc(row(start=10, end=50, joules=12000, sm=1950)))
        code, out, _ = self.check("--samples", self.samples, "--entries", entries, "--long", good)
        self.assertEqual(code, 0, out)
        self.assertIn("| 1950 | 1980/1980/1980 | 2619 | 60 | none | no", out)
        for bad, why in ((row(start=10, end=50, joules=12000, sm=None), "not recorded: sm_clock_mhz"),
                         (row(start=10, end=15, joules=1500), "lasted 5.0 s, not 20"),
                         (row(start=10, end=50, joules=12000, sm=1700), "SM clock 0.859")):
            path = self.file("bad/results.json", doc(bad))
            code, out, _ = self.check("--samples", self.samples, "--entries", entries, "--long", path)
            self.assertEqual(code, 1, why)
            self.assertIn(why, out)

    def test_the_cost_of_the_queries(self):
        entries = self.file("e/results.json", doc(row()))
        # 100 reps over 5 s with energy on, 20 ms timed each: 30 ms a rep outside the timing
        # (the fixture's, not measured).
        on = self.file("on/results.json", doc(row(kernel_ms=20.2)))
        off1 = self.file("off1/results.json", doc(row(kernel_ms=20.0, energy=False)))
        off2 = self.file("off2/results.json", doc(row(kernel_ms=21.0, energy=False)))
        code, out, _ = self.check("--samples", self.samples, "--entries", entries,
                                  "--cost-on", on, "--cost-off", off1, off2)
        self.assertEqual(code, 0, out)
        self.assertIn("| 100 | 20 | 20.2 | 1.01 | 29800.0 µs", out)
        slow = self.file("slow/results.json", doc(row(kernel_ms=21.0)))
        code, out, _ = self.check("--samples", self.samples, "--entries", entries,
                                  "--cost-on", slow, "--cost-off", off1)
        self.assertEqual(code, 1)
        self.assertIn("| 20 | 21 | 1.05 |", out)

    def test_bad_input_exits_2_naming_the_file(self):
        entries = self.file("e/results.json", doc(row()))
        code, _, err = self.check("--samples", os.path.join(self.tmp, "none.csv"), "--entries", entries)
        self.assertEqual(code, 2)
        self.assertIn("none.csv: cannot read it (No such file", err)
        code, _, err = self.check("--samples", self.file("t.csv", HEADER + "\nyesterday, GPU-fake, 1, 1, 1, 1\n"),
                                  "--entries", entries)
        self.assertEqual(code, 2)
        self.assertIn("t.csv:2: timestamp 'yesterday'", err)


class ShellTest(Base):
    """scripts/dev/energy-check.sh with a fake nvidia-smi (on PATH) and a fake
    portalab (in BUILD_DIR), in a time zone not UTC: the script must run
    nvidia-smi under TZ=UTC for the windows to meet the samples."""

    def run_script(self, **env):
        bindir, build = os.path.join(self.tmp, "bin"), os.path.join(self.tmp, "build")
        for src, dst in (("fake_nvidia_smi.py", os.path.join(bindir, "nvidia-smi")),
                         ("fake_portalab.py", os.path.join(build, "portalab"))):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.join(HERE, src), dst)
            os.chmod(dst, 0o755)
        e = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"], TZ="IST-5:30",
                 ENERGY_CHECK_LONG_MIN_S="0.2", **env)
        out = os.path.join(self.tmp, "out")
        p = subprocess.run([os.path.join(SCRIPTS, "dev", "energy-check.sh"), build, out], env=e,
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout + p.stderr, out

    def test_the_checks_pass_on_a_gpu_that_agrees_with_itself(self):
        code, out, dirname = self.run_script()
        self.assertEqual(code, 0, out)
        self.assertIn("PASS: 0 of 10 checks failed", out)
        with open(os.path.join(dirname, "energy-check.md")) as f:
            md = f.read()
        self.assertIn("Fake H100", md)
        self.assertIn("power.draw.instant", md)
        self.assertIn("(d) the cost of the queries", md)
        self.assertNotIn("FAIL", md)

    def test_a_failed_run_fails_the_script(self):
        code, out, _ = self.run_script(FAKE_PORTALAB_EXIT="1")
        self.assertEqual(code, 1, out)
        self.assertIn("portalab run entries failed", out)


if __name__ == "__main__":
    unittest.main()
