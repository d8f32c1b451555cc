#!/usr/bin/env python3
"""The results store (`portalab db`): import (idempotent, interrupted,
refused or serialised when another writer holds the store, bad stores and
bad files, the repetitions kept), history verdicts on synthetic runs with a
planted regression and planted noise (by the U test where both runs kept their
repetitions, held to compare.py's rule where not), the fleet view on synthetic nodes
with one slow GPU, and the report's store sections in headless Chromium.

    PORTALAB=build/host/portalab python3 tests/scripts/test_store.py [CLASS...]

Every store is checked with PRAGMA integrity_check after what was done to it.
"""
import hashlib
import json
import math
import os
import random
import resource
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "scripts")]
import store_synthetic as ss  # noqa: E402

SKIP = 77


def portalab(*args, timeout=120, **kw):
    return subprocess.run([os.environ["PORTALAB"], *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def integrity(db):
    with sqlite3.connect(db) as c:
        return c.execute("PRAGMA integrity_check").fetchone()[0]


def count(db, table):
    c = sqlite3.connect(db)
    try:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        c.close()


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# The schema portalab's store had at version 1 (before a device row's key
# named its GPU): what an older portalab left on a site's disk.
V1_SCHEMA = """
    CREATE TABLE runs(id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, path TEXT NOT NULL,
      imported_at TEXT NOT NULL, started_at TEXT NOT NULL, started_unix REAL NOT NULL, machine
      TEXT NOT NULL, job_id TEXT NOT NULL, array_task_id TEXT NOT NULL, deck TEXT NOT NULL,
      ranks INTEGER NOT NULL, incomplete INTEGER NOT NULL, portalab_version TEXT NOT NULL,
      kokkos_version TEXT NOT NULL, kokkos_kernels_version TEXT NOT NULL, compiler TEXT NOT
      NULL, gpu_driver TEXT NOT NULL, cuda_runtime TEXT NOT NULL, cpu_model TEXT NOT NULL,
      host_blas TEXT NOT NULL);
    CREATE INDEX runs_started ON runs(started_unix);
    CREATE INDEX runs_job ON runs(job_id, started_unix);
    CREATE TABLE provenance(run INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE, json
      TEXT NOT NULL);
    CREATE TABLE gpus(run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, rank INTEGER
      NOT NULL, host TEXT NOT NULL, uuid TEXT NOT NULL, pci_bus_id TEXT NOT NULL, name TEXT NOT
      NULL, power_limit_w REAL, applications_sm_mhz REAL, ecc_enabled INTEGER, ecc_errors
      INTEGER, pcie_width INTEGER, pcie_max_width INTEGER, pcie_generation INTEGER, PRIMARY
      KEY(run, rank));
    CREATE INDEX gpus_uuid ON gpus(uuid);
    CREATE TABLE limits(run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, rank INTEGER
      NOT NULL, space TEXT NOT NULL, host_space INTEGER NOT NULL, gpu_uuid TEXT, quantity TEXT
      NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL, PRIMARY KEY(run, rank, space,
      quantity));
    CREATE INDEX limits_gpu ON limits(gpu_uuid);
    CREATE TABLE series(id INTEGER PRIMARY KEY, experiment TEXT NOT NULL, variant TEXT NOT NULL,
      dtype TEXT NOT NULL, n INTEGER NOT NULL, space TEXT NOT NULL, copies TEXT NOT NULL,
      library TEXT NOT NULL, threads INTEGER NOT NULL, machine TEXT NOT NULL, UNIQUE(experiment,
      variant, dtype, n, space, copies, library, threads, machine));
    CREATE TABLE rows(id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES runs(id) ON DELETE
      CASCADE, series INTEGER NOT NULL REFERENCES series(id), started_unix REAL NOT NULL, ranks
      INTEGER NOT NULL, check_result TEXT NOT NULL, reps INTEGER, h2d_ms REAL, h2d_min_ms REAL,
      h2d_max_ms REAL, h2d_std_ms REAL, kernel_ms REAL, kernel_min_ms REAL, kernel_max_ms REAL,
      kernel_std_ms REAL, d2h_ms REAL, d2h_min_ms REAL, d2h_max_ms REAL, d2h_std_ms REAL,
      total_ms REAL, total_min_ms REAL, total_max_ms REAL, total_std_ms REAL, bytes REAL, flops
      REAL, gbps REAL, gflops REAL, pct_of_limit REAL);
    CREATE INDEX rows_series ON rows(series, started_unix);
    CREATE INDEX rows_run ON rows(run);
    CREATE TABLE energy(row INTEGER PRIMARY KEY REFERENCES rows(id) ON DELETE CASCADE,
      gpu_joules_per_rep REAL, cpu_joules_per_rep REAL, power_w REAL, sm_clock_mhz REAL,
      mem_clock_mhz REAL, temperature_c REAL, throttled INTEGER NOT NULL, reasons TEXT NOT
      NULL);
    CREATE TABLE rank_rows(row INTEGER NOT NULL REFERENCES rows(id) ON DELETE CASCADE, rank
      INTEGER NOT NULL, kernel_ms REAL, total_ms REAL, PRIMARY KEY(row, rank));
"""


def v1_store(db):
    """A version-1 store of two jobs on node n1, one process per GPU (GPU-a,
    GPU-b 30% slower): a Cuda row key and an OpenMP one, each holding all
    four runs, as version 1 kept them."""
    c = sqlite3.connect(db)
    c.executescript(V1_SCHEMA)
    c.execute("INSERT INTO series VALUES (1, 'stream_copy', 'deep_copy', 'float64', 1000000, "
              "'Cuda', 'none', 'native', 1, 'n1'), (2, 'stream_copy', 'deep_copy', 'float64', "
              "1000000, 'OpenMP', 'none', 'native', 2, 'n1')")
    for run, (job, uuid) in enumerate((("501", "GPU-a"), ("501", "GPU-b"), ("502", "GPU-a"),
                                       ("502", "GPU-b")), start=1):
        started = ss.day(run // 3, 10 + run)
        c.execute("INSERT INTO runs VALUES (?, ?, '/r', ?, ?, ?, 'n1', ?, '', 'd.toml', 1, 0, "
                  "'aaaaaaa', '4.6.1', '4.6.2', 'GNU 12', '580', '13000', 'Xeon', 'OpenBLAS')",
                  (run, f"fnv1a64:{run}", started, started, 1.8e9 + 3600 * run, job))
        c.execute("INSERT INTO provenance VALUES (?, '{}')", (run,))
        c.execute("INSERT INTO gpus VALUES (?, 0, 'n1', ?, '0:1b', 'NVIDIA H100 80GB HBM3', "
                  "NULL, NULL, NULL, NULL, 16, 16, 5)", (run, uuid))
        c.execute("INSERT INTO limits VALUES (?, 0, 'Cuda', 0, ?, 'triad_gbps', 2990, 'GB/s')",
                  (run, uuid))
        for series, ms in ((1, 1.3 if uuid == "GPU-b" else 1.0), (2, 2.0)):
            c.execute("INSERT INTO rows(run, series, started_unix, ranks, check_result, reps, "
                      "total_ms, total_min_ms, total_max_ms, total_std_ms) "
                      "VALUES (?, ?, ?, 1, 'PASS', 10, ?, ?, ?, ?)",
                      (run, series, 1.8e9 + 3600 * run, ms, ms * 0.995, ms * 1.005, ms * 0.0025))
    c.execute("PRAGMA application_id = 1347174722")
    c.execute("PRAGMA user_version = 1")
    c.commit()
    c.close()


# The index schema 2 kept of a key's runs (schema 3 adds the code path).
V2_ROWS_SERIES = ("CREATE INDEX rows_series ON rows(series, started_unix, id, run, check_result, "
                  "reps, total_ms, total_min_ms, total_max_ms, total_std_ms)")


def as_schema_2(db):
    """The store db as schema 2 kept it: its rows without their code path."""
    c = sqlite3.connect(db)
    as_schema_4(db)
    c.executescript(f"DROP INDEX rows_series; ALTER TABLE rows DROP COLUMN path; "
                    f"ALTER TABLE rows DROP COLUMN limit_level; "
                    f"ALTER TABLE rows DROP COLUMN limit_suspect; "
                    f"{V2_ROWS_SERIES}; PRAGMA user_version = 2;")
    c.close()


def paths(db):
    """The rows' code paths, in the order they were imported."""
    c = sqlite3.connect(db)
    try:
        return [p for (p,) in c.execute("SELECT path FROM rows ORDER BY id")]
    finally:
        c.close()


def as_schema_4(db):
    """The store db as schema 4 kept it: its rows without their noise
    figures, no repetitions."""
    c = sqlite3.connect(db)
    c.executescript("DROP TABLE repetitions; ALTER TABLE rows DROP COLUMN rel_ci95; "
                    "ALTER TABLE rows DROP COLUMN noise_target; "
                    "ALTER TABLE rows DROP COLUMN stopped_by; ALTER TABLE rows DROP COLUMN noisy; "
                    "PRAGMA user_version = 4;")
    c.close()


def as_schema_5(db):
    """The store db as schema 5 kept it: repetitions without pass medians."""
    c = sqlite3.connect(db)
    c.executescript("ALTER TABLE repetitions DROP COLUMN pass_kernel_ms; "
                    "ALTER TABLE repetitions DROP COLUMN pass_total_ms; PRAGMA user_version = 5;")
    c.close()


def stored_repetitions(db):
    """{row id: (kernel_ms, total_ms)} as the store keeps them."""
    c = sqlite3.connect(db)
    try:
        return {row: tuple(list(struct.unpack(f"<{len(b) // 8}d", b)) for b in (k, t))
                for row, k, t in c.execute("SELECT row, kernel_ms, total_ms FROM repetitions")}
    finally:
        c.close()


def around(rng, ms, count_, spread):
    """count_ repetitions about ms, each off by a normal deviate of spread (relative)."""
    return [ms * (1 + rng.gauss(0, spread)) for _ in range(count_)]


def modes(top, folders, files):
    for d, _, names in os.walk(top):
        os.chmod(d, folders)
        for f in names:
            os.chmod(os.path.join(d, f), files)


def as_nobody(case, *args):
    """portalab ARGS as a user who may not write the test's files nor their
    folders (root writes anything: as nobody, through setpriv)."""
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            case.skipTest("root, and no setpriv to drop it")
        modes(case.tmp, 0o755, 0o644)
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    else:
        modes(case.tmp, 0o555, 0o444)
        cmd = []
    try:
        return subprocess.run([*cmd, os.environ["PORTALAB"], *args], capture_output=True,
                              text=True, timeout=60)
    finally:
        modes(case.tmp, 0o755, 0o644)


class StoreCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_store_")
        self.db = os.path.join(self.tmp, "store.sqlite")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def runs(self, name, count_, rows=5, host="node1"):
        """count_ runs of `rows` rows each under tmp/name/run<i>/."""
        top = os.path.join(self.tmp, name)
        for i in range(count_):
            doc = ss.run([ss.row(experiment=f"e{k}", ms=1.0 + k) for k in range(rows)],
                         host=host, started=ss.day(i % 28, i % 24), tag=f"{name}{i}")
            ss.write(doc, os.path.join(top, f"run{i}"))
        return top

    def history_by_experiment(self, status):
        """`db history --json` of the whole store, which must exit `status`:
        its rows by experiment."""
        p = portalab("db", "history", "--db", self.db, "--json")
        self.assertEqual(p.returncode, status, p.stderr)
        return {r["key"]["experiment"]: r for r in json.loads(p.stdout)["rows"]}

    def imported(self, *paths, ok=True, **kw):
        p = portalab("db", "import", "--db", self.db, *paths, **kw)
        if ok:
            self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def small_run(self, out, calibrate):
        """A real run of a few seconds into out."""
        p = portalab("run", "lab6-vector", "--out", out, "--set", f"calibrate={calibrate}",
                     "--set", "reps=2", "--set", "vector_poly.sizes=[1000]",
                     "--set", "stream_copy.sizes=[1000]", timeout=300,
                     env=dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false"))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])

    def assert_consistent(self):
        self.assertEqual(integrity(self.db), "ok")


class ImportTest(StoreCase):
    def test_twice_keeps_one_copy(self):
        tree = self.runs("job", 3)
        p = self.imported(tree)
        self.assertIn("imported 3 runs (15 rows)", p.stdout)
        p = self.imported(tree)
        self.assertIn("imported 0 runs (0 rows); 3 already there", p.stdout)
        # The same run copied elsewhere is the same run (its provenance).
        shutil.copytree(os.path.join(tree, "run0"), os.path.join(self.tmp, "copy", "run0"))
        p = self.imported(os.path.join(self.tmp, "copy", "run0", "results.json"))
        self.assertIn("1 already there", p.stdout)
        self.assertEqual(count(self.db, "runs"), 3)
        self.assertEqual(count(self.db, "rows"), 15)
        self.assert_consistent()

    def test_a_real_run(self):
        out = os.path.join(self.tmp, "real")
        self.small_run(out, "quick")
        self.imported(out)
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(count(self.db, "rows"), len(doc["results"]))
        self.assertGreater(count(self.db, "limits"), 0)
        h = json.loads(portalab("db", "history", "--db", self.db, "--json").stdout)
        self.assertEqual({r["verdict"] for r in h["rows"]}, {"NEW"})
        # Each row's code path, as the run wrote it.
        self.assertEqual(paths(self.db), [r["path"] for r in doc["results"]])
        self.assertIn("loops", paths(self.db))
        self.assert_consistent()

    def test_schema_5_keeps_repetitions_and_noise(self):
        """A row's repetitions (the first 1000 of each phase, a time missing
        in the file NaN) and its noise figures; a row of an older file
        none, and NULL figures."""
        kernel = [1.0 + 1e-4 * i for i in range(1500)]
        kept = ss.repeated(ss.row(experiment="long"), kernel, [2 * k for k in kernel],
                           noise_target=0.02, stopped_by="max_reps", noisy=True, rel_ci95=0.05)
        kept["repetitions"]["kernel_ms"][1] = None
        short = ss.repeated(ss.row(experiment="short"), [1.0, 1.1, 0.9])
        doc = ss.run([kept, short, ss.row(experiment="none")], started=ss.day(1), tag="v5",
                     version=5)
        self.imported(ss.write(doc, os.path.join(self.tmp, "v5")))
        old = ss.run([ss.row(experiment="old")], started=ss.day(2), tag="v4", version=4)
        self.imported(ss.write(old, os.path.join(self.tmp, "v4")))
        c = sqlite3.connect(self.db)
        try:
            rows = {e: (i, *rest) for i, e, *rest in c.execute(
                "SELECT r.id, s.experiment, r.rel_ci95, r.noise_target, r.stopped_by, r.noisy "
                "FROM rows r JOIN series s ON s.id = r.series")}
        finally:
            c.close()
        self.assertEqual(rows["long"][1:], (0.05, 0.02, "max_reps", 1))
        self.assertEqual(rows["short"][1:], (0.01, None, "reps", 0))
        self.assertEqual(rows["none"][1:], (None, None, None, None))  # none in a version 5 row
        self.assertEqual(rows["old"][1:], (None, None, None, None))
        reps = stored_repetitions(self.db)
        self.assertEqual(sorted(reps), sorted([rows["long"][0], rows["short"][0]]))
        k, t = reps[rows["long"][0]]
        self.assertEqual((len(k), len(t)), (1000, 1000))
        self.assertTrue(math.isnan(k[1]))
        self.assertEqual(k[:1] + k[2:], kernel[:1] + kernel[2:1000])
        self.assertEqual(t, [2 * x for x in kernel[:1000]])
        self.assertEqual(reps[rows["short"][0]], ([1.0, 1.1, 0.9], [1.0, 1.1, 0.9]))
        self.assert_consistent()
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA foreign_key_check").fetchall(), [])

    def test_unfinished_run_is_imported_incomplete_and_said(self):
        # A run killed before its first results.json: its journal's rows.
        tree = self.runs("job", 1)
        doc = ss.run([ss.row(experiment=f"e{k}") for k in range(3)], tag="stopped")
        os.makedirs(os.path.join(tree, "stopped"))
        with open(os.path.join(tree, "stopped", "results.jsonl"), "w") as f:
            f.write(json.dumps({"schema_version": 2, "provenance": doc["provenance"]}) + "\n")
            f.write(json.dumps({"first": 0, "rows": doc["results"]}) + "\n")
        p = self.imported(tree)
        self.assertIn("incomplete: the run did not finish", p.stderr)
        self.assertIn("imported 2 runs (8 rows, 1 of them incomplete)", p.stdout)
        self.assertEqual(count(self.db, "runs"), 2)
        with open(os.path.join(tree, "stopped", "results.jsonl"), "w") as f:
            f.write("{}\n")  # no journal of a run: refused, as the scripts refuse it
        p = self.imported(tree, ok=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("not a portalab journal", p.stderr)

    def test_a_bad_file_keeps_nothing_of_its_import(self):
        self.imported(self.runs("first", 2))
        tree = self.runs("second", 3)
        with open(os.path.join(tree, "run1", "results.json"), "w") as f:
            f.write('{"provenance": {}, "results": [')
        p = self.imported(tree, ok=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(os.path.join(tree, "run1", "results.json"), p.stderr)
        self.assertIn("not JSON", p.stderr)
        self.assertEqual(count(self.db, "runs"), 2)
        with open(os.path.join(tree, "run1", "results.json"), "w") as f:
            json.dump({"something": "else"}, f)
        p = self.imported(tree, ok=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a portalab results file", p.stderr)
        self.assertEqual(count(self.db, "runs"), 2)
        self.assert_consistent()

    def test_missing_path_and_missing_store(self):
        p = self.imported(os.path.join(self.tmp, "nowhere"), ok=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such file or folder", p.stderr)
        for command in ("history", "fleet"):
            p = portalab("db", command, "--db", os.path.join(self.tmp, "none.sqlite"))
            self.assertEqual(p.returncode, 2)
            self.assertIn("no store here", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "none.sqlite")))

    def test_store_path_from_the_environment(self):
        tree = self.runs("job", 1)
        p = portalab("db", "import", tree, env=dict(os.environ, PORTALAB_DB=self.db))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(count(self.db, "runs"), 1)


class BadStoreTest(StoreCase):
    def refused(self, why, *words):
        before = digest(self.db)
        for args in (("import", self.runs("more", 1)), ("history",), ("fleet",)):
            p = portalab("db", args[0], "--db", self.db, *args[1:])
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(self.db, p.stderr)
            for w in words:
                self.assertIn(w, p.stderr)
        self.assertEqual(digest(self.db), before, why)

    def test_a_file_that_is_not_a_database(self):
        with open(self.db, "wb") as f:
            f.write(os.urandom(4096))
        self.refused("random bytes", "not a portalab store")

    def test_another_programs_database(self):
        with sqlite3.connect(self.db) as c:
            c.execute("CREATE TABLE t(x)")
            c.execute("INSERT INTO t VALUES (1)")
        self.refused("a foreign SQLite file", "not a portalab store")

    def test_a_damaged_store(self):
        self.imported(self.runs("job", 20, rows=50))
        with open(self.db, "r+b") as f:  # the schema's page, past the file's header
            f.seek(100)
            f.write(os.urandom(3996))
        before = digest(self.db)
        p = portalab("db", "history", "--db", self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("not a portalab store", p.stderr)
        self.assertEqual(digest(self.db), before)

    def test_a_newer_schema(self):
        self.imported(self.runs("job", 1))
        with sqlite3.connect(self.db) as c:
            c.execute("PRAGMA user_version = 99")
        self.refused("a newer schema", "schema version 99", "newer portalab")

    def upgraded(self, version, refused_for="history"):
        """The store, of schema `version`, refused as read-only for
        `refused_for`, then upgraded by db history: its answer."""
        self.read_only_refused(version, refused_for)
        p = portalab("db", "history", "--db", self.db, "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"upgraded the store from schema version {version} to 6", p.stderr)
        self.assert_consistent()
        return p

    def read_only_refused(self, version, command):
        """`db COMMAND` on a store of an older schema, as a user who may not
        write it: refused unchanged, saying who must open it once."""
        before = digest(self.db)
        p = as_nobody(self, "db", command, "--db", self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        for words in (self.db, f"schema version {version}", "an older portalab", "may write"):
            self.assertIn(words, p.stderr)
        self.assertEqual(digest(self.db), before)

    def test_a_store_of_an_older_schema(self):
        """Version 1 is upgraded where it may be written (each GPU's runs a
        key of its own), and said where it may not, unchanged."""
        v1_store(self.db)
        p = self.upgraded(1)
        rows = {(r["key"]["space"], r["key"]["gpu"]): r for r in json.loads(p.stdout)["rows"]}
        self.assertEqual(sorted(rows), [("Cuda", "GPU-a"), ("Cuda", "GPU-b"), ("OpenMP", "")])
        self.assertEqual([len(r["runs"]) for r in rows.values()], [2, 2, 4])
        self.assertEqual({r["verdict"] for r in rows.values()}, {"SAME"})
        self.assert_consistent()
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA user_version").fetchone()[0], 6)
            self.assertEqual(c.execute("PRAGMA foreign_key_check").fetchall(), [])
        self.assertEqual(paths(self.db), [None] * 8)  # not recorded then: unknown
        self.assertEqual({x["path"] for r in rows.values() for x in r["runs"]}, {None})
        # And imports go on into it.
        self.imported(self.runs("more", 1))
        self.assertEqual(count(self.db, "runs"), 5)

    def test_a_store_of_schema_4(self):
        """Version 4 (rows without repetitions or noise figures) is upgraded
        at the first db command where it may be written, those NULL for its
        rows, which history judges by the older rule; refused unchanged
        where it may not be written."""
        for i in range(2):
            doc = ss.run([ss.row(ms=1.0 + 0.001 * i)], started=ss.day(i), gpu={"uuid": "GPU-a"},
                         tag=f"v4{i}", version=4)
            ss.write(doc, os.path.join(self.tmp, "v4", f"run{i}"))
        self.imported(os.path.join(self.tmp, "v4"))
        as_schema_4(self.db)
        row = json.loads(self.upgraded(4).stdout)["rows"][0]
        self.assertEqual((row["verdict"], row["p"], row["noisy"]), ("SAME", None, False))
        self.assertIsNotNone(row["noise"])  # the run-to-run noise judged it
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA user_version").fetchone()[0], 6)
            self.assertEqual(c.execute("SELECT rel_ci95, noise_target, stopped_by, noisy "
                                       "FROM rows").fetchall(), [(None,) * 4] * 2)
        self.assertEqual(stored_repetitions(self.db), {})
        # And a run of version 5 goes in with its repetitions.
        doc = ss.run([ss.repeated(ss.row(), [1.0, 1.01, 0.99])], started=ss.day(3),
                     gpu={"uuid": "GPU-a"}, tag="v5 after", version=5)
        self.imported(ss.write(doc, os.path.join(self.tmp, "after", "run")))
        self.assertEqual(list(stored_repetitions(self.db).values()),
                         [([1.0, 1.01, 0.99], [1.0, 1.01, 0.99])])

    def test_a_store_of_schema_5(self):
        """Version 5 (repetitions without pass medians) is upgraded at the
        first db command where it may be written, its rows' repetitions
        kept and their passes NULL."""
        for i in range(2):
            doc = ss.run([ss.repeated(ss.row(), [1.0, 1.01, 0.99])], started=ss.day(i),
                         gpu={"uuid": "GPU-a"}, tag=f"v5{i}", version=5)
            ss.write(doc, os.path.join(self.tmp, "v5", f"run{i}"))
        self.imported(os.path.join(self.tmp, "v5"))
        as_schema_5(self.db)
        self.upgraded(5)
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA user_version").fetchone()[0], 6)
            self.assertEqual(c.execute("SELECT pass_kernel_ms, pass_total_ms FROM repetitions")
                             .fetchall(), [(None, None)] * 2)
        self.assertEqual(list(stored_repetitions(self.db).values()),
                         [([1.0, 1.01, 0.99], [1.0, 1.01, 0.99])] * 2)

    def test_a_store_of_schema_2(self):
        """Version 2 (rows without their code path) is upgraded at the first
        db command where it may be written, its rows' paths unknown (NULL),
        and refused unchanged where it may not."""
        top = os.path.join(self.tmp, "v3")
        for i in range(2):
            doc = ss.run([ss.row(ms=1.0, path="streaming-stores"), ss.row(space="OpenMP", ms=2.0,
                                                                          path="loops")],
                         started=ss.day(i), gpu={"uuid": "GPU-a"}, tag=f"v3{i}", version=3)
            ss.write(doc, os.path.join(top, f"run{i}"))
        self.imported(top)
        as_schema_2(self.db)
        p = self.upgraded(2, refused_for="fleet")
        self.assertEqual([len(r["runs"]) for r in json.loads(p.stdout)["rows"]], [2, 2])
        self.assertEqual(paths(self.db), [None] * 4)
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA user_version").fetchone()[0], 6)
            plan = c.execute("EXPLAIN QUERY PLAN SELECT path FROM rows WHERE series = 1 "
                             "ORDER BY started_unix DESC").fetchall()
        self.assertIn("COVERING INDEX rows_series", str(plan))  # history reads the index alone
        doc = ss.run([ss.row(ms=1.0, path="loops")], started=ss.day(3), gpu={"uuid": "GPU-a"},
                     tag="v3 after", version=3)
        self.imported(ss.write(doc, os.path.join(self.tmp, "after", "run")))
        self.assertEqual(paths(self.db), [None] * 4 + ["loops"])

    def test_a_read_only_store(self):
        self.imported(self.runs("job", 1))
        before = digest(self.db)
        more = self.runs("more", 1)
        p = as_nobody(self, "db", "import", "--db", self.db, more)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("read-only", p.stderr)
        self.assertEqual(digest(self.db), before)
        # Reading it needs no writing.
        p = as_nobody(self, "db", "history", "--db", self.db)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_the_disk_fills_during_an_import(self):
        self.imported(self.runs("first", 2))
        size = os.path.getsize(self.db)
        big = self.runs("big", 40, rows=200)

        def small_disk():  # files may grow to 64 KiB past the store's size
            resource.setrlimit(resource.RLIMIT_FSIZE, (size + 65536, size + 65536))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

        p = subprocess.run([os.environ["PORTALAB"], "db", "import", "--db", self.db, big],
                           capture_output=True, text=True, timeout=120, preexec_fn=small_disk)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertRegex(p.stderr, "disk is full|I/O error")
        self.assertIn("nothing of this import was kept", p.stderr)
        self.assert_consistent()
        self.assertEqual(count(self.db, "runs"), 2)
        self.imported(big)  # and with room, it goes in
        self.assertEqual(count(self.db, "runs"), 42)


class InterruptTest(StoreCase):
    def start_big_import(self):
        self.imported(self.runs("first", 2))
        big = self.runs("big", 150, rows=100)
        p = subprocess.Popen([os.environ["PORTALAB"], "db", "import", "--db", self.db, big],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = p.stderr.readline()  # the first run imported: inside the transaction
        self.assertIn("imported", line)
        return p

    def test_a_signal_rolls_the_import_back(self):
        p = self.start_big_import()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err[-2000:])
        self.assertIn("nothing of this import was kept", err)
        self.assert_consistent()
        self.assertEqual(count(self.db, "runs"), 2)

    def test_a_killed_import_leaves_the_store_as_it_was(self):
        p = self.start_big_import()
        p.kill()
        p.communicate(timeout=60)
        # The next reader rolls the hot journal back.
        self.assert_consistent()
        self.assertEqual(count(self.db, "runs"), 2)
        self.imported(self.runs("after", 1))
        self.assertEqual(count(self.db, "runs"), 3)


class ConcurrencyTest(StoreCase):
    def test_a_writer_holding_the_store_refuses_another(self):
        self.imported(self.runs("first", 1))
        holder = sqlite3.connect(self.db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            p = self.imported(self.runs("second", 1), "--wait", "1", ok=False)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("locked by another writer", p.stderr)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        self.assertEqual(count(self.db, "runs"), 1)
        self.imported(self.runs("second", 1))
        self.assertEqual(count(self.db, "runs"), 2)

    def test_imports_at_once_are_serialised(self):
        self.imported(self.runs("first", 1))
        trees = [self.runs(f"t{i}", 30, rows=50) for i in range(3)]
        trees.append(trees[0])  # the same runs twice at once: kept once
        procs = [subprocess.Popen([os.environ["PORTALAB"], "db", "import", "--db", self.db,
                                   "--wait", "120", "--quiet", t],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for t in trees]
        for p in procs:
            out, err = p.communicate(timeout=180)
            self.assertEqual(p.returncode, 0, err)
        self.assertEqual(count(self.db, "runs"), 1 + 90)
        self.assertEqual(count(self.db, "rows"), 5 + 90 * 50)
        self.assert_consistent()


def history_fixture(tmp):
    """Eight runs a day apart on node1: a clean row that slows down 25% in
    the last run (its build and driver changed), a noisy row whose last run is
    within its own noise, a row that gets faster, one that breaks, steady ones."""
    paths = []
    noisy = [1.0, 1.3, 0.8, 1.25, 0.85, 1.2, 0.9]
    for i in range(8):
        last = i == 7
        rows = [ss.row(experiment="clean", ms=1.25 if last else 1.0 * (1 + 0.002 * (i % 3))),
                ss.row(experiment="noisy", ms=1.2 if last else noisy[i], spread=0.02),
                ss.row(experiment="quicker", ms=1.5 if last else 2.0 * (1 + 0.002 * (i % 2))),
                ss.row(experiment="broken", ms=1.0, check="FAIL" if last else "PASS")]
        rows += [ss.row(experiment="steady", n=1000 * (k + 1), ms=0.5 * (1 + 0.003 * ((i + k) % 3)))
                 for k in range(14)]
        doc = ss.run(rows, started=ss.day(i), portalab="bbbbbbb" if last else "aaaaaaa",
                     driver=590 if last else 580, gpu={"uuid": "GPU-1"}, tag=str(i))
        paths.append(ss.write(doc, os.path.join(tmp, "hist", f"run{i}")))
    return os.path.join(tmp, "hist")


class HistoryTest(StoreCase):
    def test_verdicts_on_planted_regression_and_noise(self):
        self.imported(history_fixture(self.tmp))
        p = portalab("db", "history", "--db", self.db, "--json")
        self.assertEqual(p.returncode, 1, p.stderr)  # a regression
        h = json.loads(p.stdout)
        verdict = {}
        for r in h["rows"]:
            verdict.setdefault(r["key"]["experiment"], set()).add(r["verdict"])
        self.assertEqual(verdict["clean"], {"SLOWER"})
        self.assertEqual(verdict["noisy"], {"SAME"})
        self.assertEqual(verdict["quicker"], {"FASTER"})
        self.assertEqual(verdict["broken"], {"BROKEN"})
        self.assertEqual(verdict["steady"], {"SAME"})
        # A row broken first (no time to compare), then the largest change.
        self.assertEqual([r["key"]["experiment"] for r in h["regressions"]], ["broken", "clean"])
        self.assertTrue(h["rows"][0]["regression"])  # regressions first
        changed = {c["what"]: (c["from"], c["to"]) for c in h["regressions"][1]["changes"]}
        self.assertEqual(changed["portalab"], ("aaaaaaa", "bbbbbbb"))
        self.assertEqual(changed["driver"], ("580", "590"))
        self.assertAlmostEqual(h["regressions"][1]["change"], 0.25, delta=0.01)
        self.assertEqual(len(h["rows"][0]["runs"]), 8)
        # The tables say the same.
        p = portalab("db", "history", "--db", self.db)
        self.assertEqual(p.returncode, 1)
        self.assertIn("SLOWER REGRESSION", p.stdout)
        self.assertIn("portalab aaaaaaa -> bbbbbbb", p.stdout)
        # A filter, and a window too short to see the change.
        p = portalab("db", "history", "--db", self.db, "--experiment", "noisy", "--json")
        self.assertEqual(p.returncode, 0)
        self.assertEqual(len(json.loads(p.stdout)["rows"]), 1)

    def schema_5_runs(self, slight=1.02):
        """Two runs of schema 5 a day apart: `doubled` twice as slow in every
        repetition (one outlier each way, so that the repetitions' ranges
        overlap and the older rule would say SAME, as it does for its twin
        `doubled_old`, kept without repetitions), `slight` `slight` times
        slower with tight repetitions, six steady keys, `noisy` whose latest
        row ran out of budget, and `mixed`, whose first run kept no
        repetitions."""
        rng = random.Random(57)
        for i in range(2):
            last = i == 1
            doubled = around(rng, 2.0 if last else 1.0, 40, 0.01)
            doubled[7] = 0.5 if last else 3.0
            rows = [ss.repeated(ss.row(experiment="doubled"), doubled),
                    ss.repeated(ss.row(experiment="doubled_old"), doubled),
                    ss.repeated(ss.row(experiment="slight"),
                                around(rng, slight if last else 1.0, 40, 0.001)),
                    ss.repeated(ss.row(experiment="noisy"), around(rng, 1.0, 40, 0.2),
                                noise_target=0.01, stopped_by="max_reps" if last else "noise",
                                noisy=last, rel_ci95=0.08 if last else 0.01),
                    ss.repeated(ss.row(experiment="mixed"), around(rng, 1.0, 40, 0.01))]
            rows += [ss.repeated(ss.row(experiment="steady", n=1000 * (k + 1)),
                                 around(rng, 0.5, 40, 0.01)) for k in range(6)]
            del rows[1]["repetitions"]
            if not last:
                del rows[4]["repetitions"]
            doc = ss.run(rows, started=ss.day(i), gpu={"uuid": "GPU-1"}, tag=f"t{i}", version=5)
            ss.write(doc, os.path.join(self.tmp, "tested", f"run{i}"))
        self.imported(os.path.join(self.tmp, "tested"))

    def test_verdicts_by_the_test(self):
        """Where both runs kept their repetitions, the U test decides, Holm
        over every such row of the listing, within the tolerance SAME; the
        others by the older rule; a noisy latest row said NOISY."""
        self.schema_5_runs()
        p = portalab("db", "history", "--db", self.db, "--json")
        self.assertEqual(p.returncode, 1, p.stderr)  # doubled: a regression
        h = json.loads(p.stdout)
        rows = {}
        for r in h["rows"]:
            rows.setdefault(r["key"]["experiment"], []).append(r)
        verdict = {e: {r["verdict"] for r in rs} for e, rs in rows.items()}
        self.assertEqual(verdict, {"doubled": {"SLOWER"}, "doubled_old": {"SAME"},
                                   "slight": {"SAME"}, "noisy": {"SAME"}, "mixed": {"SAME"},
                                   "steady": {"SAME"}})
        doubled, = rows["doubled"]
        self.assertTrue(doubled["regression"])
        self.assertAlmostEqual(doubled["change"], 1.0, delta=0.05)
        self.assertEqual([r["key"]["experiment"] for r in h["regressions"]], ["doubled"])
        # Tested: every row whose runs both kept repetitions, Holm over them.
        tested = [r for r in h["rows"] if r["p"] is not None]
        self.assertEqual(sorted(r["key"]["experiment"] for r in tested),
                         sorted(["doubled", "slight", "noisy"] + ["steady"] * 6))
        self.assertEqual((h["tested"], h["alpha"], h["tolerance"]), (9, 0.01, 0.03))
        least = min(tested, key=lambda r: r["p"])
        self.assertAlmostEqual(least["p_adjusted"], min(1.0, 9 * least["p"]), delta=1e-12)
        self.assertTrue(all(r["p_adjusted"] >= r["p"] for r in tested))
        self.assertLess(rows["slight"][0]["p_adjusted"], 0.01)  # significant, within tolerance
        for old in ("doubled_old", "mixed"):  # the older rule: the run-to-run noise
            self.assertIsNone(rows[old][0]["p"])
            self.assertIsNotNone(rows[old][0]["noise"])
        self.assertEqual({e: r[0]["noisy"] for e, r in rows.items()},
                         {"doubled": False, "doubled_old": False, "slight": False, "noisy": True,
                          "mixed": False, "steady": False})
        p = portalab("db", "history", "--db", self.db)
        self.assertEqual(p.returncode, 1, p.stderr)
        line = {name: next(l for l in p.stdout.splitlines() if f" {name} " in l)
                for name in ("doubled", "noisy", "slight")}
        self.assertTrue(line["doubled"].startswith("SLOWER REGRESSION "), line["doubled"])
        self.assertTrue(line["noisy"].startswith("SAME NOISY "), line["noisy"])
        self.assertNotIn("NOISY", line["slight"])
        self.assertIn("test: 9 rows", p.stdout)
        # A tolerance and a noise floor below the change: slower, no
        # regression (under --threshold). The default floor (4 x 1%) hides it.
        p = portalab("db", "history", "--db", self.db, "--json", "--tolerance", "0.01",
                     "--min-noise", "0.001", "--experiment", "slight")
        self.assertEqual(p.returncode, 0, p.stderr)
        r, = json.loads(p.stdout)["rows"]
        self.assertEqual((r["verdict"], r["regression"]), ("SLOWER", False))
        self.assertAlmostEqual(r["change"], 0.02, delta=0.002)
        # The phases no repetition is kept of: the older rule for every row.
        p = portalab("db", "history", "--db", self.db, "--json", "--phase", "h2d")
        self.assertEqual(json.loads(p.stdout)["tested"], 0)

    def test_the_test_holds_a_row_to_its_own_noise_and_its_run(self):
        """Rows that kept repetitions, seven runs a day apart. `wobbly`'s earlier
        medians spread by about 15% run to run and its latest is 30% slower:
        SAME, its min_change past 30%, where `firm`, as steady as its
        repetitions, is SLOWER at the same change; `once`, slowed 60% in one
        earlier run only, keeps a small noise of its own (one outlier) and
        is SLOWER at 30%. Then a run the whole machine was slower for:
        twenty rows, each 10-40% slower, all SAME, and the noise of that run
        in the header."""
        rng = random.Random(58)
        wobbly = [1.0, 1.18, 0.86, 1.12, 0.9, 1.15]
        once = [1.0, 1.0, 1.6, 1.0, 1.01, 1.0]
        for i in range(7):
            last = i == 6
            rows = [ss.repeated(ss.row(experiment="wobbly"),
                                around(rng, 1.3 if last else wobbly[i], 30, 0.002)),
                    ss.repeated(ss.row(experiment="firm"),
                                around(rng, 1.3 if last else 1.0, 30, 0.002)),
                    ss.repeated(ss.row(experiment="once"),
                                around(rng, 1.3 if last else once[i], 30, 0.002))]
            rows += [ss.repeated(ss.row(experiment="steady", n=1000 * (k + 1)),
                                 around(rng, 0.5, 30, 0.002)) for k in range(12)]
            ss.write(ss.run(rows, started=ss.day(i), tag=f"o{i}", version=5),
                     os.path.join(self.tmp, "own", f"run{i}"))
        self.imported(os.path.join(self.tmp, "own"))
        rows = self.history_by_experiment(1)
        self.assertLess(rows["wobbly"]["p_adjusted"], 0.01)  # the test is sure of the drift
        self.assertEqual(rows["wobbly"]["verdict"], "SAME")
        self.assertGreater(rows["wobbly"]["min_change"], 0.3)
        self.assertEqual(rows["firm"]["verdict"], "SLOWER")
        self.assertEqual(rows["once"]["verdict"], "SLOWER")
        self.assertLess(rows["once"]["min_change"], 0.3)

        # The machine slower for a whole run: its rows moved together, each
        # by its own amount, past the earlier runs' quiet.
        for i in range(7):
            last = i == 6
            rows = [ss.repeated(ss.row(experiment="machine", n=1000 * (k + 1)),
                                around(rng, 0.5 * (1.1 + 0.3 * k / 19 if last else 1.0), 30,
                                       0.002)) for k in range(20)]
            ss.write(ss.run(rows, started=ss.day(10 + i), tag=f"m{i}", version=5),
                     os.path.join(self.tmp, "machine", f"run{i}"))
        self.imported(os.path.join(self.tmp, "machine"))
        p = portalab("db", "history", "--db", self.db, "--json", "--experiment", "machine")
        self.assertEqual(p.returncode, 0, p.stderr)
        h = json.loads(p.stdout)
        self.assertEqual({r["verdict"] for r in h["rows"]}, {"SAME"})
        self.assertEqual(h["noise"]["latest"]["pairs"], 20)
        self.assertGreater(h["noise"]["latest"]["pooled"], 0.05)
        self.assertLess(h["noise"]["pooled"], 0.01)

    def test_a_run_in_passes_holds_a_row_to_its_passes_spread(self):
        """Three runs, too few for a row's own noise: `apart`, whose latest
        run's two passes lay 32% apart, is SAME at +25%; `together`, whose
        passes agree, SLOWER at the same change. The store keeps each pass's
        medians, and a row of one pass has none."""
        rng = random.Random(60)
        for i in range(3):
            last = i == 2
            level = 1.25 if last else 1.0
            rows = [ss.repeated(ss.row(experiment="apart"), around(rng, level, 30, 0.002),
                                passes=[1.1, 1.45] if last else [1.0, 1.02]),
                    ss.repeated(ss.row(experiment="together"), around(rng, level, 30, 0.002),
                                passes=[level, level * 1.01]),
                    ss.repeated(ss.row(experiment="once"), around(rng, 1.0, 30, 0.002))]
            ss.write(ss.run(rows, started=ss.day(i), tag=f"p{i}", version=5),
                     os.path.join(self.tmp, "passes", f"run{i}"))
        self.imported(os.path.join(self.tmp, "passes"))
        rows = self.history_by_experiment(1)
        self.assertEqual(rows["apart"]["verdict"], "SAME")
        self.assertGreater(rows["apart"]["min_change"], 0.25)
        self.assertEqual(rows["together"]["verdict"], "SLOWER")
        with sqlite3.connect(self.db) as c:
            kept = c.execute("SELECT pass_kernel_ms, pass_total_ms FROM repetitions "
                             "ORDER BY row").fetchall()
        self.assertEqual(len(kept), 9)
        for i, (kernel, total) in enumerate(kept):  # apart, together, once; three runs
            if i % 3 == 2:
                self.assertEqual((kernel, total), (None, None))
            else:
                self.assertEqual(len(kernel), 16)  # two little-endian float64
                self.assertEqual(kernel, total)
        self.assertEqual(struct.unpack("<2d", kept[6][0]), (1.1, 1.45))

    def test_holm_counts_the_rows_listed_together(self):
        """Alone in its listing a row's p is its own: Holm counts the rows
        listed together, not the store's."""
        self.schema_5_runs()
        p = portalab("db", "history", "--db", self.db, "--json", "--experiment", "doubled")
        r, = json.loads(p.stdout)["rows"]
        self.assertIsNotNone(r["p"])
        self.assertEqual(r["p_adjusted"], r["p"])
        for args in (("--alpha", "0"), ("--alpha", "1"), ("--tolerance", "-1")):
            p = portalab("db", "history", "--db", self.db, *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))

    def test_a_changed_path_is_said_and_keeps_the_key(self):
        """A run whose calibration chose another code path is judged against
        the row's history (the path is no part of the key), and says the
        path changed: here streaming stores, then loops 25% slower. A path
        first recorded (a version 2 run before) is no change."""
        for i in range(8):
            old, last = i < 2, i == 7
            rows = [ss.row(experiment="stores", ms=1.25 if last else
                           [1.006, 1.008, 1.0, 1.001, 1.002, 1.0, 1.001][i],
                           path=None if old else "loops" if last else "streaming-stores"),
                    ss.row(experiment="dot", ms=1.0, path="dot-chain" if last else None)]
            doc = ss.run(rows, started=ss.day(i), gpu={"uuid": "GPU-1"}, tag=str(i),
                         version=2 if old else 3)
            ss.write(doc, os.path.join(self.tmp, "paths", f"run{i}"))
        self.imported(os.path.join(self.tmp, "paths"))
        rows = self.history_by_experiment(1)  # the slower row is a regression
        self.assertEqual(len(rows), 2)  # one key each, whatever the path
        stores = rows["stores"]
        self.assertEqual([x["path"] for x in stores["runs"]],
                         [None, None] + ["streaming-stores"] * 5 + ["loops"])
        self.assertEqual((stores["verdict"], stores["regression"]), ("SLOWER", True))
        self.assertIn({"what": "path", "from": "streaming-stores", "to": "loops"},
                      stores["changes"])
        self.assertEqual(rows["dot"]["verdict"], "SAME")
        self.assertNotIn("path", [c["what"] for c in rows["dot"]["changes"]])
        p = portalab("db", "history", "--db", self.db)
        self.assertEqual(p.returncode, 1, p.stderr)
        line = {name: next(l for l in p.stdout.splitlines()
                           if l.startswith(("SLOWER", "SAME")) and f" {name} " in l)
                for name in ("stores", "dot")}
        self.assertIn("streaming-stores -> loops", line["stores"])
        self.assertIn(" dot-chain ", line["dot"])
        self.assertIn("changed: path streaming-stores -> loops", p.stdout)

    def test_two_gpus_of_one_node_are_two_keys(self):
        """One process per GPU (gpus.sbatch): GPU-b 30% slower than GPU-a on
        one node, in one job and then another. No verdict sets one GPU's run
        against the other's; host rows keep the node's key."""
        def job(name, day):
            for g, (uuid, ms) in enumerate((("GPU-a", 1.0), ("GPU-b", 1.3))):
                rows = [ss.row(ms=ms), ss.row(space="OpenMP", threads=2, ms=2.0)]
                doc = ss.run(rows, host="n1", job=name, started=ss.day(day, 10 + g),
                             gpu={"uuid": uuid}, tag=f"{name}{uuid}")
                ss.write(doc, os.path.join(self.tmp, name, f"gpu{g}"))
            self.imported(os.path.join(self.tmp, name))
            p = portalab("db", "history", "--db", self.db, "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            return {(r["key"]["space"], r["key"]["gpu"]): r for r in json.loads(p.stdout)["rows"]}

        rows = job("601", 1)
        self.assertEqual(sorted(rows), [("Cuda", "GPU-a"), ("Cuda", "GPU-b"), ("OpenMP", "")])
        self.assertEqual(rows["Cuda", "GPU-a"]["verdict"], "NEW")
        self.assertEqual(rows["Cuda", "GPU-b"]["verdict"], "NEW")
        self.assertEqual(len(rows["OpenMP", ""]["runs"]), 2)  # the node's two processes
        rows = job("602", 2)
        for gpu, ms in (("GPU-a", 1.0), ("GPU-b", 1.3)):
            r = rows["Cuda", gpu]
            self.assertEqual([x["ms"] for x in r["runs"]], [ms, ms])
            self.assertEqual(r["verdict"], "SAME")
        p = portalab("db", "history", "--db", self.db)
        self.assertIn("GPU-b", p.stdout)
        self.assertNotIn("SLOWER", p.stdout)
        p = portalab("db", "history", "--db", self.db, "--gpu", "GPU-b", "--json")
        self.assertEqual([r["key"]["gpu"] for r in json.loads(p.stdout)["rows"]], ["GPU-b"])

    def test_bad_options(self):
        self.imported(history_fixture(self.tmp))
        for args, words in ((("--last", "1"), "at least 2"), (("--phase", "warm"), "phase")):
            p = portalab("db", "history", "--db", self.db, *args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(words, p.stderr)

    def test_the_same_rule_as_compare(self):
        """Two-run rows: history's verdict is compare.py's (portalab verdicts) on the
        same pair, with the noise at its floor (no earlier pairs)."""
        from portalab import compare
        cases = []
        for base_ms, new_ms, bs, ns, check in (
                (1.0, 1.5, 0.01, 0.01, "PASS"), (1.0, 1.015, 0.001, 0.001, "PASS"),
                (1.0, 1.05, 0.001, 0.001, "PASS"), (1.0, 0.7, 0.01, 0.01, "PASS"),
                (1.0, 1.3, 0.2, 0.2, "PASS"), (1.0, 1.0, 0.0, 0.0, "PASS"),
                (1.0, 2.0, 0.01, 0.01, "FAIL"), (2e-3, 2.2e-3, 0.01, 0.01, "PASS"),
                (50.0, 49.0, 0.001, 0.001, "PASS")):
            cases.append((ss.row(experiment=f"c{len(cases)}", ms=base_ms, spread=bs),
                          ss.row(experiment=f"c{len(cases)}", ms=new_ms, spread=ns, check=check)))
        for i, rows in enumerate(zip(*cases)):
            ss.write(ss.run(list(rows), started=ss.day(i), tag=str(i)),
                     os.path.join(self.tmp, "pairs", f"run{i}"))
        self.imported(os.path.join(self.tmp, "pairs"))
        h = json.loads(portalab("db", "history", "--db", self.db, "--json").stdout)
        got = {r["key"]["experiment"]: r["verdict"] for r in h["rows"]}
        for i, (b, n) in enumerate(cases):
            flat = [{**r, **{f"total_{k}": r["stats"]["total"][k] for k in ("min_ms", "max_ms", "std_ms")}}
                    for r in (b, n)]
            want = compare.judge([tuple(flat)], "total", {}, [])["verdicts"][0]["verdict"]
            self.assertEqual(got[f"c{i}"], want.upper(), (i, b["total_ms"], n["total_ms"]))


def fleet_fixture(tmp, job="777"):
    """Two nodes of four H100s, job 777: GPU-n1-2 is slow (triad 2000 against
    2990), GPU-n2-1 has a x8 link, GPU-n2-3 three ECC errors and throttled
    rows; a run of another job on another node."""
    for host in ("n1", "n2"):
        for g in range(4):
            uuid = f"GPU-{host}-{g}"
            slow = uuid == "GPU-n1-2"
            gpu = {"uuid": uuid, "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": f"00000000:{g}b:00.0",
                   "pcie_link_width": 8 if uuid == "GPU-n2-1" else 16, "pcie_link_max_width": 16,
                   "pcie_link_generation": 5, "ecc": True,
                   "ecc_uncorrected_errors": 3 if uuid == "GPU-n2-3" else 0,
                   "applications_sm_mhz": 1980}
            rows = [ss.row(n=10**8, ms=(0.8 if slow else 0.54) * (1 + 0.001 * g),
                           throttled=uuid == "GPU-n2-3", sm_mhz=1600 if uuid == "GPU-n2-3" else 1980),
                    ss.row(experiment="gemm", variant="vendor", n=8192, ms=20.0, gbps=0.0)]
            rows[1]["gflops"] = 50000.0
            doc = ss.run(rows, host=host, job=job, started=ss.day(3, 10 + g), gpu=gpu,
                         limits=[ss.gpu_limits(triad=2000.0 if slow else 2990.0 + g,
                                               h2d=24.0 if uuid == "GPU-n2-1" else 48.5),
                                 ss.host_limits()], tag=uuid)
            ss.write(doc, os.path.join(tmp, "fleet", host, f"gpu{g}"))
    other = ss.run([ss.row()], host="n9", job="778", started=ss.day(9), gpu={"uuid": "GPU-n9-0"},
                   limits=[ss.gpu_limits(triad=1000.0)], tag="other")
    ss.write(other, os.path.join(tmp, "fleet", "other"))
    return os.path.join(tmp, "fleet")


class FleetTest(StoreCase):
    def test_one_slow_gpu_and_the_others_flags(self):
        self.imported(fleet_fixture(self.tmp))
        p = portalab("db", "fleet", "--db", self.db, "--job", "777", "--json")
        self.assertEqual(p.returncode, 1, p.stderr)  # outliers
        f = json.loads(p.stdout)
        self.assertEqual(f["selection"]["runs"], 8)
        gpus = {g["id"]: g for g in f["gpus"]}
        self.assertEqual(len(gpus), 8)
        self.assertNotIn("GPU-n9-0", gpus)
        outliers = {k for k, g in gpus.items() if g["outlier"]}
        self.assertEqual(outliers, {"GPU-n1-2", "GPU-n2-1", "GPU-n2-3"})
        reasons = {k: " | ".join(gpus[k]["reasons"]) for k in outliers}
        self.assertRegex(reasons["GPU-n1-2"], r"triad_gbps 33% below the median of 8")
        self.assertIn("row stream_copy deep_copy float64 n=100000000", reasons["GPU-n1-2"])
        self.assertIn("PCIe link x8, narrower than its peers' x16", reasons["GPU-n2-1"])
        self.assertIn("h2d_pinned_gbps", reasons["GPU-n2-1"])
        self.assertIn("3 uncorrected ECC errors", reasons["GPU-n2-3"])
        self.assertIn("THROTTLED in 1 of 1 rows", reasons["GPU-n2-3"])
        # Against the reference figures of its model.
        triad = next(x for x in gpus["GPU-n1-0"]["limits"] if x["quantity"] == "triad_gbps")
        self.assertAlmostEqual(triad["vs_reference"], 2990 / 2994, places=3)
        self.assertIn("docs/performance.md", triad["reference_source"])
        self.assertEqual({n["id"] for n in f["nodes"]}, {"n1", "n2"})
        p = portalab("db", "fleet", "--db", self.db, "--job", "777")
        self.assertIn("OUTLIER", p.stdout)
        self.assertIn("GPU-n1-2 on n1", p.stdout)

    def gpu_runs(self, job, gpus, day=3):
        """One run per GPU of job: gpus, {uuid: (host, rows, limits)}."""
        for k, (uuid, (host, rows, limits)) in enumerate(sorted(gpus.items())):
            doc = ss.run(rows, host=host, job=job, started=ss.day(day, 10 + k),
                         gpu={"uuid": uuid, "name": "NVIDIA H100 80GB HBM3"},
                         limits=[limits, ss.host_limits()], tag=f"{job}{uuid}")
            ss.write(doc, os.path.join(self.tmp, job, uuid))
        self.imported(os.path.join(self.tmp, job))
        p = portalab("db", "fleet", "--db", self.db, "--job", job, "--json")
        self.assertIn(p.returncode, (0, 1), p.stderr)
        return p.returncode, {g["id"]: g for g in json.loads(p.stdout)["gpus"]}, json.loads(p.stdout)

    def test_planted_noise_is_no_outlier(self):
        """Eight GPUs whose large row scatters by up to 20% run to run, its
        repetitions by 15%, and whose microsecond row is six times slower
        on one GPU: no outlier. The chosen rows are the large ones."""
        scatter = [1.00, 1.10, 0.92, 1.06, 0.95, 1.12, 0.90, 1.20]
        gpus = {}
        for k, f in enumerate(scatter):
            rows = [ss.row(n=2 * 10**8, ms=1.08 * f, spread=0.15),
                    ss.row(experiment="concurrent_small", variant="instances_4", n=1024,
                           ms=0.12 if k == 3 else 0.02, spread=0.05),
                    ss.row(experiment="concurrent_small", variant="instances_4", n=512, ms=0.01)]
            limits = ss.gpu_limits(triad=2990.0 * (1 + 0.004 * (k % 3)))
            if k == 5:  # a launch latency the calibration found unsteady, and far off
                limits["launch_us"] = 30.0
                limits["unsteady"] = [{"limit": "launch_us", "unit": "us", "fastest": 12.0,
                                       "slowest": 60.0, "repetitions": 9}]
            gpus[f"GPU-{k}"] = (f"n{k // 4}", rows, limits)
        rc, got, f = self.gpu_runs("801", gpus)
        self.assertEqual({k: g["reasons"] for k, g in got.items() if g["outlier"]}, {})
        self.assertEqual(rc, 0)
        self.assertEqual(f["selection"]["rows_too_short"],
                         ["concurrent_small instances_4 float64 n=1024 Cuda none"])
        self.assertEqual({x["quantity"] for g in got.values() for x in g["rows"]},
                         {"stream_copy deep_copy float64 n=200000000 Cuda none"})
        launch = next(x for x in got["GPU-5"]["limits"] if x["quantity"] == "launch_us")
        self.assertEqual(launch["unsteady"], 5.0)
        self.assertEqual(launch["flagged"], [])
        p = portalab("db", "fleet", "--db", self.db, "--job", "801")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("OUTLIER", p.stdout)
        self.assertIn("unsteady (x5.0)", p.stdout)
        self.assertIn("1 kind left out, each kernel under 0.2 ms", p.stdout)

    def test_two_gpus_of_a_node(self):
        """A node of two GPUs, its group: small rows far apart and large
        ones within their repetitions are no outlier; a large row 40%
        slower with tight repetitions is, by name."""
        def node(job, slow):
            gpus = {}
            for uuid in ("GPU-a", "GPU-b"):
                b = uuid == "GPU-b"
                rows = [ss.row(experiment="gemm", variant="vendor", n=8192, gbps=0.0,
                               ms=20.0 * (1.4 if b and slow else 1.02 if b else 1.0), spread=0.01),
                        ss.row(experiment="concurrent_small", n=1024, ms=0.12 if b else 0.02),
                        ss.row(experiment="dot", n=10**5, ms=0.03 if b else 0.02, spread=0.6)]
                for r in rows:
                    r["gflops"] = 2 * 8192**3 / (r["kernel_ms"] * 1e6) if r["experiment"] == "gemm" else 0.0
                gpus[uuid] = ("n1", rows, ss.gpu_limits(triad=3030.0 if b else 3035.0))
            return self.gpu_runs(job, gpus)

        rc, got, _ = node("811", slow=False)
        self.assertEqual((rc, [k for k, g in got.items() if g["outlier"]]), (0, []))
        self.assertEqual([x["quantity"] for x in got["GPU-b"]["rows"]],
                         ["gemm vendor float64 n=8192 Cuda none"])
        # Asked for by name, a noisy small row is judged by its repetitions.
        p = portalab("db", "fleet", "--db", self.db, "--job", "811", "--row", "dot", "--json")
        self.assertEqual(p.returncode, 0, p.stdout)
        rc, got, _ = node("812", slow=True)
        self.assertEqual(rc, 1)
        self.assertEqual([k for k, g in got.items() if g["outlier"]], ["GPU-b"])
        self.assertRegex(" | ".join(got["GPU-b"]["reasons"]),
                         r"row gemm vendor float64 n=8192 Cuda none 1\d% below the median of 2")
        gemm = got["GPU-b"]["rows"][0]
        self.assertEqual(gemm["flagged"], ["median"])

    def test_one_run_on_four_ranks(self):
        """mpirun -np 4: each rank's GPU with its own limits; rows (the
        slowest rank's) are no one GPU's."""
        doc = ss.on_ranks(ss.run([ss.row()], host="n5", job="900", gpu={"uuid": "GPU-r0"}),
                          ["GPU-r0", "GPU-r1", "GPU-r2", "GPU-r3"], [2990.0, 2985.0, 2100.0, 2992.0])
        ss.write(doc, os.path.join(self.tmp, "mpi"))
        self.imported(os.path.join(self.tmp, "mpi"))
        f = json.loads(portalab("db", "fleet", "--db", self.db, "--job", "900", "--json").stdout)
        gpus = {g["id"]: g for g in f["gpus"]}
        self.assertEqual(sorted(gpus), ["GPU-r0", "GPU-r1", "GPU-r2", "GPU-r3"])
        triad = {k: next(x["value"] for x in g["limits"] if x["quantity"] == "triad_gbps")
                 for k, g in gpus.items()}
        self.assertEqual(triad, {"GPU-r0": 2990.0, "GPU-r1": 2985.0, "GPU-r2": 2100.0, "GPU-r3": 2992.0})
        self.assertEqual([k for k, g in gpus.items() if g["outlier"]], ["GPU-r2"])
        self.assertTrue(all(g["rows"] == [] for g in gpus.values()))
        # Its rows' key names all four GPUs: no one GPU's history.
        h = json.loads(portalab("db", "history", "--db", self.db, "--json").stdout)
        self.assertEqual([r["key"]["gpu"] for r in h["rows"]], ["GPU-r0,GPU-r1,GPU-r2,GPU-r3"])
        self.assert_consistent()

    def test_selection(self):
        self.imported(fleet_fixture(self.tmp))
        f = json.loads(portalab("db", "fleet", "--db", self.db, "--json").stdout)  # the latest job
        self.assertEqual([g["id"] for g in f["gpus"]], ["GPU-n9-0"])
        f = json.loads(portalab("db", "fleet", "--db", self.db, "--json", "--since", "2026-11-04",
                                "--until", "2026-11-04").stdout)
        self.assertEqual(f["selection"]["runs"], 8)
        f = json.loads(portalab("db", "fleet", "--db", self.db, "--job", "777", "--json",
                                "--row", "gemm").stdout)
        self.assertEqual({r["quantity"] for g in f["gpus"] for r in g["rows"]},
                         {"gemm vendor float64 n=8192 Cuda none"})

    def test_an_array_is_one_job(self):
        """gpus.sbatch as an array over nodes: each task its own Slurm job
        id, the array's id naming them all."""
        for task, host in enumerate(("n1", "n2")):
            doc = ss.run([ss.row()], host=host, job=str(4001 + task), gpu={"uuid": f"GPU-{host}"},
                         limits=[ss.gpu_limits()], tag=host)
            doc["provenance"]["slurm"].update(array_job_id="4001", array_task_id=str(task))
            ss.write(doc, os.path.join(self.tmp, "4001", host))
        self.imported(os.path.join(self.tmp, "4001"))
        p = portalab("db", "fleet", "--db", self.db, "--job", "4001", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(g["id"] for g in json.loads(p.stdout)["gpus"]), ["GPU-n1", "GPU-n2"])

    def test_bad_input(self):
        self.imported(fleet_fixture(self.tmp))
        bad = os.path.join(self.tmp, "refs.csv")
        with open(bad, "w") as f:
            f.write("model,quantity,value,unit,source,date\nNVIDIA H100,triad_gbps,fast,GB/s,x,y\n")
        for args, words in ((("--references", bad), f"{bad}:2: value 'fast'"),
                            (("--job", "999"), "no runs of job '999'"),
                            (("--since", "yesterday"), "expected YYYY-MM-DD"),
                            (("--job", "777", "--since", "2026-11-01"), "give one of them"),
                            (("--row", "a/b/c/d/e"), "EXPERIMENT[/VARIANT")):
            p = portalab("db", "fleet", "--db", self.db, *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(words, p.stderr)


class ReportTest(StoreCase):
    """report.py --db: the history and fleet sections, loaded in headless
    Chromium as the run report's BrowserTest loads a page (no console
    message, nothing fetched, every figure an SVG with its table beside)."""

    def setUp(self):
        super().setUp()
        import test_report
        self.browser = test_report.BrowserTest("check_page")
        self.browser.tmp = self.tmp
        self.parse = test_report.parse
        self.imported(history_fixture(self.tmp), fleet_fixture(self.tmp))

    def report(self, *args):
        return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), *args],
                              capture_output=True, text=True, timeout=300)

    def test_the_store_alone(self):
        page = os.path.join(self.tmp, "store.html")
        p = self.report("--db", self.db, "--out", page)
        self.assertEqual(p.returncode, 0, p.stderr)
        d = self.browser.check_page(page, "store")
        with open(page) as f:
            html = f.read()
        self.assertIn('id="store-history"', html)
        self.assertIn('id="store-fleet"', html)
        # Regressions first: the first figure is a regression's.
        self.assertRegex(html, r"Figure 1\. (BROKEN|SLOWER) REGRESSION")
        self.assertTrue(any("SLOWER +24.8% clean" in b for b in d.blocks), d.blocks[:12])
        self.assertTrue(any("portalab aaaaaaa → bbbbbbb" in b for b in d.blocks))
        # The fleet's table marks its outliers, and the latest job (778) is shown.
        outliers = [r for r in d.rows if r and r[0] == "OUTLIER"]
        self.assertEqual([r[1] for r in outliers], ["GPU-n9-0"])
        self.assertTrue(any("below the reference for NVIDIA H100" in b for b in d.blocks))

    def test_beside_a_run(self):
        run = os.path.join(self.tmp, "real")
        self.small_run(run, "none")
        page = os.path.join(self.tmp, "run.html")
        p = self.report(run, "--db", self.db, "--out", page)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(page) as f:
            html = f.read()
        self.assertIn('id="store-history"', html)
        self.assertIn(self.db, html)

    def test_a_bad_store(self):
        with open(os.path.join(self.tmp, "junk.sqlite"), "w") as f:
            f.write("not a database at all, just text" * 10)
        p = self.report("--db", os.path.join(self.tmp, "junk.sqlite"), "--out",
                        os.path.join(self.tmp, "x.html"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("not a portalab store", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.html")))


if __name__ == "__main__":
    if "PORTALAB" not in os.environ:
        sys.exit("PORTALAB (the portalab binary) is not set")
    if "ReportTest" in sys.argv[1:] or len(sys.argv) == 1:
        try:
            import jinja2  # noqa: F401
            import matplotlib  # noqa: F401
        except ImportError as e:
            print(f"SKIP: {sys.executable} has no {e.name} (the report needs it)")
            sys.exit(SKIP)
        if not os.environ.get("CHROMIUM") or not os.access(os.environ["CHROMIUM"], os.X_OK):
            print("SKIP: no Chromium (CHROMIUM; Debian: apt-get install chromium)")
            sys.exit(SKIP)
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])
