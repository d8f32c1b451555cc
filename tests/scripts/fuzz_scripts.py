#!/usr/bin/env python3
"""Hostile files for the result scripts: files a real portalab run wrote
(results.json, its journal results.jsonl, results.csv, a calibration file),
mutated at random (a field given a value of another type, NaN, Infinity,
a number past a double's range, a huge integer, deep nesting, a long or
non-printable string, a field dropped or added; bytes flipped, cut short,
garbage, empty), fed to collect.py, compare.py and validate.py in this
process and, every few cases, to report.py and plot.py as the user runs
them. Fails on any traceback, any exit status the script does not document
(collect, report, plot: 0 or 2; compare, validate: 0, 1 or 2), a refusal
(2) that is not one line naming the file, or a script that takes longer
than --timeout seconds on one file. The file that did it is kept in --keep.

    PORTALAB=build/host/portalab tests/scripts/fuzz_scripts.py --seconds 60
    PORTALAB=build/host/portalab tests/scripts/fuzz_scripts.py --cases 300 --seed 1  # ctest

Without PORTALAB the seed files are a hand-made run (synthetic.complete).
"""
import argparse
import contextlib
import copy
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(SOURCE, "scripts")
sys.path.insert(0, HERE)
sys.path.insert(0, SCRIPTS)

from portalab import collect  # noqa: E402
from portalab import compare  # noqa: E402
from portalab import results as pr  # noqa: E402
import synthetic  # noqa: E402
from portalab import validate  # noqa: E402

# The exit statuses each script documents.
EXITS = {"collect.py": {0, 2}, "compare.py": {0, 1, 2}, "validate.py": {0, 1, 2},
         "report.py": {0, 2}, "plot.py": {0, 2}}
IN_PROCESS = {"collect.py": collect.main, "compare.py": compare.main, "validate.py": validate.main}


def hostile_values(rng):
    """A value no field of portalab's files holds, or one at its edge."""
    return rng.choice([
        None, True, False, 0, -1, -1e-300, 1e308, 2 ** 63, 2 ** 64, -2 ** 70, 10 ** 300,
        float("nan"), float("inf"), float("-inf"), 0.5, "", "x", "10", "PASS", "\x1b]0;title\x07",
        "é" * 3, "a" * rng.choice([100, 100_000]), [], [1, 2], {}, {"a": 1},
        deep(rng.choice([50, 500, 5000])),
    ])


def edge_value(rng, value):
    """A value of the same JSON type at its edge (0, the least and the most
    double, the empty text, another name): files the schema allows, to
    reach the scripts' arithmetic rather than their refusals."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([0, 1, 2, 2 ** 62, value * 1000 + 1])
    if isinstance(value, float):
        return rng.choice([0.0, 5e-324, 1e-300, 1e300, 1.7e308, value * 1e6])
    if isinstance(value, str):
        return rng.choice(["", "x", "Serial", "OpenMP", "Cuda", "none", "pinned", "PASS", "FAIL",
                           "float64", "fused", "unfused", "instances_0", "sequential", value * 2])
    if isinstance(value, list):
        return value[:rng.randrange(len(value) + 1)] * rng.choice([1, 2])
    if isinstance(value, dict) and value:
        return {k: v for k, v in value.items() if rng.random() < 0.8}
    return value


def deep(levels):
    value = []
    for _ in range(min(levels, 900)):  # deeper is written as text below
        value = [value]
    return value


def paths(value, at=()):
    """Every path to a value inside a document."""
    yield at
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, at + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:50]):
            yield from paths(v, at + (i,))


def set_at(doc, at, value):
    if not at:
        return value
    node = doc
    for k in at[:-1]:
        node = node[k]
    node[at[-1]] = value
    return doc


def mutate_json(rng, doc):
    """doc with one to three fields changed, dropped or added."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        every = list(paths(doc))
        at = rng.choice(every)
        how = rng.random()
        if how < 0.4 and at:
            node = doc
            for k in at:
                node = node[k]
            doc = set_at(doc, at, edge_value(rng, node))
        elif how < 0.7 or not at:
            doc = set_at(doc, at, hostile_values(rng))
        elif how < 0.85:
            parent = doc
            for k in at[:-1]:
                parent = parent[k]
            del parent[at[-1]]
        else:
            parent = doc
            for k in at[:-1]:
                parent = parent[k]
            if isinstance(parent, dict):
                parent[rng.choice(["extra", "n", "check", "results"])] = hostile_values(rng)
    return doc


