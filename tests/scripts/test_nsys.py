"""Tests of scripts/portalab/nsys_sqlite.py, dev/nsys_check.py and timeline.py on
synthetic Nsight Systems exports (fake_nsys.py: the real tables and columns,
portalab's ranges as run_case.cpp opens them): exports that must pass the
checker, and exports each broken in one way that must fail it.

    python3 tests/scripts/test_nsys.py [TestClass...]

Exits 77 (ctest's skip code here) when TimelineTest is asked for and
matplotlib is missing.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts")
sys.path.insert(0, HERE)
sys.path.insert(0, SCRIPTS)

import fake_nsys  # noqa: E402
from portalab import nsys_sqlite as ns  # noqa: E402
from portalab import results as pr  # noqa: E402

SKIP = 77
ALL = {"ranges", "kernel_labels", "copy_phases", "copy_overlap", "streams"}


def script(name, *args, env=None):
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *args],
                       capture_output=True, text=True, timeout=120, env=env)
    return p.returncode, p.stdout, p.stderr


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_nsys_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def export(self, rows, faults=(), text_ids=False, name="profile", connector=False):
        """(SQLite export, results.json) of a run that recorded rows."""
        db = os.path.join(self.tmp, f"{name}.sqlite")
        fake_nsys.write(db, rows, faults, text_ids, connector)
        results = os.path.join(self.tmp, f"{name}.json")
        with open(results, "w") as f:
            json.dump({"schema_version": pr.SCHEMA_VERSION, "results": rows}, f)
        return db, results


def statuses(stdout):
    """{assertion: PASS|FAIL|SKIP} from nsys_check.py's output."""
    out = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("PASS", "FAIL", "SKIP"):
            out[parts[1].rstrip(":")] = parts[0]
    return out


