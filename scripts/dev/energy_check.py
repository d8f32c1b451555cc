#!/usr/bin/env python3
"""Issue 30's GPU-node checks of portalab's energy figures against
nvidia-smi's power samples (scripts/dev/energy-check.sh runs the decks and the
sampler, then this). Each check prints PASS or FAIL; exit 1 if any failed or
had nothing to check, 2 if a file cannot be read.

    scripts/dev/energy_check.py --samples smi.csv --entries run/results.json \\
        [--long long/results.json] [--cost-on on/results.json ...] \\
        [--cost-off off/results.json ...] [--markdown energy-check.md]

(a) every Cuda row of --entries and --long with NVML energy: its joules (the
    counter's differences over its timed repetitions) against the integral of
    the sampled power over the row's window (energy.start_unix_s to
    end_unix_s), within --tolerance (10%);
(b) the gemm rows of --entries: their joules against the mean sampled power
    over the window times the repetitions' seconds, within --tolerance, and
    their GFLOP/J;
(c) the rows of --long (a deliberately long run): SM and memory clocks,
    temperature and clock-event reasons recorded; the row's median SM clock
    within --tolerance of nvidia-smi's median over the window; its window at
    least --long-min-s seconds;
(d) the cost of the queries: each row's kernel median with --energy on
    against off (the lowest median of the runs given on each side), within
    --cost-tolerance (3%); with energy on, the time per repetition the
    queries added outside the timing (the window over the repetitions, less
    their timed total).

The samples are `nvidia-smi --query-gpu=timestamp,uuid,power.draw.instant,
power.draw,clocks.sm,clocks.mem --format=csv,nounits -lms 20` run with TZ=UTC
(its timestamps are local time). uuid and power.draw.instant may be absent:
without uuid every sample is taken as the run's GPU; without
power.draw.instant (drivers before 530), power.draw, which on Ampere and
later is the mean over the last second: its samples are moved back by --lag
(0.5 s) to the middle of the second they average.
"""
import argparse
import bisect
import csv
import io
import datetime
import os
import statistics
import sys

# The user package (scripts/portalab/), one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from portalab import results as pr  # noqa: E402

AVERAGED_LAG_S = 0.5  # power.draw on Ampere+: the mean of the last second
MIN_SAMPLES = 5       # in a window, for an integral worth comparing


class Samples:
    """nvidia-smi's samples of one GPU: times (UNIX seconds, UTC) and, per
    time, power (W), SM and memory clocks (MHz)."""

    def __init__(self, t, power, sm, mem, column, lag):
        self.t, self.power, self.sm, self.mem = t, power, sm, mem
        self.column, self.lag = column, lag

    def __len__(self):
        return len(self.t)

    def covers(self, t0, t1):
        return bool(self.t) and self.t[0] <= t0 and self.t[-1] >= t1

    def count(self, t0, t1):
        return bisect.bisect_right(self.t, t1) - bisect.bisect_left(self.t, t0)

    def power_at(self, t):
        """Power at t, linear between the samples around it."""
        i = bisect.bisect_right(self.t, t)
        if i == 0:
            return self.power[0]
        if i == len(self.t):
            return self.power[-1]
        t0, t1 = self.t[i - 1], self.t[i]
        p0, p1 = self.power[i - 1], self.power[i]
        return p0 if t1 == t0 else p0 + (p1 - p0) * (t - t0) / (t1 - t0)

    def integral(self, t0, t1):
        """Joules from t0 to t1: the trapezoids between the samples, the
        power at the window's ends interpolated."""
        lo, hi = bisect.bisect_right(self.t, t0), bisect.bisect_left(self.t, t1)
        ts = [t0] + self.t[lo:hi] + [t1]
        ps = [self.power_at(t0)] + self.power[lo:hi] + [self.power_at(t1)]
        return sum(0.5 * (ps[k] + ps[k + 1]) * (ts[k + 1] - ts[k]) for k in range(len(ts) - 1))

    def within(self, values, t0, t1):
        lo, hi = bisect.bisect_left(self.t, t0), bisect.bisect_right(self.t, t1)
        return [v for v in values[lo:hi] if v is not None]


