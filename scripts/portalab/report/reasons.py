"""Seed 004's four reasons a GPU function is slow, each answered from the
run's rows."""
import statistics

from portalab.report.blocks import join, num, pct, section, size, table, text, times
from portalab.report.rows import by, device_spaces, groups, host_rows, ordered

# Below this many FLOPs per byte an experiment is bound by memory on any
# machine portalab has run on (the gemm ceilings sit at 5-60 FLOP/byte).
LOW_INTENSITY = 1.0


def contest(rows):
    """What to set against what: each GPU space against the best host space,
    or, without a GPU, the parallel host space against Serial (the same
    lesson on the host's cores). (label, fast space(s), reference spaces)."""
    gpus = device_spaces(rows)
    if gpus:
        hosts = ordered({r["space"] for r in host_rows(rows)})
        return [(g, [g], hosts) for g in gpus]
    parallel = [s for s in ("OpenMP", "Threads", "HPX") if by(rows, space=s)]
    if parallel and by(rows, space="Serial"):
        return [(p, [p], ["Serial"]) for p in parallel]
    return []


def speedups(found, space, phase):
    """{(experiment, variant, dtype): {n: speedup}} of space on one rank in
    phase ("total" or "kernel"), from the summary's speedup_over_host."""
    out = {}
    for s in found:
        if s["space"] == space and s["ranks"] == 1:
            byn = {at["n"]: at[phase] for at in s["sizes"] if at[phase] is not None}
            if byn:
                out[s["experiment"], s["variant"], s["dtype"]] = byn
    return out


def intensity(rows):
    """FLOPs per byte of each experiment (the most of its rows)."""
    out = {}
    for r in rows:
        if r.get("bytes") and r.get("flops") is not None:
            out[r["experiment"]] = max(out.get(r["experiment"], 0.0), r["flops"] / r["bytes"])
    return out


def reasons_section(rows, has_gpu, found):
    """found: the runs' summaries (pr.analysis)."""
    against = contest(rows)
    if not against:
        return section("reasons", "Four reasons a GPU function is slow (seed 004)", text(
            "This run has no GPU and no parallel host space beside Serial: nothing to set "
            "against anything."))
    blocks = []
    what = ("the GPU against the best host space" if has_gpu else
            "no GPU in this run: the parallel host space against Serial stands in for it "
            "(the same lessons on the host's cores)")
    blocks.append(text(f"Each reason answered from this run's rows: {what}."))
    for label, [fast], ref in against:
        others = join(ref) if len(ref) == 1 else f"the best of {join(ref)}"
        # 1. too small: the total with copies (a device's best of pageable and
        # pinned), at the smallest size against the largest
        su = speedups(found["speedup_over_host"], fast, "total")
        tab, lose_small, win_large = [], 0, 0
        for (exp, var, dt), byn in sorted(su.items()):
            small, large = min(byn), max(byn)
            if len(byn) < 2:
                continue
            lose_small += byn[small] < 1
            win_large += byn[large] > 1
            tab.append([exp, var, dt, size(small), times(byn[small]), size(large),
                        times(byn[large])])
        if tab:
            blocks.append(text(
                f"1. Input too small ({label}): over {len(tab)} series run at several sizes, "
                f"{label} is slower than {others} at the smallest size in {lose_small} and "
                f"faster at the largest in {win_large} (total times"
                f"{', copies included' if has_gpu else ''})."))
            blocks.append(table(["experiment", "variant", "type", "smallest n", "speedup",
                                 "largest n", "speedup"], tab,
                                f"{label} against {others}: speedup at the smallest and "
                                f"largest size"))
        else:
            blocks.append(text(f"1. Input too small ({label}): no series ran at several sizes "
                               f"in both: run a sweep (inputs/sweep.toml) to see it."))
        # 2. too little arithmetic: speedup of the kernel alone at the largest size
        ai = intensity(rows)
        kern = speedups(found["speedup_over_host"], fast, "kernel")
        low, high, tab = [], [], []
        for (exp, var, dt), byn in sorted(kern.items(),
                                          key=lambda kv: (ai.get(kv[0][0], 0), kv[0])):
            n = max(byn)
            if exp not in ai:
                continue
            (low if ai[exp] < LOW_INTENSITY else high).append(byn[n])
            tab.append([exp, var, dt, num(ai[exp]), size(n), times(byn[n])])

        def span(xs):
            return f"{times(min(xs))} to {times(max(xs))}" if xs else "nothing (none ran)"
        blocks.append(text(
            f"2. Too little arithmetic ({label}): below {LOW_INTENSITY:g} FLOP per byte, "
            f"{label}'s kernel alone gains {span(low)} over {others} at the largest size run; "
            f"above it, {span(high)}."))
        blocks.append(table(["experiment", "variant", "type", "FLOP/byte", "n", "kernel speedup"],
                            tab, "Arithmetic intensity against the kernel's speedup"))
        # 3. copies
        if has_gpu:
            dev = [r for r in rows if r["space"] == fast and r["copies"] != "none"
                   and r["check"] == "PASS" and r["total_ms"] > 0 and r["ranks"] == 1]
            shares = []
            for mine in groups(dev, "experiment", "variant", "dtype", "copies").values():
                r = max(mine, key=lambda r: r["n"])
                shares.append(((r["h2d_ms"] + r["d2h_ms"]) / r["total_ms"], r))
            if shares:
                shares.sort(key=lambda s: s[0])
                top = shares[-1][1]
                blocks.append(text(
                    f"3. Copies ({label}): at the largest size of each series, h2d and d2h take "
                    f"{pct(shares[0][0])} to {pct(shares[-1][0])} of the total (median "
                    f"{pct(statistics.median(s for s, _ in shares))}); the most in "
                    f"{top['experiment']} {top['variant']} {top['dtype']} with {top['copies']} "
                    f"memory at n = {size(top['n'])}."))
            else:
                blocks.append(text(f"3. Copies ({label}): no row of {label} ran with copies."))
        else:
            blocks.append(text("3. Copies: host spaces use the data where it is (the host mirror "
                               "is the data): nothing was copied in this run."))
        # 4. 64-bit types
        of_space = groups([d for d in found["float64_over_float32"]
                           if d["space"] in [fast, *ref]], "space")
        parts = []
        for space in ordered(of_space, [fast, *ref]):
            mine = of_space[space]
            n = max(d["n"] for d in mine)
            vals = [d["kernel_ratio"] for d in mine if d["n"] == n]
            parts.append(f"{times(statistics.median(vals))} on {space}")
        blocks.append(text(
            f"4. 64-bit types: float64's kernel takes {join(parts)} float32's time (median over "
            f"the experiments run in both types, at their largest size)." if parts else
            "4. 64-bit types: no experiment ran in both float32 and float64."))
    return section("reasons", "Four reasons a GPU function is slow (seed 004)", *blocks)
