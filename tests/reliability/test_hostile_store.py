"""The results store (`portalab db`) in a hostile place, as test_hostile.py
tries the run: a run still writing or killed, files the scripts refuse,
FIFOs and devices where a file is read, control bytes and megabyte names in
what it prints, messages that must say what is true, the environment, and
stdout kept to one JSON document. A class per class of case (issue 54);
every case runs the real binary under a timeout.

    PORTALAB=build/host/portalab python3 tests/reliability/test_hostile_store.py [TestClass...]
"""
import copy
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_reliability import DECK as LONG_DECK, ENV  # noqa: E402
from test_hostile import SMALL_DECK, control_free, portalab  # noqa: E402

from portalab import results as pr  # noqa: E402  (scripts/, on the path test_reliability set)

TIMEOUT = 60


def journal_rows(folder):
    """The rows a run's journal holds, as the scripts read them."""
    return len(pr.read_journal(os.path.join(folder, "results.jsonl"))["results"])


class StoreCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_hostile_store_")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.db = self.path("s.sqlite")

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def db_cmd(self, *args, env=ENV, timeout=TIMEOUT):
        return portalab("db", *args, env=env, timeout=timeout)

    def imported(self, *paths, ok=True, db=None):
        p = self.db_cmd("import", "--db", db or self.db, *paths)
        if ok:
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p

    def assert_refused(self, p, *said):
        self.assertEqual(p.returncode, 2, p.stdout[-1000:] + p.stderr[-2000:])
        for s in said:
            self.assertIn(s, p.stderr)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr[-2000:])  # one line
        self.assertNotIn("Traceback", p.stderr)

    def real_run(self, name="run", deck_text=SMALL_DECK):
        """A small real run's folder (a second or two)."""
        deck = self.path(f"{name}.toml")
        with open(deck, "w") as f:
            f.write(deck_text)
        out = self.path(name)
        p = portalab("run", deck, "--out", out, env=ENV, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return out

    def runs_table(self):
        with sqlite3.connect(self.db) as c:
            return c.execute("SELECT incomplete, (SELECT count(*) FROM rows WHERE run = runs.id) "
                             "FROM runs ORDER BY id").fetchall()

    def start_long_run(self, out):
        return subprocess.Popen([os.environ["PORTALAB"], "run", LONG_DECK, "--out", out],
                                env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for_journal_rows(self, proc, out, count):
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if journal_rows(out) >= count:
                    return
            except (OSError, pr.ResultsError):
                pass
            self.assertIsNone(proc.poll(), "the run ended before writing its rows")
            time.sleep(0.05)
        self.fail("no rows in the journal")


class StoreLossTest(StoreCase):
    """No run stored as whole that is not: a run still writing is skipped and
    said; a killed or stopped run is imported with every row its journal
    holds, marked incomplete, and replaced once a complete copy comes."""

    def test_a_run_still_writing_is_skipped_then_imported_whole(self):
        out = self.path("live")
        proc = self.start_long_run(out)
        try:
            self.wait_for_journal_rows(proc, out, 1)
            p = self.imported(out)
            self.assertIn("a run still writing", p.stderr)
            self.assertIn("1 still running, skipped", p.stdout)
            self.assertIn("imported 0 runs", p.stdout)
        finally:
            proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 0)
        p = self.imported(out)
        with open(os.path.join(out, "results.json")) as f:
            rows = len(json.load(f)["results"])
        self.assertEqual(self.runs_table(), [(0, rows)])

    def test_a_killed_run_keeps_every_row_of_its_journal(self):
        out = self.path("killed")
        proc = self.start_long_run(out)
        self.wait_for_journal_rows(proc, out, 2)
        proc.kill()
        proc.communicate(timeout=60)
        held = journal_rows(out)
        p = self.imported(out)
        self.assertIn("incomplete", p.stderr)
        self.assertEqual(self.runs_table(), [(1, held)])
        p = self.imported(out)  # the same journal again: nothing new
        self.assertIn("1 already there", p.stdout)
        self.assertEqual(self.runs_table(), [(1, held)])

    def test_a_complete_copy_replaces_the_incomplete_run(self):
        # A run stopped at a full disk leaves results.json behind its
        # journal: the journal (more rows) is read, then the complete
        # results.json of the same run (the same provenance) replaces it.
        done = self.real_run()
        with open(os.path.join(done, "results.json")) as f:
            doc = json.load(f)
        partial = self.path("partial")
        os.makedirs(partial)
        head = {"schema_version": doc["schema_version"], "provenance": doc["provenance"]}
        with open(os.path.join(partial, "results.json"), "w") as f:
            json.dump(dict(doc, results=[]), f)  # behind its journal: never read
        with open(os.path.join(partial, "results.jsonl"), "w") as f:
            f.write(json.dumps(head) + "\n")
            f.write(json.dumps({"first": 0, "rows": doc["results"][:1]}) + "\n")
            f.write('{"first": 1, "rows": [')  # cut short by a kill
        self.imported(partial)
        self.assertEqual(self.runs_table(), [(1, 1)])
        p = self.imported(done)
        self.assertIn("1 replacing incomplete ones", p.stdout)
        self.assertEqual(self.runs_table(), [(0, len(doc["results"]))])
        p = self.imported(partial)  # an incomplete copy never replaces a complete one
        self.assertIn("1 already there", p.stdout)
        self.assertEqual(self.runs_table(), [(0, len(doc["results"]))])


class StoreValidationTest(StoreCase):
    """The store refuses, exit 2 and one line naming the file and the field,
    what the scripts refuse (schema/results.schema.json, read by the same
    rules), and a refused import leaves no store behind."""

    def setUp(self):
        super().setUp()
        with open(os.path.join(self.real_run(), "results.json")) as f:
            self.doc = json.load(f)

    def cases(self):
        def row(**kw):
            return lambda d: d["results"][0].update(kw)
        return {
            "reps 2^63": (row(reps=2 ** 63), "results/0/reps"),
            "reps 0": (row(reps=0), "results/0/reps"),
            "reps text": (row(reps="3"), "results/0/reps"),
            "reps true": (row(reps=True), "results/0/reps"),
            "total -5 ms": (row(total_ms=-5.0), "results/0/total_ms"),
            "n negative": (row(n=-1), "results/0/n"),
            "check BOGUS": (row(check="BOGUS"), "results/0/check"),
            "a field unknown": (row(bogus=1), "results/0"),
            "provenance {}": (lambda d: d.update(provenance={}), "provenance"),
            "started_at no date": (lambda d: d["provenance"].update(started_at="not a date"),
                                   "provenance/started_at"),
            "started_at month 13": (lambda d: d["provenance"].update(
                started_at="2026-13-45T10:00:00Z"), "provenance/started_at"),
            "no schema_version": (lambda d: d.pop("schema_version"), "schema_version 1"),
            "schema_version 99": (lambda d: d.update(schema_version=99), "schema_version 99"),
            "no rows": (lambda d: d.update(results=[]), "results: no rows"),
            "a host name of 5 MB": (lambda d: d["provenance"]["host"].update(
                hostname="h" * 5_000_000), "provenance/host/hostname"),
        }

    def test_each_value_the_scripts_refuse(self):
        folder = self.path("bad")
        file = os.path.join(folder, "results.json")
        os.makedirs(folder)
        for name, (change, field) in self.cases().items():
            with self.subTest(name):
                doc = copy.deepcopy(self.doc)
                change(doc)
                with open(file, "w") as f:
                    json.dump(doc, f)
                p = self.imported(folder, ok=False)
                self.assert_refused(p, file, field)
                self.assertFalse(os.path.exists(self.db), "a refused import made a store")
                # The scripts' reading refuses it too (both hold signed
                # 64-bit integers).
                try:
                    problem = pr.document_problem(pr.upgraded(pr.check_version(doc, file)))
                except pr.ResultsError as e:
                    problem = str(e)
                if name not in ("no rows", "started_at month 13"):
                    self.assertTrue(problem, name)

    def test_a_refused_file_keeps_an_existing_store_as_it_was(self):
        self.imported(self.real_run("good"))
        folder = self.path("bad")
        os.makedirs(folder)
        with open(os.path.join(folder, "results.json"), "w") as f:
            json.dump(dict(self.doc, schema_version="4"), f)
        self.assert_refused(self.imported(folder, ok=False), "schema_version")
        self.assertEqual(len(self.runs_table()), 1)

    def test_journals_are_checked_alike(self):
        folder = self.path("stopped")
        os.makedirs(folder)
        head = {"schema_version": self.doc["schema_version"], "provenance": self.doc["provenance"]}
        bad_row = dict(self.doc["results"][0], reps=-1)
        for lines, said in (
                ([json.dumps({"provenance": {}})], "a journal of schema_version 1"),
                ([json.dumps(head), json.dumps({"first": 5, "rows": []})], "results.jsonl:2"),
                ([json.dumps(head), "not json", json.dumps({"first": 0, "rows": []})],
                 "results.jsonl:2"),
                ([json.dumps(head), json.dumps({"first": 0, "rows": [bad_row]})], "rows/0/reps"),
                ([json.dumps(head)], "no rows")):
            with self.subTest(said=said):
                with open(os.path.join(folder, "results.jsonl"), "w") as f:
                    f.write("\n".join(lines) + "\n")
                self.assert_refused(self.imported(folder, ok=False), said)
                self.assertFalse(os.path.exists(self.db))


class StoreBlockingTest(StoreCase):
    """No `db` command blocks on a file or reads one without a bound: a FIFO,
    a device, a folder or an empty file where one is read is refused, exit 2."""

    def setUp(self):
        super().setUp()
        self.imported(self.real_run())

    def test_references_not_a_file(self):
        fifo = self.path("refs.fifo")
        os.mkfifo(fifo)
        empty = self.path("empty.csv")
        open(empty, "w").close()
        for refs, said in ((fifo, "FIFO"), ("/dev/zero", "device"), (self.tmp, "folder"),
                           (empty, "no reference figures")):
            with self.subTest(refs=refs):
                p = self.db_cmd("fleet", "--db", self.db, "--references", refs)
                self.assert_refused(p, said)

    def test_a_fifo_at_the_journal_of_the_store(self):
        os.mkfifo(self.db + "-journal")
        for args in (["history"], ["fleet"], ["import", self.path("run")]):
            with self.subTest(args=args):
                p = self.db_cmd(*args[:1], "--db", self.db, *args[1:])
                self.assert_refused(p, "-journal")

    def test_a_fifo_where_a_run_file_is(self):
        for name in ("results.json", "results.jsonl"):
            with self.subTest(name=name):
                folder = self.path("fifo-" + name)
                os.makedirs(folder)
                os.mkfifo(os.path.join(folder, name))
                self.assert_refused(self.imported(folder, ok=False), "FIFO")


class StoreTextTest(StoreCase):
    """Names, hosts, CPU models, job ids and paths of an imported results.json
    reach the terminal quoted and cut as the run's messages are; --json keeps
    them exact."""

    EVIL = "\x1b]0;title\x07\x1b[2J\u202e"

    def test_hostile_names_in_every_table(self):
        with open(os.path.join(self.real_run(), "results.json")) as f:
            doc = json.load(f)
        p = doc["provenance"]
        p["host"].update(hostname="node" + self.EVIL, cpu_model="cpu" + self.EVIL + "m" * 100_000)
        p["slurm"] = {"job_id": "42" + self.EVIL, "array_task_id": ""}
        for r in doc["results"]:
            r.update(library="lib" + self.EVIL, path="loops" + self.EVIL)
        folder = self.path("evil" + self.EVIL)
        os.makedirs(folder)
        with open(os.path.join(folder, "results.json"), "w") as f:
            json.dump(doc, f)
        p = self.imported(folder)
        control_free(self, p.stdout)
        control_free(self, p.stderr)
        for args in (["history"], ["fleet"], ["fleet", "--job", "42" + self.EVIL]):
            with self.subTest(args=args):
                p = self.db_cmd(*args, "--db", self.db)
                self.assertIn(p.returncode, (0, 1), p.stderr[-2000:])
                control_free(self, p.stdout, most=200_000)
                control_free(self, p.stderr)
        h = json.loads(self.db_cmd("history", "--db", self.db, "--json").stdout)
        self.assertEqual({r["key"]["machine"] for r in h["rows"]}, {"node" + self.EVIL})


class StoreWordsTest(StoreCase):
    """Each message says what is true: a rollback pending, a damaged store, a
    path too long, a signal during an import, options out of range."""

    def setUp(self):
        super().setUp()
        self.imported(self.real_run())

    def test_a_hot_journal_is_rolled_back_or_named(self):
        # A commit stopped half-way (a hot journal): a reader that may write
        # the store rolls it back first; one that may not says so.
        with sqlite3.connect(self.db) as c:
            before = c.execute("SELECT count(*) FROM rows").fetchone()[0]
        journal = self.db + "-journal"
        self.make_hot_journal(journal)
        # As a user who may not write the store (root writes anything: as
        # nobody, through setpriv).
        nobody = os.geteuid() != 0 or shutil.which("setpriv")
        if nobody:
            for f in (self.tmp, self.db, journal):
                os.chmod(f, 0o555 if f == self.tmp else 0o444)
            try:
                drop = (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
                        if os.geteuid() == 0 else [])
                p = subprocess.run([*drop, os.environ["PORTALAB"], "db", "history", "--db",
                                    self.db], capture_output=True, text=True, timeout=TIMEOUT)
            finally:
                os.chmod(self.tmp, 0o755)
                for f in (self.db, journal):
                    os.chmod(f, 0o644)
            self.assert_refused(p, "a rollback pending")
            self.assertNotIn("give a writable --db", p.stderr)
            self.assertTrue(os.path.exists(journal))
        for args in (["history"], ["fleet"]):
            p = self.db_cmd(*args, "--db", self.db)
            self.assertIn(p.returncode, (0, 1), p.stderr)
            self.assertFalse(os.path.exists(journal))
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("SELECT count(*) FROM rows").fetchone()[0], before)

    def make_hot_journal(self, journal):
        """A journal that rolls the store back to before.sqlite: a process
        that writes every page in a transaction, killed before its commit."""
        script = (
            "import sqlite3, os, sys\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('PRAGMA cache_size=1')\n"
            "c.execute('BEGIN EXCLUSIVE')\n"
            "c.execute('DELETE FROM rank_rows'); c.execute('DELETE FROM energy')\n"
            "c.execute('DELETE FROM rows')\n"
            "os._exit(0)\n")
        subprocess.run([sys.executable, "-c", script, self.db], check=True, timeout=TIMEOUT)
        self.assertTrue(os.path.exists(journal) and os.path.getsize(journal) > 0)

    def test_a_store_missing_a_table_is_damaged(self):
        with sqlite3.connect(self.db) as c:
            c.execute("DROP TABLE energy")
        for args in (["history"], ["fleet"], ["import", self.path("run")]):
            with self.subTest(args=args):
                p = self.db_cmd(*args[:1], "--db", self.db, *args[1:])
                self.assert_refused(p, "damaged", "energy")

    def test_paths_and_options_refused(self):
        long_db = self.path("d" * 200, "e" * 200, "f" * 200 + ".sqlite")
        for args, said in (
                (["history", "--db", ""], "--db"),
                (["import", "--db", "", self.path("run")], "--db"),
                (["import", "--db", long_db, self.path("run")], "SQLite opens paths of fewer"),
                (["history", "--db", self.path("x" * 300)], "longer than the file system"),
                (["history", "--db", self.db, "--threshold", "nan"], "--threshold"),
                (["history", "--db", self.db, "--threshold", "-10"], "--threshold"),
                (["history", "--db", self.db, "--sigmas", "inf"], "--sigmas"),
                (["history", "--db", self.db, "--min-noise", "-1"], "--min-noise"),
                (["fleet", "--db", self.db, "--until", "2026-13-45"], "2026-13-45"),
                (["fleet", "--db", self.db, "--since", "2026-02-30"], "2026-02-30"),
                (["fleet", "--db", self.db, "--tolerance", "nan"], "--tolerance")):
            with self.subTest(args=args):
                self.assert_refused(self.db_cmd(*args), said)
        self.assertFalse(os.path.exists(os.path.dirname(os.path.dirname(long_db))))
        p = self.db_cmd("history", env=dict(ENV, PORTALAB_DB=""))
        self.assert_refused(p, "PORTALAB_DB")

    def test_a_signal_before_the_commit_keeps_nothing(self):
        tree = self.path("many")
        with open(os.path.join(self.path("run"), "results.json")) as f:
            doc = json.load(f)
        for i in range(400):
            d = copy.deepcopy(doc)
            d["provenance"]["command"] = ["portalab", "run", str(i)]
            os.makedirs(os.path.join(tree, f"r{i}"))
            with open(os.path.join(tree, f"r{i}", "results.json"), "w") as f:
                json.dump(d, f)
        proc = subprocess.Popen([os.environ["PORTALAB"], "db", "import", "--db", self.db, tree],
                                env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in proc.stderr:
            if line.startswith("imported"):
                break
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=TIMEOUT)
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err[-2000:])
        self.assertIn("nothing of this import was kept", err)
        self.assertNotIn("stopping at the next safe point", err)
        self.assertEqual(len(self.runs_table()), 1)


