"""Synthetic changes to a real results.json for the script tests: a made-up
GPU space (so that copies and speedups show), and a slowed-down copy (a
regression the compare script must catch)."""
import copy
import hashlib
import json
import os
import shutil
import subprocess
import tempfile


def real_run(deck, out, *args):
    """The results.json document of a real run of deck into out, by the
    binary $PORTALAB on two OpenMP threads (not pinned: shared machines),
    its files valid against schema/ (portalab.results; scripts/ on the
    caller's path).

    Where $PORTALAB_RUN_CACHE names a folder (the suite's, tests/
    CMakeLists.txt), a run of the same binary, deck and arguments made by
    an earlier test is copied into out instead: the script tests read a
    real run, they do not test the binary, and each of their runs
    calibrates the machine (seconds of a 2-core CI machine's time)."""
    cache = os.environ.get("PORTALAB_RUN_CACHE")
    cached = os.path.join(cache, _run_key(deck, args)) if cache else None
    if cached and os.path.isfile(os.path.join(cached, "results.json")):
        shutil.copytree(cached, out, dirs_exist_ok=True)
    else:
        p = subprocess.run([os.environ["PORTALAB"], "run", deck, *args, "--out", out],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false"))
        if p.returncode != 0:
            raise RuntimeError(f"portalab exited {p.returncode}: {p.stderr[-2000:]}")
        if cached:
            _keep(out, cached)
    from portalab import results as portalab_results
    portalab_results.check_files(out)
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def _run_key(deck, args):
    """What makes two runs alike: the binary (its path, size and time, so
    that a rebuild runs again), the deck (its path, as the provenance
    names it, and its text) and the arguments."""
    binary = os.stat(os.environ["PORTALAB"])
    h = hashlib.sha256(repr((os.environ["PORTALAB"], binary.st_size, binary.st_mtime_ns,
                             os.path.abspath(deck), args)).encode())
    with open(deck, "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:16]


def _keep(out, cached):
    """A copy of the run folder out as cached, whole or not at all: copied
    beside it, then renamed (two tests that ran at once: the first stays)."""
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    partial = tempfile.mkdtemp(dir=os.path.dirname(cached), prefix=".partial-")
    shutil.copytree(out, os.path.join(partial, "run"))
    try:
        os.rename(os.path.join(partial, "run"), cached)
    except OSError:
        pass
    shutil.rmtree(partial, ignore_errors=True)


def _set_phase(row, phase, median, spread):
    row[f"{phase}_ms"] = median
    row["stats"][phase] = {"median_ms": median, "min_ms": median * (1 - spread),
                           "max_ms": median * (1 + spread), "std_ms": median * spread / 2}
    # The repetitions the U test compares, as many as before, evenly over
    # the same range (made up, not measured).
    reps = row.get("repetitions")
    if isinstance(reps, dict) and f"{phase}_ms" in reps:
        count = max(len(reps[f"{phase}_ms"]), row.get("reps") or 0, 1)
        reps[f"{phase}_ms"] = [median * (1 - spread + 2 * spread * (i + 0.5) / count)
                               for i in range(count)]


def scale_repetitions(row, factor):
    """Every repetition a row kept, times factor: as its medians are scaled."""
    reps = row.get("repetitions")
    if isinstance(reps, dict):
        for times in reps.values():
            times[:] = [t * factor if t is not None else None for t in times]


def _set_total(row, spread):
    _set_phase(row, "total", sum(row[f"{p}_ms"] for p in ("h2d", "kernel", "d2h")), spread)


# Kokkos' parallel host backends; a build has one of them at most.
PARALLEL_HOST_SPACES = ("OpenMP", "Threads")


def with_fake_gpu(doc):
    """doc plus a space "FakeGPU" on a device "Synthetic GPU": every row of
    the parallel host space (OpenMP or Threads) again, kernel 8x faster,
    copies at 10 GB/s, and a pinned mode at 20 (set, not measured)."""
    doc = copy.deepcopy(doc)
    doc["provenance"]["devices"].append({"space": "FakeGPU", "name": "Synthetic GPU",
                                       "concurrency": 221184})
    new = []
    for r in doc["results"]:
        if r["space"] not in PARALLEL_HOST_SPACES or r["check"] != "PASS":
            continue
        modes = ["pinned", r["copies"]] if r["copies"] == "pageable" else [r["copies"]]
        for mode in modes:
            g = copy.deepcopy(r)
            g.update(space="FakeGPU", copies=mode, copies_alias=False)
            copy_ms = 0.0 if mode == "none" else r["bytes"] / (10e9 if mode == "pageable" else 20e9) * 1e3 / 2
            _set_phase(g, "h2d", copy_ms, 0.05)
            _set_phase(g, "kernel", r["kernel_ms"] / 8, 0.05)
            _set_phase(g, "d2h", copy_ms, 0.05)
            _set_total(g, 0.05)
            base = next(b for b in doc["results"] if b["space"] == r["baseline"]
                        and all(b[k] == r[k] for k in ("experiment", "variant", "dtype", "n"))
                        and b["copies"] in (mode, "pageable"))
            g["speedup_over_baseline"] = base["total_ms"] / g["total_ms"]
            g["gbps"] = r["gbps"] * 8
            g["gflops"] = r["gflops"] * 8
            new.append(g)
    doc["results"] += new
    return doc


def with_energy(doc, gpu_w=300.0, cpu_w=150.0, throttled=lambda r: False):
    """doc with every passed row's energy as portalab writes it (docs/energy.md):
    a device row's GPU at gpu_w, a host row's CPU at cpu_w, over its total
    time; rows where throttled(row) had their clocks held down by the power cap."""
    doc = copy.deepcopy(doc)
    for r in doc["results"]:
        if r["check"] != "PASS":
            continue
        host = r["space"] in ("Serial", "OpenMP", "Threads", "HPX")
        watts = cpu_w if host else gpu_w
        per_rep = watts * r["total_ms"] * 1e-3
        kernel = watts * r["kernel_ms"] * 1e-3
        source = {"joules": per_rep * r["reps"], "joules_per_rep": per_rep,
                  "kernel_joules": kernel * r["reps"], "kernel_joules_per_rep": kernel,
                  "seconds": r["total_ms"] * 1e-3 * r["reps"], "mean_power_w": watts,
                  "reps": r["reps"], "reps_counted": r["reps"]}
        e = {"cpu": source if host else {"not_available": "synthetic"},
             "start_unix_s": 1.8e9, "end_unix_s": 1.8e9 + source["seconds"],
             "gflop_per_j": r["flops"] / kernel * 1e-9 if r["flops"] and kernel else None,
             "gb_per_j": r["bytes"] / kernel * 1e-9 if r["bytes"] and kernel else None}
        if not host:
            held = throttled(r)
            e.update(gpu=source, sm_clock_mhz=1410.0 if held else 1980.0, mem_clock_mhz=2619.0,
                     power_w=watts, temperature_c=61.0,
                     clock_event_reasons=["sw_power_cap"] if held else [], throttled=held)
        r["energy"] = e
    return doc


def slowed(doc, factor, where):
    """doc with the rows matching where(row) slowed by factor, every
    repetition (so the spread no longer overlaps), and a later start time."""
    doc = copy.deepcopy(doc)
    doc["provenance"]["started_at"] = "2999-01-01T00:00:00Z"
    for r in doc["results"]:
        if where(r):
            for p in ("h2d", "kernel", "d2h", "total"):
                r[f"{p}_ms"] *= factor
                for s in ("median_ms", "min_ms", "max_ms", "std_ms"):
                    r["stats"][p][s] *= factor
            scale_repetitions(r, factor)
    return doc


def write(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def tight(doc, spread=0.01):
    """doc with every measured phase's repetitions within +-spread of its
    median, so that tests of compare's verdicts do not hang on this machine's
    noise."""
    doc = copy.deepcopy(doc)
    for r in doc["results"]:
        for p in ("h2d", "kernel", "d2h", "total"):
            _set_phase(r, p, r[f"{p}_ms"], spread)
    return doc


def population(doc, count, seed=1):
    """A made-up run of `count` entries from doc's first passing row: sizes
    1..count (distinct entries), true total times spread evenly over 1 us to
    100 ms on a log scale (set, not measured). Returns (doc, {n: true time in
    ms})."""
    import math
    import random
    rng = random.Random(seed)
    doc = copy.deepcopy(doc)
    template = next(r for r in doc["results"] if r["check"] == "PASS")
    rows, truth = [], {}
    for i in range(count):
        r = copy.deepcopy(template)
        r["n"] = i + 1
        truth[r["n"]] = 10 ** rng.uniform(-3, 2)
        rows.append(r)
    doc["results"] = rows
    return doc, truth


def run_to_run_noise(ms):
    """Relative run-to-run noise of a median, larger for shorter entries, as
    back-to-back runs on one machine show."""
    return 0.3 if ms < 0.01 else 0.15 if ms < 0.1 else 0.08 if ms < 1 else 0.03


def noisy_run(doc, truth, seed, spread=0.01, reps=10):
    """One run drawn from truth: each entry's median off its true time by
    the run-to-run noise (log-normal), its repetitions within +-spread of
    that median (far narrower than the noise between runs)."""
    import math
    import random
    rng = random.Random(seed)
    doc = copy.deepcopy(doc)
    for r in doc["results"]:
        t = truth[r["n"]]
        median = t * math.exp(rng.gauss(0.0, run_to_run_noise(t)))
        r["reps"] = reps
        for p in ("h2d", "d2h"):
            _set_phase(r, p, 0.0, 0.0)
        _set_phase(r, "kernel", median, spread)
        _set_phase(r, "total", median, spread)
    return doc


def sweep(doc, count):
    """A made-up sweep of `count` rows from doc's rows (a made-up GPU added):
    each row again at sizes n * 1000 + k (k = 1, 2, ...), its times, bytes
    and FLOPs scaled with k, until there are count rows: many series, each
    at many sizes, as a node's sweep is."""
    doc = with_fake_gpu(doc)
    template = doc["results"]
    rows = []
    k = 0
    while len(rows) < count:
        k += 1
        for r in template[:count - len(rows)]:
            g = copy.deepcopy(r)
            g["n"] = r["n"] * 1000 + k
            for field in ("bytes", "flops", *(f"{p}_ms" for p in ("h2d", "kernel", "d2h", "total"))):
                if g[field] is not None:
                    g[field] *= k
            for stats in g["stats"].values():
                for s in stats:
                    if stats[s] is not None:
                        stats[s] *= k
            scale_repetitions(g, k)
            rows.append(g)
    doc["results"] = rows
    return doc


def _default(schema, defs):
    """The plainest value a (sub)schema allows: what a hand-made file leaves out."""
    from portalab import schema as portalab_schema
    if "$ref" in schema:
        return _default(*portalab_schema._resolve(schema["$ref"], defs))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _default(schema[key][-1], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    types = schema.get("type", "object")
    types = types if isinstance(types, list) else [types]
    if "null" in types:
        return None
    kind = types[0]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _default(props.get(k, {}), defs) for k in schema.get("required", ())}
    if kind == "string":
        return "2000-01-01T00:00:00Z" if "pattern" in schema else ""
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    return {"array": [], "boolean": False}[kind]


def complete(doc):
    """A hand-made results document with every field the schema requires
    that it leaves out set to its plainest value (null, 0, "", none):
    valid, so that the scripts read it."""
    from portalab import results as pr
    schema = pr.schemas()["results"]
    defs = schema["$defs"]
    doc = copy.deepcopy(doc)
    doc["summary"] = {**_default(defs["summary"], defs), **doc.get("summary", {})}
    doc["provenance"] = {**_default(defs["provenance"], defs), **doc.get("provenance", {})}
    doc["provenance"]["host"] = {**_default(defs["provenance"]["properties"]["host"], defs),
                                 **doc["provenance"]["host"]}
    row = _default(defs["row"], defs)
    row.update(reps=1, ranks=1)
    doc["results"] = [{**row, **r, "stats": {p: {**_default(defs["phase"], defs), **s}
                                             for p, s in {**row["stats"], **r.get("stats", {})}.items()}}
                      for r in doc["results"]]
    return doc
