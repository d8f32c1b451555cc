"""Each rank on CPUs of its own, its threads inside them (issue 58), through
the real binary and mpirun on this host:

    PORTALAB=build/host/portalab MPIRUN=mpirun python3 tests/mpi/test_placement.py

The variables Kokkos' start-up warning advises (OMP_PROC_BIND=spread,
OMP_PLACES=threads) once bound every rank of a node to its first CPU; here
they give each rank its own share. Settings that pin ranks onto the same CPUs
end every rank with exit 2, naming them. One process with no variable runs
placed, without Kokkos' warning. Every run is under a timeout.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_mpi import mpirun  # noqa: E402

# Far above the seconds these runs take; only a hang reaches it.
TIMEOUT = 90
KOKKOS_WARNING = "OMP_PROC_BIND environment variable not set"
DECK = ('calibrate = "none"\nenergy = "off"\nspaces = ["OpenMP"]\ncopies = ["none"]\n'
        "reps = 2\nwarmups = 0\n[stream_copy]\nsizes = [1000]\n")
# The user's environment without any placement of its own.
CLEAN = {k: v for k, v in os.environ.items()
         if not k.startswith(("OMP_", "GOMP_", "KOKKOS_"))}


def cpus(text):
    """'0-2,5' as a set of CPU numbers."""
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


class PlacementTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_placement_")
        self.out = os.path.join(self.tmp, "out")
        self.portalab = os.environ["PORTALAB"]
        self.deck = os.path.join(self.tmp, "openmp.toml")
        with open(self.deck, "w") as f:
            f.write(DECK)
        listed = subprocess.run([self.portalab, "list"], capture_output=True, text=True,
                                timeout=TIMEOUT).stdout
        if "OpenMP" not in listed:
            self.skipTest("no OpenMP in this build")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_portalab(self, launcher, args, expect):
        cmd = launcher + [self.portalab] + args
        p = subprocess.run(cmd, env=CLEAN, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, expect,
                         f"{' '.join(cmd)}\nstdout:\n{p.stdout[-4000:]}\nstderr:\n{p.stderr[-4000:]}")
        return p

    def ranks(self):
        with open(os.path.join(self.out, "results.json")) as f:
            return json.load(f)["provenance"]["ranks"]

    def assert_apart(self, ranks):
        """Each rank's CPUs and its threads' CPUs its own."""
        seen_cpus, seen_threads = set(), set()
        for r in ranks:
            mine = cpus(r["cpus"])
            threads = set().union(*(cpus(t) for t in r["thread_cpus"]))
            self.assertTrue(threads <= mine, r)
            self.assertFalse(mine & seen_cpus, ranks)
            self.assertFalse(threads & seen_threads, ranks)
            seen_cpus |= mine
            seen_threads |= threads

    def test_advised_binding_gives_each_rank_its_own_cpus(self):
        # The command on the 2-core CI host: both ranks were on CPU 0.
        launcher = mpirun(2) + ["--bind-to", "none", "-x", "OMP_PROC_BIND=spread",
                                "-x", "OMP_PLACES=threads"]
        p = self.run_portalab(launcher, ["run", self.deck, "--out", self.out], 0)
        self.assertNotIn(KOKKOS_WARNING, p.stderr)
        ranks = self.ranks()
        self.assertEqual(len(ranks), 2)
        self.assert_apart(ranks)
        for r in ranks:
            self.assertIn("OMP_PROC_BIND", r["placement"])

    def test_no_variables_each_rank_its_own_cpus(self):
        p = self.run_portalab(mpirun(2) + ["--bind-to", "none"],
                              ["run", self.deck, "--out", self.out], 0)
        self.assertNotIn(KOKKOS_WARNING, p.stderr)
        self.assertEqual(p.stderr.count("placement:"), 1, p.stderr)
        self.assert_apart(self.ranks())

    def test_ranks_bound_onto_the_same_cpus_exit_2(self):
        # Three ranks on two CPUs, their threads bound: no share each.
        launcher = mpirun(3) + ["--bind-to", "none", "-x", "OMP_PROC_BIND=spread"]
        p = self.run_portalab(launcher, ["run", self.deck, "--out", self.out], 2)
        self.assertIn("ranks 0, 1, 2 may run on CPUs", p.stderr)
        self.assertIn("unset OMP_PROC_BIND", p.stderr)
        self.assertEqual(p.stderr.count("error:"), 1, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.json")))

    def test_explicit_places_onto_the_same_cpus_exit_2(self):
        # OMP_PLACES naming CPU 0 for every rank: the runtime binds as told.
        launcher = mpirun(2) + ["--bind-to", "none", "-x", "OMP_PLACES={0}",
                                "-x", "OMP_PROC_BIND=close"]
        p = self.run_portalab(launcher, ["run", self.deck, "--out", self.out], 2)
        self.assertIn("rank 0 placed its threads on CPUs 0 and rank 1 on CPUs 0", p.stderr)
        self.assertIn("OMP_PLACES", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.json")))

    def test_one_process_placed_and_quiet(self):
        p = self.run_portalab([], ["run", self.deck, "--out", self.out], 0)
        self.assertNotIn(KOKKOS_WARNING, p.stderr)
        self.assertEqual(p.stderr.count("placement:"), 1, p.stderr)
        (rank,) = self.ranks()
        self.assertEqual(rank["placement"], "portalab")
        self.assertGreaterEqual(len(rank["thread_cpus"]), 1)
        for t in rank["thread_cpus"]:
            self.assertTrue(cpus(t) <= cpus(rank["cpus"]), rank)

    def test_one_process_user_binding_wins(self):
        env_launcher = ["env", "OMP_PROC_BIND=close", "OMP_PLACES=threads"]
        p = self.run_portalab(env_launcher, ["run", self.deck, "--out", self.out], 0)
        self.assertNotIn("placement:", p.stderr)
        (rank,) = self.ranks()
        self.assertIn("OpenMP runtime", rank["placement"])
        # Each thread bound to a CPU of its own by the runtime.
        self.assertTrue(all(len(cpus(t)) == 1 for t in rank["thread_cpus"]), rank)


if __name__ == "__main__":
    unittest.main()