class StoreEnvironmentTest(StoreCase):
    """Every PORTALAB_* variable refuses an empty or malformed value, as
    OMP_NUM_THREADS=abc is refused, and so does a launcher's rank or count
    that is not a whole number: exit 2, one line naming it."""

    def test_each_variable(self):
        deck = self.path("deck.toml")
        with open(deck, "w") as f:
            f.write(SMALL_DECK)
        for name, bad in (("PORTALAB_STREAMING_STORES", "yes"), ("PORTALAB_HUGE_PAGES", ""),
                          ("PORTALAB_HUGE_PAGES", "no"), ("PORTALAB_TOOLS_RAW", "2"),
                          ("PORTALAB_TOOLS_CONCURRENT", ""), ("PORTALAB_MPI_CUDA_AWARE", "maybe"),
                          ("PORTALAB_NVML_LIBRARY", ""), ("PORTALAB_POWERCAP_ROOT", ""),
                          ("PORTALAB_WATCHDOG_S", ""), ("PORTALAB_WATCHDOG_S", "-1"),
                          ("PORTALAB_STARTUP_TIMEOUT_S", "soon"),
                          # a launcher's, which atoi read ("1x" as 1, "" as 0)
                          ("OMPI_COMM_WORLD_LOCAL_RANK", "1x"), ("SLURM_LOCALID", ""),
                          ("MPI_LOCALRANKID", "-1"), ("SLURM_STEP_NUM_TASKS", "2 ")):
            for args in (["run", deck, "--out", self.path("o")], ["info"]):
                with self.subTest(name=name, bad=bad, command=args[0]):
                    p = portalab(*args, env=dict(ENV, **{name: bad}), timeout=TIMEOUT)
                    self.assertEqual(p.returncode, 2, p.stderr[-2000:])
                    self.assertIn(f"{name}=", p.stderr)
                    self.assertEqual(p.stderr.count("error"), 1, p.stderr[-2000:])
                    self.assertFalse(os.path.exists(self.path("o", "results.json")))