def number(text):
    """A CSV cell as a float; None for [N/A], [Not Supported] and the like."""
    try:
        return float(text)
    except ValueError:
        return None


def parse_time(text):
    """nvidia-smi's timestamp (2026/11/24 19:35:53.123), taken as UTC."""
    t = datetime.datetime.strptime(text.strip(), "%Y/%m/%d %H:%M:%S.%f")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def read_samples(path, uuid=None, lag=None):
    """The samples of the GPU with this uuid (all, where the file has no uuid
    column), in time order. lag: seconds to move them back; by default 0 for
    power.draw.instant, AVERAGED_LAG_S for power.draw."""
    text = pr.read_text(path, "nvidia-smi CSV", errors="replace")  # a FIFO is refused
    try:
        lines = [row for row in csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
                 if row]
    except csv.Error as e:
        raise pr.ResultsError(f"{path}: not CSV ({e})") from e
    if not lines:
        raise pr.ResultsError(f"{path}:1: empty: expected nvidia-smi's CSV header")
    # "power.draw [W]" without the unit; nounits leaves it in the header.
    # nvidia-smi heads the columns asked as clocks.sm and clocks.mem with
    # their long names (driver 580).
    long_names = {"clocks.current.sm": "clocks.sm", "clocks.current.memory": "clocks.mem"}
    names = [h.split(" [")[0].strip() for h in lines[0]]
    names = [long_names.get(n, n) for n in names]
    for need in ("timestamp", "clocks.sm", "clocks.mem"):
        if need not in names:
            raise pr.ResultsError(f"{path}:1: no {need} column in the header "
                                  f"(expected timestamp, power.draw, clocks.sm, clocks.mem)")
    at = {n: k for k, n in enumerate(names)}
    rows = []
    for line_no, cells in enumerate(lines[1:], start=2):
        if len(cells) != len(names):
            # The sampler killed mid-line: its last line may be cut short.
            if line_no == len(lines):
                continue
            raise pr.ResultsError(f"{path}:{line_no}: {len(cells)} fields, expected {len(names)}")
        if uuid and "uuid" in at and cells[at["uuid"]].strip() != uuid:
            continue
        try:
            t = parse_time(cells[at["timestamp"]])
        except ValueError as e:
            raise pr.ResultsError(f"{path}:{line_no}: timestamp '{cells[at['timestamp']]}': "
                                  f"expected YYYY/MM/DD HH:MM:SS.mmm") from e
        rows.append((t, {n: number(cells[k]) for n, k in at.items() if n != "timestamp"}))
    instant = any(v.get("power.draw.instant") is not None for _, v in rows)
    column = "power.draw.instant" if instant else "power.draw"
    if column not in at:
        raise pr.ResultsError(f"{path}:1: no power.draw column in the header")
    if lag is None:
        lag = 0.0 if instant else AVERAGED_LAG_S
    rows = sorted((t - lag, v) for t, v in rows if v.get(column) is not None)
    return Samples([t for t, _ in rows], [v[column] for _, v in rows],
                   [v["clocks.sm"] for _, v in rows], [v["clocks.mem"] for _, v in rows],
                   column, lag)


def run_uuid(doc):
    """The UUID of the GPU rank 0 ran on, where the provenance has it."""
    for place in doc["provenance"].get("ranks") or []:
        device = place.get("device") or {}
        if device.get("uuid"):
            return device["uuid"]
    for device in doc["provenance"].get("devices") or []:
        if device.get("uuid"):
            return device["uuid"]
    return None


def gpu_name(doc):
    gpu = (doc["provenance"].get("energy") or {}).get("gpu") or {}
    if gpu.get("name"):
        return gpu["name"]
    return next((d.get("name") for d in doc["provenance"].get("devices") or []
                 if d.get("space") not in pr.HOST_SPACES), None)


