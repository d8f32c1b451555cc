#!/usr/bin/env python3
"""The host rows of a portalab run against the seeds' own compiled CPU code:
each streaming kernel written as a Numba @njit(parallel=True) prange loop,
run here at the row's size, type and thread count, and (with --stream) the
run's calibrated host bandwidth against BabelStream's OpenMP model. A peer
is a reference, never a dependency: run this on the machine that ran
portalab, right after it, so both sides share the window.

    scripts/dev/host_peers.py results.json [--space OpenMP] [--min-n 1000000]
        [--reps 10] [--timed-ms 200] [--experiment NAME] [--stream /path/to/omp-stream]
        [--markdown] [--portalab build/host/portalab --rounds 3]

With --portalab, each row (experiment, variant, type, size) is run again by
that binary, alone, beside its Numba peer, --rounds times in turn (portalab
first in even rounds, second in odd ones), so that both sides of every ratio
share a window of seconds: a shared or virtual machine's
bandwidth wanders by a quarter between windows a minute apart, more than the
differences this script looks for. The ratio of each round is printed, and the
row passes when every round is >= 0.95 and the median of the rounds >= 1.0
(with one round: >= 0.95). Each side of a row repeats its kernel at least
--reps times and for about --timed-ms of kernel time (from the run's own
median), so that a row under a millisecond is the median of hundreds of
calls: ten calls of a short kernel span a few ms, within which a virtual
node's neighbours can move a round's ratio by half.

Targets (issue 26), each printed with PASS/FAIL; exit 1 if one is missed,
2 if the file cannot be read or Numba is missing:
  portalab kernel time <= Numba's / 0.95 on every row (ratio >= 0.95),
  the fused variant no slower than the unfused one,
  the calibrated memory bandwidth >= 0.95 x BabelStream's best of copy and
  triad, and no row beyond the cache above 105% of its limit.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# The user package (scripts/portalab/), one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from portalab import results as pr  # noqa: E402

# The CPUs this process may run on, before Numba starts its threads: with
# OMP_PROC_BIND set, Numba's OpenMP layer binds the main thread to one CPU, and
# a child started afterwards inherits that one CPU (BabelStream's threads
# then all ran on one core).
CPUS = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None


def peers():
    """Numba versions of the kernels, built on first use (Numba's import and
    compilation take seconds)."""
    import numba
    import numpy as np
    from numba import njit, prange

    @njit(parallel=True)
    def vector_poly(x, y, z, a, b, c):
        for i in prange(x.size):
            z[i] = a * x[i] * x[i] + b * y[i] + c

    @njit(parallel=True)
    def squared_diff(x, y, z):
        for i in prange(x.size):
            d = x[i] - y[i]
            z[i] = d * d

    @njit(parallel=True)
    def cube_product(x, y, z):
        for i in prange(x.size):
            p = x[i] * y[i]
            z[i] = p * p * p

    @njit(parallel=True)
    def gaussian_pdf(x, z, mean, sigma, norm):
        for i in prange(x.size):
            u = (x[i] - mean) / sigma
            z[i] = np.exp(-0.5 * u * u) / norm

    @njit(parallel=True)
    def polar_distance(r1, t1, r2, t2, z):
        for i in prange(r1.size):
            dx = r1[i] * np.cos(t1[i]) - r2[i] * np.cos(t2[i])
            dy = r1[i] * np.sin(t1[i]) - r2[i] * np.sin(t2[i])
            z[i] = np.sqrt(dx * dx + dy * dy)

    @njit(parallel=True)
    def copy(x, z):
        for i in prange(x.size):
            z[i] = x[i]

    # One prange loop per operator: NumPy's evaluation order, compiled and
    # parallel (the fair peer of portalab's unfused variants).
    @njit(parallel=True)
    def binary(op, x, y, z):
        for i in prange(x.size):
            if op == 0:
                z[i] = x[i] + y[i]
            elif op == 1:
                z[i] = x[i] - y[i]
            elif op == 2:
                z[i] = x[i] * y[i]
            else:
                z[i] = x[i] / y[i]

    @njit(parallel=True)
    def scalar(op, x, s, z):
        for i in prange(x.size):
            if op == 0:
                z[i] = x[i] + s
            elif op == 2:
                z[i] = x[i] * s
            else:
                z[i] = x[i] * x[i]

    @njit(parallel=True)
    def dot(x, y, zero):
        acc = zero
        for i in prange(x.size):
            acc += x[i] * y[i]
        return acc

    @njit(parallel=True)
    def dot64(x, y):
        acc = 0.0
        for i in prange(x.size):
            acc += np.float64(x[i]) * np.float64(y[i])
        return acc

    @njit(parallel=True)
    def broadcast_row(m, v, z):
        for i in prange(m.shape[0]):
            for j in range(m.shape[1]):
                z[i, j] = m[i, j] + v[j]

    @njit(parallel=True)
    def broadcast_column(m, v, z):
        for i in prange(m.shape[0]):
            b = v[i]
            for j in range(m.shape[1]):
                z[i, j] = m[i, j] + b

    @njit(parallel=True)
    def fill(z, value):
        for i in prange(z.size):
            z[i] = value

    @njit(parallel=True)
    def eye(m):
        n = m.shape[0]
        for i in prange(n):
            for j in range(n):
                m[i, j] = 1.0 if i == j else 0.0

    @njit(parallel=True)
    def arange(z):
        for i in prange(z.size):
            z[i] = i

    @njit(parallel=True)
    def unary(op, x, z):
        for i in prange(x.size):
            if op == 0:
                z[i] = np.cos(x[i])
            elif op == 1:
                z[i] = np.sin(x[i])
            else:
                z[i] = np.sqrt(x[i])

    return numba, np, locals()


def make_case(row, np, k):
    """(callable, what it computes) for one row, or None if no peer."""
    n, dt = int(row["n"]), np.dtype(row["dtype"])
    rng = np.random.default_rng(1)

    def arr(lo=0.0, hi=1.0, shape=None):
        return rng.uniform(lo, hi, shape or n).astype(dt)

    e, v = row["experiment"], row["variant"]
    T = dt.type
    if e == "vector_poly":
        x, y, z, t1, t2 = arr(), arr(), np.empty(n, dt), np.empty(n, dt), np.empty(n, dt)
        a, b, c = T(3.5), T(2.8), T(10.0)
        if v == "fused":
            return lambda: k["vector_poly"](x, y, z, a, b, c)
        return lambda: (k["scalar"](1, x, a, t1), k["scalar"](2, t1, a, t1),
                        k["scalar"](2, y, b, t2), k["binary"](0, t1, t2, t1),
                        k["scalar"](0, t1, c, z))
    if e == "squared_diff":
        x, y, z, t1, t2 = arr(), arr(), np.empty(n, dt), np.empty(n, dt), np.empty(n, dt)
        if v == "fused":
            return lambda: k["squared_diff"](x, y, z)
        return lambda: (k["binary"](1, x, y, t1), k["binary"](1, x, y, t2),
                        k["binary"](2, t1, t2, z))
    if e == "cube_product":
        x, y, z = arr(), arr(), np.empty(n, dt)
        return lambda: k["cube_product"](x, y, z)
    if e == "gaussian_pdf":
        x, z = arr(-3, 3), np.empty(n, dt)
        return lambda: k["gaussian_pdf"](x, z, T(0), T(1), T(math.sqrt(2 * math.pi)))
    if e == "polar_distance":
        r1, t1, r2, t2 = arr(0.5, 1.5), arr(-math.pi, math.pi), arr(0.5, 1.5), arr(-math.pi, math.pi)
        z = np.empty(n, dt)
        return lambda: k["polar_distance"](r1, t1, r2, t2, z)
    if e == "stream_copy" and v in ("kernel", "naive"):
        x, z = arr(), np.empty(n, dt)
        return lambda: k["copy"](x, z)
    if e == "stream_copy" and v == "deep_copy":
        x, z = arr(), np.empty(n, dt)
        return lambda: np.copyto(z, x)  # NumPy's memcpy, as deep_copy is
    if e == "dot" and v in ("native", "native_acc64"):
        x, y = arr(-1, 1), arr(-1, 1)
        if v == "native":
            return lambda: k["dot"](x, y, T(0))
        return lambda: k["dot64"](x, y)
    if e == "broadcast_add":
        m = rng.integers(-1000, 1000, (n, n)).astype(dt)
        vec, z = rng.integers(-1000, 1000, n).astype(dt), np.empty((n, n), dt)
        return lambda: k["broadcast_" + v](m, vec, z)
    if e == "array_ops":
        x, y = np.arange(1, 2 * n, 2).astype(dt), np.arange(2, 2 * n + 1, 2).astype(dt)
        outs = [np.empty(n, dt) for _ in range(6)]
        s = T(10)
        if v == "arithmetic":
            return lambda: (k["scalar"](0, x, s, outs[0]), k["scalar"](2, x, s, outs[1]),
                            k["binary"](0, x, y, outs[2]), k["binary"](1, x, y, outs[3]),
                            k["binary"](2, x, y, outs[4]), k["binary"](3, x, y, outs[5]))
        if v == "math":
            return lambda: (k["arange"](outs[0]), k["unary"](0, outs[0], outs[1]),
                            k["unary"](1, outs[0], outs[2]), k["unary"](2, outs[0], outs[3]))
        if v == "creation":
            mats = [np.empty((n, n), dt) for _ in range(3)]
            return lambda: (k["fill"](mats[0].reshape(-1), T(0)), k["fill"](mats[1].reshape(-1), T(1)),
                            k["eye"](mats[2]), k["arange"](outs[0]))
    return None


def median_ms(f, reps):
    f()  # compiles and first-touches
    f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), min(times), max(times)


# The CPUs of portalab's reruns: those this script started with, or the one
# CPU of one-thread rows (one_cpu).
RERUN_CPUS = CPUS


def affinity():
    """The CPUs of a rerun, for a child started after Numba."""
    if RERUN_CPUS:
        os.sched_setaffinity(0, RERUN_CPUS)


def one_cpu():
    """One-thread rows (Serial): both sides on one CPU, the first this script
    may use, where OMP_PROC_BIND puts portalab's thread. Called before Numba
    starts its threads, which take this process's CPUs: unbound, Numba's
    worker ran on whichever vCPU was free, and the CI VM's second vCPU reads
    8-13% faster than its first (float64 dot rounds of 0.91-0.93 followed it)."""
    global RERUN_CPUS
    if CPUS:
        RERUN_CPUS = {min(CPUS)}
        os.sched_setaffinity(0, RERUN_CPUS)
        print(f"one thread a row: portalab and Numba on CPU {min(CPUS)}", file=sys.stderr)


def row_reps(row, reps, timed_ms):
    """Repetitions of a row's kernel: at least `reps`, and enough for about
    `timed_ms` of kernel time at the run's median (at most 5000)."""
    ms = row.get("kernel_ms") or 0
    return max(reps, min(5000, math.ceil(timed_ms / ms))) if ms > 0 else reps


