"""`portalab calibrate` under mpirun ends, every way out of it (issue 58),
through the real binary and mpirun:

    PORTALAB=build/host/portalab MPIRUN=mpirun RANKS=2 python3 tests/mpi/test_calibrate.py

Measured and written once by rank 0 (--out), --out refused before anything
is measured (under a file, a folder, a FIFO), its folder gone by the time
it is written, bad --spaces (on every rank, on one), SIGTERM to the
launcher, one rank's calibration failing: every rank ends with one exit
status, and no case leaves a partial file. Every run is under a timeout: a
hang (rank 0 alone in a collective) fails the test.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_mpi import ENV, RANKS, mpirun  # noqa: E402

# A quick calibration of Serial takes seconds on ranks sharing two cores;
# only a hang reaches this.
TIMEOUT = 120


class CalibrateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_calibrate_")
        self.portalab = os.environ["PORTALAB"]

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def command(self, *args, ranks=RANKS):
        return mpirun(ranks) + [self.portalab, "calibrate", "--quick", "--energy", "off", *args]

    def calibrate(self, *args, env=ENV, expect=0):
        cmd = self.command("--spaces", "Serial", *args)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, expect,
                         f"{' '.join(cmd)}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
        return p

    def assert_only(self, *names):
        """The folder holds these and nothing else (no temporary file left)."""
        self.assertEqual(sorted(os.listdir(self.tmp)), sorted(names))

    def start(self, *args, env=ENV):
        """The job in the background, its stderr read line by line."""
        proc = subprocess.Popen(self.command("--spaces", "Serial", *args), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        lines, seen = [], threading.Event()

        def read():
            for line in proc.stderr:
                lines.append(line)
                if line.startswith("calibrate: Serial:"):
                    seen.set()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        self.assertTrue(seen.wait(TIMEOUT), "".join(lines))
        return proc, lines, reader

    def finish(self, proc, lines, reader):
        out = proc.stdout.read()
        proc.wait(timeout=TIMEOUT)
        reader.join(TIMEOUT)
        return out, "".join(lines)

    def test_out_written_once_by_rank_0(self):
        out = os.path.join(self.tmp, "limits.json")
        p = self.calibrate("--out", out)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["calibration"]["mode"], "quick")
        self.assertEqual([s["space"] for s in doc["calibration"]["spaces"]], ["Serial"])
        # Every rank's place, and what each measured, in rank 0's file.
        ranks = doc["provenance"]["ranks"]
        self.assertEqual([r["rank"] for r in ranks], list(range(RANKS)))
        for r in ranks:
            self.assertEqual([s["space"] for s in r["calibration"]["spaces"]], ["Serial"])
        self.assertEqual(p.stdout.count("machine limits"), 1, p.stdout)
        self.assertEqual(p.stdout.count("calibration: "), 1, p.stdout)
        self.assert_only("limits.json")
        # The file is what `run --calibration` reads.
        run = subprocess.run(
            mpirun(RANKS) + [self.portalab, "run", "default", "--dry-run", "--calibration", out,
                             "--spaces", "Serial"],
            env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])

    def test_without_out(self):
        p = self.calibrate()
        self.assertEqual(p.stdout.count("machine limits"), 1, p.stdout)
        self.assertNotIn("calibration: ", p.stdout)

    def refused_before_measuring(self, out, *words):
        p = self.calibrate("--out", out, expect=2)
        self.assertNotIn("measurement of", p.stderr)  # refused before Kokkos starts
        # Rank 0's --out, said by every rank (the start-up agreement's way).
        self.assertEqual(p.stderr.count("error: [rank "), RANKS, p.stderr)
        for word in words:
            self.assertIn(word, p.stderr)
        return p

    def test_out_under_a_file(self):
        with open(os.path.join(self.tmp, "file"), "w") as f:
            f.write("kept\n")
        self.refused_before_measuring(os.path.join(self.tmp, "file", "limits.json"), "file")
        self.assert_only("file")

    def test_out_a_folder(self):
        os.mkdir(os.path.join(self.tmp, "folder"))
        self.refused_before_measuring(os.path.join(self.tmp, "folder"), "is a folder")
        self.assert_only("folder")

    def test_out_a_fifo(self):
        fifo = os.path.join(self.tmp, "fifo")
        os.mkfifo(fifo)
        self.refused_before_measuring(fifo, "named pipe")
        self.assert_only("fifo")

    def test_out_folder_gone_before_the_write(self):
        folder = os.path.join(self.tmp, "gone")
        os.mkdir(folder)
        proc, lines, reader = self.start("--out", os.path.join(folder, "limits.json"))
        os.rmdir(folder)
        out, err = self.finish(proc, lines, reader)
        # Measured, shown, not written: every rank exits 1.
        self.assertEqual(proc.returncode, 1, err[-3000:])
        self.assertEqual(out.count("machine limits"), 1, out)
        self.assertIn("error:", err)
        self.assert_only()

    def test_bad_spaces(self):
        p = self.calibrate("--spaces", "Nowhere", expect=2)
        self.assertEqual(p.stderr.count("error:"), 1, p.stderr)
        self.assertIn("Nowhere", p.stderr)

    def test_spaces_differ_on_one_rank(self):
        out = os.path.join(self.tmp, "limits.json")
        both = [self.portalab, "calibrate", "--quick", "--energy", "off", "--out", out]
        # The last rank calibrates every space, the others Serial: refused.
        cmd = mpirun(RANKS - 1) + both + ["--spaces", "Serial", ":", "-np", "1"] + both
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 2, p.stderr[-3000:])
        self.assertNotIn("measurement of", p.stderr)
        self.assert_only()

    def test_sigterm_to_the_launcher(self):
        out = os.path.join(self.tmp, "limits.json")
        proc, lines, reader = self.start("--out", out)
        os.kill(proc.pid, signal.SIGTERM)
        stdout, err = self.finish(proc, lines, reader)
        self.assertNotEqual(proc.returncode, 0, err[-3000:])
        self.assert_only()  # a calibration file is written whole or not at all
        # Said truthfully: nothing kept (not "results so far are kept").
        self.assertNotIn("results so far are kept", err)
        if "calibration interrupted by SIGTERM" in err:
            self.assertIn("no limits kept", err)

    def test_a_rank_failing(self):
        out = os.path.join(self.tmp, "limits.json")
        env = dict(ENV, PORTALAB_FAULT=f"calibrate:{RANKS - 1}")
        p = self.calibrate("--out", out, env=env, expect=3)
        self.assertIn(f"calibration failed: rank {RANKS - 1}: fault injected", p.stderr)
        self.assertIn("no limits kept", p.stderr)
        self.assertEqual(p.stderr.count("calibration failed"), 1, p.stderr)  # rank 0 says it
        self.assert_only()


if __name__ == "__main__":
    unittest.main()