def label(r):
    return f"{r['experiment']} {r['variant']} {r['dtype']} n={r['n']} copies={r['copies']}"


def gpu_energy(r):
    """The row's GPU figures where NVML measured them, else None."""
    e = r.get("energy")
    if not isinstance(e, dict) or not isinstance(e.get("gpu"), dict):
        return None
    return e["gpu"] if e["gpu"].get("joules") is not None else None


def ratio_verdict(measured, reference, tolerance):
    if not reference:
        return None, "FAIL"
    ratio = measured / reference
    return ratio, "PASS" if abs(ratio - 1) <= tolerance else "FAIL"


class Checks:
    """The checks' results: rows of each table, and whether any failed."""

    def __init__(self):
        self.tables = []  # (title, header, rows)
        self.failed = 0
        self.notes = []

    def table(self, title, header):
        rows = []
        self.tables.append((title, header, rows))
        return rows

    def verdict(self, rows, cells, verdict, why=""):
        self.failed += verdict != "PASS"
        rows.append(cells + [verdict + (f": {why}" if why else "")])
        print(f"{verdict:5} {' | '.join(str(c) for c in cells)}{f' ({why})' if why else ''}")

    def nothing(self, rows, what, width):
        """A check asked for that found nothing to check: a failure."""
        self.verdict(rows, [what] + ["-"] * (width - 2), "FAIL", "nothing to check")

    def markdown(self, header_lines):
        out = list(header_lines)
        for title, header, rows in self.tables:
            out += ["", f"**{title}**", "", "| " + " | ".join(header) + " |",
                    "|" + "|".join("---" for _ in header) + "|"]
            out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        out += [""] + self.notes
        return "\n".join(out) + "\n"


def fmt(v, digits=4):
    return "-" if v is None else f"{v:.{digits}g}"


def cuda_rows(rows):
    return [r for r in rows if r["space"] not in pr.HOST_SPACES and r.get("check") == "PASS"]


def check_integral(checks, rows, samples, tolerance, title):
    out = checks.table(title, ["entry", "window s", "samples", "NVML J", "nvidia-smi J",
                               "ratio", "result"])
    for r in cuda_rows(rows):
        g, e = gpu_energy(r), r.get("energy") or {}
        if g is None:
            why = ((e.get("gpu") or {}).get("not_available") or "no energy in the row")
            checks.verdict(out, [label(r), "-", "-", "-", "-", "-"], "FAIL", why)
            continue
        t0, t1 = e["start_unix_s"], e["end_unix_s"]
        n = samples.count(t0, t1)
        cells = [label(r), f"{t1 - t0:.2f}", n, fmt(g["joules"])]
        if not samples.covers(t0, t1) or n < MIN_SAMPLES:
            checks.verdict(out, cells + ["-", "-"], "FAIL",
                           f"{n} samples in the window: the sampler did not cover it")
            continue
        smi = samples.integral(t0, t1)
        ratio, verdict = ratio_verdict(g["joules"], smi, tolerance)
        checks.verdict(out, cells + [fmt(smi), fmt(ratio, 3)], verdict)
    if not out:
        checks.nothing(out, "no Cuda row that passed", 7)