def rerun(binary, space, group, reps, tmp, limits=None):
    """portalab's kernel time of each variant of one case, measured now: a
    deck of that case alone, without copies, and without calibrating: with
    the run's own calibration (`limits`, a file) where it had one, so that
    its host loops and copies store as the run's did (plain or streaming,
    provenance host_stores); without one a run's stores are plain."""
    r0 = group[0]
    deck = os.path.join(tmp, "case.toml")
    with open(deck, "w") as f:
        f.write(f'calibrate = "none"\nreps = {reps}\nwarmups = 2\ncopies = "none"\n'
                f'spaces = ["{space}"]\n[{r0["experiment"]}]\nsizes = [{r0["n"]}]\n'
                f'dtypes = ["{r0["dtype"]}"]\n'
                f'variants = [{", ".join(sorted({chr(34) + r["variant"] + chr(34) for r in group}))}]\n')
    out = os.path.join(tmp, "run")
    env = dict(os.environ)
    env.pop("PORTALAB_STREAMING_STORES", None)  # the calibration decides, as in the run
    done = subprocess.run([binary, "run", deck, "--out", out] + (["--limits", limits] if limits else []),
                          capture_output=True, text=True, preexec_fn=affinity, env=env)
    if done.returncode != 0:
        pr.fail(f"{binary} run {deck}: exit {done.returncode}\n{done.stderr or done.stdout}")
    rows = pr.read_document(os.path.join(out, "results.json"))["results"]
    return {r["variant"]: (r["kernel_ms"], (r.get("limit") or {}).get("value"))
            for r in rows if r["space"] == space}


