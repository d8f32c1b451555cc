"""Energy: joules per repetition, power and clocks where the run measured
them, and the crossover in joules."""
from portalab import results as pr
from portalab.report.blocks import bullets, num, section, size, table, text
from portalab.report.rows import measured


def joules_pay(p, sizes):
    """A crossover in joules from the run's summary, in words."""
    if not p.get("measured"):
        return "not measured"
    if p.get("smallest_n") is None:
        return f"never (n from {sizes[0]:,} to {sizes[-1]:,})"
    return f"from n = {p['smallest_n']:,}" + ("" if p.get("holds_above") else
                                              ", but not at every larger size")


def energy_section(runs, rows):
    """Joules per repetition, power and clocks where the run measured them,
    and the crossover in joules from the run's own summary; None where no row
    has energy."""
    found = [r for r in rows if measured(r) and pr.own_energy(r)]
    if not found:
        return None
    blocks = [text("Energy of the timed repetitions, read outside their timing: a device "
                   "space's GPU (NVML), a host space's CPU packages (RAPL); docs/energy.md "
                   "says what is measured and how to read it.")]
    lines = []
    for _, doc, _ in runs:
        for c in doc.get("summary", {}).get("gpu_crossover", []):
            if c.get("energy_with_copies", {}).get("measured") or \
                    c.get("energy_without_copies", {}).get("measured"):
                sizes = c.get("energy_sizes") or [0]
                lines.append(f"{c['experiment']} {c['variant']} {c['dtype']} on {c['device']}: "
                             f"with copies {joules_pay(c['energy_with_copies'], sizes)}; "
                             f"without copies {joules_pay(c['energy_without_copies'], sizes)}")
    if lines:
        blocks.append(text("When the GPU takes fewer joules than the CPU (the smallest n):"))
        blocks.append(bullets(lines))
    rows_out = []
    for r in found:
        e, own = r["energy"], pr.own_energy(r)
        per_j = e.get("gflop_per_j") or e.get("gb_per_j")
        rows_out.append([r["experiment"], r["variant"], r["space"], r["dtype"], size(r["n"]),
                         r["copies"], "GPU" if "gpu" in e else "CPU",
                         num(own["joules_per_rep"]), num(own["kernel_joules_per_rep"]),
                         num(own["mean_power_w"]),
                         (num(per_j) + (" GFLOP/J" if e.get("gflop_per_j") else " GB/J"))
                         if per_j else "-",
                         num(e.get("sm_clock_mhz")), num(e.get("mem_clock_mhz")),
                         num(e.get("temperature_c")),
                         ", ".join(e.get("clock_event_reasons", [])) or "-"])
    blocks.append(table(["experiment", "variant", "space", "type", "n", "copies", "source",
                         "J/rep", "kernel J/rep", "W", "per joule", "SM MHz", "mem MHz", "°C",
                         "clock events"], rows_out,
                        "Energy per repetition (median), mean power, clocks and temperature"))
    return section("energy", "Energy", *blocks)
