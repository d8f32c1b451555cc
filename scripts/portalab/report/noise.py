"""Noise: UNSTEADY calibrated limits, THROTTLED rows, NOISY rows (their
budget of repetitions ran out before their median was steady) and rows
whose repetitions spread wider than their median."""
from portalab.report.blocks import count, num, section, size, table, text, warning
from portalab.report.rows import measured

# Wider spreads than this make a row's median doubtful: the repetitions from
# the fastest to the slowest span more than the median itself.
WIDE_SPREAD = 1.0


def unsteady_limits(runs):
    """Table rows of the calibrated limits each run found UNSTEADY."""
    out = []
    for path, doc, _ in runs:
        for s in (doc["provenance"].get("calibration") or {}).get("spaces", []):
            for u in s.get("unsteady", []):
                what = u.get("dtype") or (f"at {size(u['bytes'])} bytes" if u.get("bytes") else "")
                out.append([s["space"], f"{u['limit']} {what}".strip(),
                            f"{num(u['fastest'])} {u['unit']}", f"{num(u['slowest'])} {u['unit']}",
                            str(u["repetitions"]), path])
    return out


def wide_rows(rows):
    """Rows whose repetitions spread wider than their median."""
    return [r for r in rows if measured(r) and r["total_ms"] > 0
            and r.get("total_max_ms") is not None
            and r["total_max_ms"] - r["total_min_ms"] > WIDE_SPREAD * r["total_ms"]]


def noisy_rows(rows):
    """Rows whose repetitions stopped at their budget (max_reps or
    max_time_s) before their median's interval was within their noise
    target (portalab sets `noisy`; files before version 5 have none)."""
    return [r for r in rows if measured(r) and r.get("noisy") is True]


def percent(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def throttled_rows(rows):
    """Rows whose GPU clocks were held down (power cap, thermal, hardware
    slowdown) during their timed repetitions."""
    return [r for r in rows if measured(r) and isinstance(r.get("energy"), dict)
            and r["energy"].get("throttled")]


def noise_section(runs, rows):
    blocks = []
    throttled = throttled_rows(rows)
    if throttled:
        blocks.append(warning(f"{count(len(throttled), 'row')} THROTTLED: the GPU's clocks were "
                              f"held down (power cap, thermal, hardware slowdown) while they were "
                              f"timed: their times may not repeat."))
        blocks.append(table(["experiment", "variant", "space", "type", "n", "copies", "reasons"],
                            [[r["experiment"], r["variant"], r["space"], r["dtype"], size(r["n"]),
                              r["copies"], ", ".join(r["energy"].get("clock_event_reasons", []))]
                             for r in throttled], "THROTTLED rows"))
    noisy = noisy_rows(rows)
    if noisy:
        blocks.append(warning(f"{count(len(noisy), 'row')} NOISY: their budget of repetitions "
                              f"ran out before the 95% interval of their median was within "
                              f"their noise target; a comparison with them needs a larger "
                              f"difference to tell. Give them more time (max_time_s) or a "
                              f"quieter machine."))
        blocks.append(table(["experiment", "variant", "space", "type", "n", "copies", "reps",
                             "rel_ci95", "target", "stopped by"],
                            [[r["experiment"], r["variant"], r["space"], r["dtype"], size(r["n"]),
                              r["copies"], str(r.get("reps")), percent(r.get("rel_ci95")),
                              percent(r.get("noise_target")), str(r.get("stopped_by"))]
                             for r in noisy], "NOISY rows"))
    unsteady = unsteady_limits(runs)
    if unsteady:
        blocks.append(warning(f"{count(len(unsteady), 'calibrated limit')} UNSTEADY (the slowest "
                              f"repetition over 1.5 times the fastest, as a busy machine makes "
                              f"them): rows compared with them are not to be trusted."))
        blocks.append(table(["space", "limit", "fastest", "slowest", "repetitions", "run"],
                            unsteady, "UNSTEADY limits"))
    wide = wide_rows(rows)
    if wide:
        blocks.append(warning(f"{count(len(wide), 'row')} with repetitions spread wider than "
                              f"their median (slowest − fastest > median): their medians are "
                              f"doubtful; run them again with more repetitions, on a quiet "
                              f"machine."))
        blocks.append(table(["experiment", "variant", "space", "type", "n", "copies", "median ms",
                             "min ms", "max ms"],
                            [[r["experiment"], r["variant"], r["space"], r["dtype"], size(r["n"]),
                              r["copies"], num(r["total_ms"]), num(r["total_min_ms"]),
                              num(r["total_max_ms"])] for r in wide],
                            "Rows whose repetitions spread wider than their median"))
    if not blocks:
        blocks.append(text("No calibrated limit was unsteady, no row was throttled or noisy and "
                           "no row's repetitions spread wider than its median."))
    return section("noise", "Noise", *blocks)