class ReaderTest(Base):
    def test_text_and_text_id_give_the_same_ranges(self):
        rows = fake_nsys.streams_rows()
        a = ns.load(self.export(rows, name="text")[0])
        b = ns.load(self.export(rows, text_ids=True, name="ids")[0])
        self.assertTrue(a.ranges)
        self.assertEqual([(r.name, r.start, r.end, r.depth) for r in a.ranges],
                         [(r.name, r.start, r.end, r.depth) for r in b.ranges])
        with sqlite3.connect(os.path.join(self.tmp, "ids.sqlite")) as db:  # really through textId
            self.assertEqual(db.execute("SELECT COUNT(*) FROM NVTX_EVENTS WHERE text IS NOT NULL")
                             .fetchone()[0], 0)

    def test_ranges_nest_by_time_and_measurements_follow_the_runner(self):
        rows = fake_nsys.copy_rows()
        p = ns.load(self.export(rows)[0])
        kernel = next(r for r in p.ranges if r.name == "portalab/vector_poly/Cuda/cold/kernel")
        self.assertEqual(kernel.parent.name, "portalab/vector_poly/Cuda/cold")
        self.assertEqual(kernel.parent.parent.name, "portalab/vector_poly/Cuda")
        self.assertEqual(kernel.depth, 3)
        found = ns.measurements(p)
        self.assertEqual(len(found), len(rows))
        pairs, missing, extra = ns.match_rows(found, rows)
        self.assertEqual((len(pairs), missing, extra), (len(rows), [], []))
        for m, r in pairs:
            self.assertEqual(len(m.reps), r["reps"])
            copies = r["copies"] != "none"
            self.assertTrue(all((rep.h2d is not None) == copies for rep in m.reps))
            self.assertIsNotNone(m.verify)

    def test_rows_measured_in_passes_pair_with_each_pass(self):
        # Two rows of one experiment and space, two passes: the profile holds
        # both rows' measurements, then both again; each is its row's.
        rows = [dict(fake_nsys.row("vector_poly", v, copies="none"),
                     repetitions={"kernel_ms": [1.0] * 4, "total_ms": [1.0] * 4,
                                  "pass_kernel_ms": [1.0, 1.0], "pass_total_ms": [1.0, 1.0]})
                for v in ("fused", "unfused")]
        entry = ns.Range(name="portalab/vector_poly/Cuda", start=0, end=1, tid=0,
                         kind=ns.NVTX_PUSH_POP)
        found = [ns.Measurement("vector_poly", "Cuda", entry) for _ in range(4)]
        pairs, missing, extra = ns.match_rows(found, rows)
        self.assertEqual(([r["variant"] for _, r in pairs], missing, extra),
                         (["fused", "unfused", "fused", "unfused"], [], []))
        pairs, missing, extra = ns.match_rows(found[:3] + found[:3], rows)  # one too many
        self.assertEqual((len(pairs), missing, len(extra)), (4, [], 2))
        pairs, missing, extra = ns.match_rows(found[:1], rows)  # the second row never ran
        self.assertEqual(([r["variant"] for r in missing], extra), (["unfused"], []))

    def test_the_nvtx_connector_copy_of_each_range_is_left_out(self):
        # Kokkos Tools' nvtx-connector beside portalab's own NVTX ranges: every
        # range twice, the connector's around portalab's; read as one.
        rows = fake_nsys.streams_rows()
        alone = ns.load(self.export(rows, name="alone")[0])
        both = ns.load(self.export(rows, name="both", connector=True)[0])
        with sqlite3.connect(os.path.join(self.tmp, "both.sqlite")) as db:
            self.assertEqual(db.execute("SELECT COUNT(*) FROM NVTX_EVENTS").fetchone()[0],
                             2 * len(alone.ranges))
        self.assertEqual([(r.name, r.depth) for r in alone.ranges],
                         [(r.name, r.depth) for r in both.ranges])
        self.assertEqual(len(ns.measurements(both)), len(rows))

    def test_activities_carry_their_launching_call_and_copy_kind(self):
        p = ns.load(self.export(fake_nsys.copy_rows())[0])
        self.assertTrue(p.kernels and p.copies)
        self.assertTrue(all(a.launch_tid == fake_nsys.MAIN_TID for a in p.activities()))
        self.assertEqual({c.copy for c in p.copies}, {"h2d", "d2h"})
        self.assertTrue(all("portalab" in k.name for k in p.kernels))
        self.assertEqual({a.pid for a in p.activities()}, {fake_nsys.PID})
        h2d = next(r for r in p.ranges if r.name == "portalab/vector_poly/Cuda/h2d")
        inside = p.launched_in(h2d)
        self.assertEqual([a.copy for a in inside], ["h2d"])

    def test_activities_without_calls_are_placed_by_gpu_time(self):
        db, _ = self.export(fake_nsys.copy_rows())
        with sqlite3.connect(db) as c:
            c.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
        p = ns.load(db)
        self.assertTrue(p.warnings)
        h2d = next(r for r in p.ranges if r.name == "portalab/vector_poly/Cuda/h2d")
        self.assertEqual([a.copy for a in p.launched_in(h2d)], ["h2d"])

    def test_not_an_export_is_an_error(self):
        junk = os.path.join(self.tmp, "junk.sqlite")
        with open(junk, "w") as f:
            f.write("not a database at all, " * 100)
        with self.assertRaises(ns.ExportError):
            ns.load(junk)
        other = os.path.join(self.tmp, "other.sqlite")
        with sqlite3.connect(other) as c:
            c.execute("CREATE TABLE t (x)")
        with self.assertRaisesRegex(ns.ExportError, "not an nsys export"):
            ns.load(other)