def check_power_time(checks, rows, samples, tolerance):
    out = checks.table("(b) gemm: NVML joules against nvidia-smi's mean power × time",
                       ["entry", "NVML J", "mean W", "s", "W × s", "ratio", "GFLOP/J", "result"])
    for r in cuda_rows(rows):
        if r["experiment"] != "gemm":
            continue
        g, e = gpu_energy(r), r.get("energy") or {}
        if g is None:
            checks.verdict(out, [label(r)] + ["-"] * 6, "FAIL", "no GPU energy in the row")
            continue
        power = samples.within(samples.power, e["start_unix_s"], e["end_unix_s"])
        if len(power) < MIN_SAMPLES:
            checks.verdict(out, [label(r), fmt(g["joules"])] + ["-"] * 5, "FAIL",
                           f"{len(power)} samples in the window")
            continue
        mean = statistics.fmean(power)
        ratio, verdict = ratio_verdict(g["joules"], mean * g["seconds"], tolerance)
        checks.verdict(out, [label(r), fmt(g["joules"]), fmt(mean), fmt(g["seconds"]),
                             fmt(mean * g["seconds"]), fmt(ratio, 3), fmt(e.get("gflop_per_j"))],
                       verdict)
    if not out:
        checks.nothing(out, "no gemm row", 8)


def check_clocks(checks, rows, samples, tolerance, min_s):
    out = checks.table("(c) a long run: the clocks it ran at",
                       ["entry", "window s", "SM MHz (row)", "SM MHz nvidia-smi min/median/max",
                        "mem MHz (row)", "°C", "clock events", "THROTTLED", "result"])
    for r in cuda_rows(rows):
        e = r.get("energy") or {}
        t0, t1 = e.get("start_unix_s"), e.get("end_unix_s")
        if t0 is None or t1 is None:
            checks.verdict(out, [label(r)] + ["-"] * 7, "FAIL", "no energy in the row")
            continue
        sm = samples.within(samples.sm, t0, t1)
        reasons = e.get("clock_event_reasons")
        cells = [label(r), f"{t1 - t0:.1f}", fmt(e.get("sm_clock_mhz")),
                 "/".join(fmt(v) for v in (min(sm), statistics.median(sm), max(sm))) if sm else "-",
                 fmt(e.get("mem_clock_mhz")), fmt(e.get("temperature_c")),
                 ", ".join(reasons) if reasons else ("none" if reasons == [] else "-"),
                 "yes" if e.get("throttled") else "no"]
        missing = [k for k in ("sm_clock_mhz", "mem_clock_mhz", "temperature_c",
                               "clock_event_reasons") if e.get(k) is None]
        if missing:
            checks.verdict(out, cells, "FAIL", f"not recorded: {', '.join(missing)}")
        elif t1 - t0 < min_s:
            checks.verdict(out, cells, "FAIL", f"the run lasted {t1 - t0:.1f} s, not {min_s:g}")
        elif len(sm) < MIN_SAMPLES:
            checks.verdict(out, cells, "FAIL", f"{len(sm)} clock samples in the window")
        else:
            ratio, verdict = ratio_verdict(e["sm_clock_mhz"], statistics.median(sm), tolerance)
            checks.verdict(out, cells, verdict,
                           "" if verdict == "PASS" else f"SM clock {ratio:.3f} of nvidia-smi's")
    if not out:
        checks.nothing(out, "no Cuda row that passed", 9)