def dumps(doc):
    """JSON as Python writes it: NaN and Infinity as those words."""
    text = json.dumps(doc, allow_nan=True)
    return text


def mutate_bytes(rng, data):
    """data flipped, cut, padded with garbage, emptied or nested past any limit."""
    how = rng.randrange(6)
    if how == 0 and data:
        data = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if how == 1:
        return data[:rng.randrange(len(data) + 1)]
    if how == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 4096)))
    if how == 3:
        return b""
    if how == 4:
        k = rng.choice([1000, 100_000])
        return b"[" * k + b"]" * k
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b"NaN", b"Infinity", b"1e999", b"\x00", b"\xff\xfe", b'"\n"']) + data[at:]


def journal_of(doc):
    """The journal a run of doc would write: the head, then its rows in two updates."""
    head = {"schema_version": doc["schema_version"], "provenance": doc["provenance"]}
    rows = doc["results"]
    half = len(rows) // 2
    return "\n".join(json.dumps(x) for x in (head, {"first": 0, "rows": rows[:half]},
                                              {"first": half, "rows": rows[half:]})) + "\n"


class Seeds:
    """The valid files the mutants are made from."""

    def __init__(self, tmp):
        if os.environ.get("PORTALAB"):
            run = os.path.join(tmp, "seed")
            self.doc = synthetic.real_run(
                os.path.join(SOURCE, "tests", "decks", "report.toml"), run)
            with open(os.path.join(run, "results.csv"), "rb") as f:
                self.csv = f.read()
        else:
            self.doc = synthetic.complete({
                "schema_version": pr.SCHEMA_VERSION,
                "provenance": {"host": {"hostname": "h"}},
                "results": [{"experiment": "vector_poly", "variant": v, "space": s,
                             "dtype": "float32", "n": n, "copies": "none", "check": "PASS",
                             "reps": 3, **{f"{p}_ms": t for p in ("h2d", "kernel", "d2h", "total")
                                           for t in [n * 1e-6 * (1 + (s == "Serial"))]}}
                            for v in ("fused", "unfused") for s in ("Serial", "OpenMP")
                            for n in (1000, 100_000)]})
            self.csv = None
        self.limits = None
        if self.doc["provenance"].get("calibration"):
            limits = {"schema_version": pr.SCHEMA_VERSION, "provenance": self.doc["provenance"],
                      "calibration": self.doc["provenance"]["calibration"]}
            if pr.first_problem(limits, "limits") is None:
                self.limits = limits

    def mutant(self, rng, folder):
        """Writes one hostile file into folder; (its path, what it is)."""
        kinds = ["results.json"] * 5 + ["results.jsonl"] * 2 + ["results.csv"] * bool(self.csv) \
            + ["limits.json"] * bool(self.limits)
        kind = rng.choice(kinds)
        path = os.path.join(folder, kind)
        if kind == "results.csv":
            data = mutate_bytes(rng, self.csv) if rng.random() < 0.5 else self.csv_mutant(rng)
        else:
            base = self.limits if kind == "limits.json" else self.doc
            text = journal_of(base) if kind == "results.jsonl" else dumps(base)
            if rng.random() < 0.6:
                doc = mutate_json(rng, base)
                text = journal_of(doc) if kind == "results.jsonl" and isinstance(doc, dict) \
                    and isinstance(doc.get("results"), list) else dumps(doc)
                data = text.encode("utf-8", "surrogatepass")
            else:
                data = mutate_bytes(rng, text.encode())
        with open(path, "wb") as f:
            f.write(data)
        return path, kind

    def csv_mutant(self, rng):
        """results.csv with one cell changed, a cell added or a line cut."""
        lines = self.csv.decode().split("\n")
        i = rng.randrange(1, max(2, len(lines) - 1))
        cells = lines[i].split(",")
        how = rng.randrange(3)
        if how == 0 and cells:
            cells[rng.randrange(len(cells))] = rng.choice(
                ["nan", "inf", "-1", "1_000", " 1", "1e999", "{", "[1]", '"a"', "\x00", "true"])
        elif how == 1:
            cells.append("extra")
        else:
            cells = cells[:rng.randrange(len(cells) + 1)]
        lines[i] = ",".join(cells)
        return "\n".join(lines).encode()


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def in_process(name, argv, timeout):
    """(exit status, stderr, traceback or None) of scripts/<name>'s main(argv) here."""
    out, err = io.StringIO(), io.StringIO()
    old_argv = sys.argv
    sys.argv = [name, *argv]
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = IN_PROCESS[name](argv) or 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except Timeout:
        return None, err.getvalue(), f"took longer than {timeout} s"
    except BaseException:  # noqa: B902 - any traceback is the finding
        return None, err.getvalue(), traceback.format_exc()
    finally:
        signal.alarm(0)
        sys.argv = old_argv
    return code, err.getvalue(), None