class JsonStdoutTest(StoreCase):
    """A command whose stdout is one JSON document keeps it so, whatever a
    loaded library prints on stdout (here a Kokkos tool that prints at start
    and end: the LD_PRELOAD-free way, KOKKOS_TOOLS_LIBS)."""

    def test_every_json_command(self):
        self.imported(self.real_run())
        tool = self.build_noisy_tool()
        env = dict(ENV, KOKKOS_TOOLS_LIBS=tool) if tool else ENV
        for args in (["info"], ["list", "--format", "json"], ["list", "--decks", "--format", "json"],
                     ["db", "history", "--db", self.db, "--json"],
                     ["db", "fleet", "--db", self.db, "--json"]):
            with self.subTest(args=args):
                p = portalab(*args, env=env, timeout=TIMEOUT)
                self.assertIn(p.returncode, (0, 1), p.stderr[-2000:])
                json.loads(p.stdout)  # the whole of stdout, one document
                if tool and args[0] == "info":
                    self.assertIn("noisy tool", p.stderr)

    def build_noisy_tool(self):
        """A Kokkos tool printing on stdout at init and finalize, where a C
        compiler is; None otherwise (the db and list cases still run)."""
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            return None
        src = self.path("noisy.c")
        with open(src, "w") as f:
            f.write('#include <stdio.h>\n#include <stdint.h>\n'
                    'void kokkosp_init_library(int l, uint64_t v, uint32_t n, void* d)'
                    '{ printf("noisy tool: hello\\n"); fflush(stdout); }\n'
                    'void kokkosp_finalize_library(void) { printf("noisy tool: bye\\n"); }\n')
        lib = self.path("libnoisy.so")
        subprocess.run([cc, "-shared", "-fPIC", "-o", lib, src], check=True, timeout=TIMEOUT)
        return lib


if __name__ == "__main__":
    unittest.main()