def check_cost(checks, on_runs, off_runs, tolerance):
    out = checks.table("(d) the cost of the queries: kernel medians with --energy on and off",
                       ["entry", "reps", "off ms", "on ms", "on / off", "added per rep, outside the timing",
                        "result"])
    key = ("experiment", "variant", "space", "dtype", "n", "copies")

    def best(runs):
        found = {}
        for rows in runs:
            for r in cuda_rows(rows):
                k = tuple(r[f] for f in key)
                if k not in found or r["kernel_ms"] < found[k]["kernel_ms"]:
                    found[k] = r
        return found

    on, off = best(on_runs), best(off_runs)
    for k, r_off in off.items():
        r_on = on.get(k)
        if r_on is None:
            checks.verdict(out, [label(r_off), r_off["reps"], fmt(r_off["kernel_ms"]), "-", "-", "-"],
                           "FAIL", "not in the --energy on run")
            continue
        e = r_on.get("energy") or {}
        added = "-"
        if e.get("end_unix_s") is not None and r_on["reps"]:
            per_rep_ms = 1e3 * (e["end_unix_s"] - e["start_unix_s"]) / r_on["reps"]
            added = f"{1e3 * (per_rep_ms - r_on['total_ms']):.1f} µs"
        ratio, verdict = ratio_verdict(r_on["kernel_ms"], r_off["kernel_ms"], tolerance)
        checks.verdict(out, [label(r_off), r_on["reps"], fmt(r_off["kernel_ms"]),
                             fmt(r_on["kernel_ms"]), fmt(ratio, 4), added], verdict)
    if not out:
        checks.nothing(out, "no Cuda row in the --energy off runs", 7)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", required=True, help="nvidia-smi's CSV (see above)")
    ap.add_argument("--entries", required=True, help="results.json of the checked entries: (a), (b)")
    ap.add_argument("--long", help="results.json of the long run: (a), (c)")
    ap.add_argument("--cost-on", nargs="*", default=[], help="results.json of --energy on runs: (d)")
    ap.add_argument("--cost-off", nargs="*", default=[], help="results.json of --energy off runs: (d)")
    ap.add_argument("--markdown", help="write the tables here, for docs/performance.md")
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--cost-tolerance", type=float, default=0.03)
    ap.add_argument("--long-min-s", type=float, default=20.0,
                    help="the shortest window the long run may have (default 20 s)")
    ap.add_argument("--lag", type=float, help="seconds the power samples lag the power "
                    "(default: 0 for power.draw.instant, 0.5 for power.draw)")
    args = ap.parse_args(argv)
    if bool(args.cost_on) != bool(args.cost_off):
        pr.fail("--cost-on and --cost-off go together")
    try:
        entries_doc, entries = pr.read_run(args.entries, check=False)
        long_doc, long_rows = pr.read_run(args.long, check=False) if args.long else (None, [])
        cost_on = [pr.read_run(p, check=False)[1] for p in args.cost_on]
        cost_off = [pr.read_run(p, check=False)[1] for p in args.cost_off]
        samples = read_samples(args.samples, run_uuid(entries_doc), args.lag)
    except pr.ResultsError as e:
        pr.fail(str(e))
    if not len(samples):
        pr.fail(f"{args.samples}: no power sample of the run's GPU ({run_uuid(entries_doc)})")

    name = gpu_name(entries_doc) or "unknown GPU"
    driver = next((d.get("cuda_driver") for d in entries_doc["provenance"].get("devices") or []
                   if d.get("cuda_driver")), None)
    print(f"energy check on {name}: {len(samples)} samples of {samples.column}"
          f"{f', moved back {samples.lag:g} s' if samples.lag else ''}")
    checks = Checks()
    check_integral(checks, entries, samples, args.tolerance,
                   "(a) each entry's NVML joules against the integral of nvidia-smi's power")
    check_power_time(checks, entries, samples, args.tolerance)
    if args.long:
        check_integral(checks, long_rows, samples, args.tolerance,
                       "(a) the long run's NVML joules against the integral of nvidia-smi's power")
        check_clocks(checks, long_rows, samples, args.tolerance, args.long_min_s)
    if args.cost_on:
        check_cost(checks, cost_on, cost_off, args.cost_tolerance)
    summary = (f"{'FAIL' if checks.failed else 'PASS'}: {checks.failed} of "
               f"{sum(len(rows) for _, _, rows in checks.tables)} checks failed")
    print(summary)
    if args.markdown:
        header = [f"Energy check (scripts/dev/energy-check.sh) on {name}"
                  f"{f', CUDA driver {driver}' if driver else ''}, "
                  f"{datetime.date.today().isoformat()}: {summary}. Power from nvidia-smi's "
                  f"{samples.column} every 20 ms{f' (moved back {samples.lag:g} s)' if samples.lag else ''}; "
                  f"tolerance {100 * args.tolerance:g}% ({100 * args.cost_tolerance:g}% for the cost)."]
        pr.save(args.markdown, checks.markdown(header))
        print(f"markdown: {args.markdown}")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