def subprocess_run(name, argv, timeout):
    try:
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *argv],
                           capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    except subprocess.TimeoutExpired:
        return None, "", f"took longer than {timeout} s"
    return p.returncode, p.stderr, p.stderr if "Traceback" in p.stderr else None


def verdict(name, code, err, trace, path):
    """What is wrong with one script's answer to one file, or None."""
    if trace:
        return trace.strip().splitlines()[-1] if "Traceback" in trace else trace
    if code not in EXITS[name]:
        return f"exit status {code}"
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        if len(lines) != 1 or not lines[0].startswith(f"{name}: "):
            return f"a refusal of {len(lines)} lines: {err[:300]!r}"
        if path not in lines[0] and os.path.dirname(path) not in lines[0]:
            return f"a refusal that does not name the file: {lines[0][:300]!r}"
        if len(lines[0]) > 2000 or any(c in lines[0] for c in "\x1b\x07"):
            return f"a refusal with {len(lines[0])} characters or raw control bytes"
    return None


def commands(name, path, folder, other):
    """The script's arguments for one hostile file."""
    if name == "collect.py":
        return [folder, "--csv", os.path.join(folder, "out", "all.csv")]
    if name == "compare.py":
        return [other, folder]
    if name == "validate.py":
        return [path]
    if name == "report.py":
        return [folder, "--out", os.path.join(folder, "out", "report.html")]
    return [folder, "--out", os.path.join(folder, "out", "plots")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, help="stop after this long (default: --cases)")
    ap.add_argument("--cases", type=int, default=200, help="hostile files to try (default 200)")
    ap.add_argument("--seed", type=int, help="of the mutations (default: random, printed)")
    ap.add_argument("--timeout", type=int, default=60, help="seconds one script may take on one file")
    ap.add_argument("--slow-every", type=int, default=25,
                    help="report.py and plot.py on every this many files (default 25)")
    ap.add_argument("--keep", default=os.path.join(SOURCE, "build", "fuzz", "scripts-artifacts"),
                    help="where a file that breaks a script is kept")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="portalab_fuzz_scripts_")
    try:
        seeds = Seeds(tmp)
        good = os.path.join(tmp, "good")
        os.makedirs(good)
        synthetic.write(seeds.doc, os.path.join(good, "results.json"))
        print(f"fuzz_scripts: seed {seed}", flush=True)
        start, case, found, exits = time.monotonic(), 0, 0, {}
        while (time.monotonic() - start < args.seconds) if args.seconds else case < args.cases:
            case += 1
            folder = os.path.join(tmp, f"case{case}")
            os.makedirs(os.path.join(folder, "out"))
            path, kind = seeds.mutant(rng, folder)
            names = ["validate.py"] + (["collect.py", "compare.py"] if kind != "limits.json" else [])
            slow = case % args.slow_every == 0 and kind != "limits.json"
            runs = [(n, in_process) for n in names] + [(n, subprocess_run) for n in
                                                       ("report.py", "plot.py") if slow]
            for name, how in runs:
                code, err, trace = how(name, commands(name, path, folder, good), args.timeout)
                wrong = verdict(name, code, err, trace, path)
                exits[name, code] = exits.get((name, code), 0) + 1
                if wrong:
                    found += 1
                    os.makedirs(args.keep, exist_ok=True)
                    kept = os.path.join(args.keep, f"{seed}-{case}-{kind}")
                    shutil.copyfile(path, kept)
                    print(f"fuzz_scripts: {name} on a hostile {kind} ({kept}): {wrong}")
                    if trace and "Traceback" in trace:
                        print("\n".join(trace.splitlines()[-12:]))
            shutil.rmtree(folder, ignore_errors=True)
        print(f"fuzz_scripts: {case} hostile files in {time.monotonic() - start:.0f} s "
              f"(seed {seed}): {found} findings; exits: "
              + ", ".join(f"{n} {c}: {k}" for (n, c), k in sorted(exits.items(), key=str)))
        return 1 if found else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
