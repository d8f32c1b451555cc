"""Runs over MPI ranks, on host spaces, through the real binary and mpirun:

    PORTALAB=build/host/portalab MPIRUN=mpirun RANKS=2 python3 tests/mpi/test_mpi.py [Test...]

Checks what rank 0 writes (rows combined over the ranks, per-rank figures,
scaling against one rank), every distributed experiment's check, a deck
error said once with every rank exiting 2, a failure on one rank only
recorded on all, SIGTERM to the launcher and a rank killed outright, a Kokkos
Tools library on every rank (PORTALAB_EVENT_CHECKER: tests/tools/). Every
run is under a timeout: a hang in a collective fails the test.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECKS = os.path.join(SOURCE, "tests", "decks")
RANKS = int(os.environ.get("RANKS", "2"))
TIMEOUT = 240
sys.path.insert(0, os.path.join(SOURCE, "scripts"))

from portalab import results as portalab_results  # noqa: E402


def mpirun(ranks):
    """The launcher as a user would start it on a small machine: root allowed
    (containers), more ranks than cores, shared memory between them."""
    cmd = [os.environ.get("MPIRUN", "mpirun"), "-np", str(ranks), "--oversubscribe",
           "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false", OMPI_MCA_rmaps_base_oversubscribe="1")


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_mpi_")
        self.out = os.path.join(self.tmp, "out")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_deck(self, deck, *extra, ranks=RANKS, env=ENV, expect=0):
        cmd = mpirun(ranks) + [os.environ["PORTALAB"], "run", deck, "--out", self.out, *extra]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, expect,
                         f"{' '.join(cmd)}\nstdout:\n{p.stdout[-4000:]}\nstderr:\n{p.stderr[-4000:]}")
        return p

    def results(self):
        portalab_results.check_files(self.out)  # valid against schema/
        with open(os.path.join(self.out, "results.json")) as f:
            return json.load(f)

    def write_deck(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path


class AggregationTest(Base):
    def test_rows_combined_over_ranks(self):
        p = self.run_deck(os.path.join(DECKS, "mpi_node.toml"))
        doc = self.results()
        rows = doc["results"]
        # Rank 0 alone wrote and printed: one banner, one summary line.
        self.assertEqual(p.stderr.count("portalab "), 1, p.stderr)
        self.assertEqual(p.stdout.count(" entries: "), 1, p.stdout)
        self.assertEqual(len(doc["provenance"]["ranks"]), RANKS)
        self.assertEqual(sorted(r["rank"] for r in doc["provenance"]["ranks"]), list(range(RANKS)))
        for place in doc["provenance"]["ranks"]:
            self.assertTrue(place["host"] and place["cpus"], place)
            self.assertTrue(place["mpi"], place)
        ran = [r for r in rows if r["check"] == "PASS"]
        self.assertTrue(ran)
        for r in rows:
            if r["ranks"] <= RANKS and r["check"] != "N/A":
                self.assertEqual(r["check"], "PASS", r)
            if r["ranks"] > RANKS:
                self.assertEqual(r["check"], "N/A", r)
        for r in ran:
            self.assertEqual(len(r["per_rank"]), r["ranks"], r)
            if r["ranks"] > 1:
                # The row's time is the slowest rank's at each repetition: no
                # rank's own median exceeds the row's worst repetition.
                self.assertLessEqual(r["rank_kernel_max_ms"], r["stats"]["kernel"]["max_ms"] * 1.0001)
                self.assertGreaterEqual(r["imbalance"], 0.0)
        # allreduce on every rank of the run: bus bandwidth as nccl-tests.
        for r in ran:
            if r["experiment"] == "allreduce" and r["kernel_ms"] > 0:
                k = r["ranks"]
                algbw = r["metrics"]["algbw_gbps"]
                self.assertAlmostEqual(r["gbps"], algbw * 2 * (k - 1) / k, delta=1e-6 * max(1, algbw))
        # Scaling against the one-rank row, and the multi-rank summary.
        scaled = [r for r in ran if r["ranks"] > 1 and r["experiment"] in ("dot_distributed", "gemm")]
        self.assertTrue(scaled)
        for r in scaled:
            self.assertIn("parallel_efficiency", r["metrics"], r)
            self.assertAlmostEqual(r["metrics"]["parallel_efficiency"] * r["ranks"],
                                   r["metrics"]["speedup_over_1_rank"], places=9)
        self.assertIn("multi_rank_crossover", doc["summary"])
        # gemm on k ranks: k independent products, k times the FLOPs.
        gemm = {r["ranks"]: r for r in ran if r["experiment"] == "gemm"}
        self.assertAlmostEqual(gemm[2]["flops"], 2 * gemm[1]["flops"])
        self.check_plots()

    def check_plots(self):
        """plot.py draws the scaling and bandwidth figures of the run."""
        python = os.environ.get("PLOT_PYTHON")
        if not python:
            return  # no python3 with matplotlib: scripts.NeedsMatplotlibTest covers the message
        plots = os.path.join(self.tmp, "plots")
        p = subprocess.run([python, os.path.join(SOURCE, "scripts", "plot.py"), self.out,
                            "--out", plots], capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        for name in ("dot_distributed_scaling", "gemm_scaling", "allreduce_bandwidth",
                     "sendrecv_bandwidth"):
            with open(os.path.join(plots, name + ".png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
        # Only where rows on several ranks have a one-rank row, or a link limit.
        self.assertFalse(os.path.exists(os.path.join(plots, "gemm_bandwidth.png")))

    def test_sendrecv_pairs_need_an_even_group(self):
        if RANKS < 3:
            self.skipTest("needs 3 ranks")
        self.run_deck(os.path.join(DECKS, "mpi_node.toml"), "--set", "sendrecv.ranks=3",
                      "--set", "calibrate=none", expect=1)
        rows = [r for r in self.results()["results"]
                if r["experiment"] == "sendrecv" and r["check"] != "N/A"]
        self.assertTrue(rows)
        self.assertTrue(all(r["check"] == "ERROR" and "even number" in r["note"] for r in rows), rows)
        # ... and the run went on: the entries after it ran.
        self.assertTrue(any(r["experiment"] == "gemm" and r["check"] == "PASS"
                            for r in self.results()["results"]))

    def test_one_rank_alone_without_launcher(self):
        cmd = [os.environ["PORTALAB"], "run", os.path.join(DECKS, "mpi_node.toml"), "--out", self.out]
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        rows = self.results()["results"]
        self.assertTrue(all(r["check"] in ("PASS", "N/A") for r in rows))
        self.assertTrue(any(r["ranks"] == 2 and r["check"] == "N/A" for r in rows))


class ThreadsTest(Base):
    def cpus(self, text):
        """How many CPUs "0-3,8" names."""
        count = 0
        for part in filter(None, text.replace("cpus", "").strip().split(",")):
            lo, _, hi = part.partition("-")
            count += int(hi or lo) - int(lo) + 1
        return count

    def test_ranks_of_a_node_share_its_cores(self):
        """Without a count given, each rank's OpenMP takes its share of the node's
        CPUs (4 ranks under mpirun on a 64-core node each started 64 threads);
        a count given wins, and nothing is said."""
        # Every compiled space: OpenMP (host preset) or Threads (threads preset).
        deck = self.write_deck("threads.toml",
                               'calibrate = "none"\ncopies = ["none"]\n'
                               "[stream_copy]\nsizes = [1000]\nreps = 2\nwarmups = 0\n")
        env = {k: v for k, v in ENV.items() if k not in ("OMP_NUM_THREADS", "KOKKOS_NUM_THREADS")}
        p = self.run_deck(deck, env=env)
        doc = self.results()
        rows = [r for r in doc["results"] if r["space"] in ("OpenMP", "Threads")]
        if not rows:
            self.assertNotIn("host threads:", p.stderr)
            self.skipTest("no OpenMP or Threads in this build")
        rank0 = self.cpus(doc["provenance"]["ranks"][0]["cpus"])
        share = max(1, min(os.cpu_count() // RANKS, rank0))
        self.assertIn(f"host threads: {share} a rank", p.stderr)
        for r in rows:
            self.assertEqual(r["threads"], share, r)
        p = self.run_deck(deck, env=dict(env, OMP_NUM_THREADS="1"))
        self.assertNotIn("host threads:", p.stderr)


class ToolTest(Base):
    def test_a_kokkos_tool_on_every_rank(self):
        # portalab's checking tool (tests/tools/) loaded by each rank: every
        # rank's events balanced, none lost while a cold call was recorded.
        tool = os.environ.get("PORTALAB_EVENT_CHECKER")
        if not tool:
            self.skipTest("PORTALAB_EVENT_CHECKER (the tool's path) not set")
        p = self.run_deck(os.path.join(DECKS, "mpi_node.toml"), env=dict(ENV, KOKKOS_TOOLS_LIBS=tool))
        self.assertEqual(p.stderr.count("portalab test tool: PASS"), RANKS, p.stderr)
        self.assertEqual(self.results()["summary"]["failed"], 0)


class FailureTest(Base):
    def test_deck_error_said_once_every_rank_exits_2(self):
        deck = self.write_deck("bad.toml", "[allreduce]\nsizes = [8]\nnot_a_key = 1\n")
        p = self.run_deck(deck, expect=2)
        self.assertEqual(p.stderr.count("error:"), 1, p.stderr)
        self.assertIn("bad.toml:3", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.json")))

    def test_rank_stopped_before_a_collective_ends_the_job(self):
        # early:R: rank R's second repetition throws before it runs, so its
        # peers wait in the allreduce's own collective, where no gate can
        # tell them. The watchdog aborts every rank; the entry before stays.
        deck = self.write_deck("early.toml",
                               'calibrate = "none"\nspaces = ["Serial"]\ncopies = ["none"]\n'
                               "reps = 3\nwarmups = 0\n"
                               '[gemm]\nsizes = [64]\nvariants = ["native"]\nranks = [1]\n'
                               '[allreduce]\nsizes = [1000]\nvariants = ["mpi_host"]\n')
        env = dict(ENV, PORTALAB_FAULT=f"early:{RANKS - 1}", PORTALAB_WATCHDOG_S="3")
        cmd = mpirun(RANKS) + [os.environ["PORTALAB"], "run", deck, "--out", self.out]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertNotEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("no gate passed for 3 s, in allreduce", p.stderr)
        rows = self.results()["results"]
        self.assertEqual([(r["experiment"], r["check"]) for r in rows], [("gemm", "PASS")])

    def test_bad_watchdog_time_is_an_input_error(self):
        env = dict(ENV, PORTALAB_WATCHDOG_S="soon")
        p = self.run_deck(os.path.join(DECKS, "mpi_node.toml"), env=env, expect=2)
        self.assertEqual(p.stderr.count("error:"), 1, p.stderr)
        self.assertIn("PORTALAB_WATCHDOG_S='soon'", p.stderr)

    def test_check_fails_on_one_rank_only(self):
        # PORTALAB_FAULT=check:R overwrites rank R's outputs before its check:
        # it fails there alone, the row says which rank, every rank goes on.
        env = dict(ENV, PORTALAB_FAULT=f"check:{RANKS - 1}")
        self.run_deck(os.path.join(DECKS, "mpi_node.toml"), "--set", "calibrate=none", env=env,
                      expect=1)
        rows = self.results()["results"]
        failed = [r for r in rows if r["check"] == "FAIL"]
        self.assertTrue(failed)
        self.assertTrue(all(f"rank {RANKS - 1}" in r["note"] for r in failed), failed)
        self.assertEqual(self.results()["summary"]["failed"], len(failed))

    def test_error_on_one_rank_only(self):
        # throw:R: rank R's second repetition throws; every rank leaves the
        # entry at the same gate, the row is an error naming R, the run goes on.
        env = dict(ENV, PORTALAB_FAULT=f"throw:{RANKS - 1}")
        self.run_deck(os.path.join(DECKS, "mpi_node.toml"), env=env, expect=1)
        rows = self.results()["results"]
        measured = [r for r in rows if r["check"] != "N/A"]
        # Entries whose group holds the faulty rank are errors that name it;
        # entries on fewer ranks never ran it, and pass.
        with_fault = [r for r in measured if r["ranks"] >= RANKS]
        self.assertTrue(with_fault)
        for r in with_fault:
            self.assertEqual(r["check"], "ERROR", r)
            self.assertIn(f"rank {RANKS - 1}", r["note"], r)
            self.assertIn("fault injected", r["note"], r)
        for r in measured:
            if r["ranks"] < RANKS:
                self.assertEqual(r["check"], "PASS", r)


class SignalTest(Base):
    def start(self, deck):
        cmd = mpirun(RANKS) + [os.environ["PORTALAB"], "run", deck, "--out", self.out]
        return subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)

    def wait_for_rows(self, proc, count):
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                if len(portalab_results.read_document(os.path.join(self.out, "results.json"))["results"]) >= count:
                    return
            except (OSError, ValueError, KeyError, portalab_results.ResultsError):
                pass
            self.assertIsNone(proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
            self.assertLess(time.monotonic(), deadline, "no results appeared")
            time.sleep(0.05)

    def long_deck(self):
        # About 10 s uninterrupted: the signal lands mid-run on a fast machine too.
        return self.write_deck("long.toml",
                               'calibrate = "none"\nspaces = ["Serial"]\ncopies = ["none"]\n'
                               "[dot_distributed]\nsizes = [2000000]\nreps = 400\nwarmups = 0\n"
                               'variants = ["mpi"]\nscaling = "weak"\nranks = [1, 2]\n'
                               "[allreduce]\nsizes = [100000, 200000, 300000]\nreps = 5000\n")

    def test_sigterm_to_the_launcher(self):
        proc = self.start(self.long_deck())
        self.wait_for_rows(proc, 1)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=TIMEOUT)
        self.assertNotEqual(proc.returncode, 0)
        doc = self.results()  # complete, valid JSON, written by rank 0
        self.assertIn("interrupted", doc["summary"], err[-3000:])
        self.assertEqual(doc["summary"]["interrupted"]["signal"], "SIGTERM")
        self.assertGreaterEqual(len(doc["results"]), 1)
        for r in doc["results"]:
            self.assertIn(r["check"], ("PASS", "N/A"), r)

    def test_rank_killed_outright(self):
        proc = self.start(self.long_deck())
        self.wait_for_rows(proc, 1)
        # The last rank's process: a child of the launcher's session.
        children = subprocess.run(["pgrep", "-s", str(proc.pid), "-f", "portalab run"],
                                  capture_output=True, text=True).stdout.split()
        self.assertGreaterEqual(len(children), RANKS, children)
        os.kill(int(sorted(children, key=int)[-1]), signal.SIGKILL)
        proc.communicate(timeout=TIMEOUT)  # MPI ends the job: no hang
        self.assertNotEqual(proc.returncode, 0)
        portalab_results.check_files(self.out)
        doc = portalab_results.read_document(os.path.join(self.out, "results.json"))
        self.assertGreaterEqual(len(doc["results"]), 1)
        for r in doc["results"]:
            self.assertIn(r["check"], ("PASS", "N/A"), r)


if __name__ == "__main__":
    unittest.main()