def babelstream(path, threads, n):
    """BabelStream's best copy and triad GB/s (its MB/s are 10^6 bytes). Its
    errors silenced: its dot check fails at 2.6e8 doubles by rounding (2.3e-9
    relative against 2.2e-9 allowed), which says nothing of its bandwidth.
    Its arrays in huge pages, as portalab's and NumPy's are (glibc's malloc
    then advises them): in 4 KB pages it reads slower than the peers it is
    held against."""
    tunables = ":".join(t for t in (os.environ.get("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=1") if t)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), GLIBC_TUNABLES=tunables)
    out = subprocess.run([path, "-s", str(n), "-n", "20", "--silence-errors"], env=env, capture_output=True,
                         text=True, check=True,
                         preexec_fn=lambda: CPUS and os.sched_setaffinity(0, CPUS)).stdout
    rates = {}
    for line in out.splitlines():
        m = re.match(r"^(Copy|Mul|Add|Triad|Dot)\s+([0-9.]+)", line)
        if m:
            rates[m.group(1).lower()] = float(m.group(2)) / 1e3
    if "copy" not in rates:
        raise RuntimeError(f"{path}: no Copy line in its output:\n{out}")
    print("BabelStream:\n  " + "\n  ".join(out.strip().splitlines()[-6:]))
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--space", default="OpenMP")
    ap.add_argument("--min-n", type=float, default=1e6,
                    help="rows of fewer elements (matrix rows: n²) are left out")
    ap.add_argument("--reps", type=int, default=10, help="repetitions of a row, at least")
    ap.add_argument("--timed-ms", type=float, default=200.0,
                    help="repetitions enough for about this much kernel time (default 200)")
    ap.add_argument("--experiment", action="append",
                    help="only this experiment's rows (repeatable); default: every one with a peer")
    ap.add_argument("--stream", help="BabelStream's OpenMP binary (omp-stream)")
    ap.add_argument("--markdown", action="store_true", help="the table in Markdown")
    ap.add_argument("--portalab", help="run each row again with this binary beside its peer")
    ap.add_argument("--rounds", type=int, default=3,
                    help="with --portalab: portalab and Numba in turn this many times (default 3)")
    args = ap.parse_args()
    try:
        doc = pr.read_document(args.results)
        rows = [r for r in doc["results"] if r["space"] == args.space]
        prov = doc["provenance"]
    except pr.ResultsError as e:
        pr.fail(str(e))
    except (OSError, ValueError, KeyError, TypeError) as e:
        pr.fail(f"{args.results}: not a portalab results.json ({e})")
    if rows and all((r.get("threads") or 1) == 1 for r in rows):
        one_cpu()
    try:
        numba, np, kernels = peers()
    except ImportError as e:
        pr.fail(f"Numba is needed for the peers ({e}): apt-get install python3-numba")

    cal = next((s for s in (prov.get("calibration") or {}).get("spaces", [])
                if s["space"] == args.space), None)
    # Beyond the cache as STREAM has it: each array at least 4x the last-level
    # cache. Below that, part of a repetition's data is still in the cache
    # from the one before (such rows run above the memory limit); beyond it
    # no row may exceed its limit by more than 5%.
    cache = (cal or {}).get("cache_bytes", 0)
    # The rows with a peer, grouped by case: one portalab run per case and round.
    cases = {}
    for r in rows:
        elems = r["n"] * r["n"] if r["experiment"] in ("broadcast_add",) else r["n"]
        if r.get("check") != "PASS" or elems < args.min_n or r.get("copies") not in ("none", None):
            continue
        if args.experiment and r["experiment"] not in args.experiment:
            continue
        if make_case(dict(r, n=1), np, kernels) is None:
            continue
        cases.setdefault((r["experiment"], r["dtype"], r["n"]), []).append(r)
    rounds = max(1, args.rounds if args.portalab else 1)
    # The stores the run's loops and copies used (results written before
    # calibration chose them lack the entry: plain, as those runs' were).
    used = (prov.get("host_stores") or {}).get(args.space) or {}
    if args.portalab:
        print(f"portalab runs again with {used.get('stores', 'plain')} stores in loops and "
              f"{used.get('copy_stores', 'plain')} in copies beyond the cache, as the run did",
              file=sys.stderr)
    ours_ms = {id(r): [] for group in cases.values() for r in group}
    peer_ms = {id(r): [] for group in cases.values() for r in group}
    # The highest limit each row was held to: a rerun whose row beyond the
    # cache outran the run's limit re-measured it (limits_rechecked).
    limit_seen = {}
    with tempfile.TemporaryDirectory(prefix="host_peers_") as tmp:
        limits = None
        if args.portalab and prov.get("calibration"):
            limits = os.path.join(tmp, "limits.json")
            with open(limits, "w") as f:
                json.dump(prov["calibration"], f)
        for k in range(rounds):
            for group in cases.values():
                for r in group:
                    reps = row_reps(r, args.reps, args.timed_ms)

                    def ours_now(r=r, reps=reps):
                        ms, limit = rerun(args.portalab, args.space, [r], reps, tmp,
                                          limits)[r["variant"]] \
                            if args.portalab else (r["kernel_ms"], None)
                        ours_ms[id(r)].append(ms)
                        if limit:
                            limit_seen[id(r)] = max(limit_seen.get(id(r), 0), limit)

                    def peer_now(r=r, reps=reps):
                        numba.set_num_threads(min(r.get("threads") or 1,
                                                  numba.config.NUMBA_NUM_THREADS))
                        peer_ms[id(r)].append(median_ms(make_case(r, np, kernels), reps))

                    # Each row alone beside its own peer, portalab first in
                    # even rounds and second in odd ones: a bandwidth that
                    # drifts within the seconds of a round then favours
                    # neither side (one process for a case's variants put a
                    # row seconds from its peer, and a round's ratio drifted).
                    for step in (ours_now, peer_now) if k % 2 == 0 else (peer_now, ours_now):
                        step()

    missed = 0
    table = []
    by_key = {}
    for group in cases.values():
        for r in group:
            threads = r.get("threads") or 1
            ours = statistics.median(ours_ms[id(r)])
            peer = statistics.median(p[0] for p in peer_ms[id(r)])
            per_round = [p[0] / o for o, p in zip(ours_ms[id(r)], peer_ms[id(r)])]
            ratio = peer / ours if ours else 0.0
            ok = min(per_round) >= 0.95 and (rounds == 1 or ratio >= 1.0)
            missed += not ok
            # The limit's share at this window's time: same bytes, against the
            # highest limit the run and its reruns measured.
            pct = r.get("pct_of_limit")
            limit = (r.get("limit") or {}).get("value")
            if pct is not None and ours:
                pct = pct * r["kernel_ms"] / ours
                if limit and limit_seen.get(id(r), 0) > limit:
                    pct *= limit / limit_seen[id(r)]
            elems = r["n"] * r["n"] if r["experiment"] == "broadcast_add" else r["n"]
            beyond = elems * pr.dtype_bytes(r["dtype"]) >= 4 * cache
            over = pct is not None and pct > 1.05 and beyond
            missed += over
            gbps = (r.get("gbps") or 0) * r["kernel_ms"] / ours if ours else 0
            by_key[(r["experiment"], r["variant"], r["dtype"], r["n"])] = ours
            stats = r["stats"]["kernel"]
            spread = (stats["min_ms"], stats["max_ms"]) if not args.portalab else \
                (min(ours_ms[id(r)]), max(ours_ms[id(r)]))
            table.append((r["experiment"], r["variant"], r["dtype"], r["n"], threads, ours,
                          *spread, peer, min(p[1] for p in peer_ms[id(r)]),
                          max(p[2] for p in peer_ms[id(r)]), ratio, gbps, pct,
                          "PASS" if ok and not over else "FAIL",
                          "" if beyond else " (cache)",
                          " / ".join(f"{x:.2f}" for x in per_round)))

    if args.markdown:
        print("| experiment | variant | dtype | n | threads | portalab ms (min–max) | Numba ms (min–max) "
              "| Numba / portalab | per round | GB/s | % of limit | |")
        print("|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|")
        for t in table:
            print(f"| {t[0]} | {t[1]} | {t[2]} | {t[3]:g} | {t[4]} | {t[5]:.3f} ({t[6]:.3f}–{t[7]:.3f}) "
                  f"| {t[8]:.3f} ({t[9]:.3f}–{t[10]:.3f}) | {t[11]:.2f} | {t[16]} | {t[12] or 0:.1f} "
                  f"| {'' if t[13] is None else f'{100 * t[13]:.0f}%{t[15]}'} | {t[14]} |")
    else:
        print(f"{'experiment':14} {'variant':12} {'dtype':8} {'n':>11} {'thr':>3} {'ours ms':>9} "
              f"{'Numba ms':>9} {'ratio':>6} {'GB/s':>7} {'%lim':>5} {'per round':>{5 * rounds + 3 * (rounds - 1)}}")
        for t in table:
            pct = "" if t[13] is None else f"{100 * t[13]:.0f}%{t[15]}"
            print(f"{t[0]:14} {t[1]:12} {t[2]:8} {t[3]:>11g} {t[4]:>3} {t[5]:>9.3f} {t[8]:>9.3f} "
                  f"{t[11]:>6.2f} {t[12] or 0:>7.1f} {pct:>5} {t[16]} {t[14]}")
    print(f"rows: {len(table)}; Numba {numba.__version__}, NumPy {np.__version__}; "
          f"ratio = Numba's median / portalab's median kernel time (>= 0.95 to pass"
          + (f"; (cache): arrays under 4x the {cache / 1e6:.0f} MB last-level cache, not held "
             "to 105% of the limit" if cache else "")
          + (f"; {rounds} rounds, each row run again beside its peer, first and second in turn: "
             "every round >= 0.95, the median >= 1.0)" if rounds > 1 else ")"))

    for (e, v, dt, n), ours in sorted(by_key.items()):
        if v == "fused":
            unfused = by_key.get((e, "unfused", dt, n))
            if unfused is not None:
                ok = ours <= unfused
                missed += not ok
                print(f"{'PASS' if ok else 'FAIL'}  {e} {dt} n={n}: fused {ours:.3f} ms, "
                      f"unfused {unfused:.3f} ms")

    if args.stream:
        if not cal:
            print(f"FAIL  no calibration of {args.space} in {args.results}")
            missed += 1
        else:
            threads = max(r.get("threads") or 1 for r in rows) if rows else os.cpu_count()
            elements = max(cal["stream_bytes"] // 8, 1 << 25)
            stream = babelstream(args.stream, threads, elements)
            best = max(stream.get("copy", 0), stream.get("triad", 0))
            ours = cal["memory_gbps"]
            ok = ours >= 0.95 * best
            missed += not ok
            print(f"{'PASS' if ok else 'FAIL'}  calibrated {args.space} memory {ours:.1f} GB/s against "
                  f"BabelStream OpenMP (copy {stream['copy']:.1f}, triad {stream.get('triad', 0):.1f}, "
                  f"dot {stream.get('dot', 0):.1f} GB/s; {elements} doubles, {threads} threads): "
                  f"{ours / best:.2f}")
            if "read_gbps" in cal and "dot" in stream:
                print(f"INFO  calibrated {args.space} read {cal['read_gbps']:.1f} GB/s; "
                      f"BabelStream dot {stream['dot']:.1f} GB/s: {cal['read_gbps'] / stream['dot']:.2f}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