class CheckTest(Base):
    def check(self, rows, faults=(), *extra, text_ids=False, results_rows=None):
        db, results = self.export(rows, faults, text_ids)
        if results_rows is not None:
            with open(results, "w") as f:
                json.dump({"schema_version": pr.SCHEMA_VERSION, "results": results_rows}, f)
        return script("dev/nsys_check.py", db, results, *extra)

    def assertFails(self, rows, faults, expected, results_rows=None):
        rc, out, err = self.check(rows, faults, results_rows=results_rows)
        self.assertEqual(rc, 1, out + err)
        got = statuses(out)
        failed = {k for k, v in got.items() if v == "FAIL"}
        self.assertTrue(expected <= failed, out)
        return failed, out

    def test_a_good_streams_run_passes_every_assertion(self):
        rows = fake_nsys.streams_rows()
        rc, out, err = self.check(rows, (), "--require", "ranges,kernel_labels,copy_overlap,streams")
        self.assertEqual(rc, 0, out + err)
        got = statuses(out)
        self.assertEqual({k for k, v in got.items() if v == "PASS"},
                         {"ranges", "kernel_labels", "copy_phases", "copy_overlap", "streams",
                          "closed"})
        self.assertEqual(got["tool_copies"], "SKIP")  # portalab's own ranges alone
        self.assertIn("pipelined_2 copies=pinned: share of copy time", out)

    def test_a_good_run_with_the_nvtx_connector_passes_every_assertion(self):
        db, results = self.export(fake_nsys.streams_rows(), connector=True)
        rc, out, err = script("dev/nsys_check.py", db, results, "--require",
                              "ranges,kernel_labels,copy_overlap,streams,closed,tool_copies")
        self.assertEqual(rc, 0, out + err)

    def test_a_range_told_once_beside_the_connector_fails(self):
        db, results = self.export(fake_nsys.copy_rows(), connector=True)
        with sqlite3.connect(db) as c:  # the connector's copy of one verify range lost
            c.execute("DELETE FROM NVTX_EVENTS WHERE rowid = (SELECT rowid FROM NVTX_EVENTS WHERE "
                      "text LIKE '%/verify' ORDER BY start LIMIT 1)")
        rc, out, err = script("dev/nsys_check.py", db, results)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(statuses(out)["tool_copies"], "FAIL", out)
        self.assertIn("/verify at", out)
        self.assertIn("no copy", out)

    def test_a_range_never_ended_fails(self):
        db, results = self.export(fake_nsys.copy_rows())
        with sqlite3.connect(db) as c:
            c.execute("UPDATE NVTX_EVENTS SET end = NULL WHERE rowid = (SELECT rowid FROM "
                      "NVTX_EVENTS WHERE text LIKE '%/cold' ORDER BY start LIMIT 1)")
        rc, out, err = script("dev/nsys_check.py", db, results)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(statuses(out)["closed"], "FAIL", out)
        self.assertRegex(out, r"portalab/vector_poly/Cuda/cold at \d+ ns never ended")

    def test_a_good_copies_run_passes_and_text_ids_change_nothing(self):
        for text_ids in (False, True):
            rc, out, err = self.check(fake_nsys.copy_rows(), (), "--require", "copy_phases",
                                      text_ids=text_ids)
            self.assertEqual(rc, 0, out + err)
            got = statuses(out)
            self.assertEqual(got["copy_phases"], "PASS")
            self.assertEqual(got["copy_overlap"], "SKIP")  # no copy_overlap rows

    def test_serial_copies_overlapping_kernels_fail(self):
        failed, out = self.assertFails(fake_nsys.streams_rows(), ("serial_overlap",),
                                       {"copy_overlap"})
        self.assertIn("serial must not overlap", out)
        self.assertNotIn("kernel_labels", failed)

    def test_pipelined_copies_not_overlapping_fail(self):
        failed, out = self.assertFails(fake_nsys.streams_rows(), ("no_overlap",), {"copy_overlap"})
        self.assertEqual(failed, {"copy_overlap"})
        self.assertIn("pipelined_2 copies=pinned: repetition 0: no copy overlaps", out)

    def test_launch_bound_pipelines_are_left_out_and_said_so(self):
        # Chunks so small that each copy and kernel ends before the host
        # queues the next: no overlap to ask of the hardware.
        rows = fake_nsys.streams_rows(copies=("pinned",))
        rc, out, err = self.check(rows, ("launch_bound",), "--require", "copy_overlap")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(statuses(out)["copy_overlap"], "PASS")  # the serial rows
        self.assertRegex(out, r"copy_overlap pipelined_2 copies=pinned: repetition 0 not checked: "
                              r"launch-bound: its copies and kernels ran 36\.0 us on the GPU, "
                              r"queued over 204\.0 us")
        self.assertIn("copy_overlap pipelined_3 copies=pinned: repetition 2 not checked", out)
        # The pipelined rows alone: nothing left to check.
        pipelined = [r for r in rows if r["variant"].startswith("pipelined_")]
        rc, out, err = self.check(pipelined, ("launch_bound",))
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(statuses(out)["copy_overlap"], "SKIP")

    def test_large_pipelines_without_overlap_still_fail(self):
        # Queued at once, copies long against the queuing: not launch-bound.
        rows = [r for r in fake_nsys.streams_rows(copies=("pinned",))
                if r["variant"].startswith("pipelined_")]
        failed, out = self.assertFails(rows, ("no_overlap",), {"copy_overlap"})
        self.assertEqual(failed, {"copy_overlap"})
        self.assertNotIn("not checked", out)

    def test_pageable_pipelines_need_not_overlap(self):
        rows = fake_nsys.streams_rows(copies=("pageable",))
        rc, out, err = self.check(rows, ("no_overlap",))
        self.assertEqual(rc, 0, out + err)

    def test_a_kernel_without_portalab_name_fails(self):
        # A hidden copy (Kokkos' ViewCopy kernel) in native rows' kernel phases.
        failed, out = self.assertFails(fake_nsys.copy_rows(), ("foreign_kernel",), {"kernel_labels"})
        self.assertEqual(failed, {"kernel_labels"})
        self.assertIn("ViewCopy", out)
        self.assertIn("vector_poly/Cuda fused copies=pageable: repetition 0: kernels neither", out)

    def test_value_fills_and_kokkos_kernels_kernels_pass_a_stray_kernel_fails(self):
        rows = fake_nsys.kokkos_rows()
        rc, out, err = self.check(rows, (), "--require", "kernel_labels")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(statuses(out)["kernel_labels"], "PASS")
        # The measured repetitions' kernel phases: 3 of each row.
        self.assertIn("accepted by name: 3 Kokkos value fills (ViewFill), 3 Kokkos Kernels kernels",
                      out)
        self.assertNotIn("graph executions traced as a whole", out)  # traced per node
        # The same rows with a ViewCopy in place of each: every row fails.
        failed, out = self.assertFails(rows, ("foreign_kernel",), {"kernel_labels"})
        self.assertEqual(failed, {"kernel_labels"})
        for label in ("array_ops/Cuda creation", "dot/Cuda kokkos_kernels"):
            self.assertIn(f"{label} copies=none: repetition 0: kernels neither", out)
        self.assertNotIn("launch_overhead", out)  # its graph's kernels are portalab's

    def test_a_graph_traced_whole_is_the_phase_work(self):
        rows = fake_nsys.kokkos_rows()
        db, results = self.export(rows, ("graph_traced_whole",))
        p = ns.load(db)
        self.assertEqual(len(p.graphs), 5)  # cold, warm-up, 3 repetitions
        self.assertTrue(all(g.launch_tid == fake_nsys.MAIN_TID for g in p.graphs))
        rc, out, err = script("dev/nsys_check.py", db, results, "--require", "kernel_labels")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("kernel_labels: 3 CUDA graph executions traced as a whole", out)
        self.assertIn("--cuda-graph-trace=node", out)
        # Without any trace of the graph, its phases launched nothing.
        failed, out = self.assertFails(rows, ("graph_lost",), {"kernel_labels"})
        self.assertEqual(failed, {"kernel_labels"})
        self.assertIn("launch_overhead/Cuda graph copies=none: repetition 0: no GPU work", out)

    def test_vendor_kernels_pass_only_in_vendor_rows(self):
        rows = fake_nsys.streams_rows()
        for r in rows:
            if r["experiment"] == "inverse_pair":
                r["library"] = "native"
        self.assertFails(rows, (), {"kernel_labels"}, results_rows=rows)

    def test_copies_outside_their_phases_fail(self):
        for fault in ("copy_in_kernel_phase", "wrong_bytes", "d2h_in_h2d"):
            with self.subTest(fault=fault):
                failed, _ = self.assertFails(fake_nsys.copy_rows(), (fault,), {"copy_phases"})
                self.assertEqual(failed, {"copy_phases"})

    def test_missing_ranges_fail(self):
        failed, out = self.assertFails(fake_nsys.copy_rows(), ("missing_rep",), {"ranges"})
        self.assertEqual(failed, {"ranges"})
        self.assertIn("2 repetitions, reps = 3", out)
        _, out = self.assertFails(fake_nsys.copy_rows(), ("missing_verify",), {"ranges"})
        self.assertIn("no verify range", out)

    def test_a_row_without_ranges_and_ranges_without_a_row_fail(self):
        rows = fake_nsys.copy_rows()
        _, out = self.assertFails(rows, (), {"ranges"}, results_rows=rows + [
            fake_nsys.row("vector_poly", "fused", copies="none", n=5)])
        self.assertIn("row without ranges: vector_poly fused Cuda float32 n=5", out)
        _, out = self.assertFails(rows, (), {"ranges"}, results_rows=rows[1:])
        self.assertIn("ranges without a measured row", out)

    def test_rows_not_measured_need_no_ranges(self):
        rows = fake_nsys.streams_rows()
        rows[-1]["check"] = "N/A"  # instances_8 where a space cannot run it
        rc, out, err = self.check(rows)
        self.assertEqual(rc, 0, out + err)

    def test_streams_used_must_match_the_instances(self):
        rows = fake_nsys.streams_rows()
        renamed = json.loads(json.dumps(rows))
        for r in renamed:  # the profile ran 2 instances where the row says 4
            if r["variant"] == "instances_2":
                r["variant"] = "instances_4"
        failed, out = self.assertFails(rows, (), {"streams"}, results_rows=renamed)
        self.assertEqual(failed, {"streams"})
        self.assertIn("work on 2 streams, the variant has 4 instances", out)

    def test_require_turns_a_skip_into_a_failure(self):
        rc, out, _ = self.check(fake_nsys.copy_rows(), (), "--require", "copy_overlap")
        self.assertEqual(rc, 1)
        self.assertEqual(statuses(out)["copy_overlap"], "FAIL")

    def test_bad_input_exits_2(self):
        db, results = self.export(fake_nsys.copy_rows())
        rc, _, err = script("dev/nsys_check.py", db, results, "--require", "no_such_check")
        self.assertEqual(rc, 2)
        self.assertIn("no_such_check", err)
        rc, _, err = script("dev/nsys_check.py", os.path.join(self.tmp, "missing.sqlite"), results)
        self.assertEqual(rc, 2)
        self.assertNotIn("Traceback", err)
        rc, _, err = script("dev/nsys_check.py", db, db)
        self.assertEqual(rc, 2)
        self.assertIn("not a portalab results.json", err)


