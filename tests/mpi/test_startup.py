"""Ranks that disagree or fail at start-up end the job at once, with the
reason on every rank (issue 48), through the real binary and mpirun:

    PORTALAB=build/host/portalab MPIRUN=mpirun RANKS=2 python3 tests/mpi/test_startup.py

Each case gives the last rank (MPMD: `-np K prog : -np 1 prog`) something the
others were not given: another deck, another --set or --spaces, a bad
--kokkos-* option, KOKKOS_NUM_THREADS or (builds with OpenMP) OMP_NUM_THREADS,
no portalab at all. Every run is under a
timeout: a hang fails the test; none of them may leave a result file.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_mpi import ENV, RANKS, mpirun  # noqa: E402

# Far above the seconds these cases take; only a hang reaches it.
TIMEOUT = 60
DECK = ('calibrate = "none"\nenergy = "off"\nspaces = ["Serial"]\ncopies = ["none"]\n'
        "reps = 2\nwarmups = 0\n")


def launcher():
    """mpirun's options for every program of an MPMD line (test_mpi's, less -np)."""
    cmd = mpirun(RANKS)
    i = cmd.index("-np")
    return cmd[:i] + cmd[i + 2:]


class StartupTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_startup_")
        self.out = os.path.join(self.tmp, "out")
        self.portalab = os.environ["PORTALAB"]

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def require_openmp(self):
        # OMP_NUM_THREADS means nothing to a build without OpenMP (Threads:
        # KOKKOS_NUM_THREADS); ctest registers the _omp_ cases only with it.
        if "OpenMP" not in self.spaces():
            self.skipTest("no OpenMP in this build")

    def spaces(self):
        return subprocess.run([self.portalab, "list"], capture_output=True, text=True,
                              timeout=TIMEOUT).stdout

    def deck(self, name, text):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(DECK + text)
        return path

    def run_job(self, first, last, env=None):
        """RANKS-1 ranks run `first`, the last rank `last` (argument lists)."""
        cmd = launcher() + ["-np", str(RANKS - 1)] + first + [":", "-np", "1"] + last
        p = subprocess.run(cmd, env=env or ENV, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertNotEqual(p.returncode, 0, f"{' '.join(cmd)}\nstderr:\n{p.stderr[-4000:]}")
        return p

    def run_args(self, deck, *extra):
        return [self.portalab, "run", deck, "--out", self.out, *extra]

    def assert_nothing_written(self):
        for name in ("results.json", "results.jsonl", "results.csv"):
            self.assertFalse(os.path.exists(os.path.join(self.out, name)), name)

    def assert_every_rank_says(self, p, *words):
        """Each rank printed the verdict once, with `words` in it."""
        lines = [l for l in p.stderr.splitlines() if l.startswith("error: [rank ")]
        self.assertEqual(sorted(l.split("]")[0] for l in lines),
                         sorted(f"error: [rank {r} of {RANKS}" for r in range(RANKS)), p.stderr)
        for line in lines:
            for w in words:
                self.assertIn(w, line)
        self.assert_nothing_written()

    # --- Ranks that disagree: exit 2, every rank names the rank and the difference.
    def test_different_decks(self):
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        b = self.deck("b.toml", "[stream_copy]\nsizes = [1000]\n")
        p = self.run_job(self.run_args(a), self.run_args(b))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assert_every_rank_says(p, f"rank {RANKS - 1} ", a, b, "entry 1: ", "'stream_copy",
                                    "'vector_poly")

    def test_same_experiments_other_sizes(self):
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000, 2000]\n")
        b = self.deck("b.toml", "[vector_poly]\nsizes = [1000, 3000]\n")
        p = self.run_job(self.run_args(a), self.run_args(b))
        self.assertEqual(p.returncode, 2, p.stderr)
        # The first entries agree; the first that differs is named.
        self.assert_every_rank_says(p, f"rank {RANKS - 1} ", "n=3000", "n=2000")
        self.assertNotIn("entry 1: ", p.stderr)

    def test_different_set(self):
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        p = self.run_job(self.run_args(a), self.run_args(a, "--set", "reps=7"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assert_every_rank_says(p, f"rank {RANKS - 1} ", "--set reps=7", "reps=7 ", "reps=2 ")

    def test_different_spaces(self):
        spaces = self.spaces()
        other = "OpenMP" if "OpenMP" in spaces else "Threads" if "Threads" in spaces else None
        if not other:
            self.skipTest("one host space in this build")
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        p = self.run_job(self.run_args(a, "--spaces", "Serial"),
                         self.run_args(a, "--spaces", f"Serial,{other}"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assert_every_rank_says(p, f"rank {RANKS - 1} ", "spaces: ", f"'Serial,{other}'",
                                    "'Serial'")

    def test_different_stores_variable(self):
        # A variable that changes what the loops do, set on one node only.
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        p = self.run_job(self.run_args(a),
                         ["env", "PORTALAB_STREAMING_STORES=1"] + self.run_args(a))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assert_every_rank_says(p, "host stores: ", "PORTALAB_STREAMING_STORES=1",
                                    "'as calibrated'")

    def test_one_rank_runs_another_command(self):
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        p = self.run_job(self.run_args(a), [self.portalab, "run", a, "--dry-run"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assert_every_rank_says(p, "command: ", "'run --dry-run'")

    # --- A rank that cannot start: its error, on every rank.
    def assert_last_rank_cannot_start(self, last, *words):
        """The last rank runs `last` (a function of the deck) and fails: exit 2."""
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        p = self.run_job(self.run_args(a), last(a))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assert_every_rank_says(p, f"rank {RANKS - 1} of {RANKS} cannot start", *words)

    def test_bad_kokkos_option_on_one_rank(self):
        self.assert_last_rank_cannot_start(
            lambda a: self.run_args(a, "--kokkos-num-threads=abc"), "--kokkos-num-threads=abc")

    def test_bad_kokkos_num_threads_variable_on_one_rank(self):
        self.assert_last_rank_cannot_start(
            lambda a: ["env", "KOKKOS_NUM_THREADS=abc"] + self.run_args(a),
            "KOKKOS_NUM_THREADS=abc")

    def test_bad_omp_num_threads_on_one_rank(self):
        self.require_openmp()
        self.assert_last_rank_cannot_start(
            lambda a: ["env", "OMP_NUM_THREADS=abc"] + self.run_args(a), "OMP_NUM_THREADS=abc")

    def test_bad_deck_on_one_rank(self):
        bad = self.deck("bad.toml", "[vector_poly]\nnot_a_key = 1\n")
        self.assert_last_rank_cannot_start(lambda a: self.run_args(bad), "bad.toml:8")

    def test_bad_command_line_on_one_rank(self):
        self.assert_last_rank_cannot_start(lambda a: self.run_args(a, "--no-such-option"),
                                           "--no-such-option")

    def assert_said_once(self, variable):
        """`variable`=abc on every rank: exit 2, the error said once."""
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        cmd = mpirun(RANKS) + self.run_args(a)
        p = subprocess.run(cmd, env=dict(ENV, **{variable: "abc"}), capture_output=True,
                           text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.count("error:"), 1, p.stderr)
        self.assertIn(f"{variable}=abc", p.stderr)
        self.assert_nothing_written()

    def test_same_bad_kokkos_num_threads_everywhere_said_once(self):
        self.assert_said_once("KOKKOS_NUM_THREADS")

    def test_same_bad_omp_num_threads_everywhere_said_once(self):
        self.require_openmp()
        self.assert_said_once("OMP_NUM_THREADS")

    # --- A rank that never takes part.
    def test_rank_exits_before_mpi_starts(self):
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        p = self.run_job(self.run_args(a), ["true"])
        # Where it exits after another rank called MPI_Init, mpirun ends the
        # job and names it; before, the others wait in MPI_Init, which cannot
        # say who is missing, and the start-up timeout (5 s where every rank
        # is on this node) ends them.
        said = p.stdout + p.stderr
        if f"process rank {RANKS - 1} with PID" not in said:
            self.assertIn("MPI did not start within 5 s: a rank of this job never called MPI_Init",
                          p.stderr, said)
        self.assert_nothing_written()

    def test_rank_never_starts_mpi(self):
        # The others give up after PORTALAB_STARTUP_TIMEOUT_S, each saying why.
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        p = self.run_job(self.run_args(a), ["sleep", str(TIMEOUT)],
                         env=dict(ENV, PORTALAB_STARTUP_TIMEOUT_S="3"))
        self.assertIn("MPI did not start within 3 s", p.stderr)
        self.assert_nothing_written()

    def test_rank_stalls_before_the_agreement(self):
        # PORTALAB_FAULT=startup_stall:R: rank R started MPI and never comes
        # to the agreement; rank 0 names it when the time is up.
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        cmd = mpirun(RANKS) + self.run_args(a)
        env = dict(ENV, PORTALAB_FAULT=f"startup_stall:{RANKS - 1}", PORTALAB_STARTUP_TIMEOUT_S="3")
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertNotEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"rank {RANKS - 1} of {RANKS} did not reach the start-up agreement within 3 s",
                      p.stderr)
        self.assert_nothing_written()

    # --- What agrees still runs.
    def test_same_deck_by_other_paths_runs(self):
        a = self.deck("a.toml", "[vector_poly]\nsizes = [1000]\n")
        copy = self.deck("elsewhere/a.toml", "# a copy, commented\n[vector_poly]\nsizes = [1000]\n")
        cmd = launcher() + ["-np", str(RANKS - 1)] + self.run_args(a) + [
            ":", "-np", "1", self.portalab, "run", copy, "--kokkos-num-threads=1"]
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertTrue(os.path.exists(os.path.join(self.out, "results.json")))


if __name__ == "__main__":
    unittest.main()