def png_size(path):
    import struct
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    return struct.unpack(">II", head[16:24])


class TimelineTest(Base):
    def test_a_picture_of_one_entry_and_of_the_whole_run(self):
        rows = fake_nsys.streams_rows()
        db, results = self.export(rows)
        for args in (["--range", "portalab/copy_overlap/Cuda$", "--occurrence", "1",
                      "--results", results], ["--range", "portalab/inverse_pair/Cuda$"], []):
            out = os.path.join(self.tmp, "pics", f"t{len(args)}.png")
            rc, stdout, err = script("timeline.py", db, "--out", out, *args)
            self.assertEqual(rc, 0, err)
            self.assertEqual(stdout.strip(), out)
            w, h = png_size(out)
            self.assertGreater(w, 1000)
            self.assertGreater(h, 300)

    def test_two_reports_draw_lanes_for_each(self):
        a, _ = self.export(fake_nsys.copy_rows(), name="rank0")
        b, _ = self.export(fake_nsys.copy_rows(), name="rank1")
        out = os.path.join(self.tmp, "ranks.png")
        rc, _, err = script("timeline.py", a, b, "--out", out)
        self.assertEqual(rc, 0, err)
        one = os.path.join(self.tmp, "one.png")
        script("timeline.py", a, "--out", one)
        self.assertGreater(png_size(out)[1], png_size(one)[1])  # twice the lanes: taller

    def test_bad_input_exits_2_in_one_sentence(self):
        db, _ = self.export(fake_nsys.copy_rows())
        out = os.path.join(self.tmp, "x.png")
        rc, _, err = script("timeline.py", db, "--out", out, "--range", "no_such_range")
        self.assertEqual(rc, 2)
        self.assertIn("no NVTX range matches", err)
        rc, _, err = script("timeline.py", db, "--out", out, "--range", "portalab/vector_poly/Cuda$",
                            "--occurrence", "99")
        self.assertEqual(rc, 2)
        self.assertIn("only 3 ranges match", err)
        self.assertFalse(os.path.exists(out))


class NoMatplotlibTest(Base):
    def test_timeline_says_so_in_one_sentence(self):
        # A matplotlib that cannot be imported, first on the path.
        fake = os.path.join(self.tmp, "fake_site", "matplotlib")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("raise ImportError('no matplotlib here')\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(fake))
        db, _ = self.export(fake_nsys.copy_rows())
        for name, args in (("timeline.py", [db, "--out", os.path.join(self.tmp, "x.png")]),
                           ("plot.py", [self.tmp, "--out", self.tmp]),
                           ("roofline.py", [db, "--out", self.tmp])):
            with self.subTest(script=name):
                rc, _, err = script(name, *args, env=env)
                self.assertNotEqual(rc, 0)
                self.assertNotIn("Traceback", err)
                self.assertIn("matplotlib", err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)


if __name__ == "__main__":
    names = sys.argv[1:]
    if "TimelineTest" in names:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(f"SKIP: {sys.executable} has no matplotlib (python3-matplotlib)")
            sys.exit(SKIP)
    unittest.main(argv=[sys.argv[0], "-v", *names])
