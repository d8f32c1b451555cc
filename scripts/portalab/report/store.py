"""The results store's sections of scripts/report.py (`report.py --db FILE`):
the history (a small plot per tracked row, regressions first, with what
changed) and the fleet (a table of GPUs and nodes, outliers marked, against
their group's median and the reference figures). The figures come from
`portalab db history --json` and `portalab db fleet --json`: the verdicts
and outliers are the binary's, decided in one place (miniapp/store/)."""
import os

from portalab import results as pr
from portalab.binary import find_portalab, run
from portalab import text
from portalab.report import figures

MAX_PLOTS = 24   # tracked rows drawn; the table lists the rest
GPU_QUANTITIES = (("triad_gbps", "triad GB/s"), ("copy_deep_copy_gbps", "memcpy GB/s"),
                  ("h2d_pinned_gbps", "h2d pinned GB/s"), ("d2h_pinned_gbps", "d2h pinned GB/s"),
                  ("gemm_float64_gflops", "dgemm GFLOP/s"), ("launch_us", "launch µs"))


# The longest a `portalab db` command may take, and the most it may print.
QUERY_SECONDS = 600
QUERY_MAX_BYTES = 1 << 30


def answer_of(stdout, what):
    """(the JSON object `portalab db WHAT --json` printed, None), or (None,
    why not): a command that printed no such object failed, whatever its
    exit status."""
    if len(stdout) > QUERY_MAX_BYTES:
        return None, f"more than {QUERY_MAX_BYTES} bytes on stdout"
    if not stdout.strip():
        return None, None
    try:
        answer = pr.parse_json(stdout.decode("utf-8"), "stdout", "JSON answer")
    except UnicodeDecodeError as e:
        return None, f"stdout is not UTF-8 text (byte {e.start})"
    except pr.ResultsError as e:
        return None, str(e)
    if not isinstance(answer, dict):
        return None, f"stdout: not the JSON object of `portalab db {what} --json`"
    return answer, None


def query_store(db, portalab=None):
    """{"db", "history", "fleet"}: the store's answers as JSON. Exit 1 (a
    regression, an outlier) is an answer, as is exit 0; anything else (the
    binary's refusal, a crash, a signal) fails in one line naming the
    command, with the binary's own message, and its stdout is never read."""
    try:
        pr.sqlite_file(db, "a results store")
    except pr.ResultsError as e:
        pr.fail(f"--db {e}")
    binary = find_portalab(portalab)
    out = {"db": db}
    for what in ("history", "fleet"):
        command = f"{text.shown(binary)} db {what} --db {text.shown(db)} --json"
        status, stdout, said = run(binary, ["db", what, "--db", db, "--json"],
                                   timeout=QUERY_SECONDS)
        answer, problem = answer_of(stdout, what) if status in (0, 1) else (None, None)
        if answer is None:
            status = (f"killed by signal {-status}" if status < 0 else f"exit status {status}")
            pr.fail(f"{command} failed ({status})" + (f": {problem}" if problem else "")
                    + (f": {text.shown(said, 1000)}" if said else ""))
        out[what] = answer
    return out


def key_words(k):
    gpu = f" {k['gpu']}" if k.get("gpu") else ""
    return (f"{k['experiment']} {k['variant']} {k['dtype']} n = {k['n']:,} {k['space']} "
            f"{k['copies']} {k['library']} on {k['machine']}{gpu}")


def change_words(r):
    return "" if r.get("change") is None else f"{r['change']:+.1%} "


def changes_words(changes):
    if not changes:
        return "nothing recorded changed (the same build, library and clocks)"
    return "; ".join(f"{c['what']} {c['from']} → {c['to']}" for c in changes)


def history_section(rp, figs, h):
    rows = h["rows"]
    if not rows:
        return rp.section("store-history", "History (the results store)",
                          rp.text("The store holds no rows to follow."))
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    regressions = h["regressions"]
    blocks = [rp.text(
        f"{rp.count(len(rows), 'row')} followed over their last {h['last']} runs "
        f"({h['phase']} time): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + ".",
        "Each row's latest run against its earlier ones, as compare.py decides for two files: "
        "where both kept their repetitions, the Mann-Whitney U test after Holm's correction "
        "and a tolerance on the change of the median; otherwise the repetitions must not "
        "overlap, and the change must stand out of the run-to-run noise "
        f"({h['sigmas']:g} deviations of it, never below {h['noise']['floor']:.0%}).")]
    if regressions:
        blocks.append(rp.warning(f"{rp.count(len(regressions), 'regression')}, slower by more "
                                 f"than {h['threshold_pct']:g}% or broken:"))
        blocks.append(rp.bullets(
            f"{r['verdict']} {change_words(r)}{key_words(r['key'])}: {changes_words(r['changes'])}"
            for r in regressions))
    order = {"BROKEN": 0, "SLOWER": 1, "FASTER": 2}
    ranked = sorted(rows, key=lambda r: (not r.get("regression", False), order.get(r["verdict"], 3)))
    plt = figures.plt
    for r in ranked[:MAX_PLOTS]:
        runs = [x for x in r["runs"] if x["ms"] is not None]
        fig, ax = plt.subplots(figsize=(4.2, 1.8))
        xs = list(range(len(runs)))
        ax.plot(xs, [x["ms"] for x in runs], marker="o", markersize=3, color="#3465a4")
        if runs and runs[-1]["check"] == "PASS":
            ax.plot([xs[-1]], [runs[-1]["ms"]], marker="o", markersize=6,
                    color="#cc0000" if r.get("regression") else "#3465a4")
        if r.get("base") and r["base"]["ms"]:
            ax.axhline(r["base"]["ms"], linestyle="--", linewidth=0.8, color="#888888")
        ends = sorted({0, len(runs) - 1}) if runs else []
        ax.set_xticks(ends)
        ax.set_xticklabels([runs[i]["started_at"][:10] for i in ends])
        ax.set_ylabel("ms")
        fig.tight_layout()
        words = key_words(r["key"])
        verdict = r["verdict"] + (" REGRESSION" if r.get("regression") else "")
        table = rp.table(["run started", "ms", "check", "portalab"],
                         [[x["started_at"], rp.num(x["ms"]) if x["ms"] is not None else "-",
                           x["check"], x["portalab"][:12]] for x in r["runs"]])
        blocks.append(figs.block(fig, f"{words}: {h['phase']} time over {len(r['runs'])} runs, "
                                      f"latest {verdict}",
                                 f"{verdict}: {words} (the dashed line: the earlier runs' median)",
                                 table))
    if len(ranked) > MAX_PLOTS:
        blocks.append(rp.table(
            ["verdict", "row", "runs", "latest ms"],
            [[r["verdict"], key_words(r["key"]), len(r["runs"]),
              rp.num(r["runs"][-1]["ms"]) if r["runs"][-1]["ms"] is not None else "-"]
             for r in ranked[MAX_PLOTS:]],
            caption=f"The other {len(ranked) - MAX_PLOTS} rows, not drawn"))
    return rp.section("store-history", "History (the results store)", *blocks,
                      lead="Every row's runs over time, regressions first")


def figure_cell(rp, m, quantity):
    f = next((x for x in m["limits"] if x["quantity"] == quantity), None)
    if f is None:
        return "-"
    text = rp.num(f["value"])
    if "vs_median" in f:
        text += f" (×{f['vs_median']:.2f} median"
        text += f", ×{f['vs_reference']:.2f} ref)" if "vs_reference" in f else ")"
    return text


def fleet_section(rp, f):
    sel = f["selection"]
    which = f"job {sel['job']}" if "job" in sel else f"runs from {sel['since']} to {sel['until']}"
    blocks = [rp.text(
        f"{which}: {rp.count(sel['runs'], 'run')}, {rp.count(len(f['gpus']), 'GPU')} and "
        f"{rp.count(len(f['nodes']), 'node')}, each against the median of its model's group "
        f"(below it by more than {sel['tolerance_pct']:g}%: an outlier) and the reference figures "
        f"of its model ({os.path.basename(sel['references']) or 'none'}).")]
    if sel.get("rows_too_short"):
        blocks.append(rp.text(
            f"Rows set side by side: of each kind, the largest whose kernel takes "
            f"{sel['min_row_ms']:g} ms or more; {rp.count(len(sel['rows_too_short']), 'kind')} "
            f"left out, each shorter (its launch and clocks more than its GPU): "
            + ", ".join(sel["rows_too_short"][:8]) + ("…" if len(sel["rows_too_short"]) > 8 else "")
            + "."))
    outliers = [m for m in f["gpus"] + f["nodes"] if m["outlier"]]
    if outliers:
        blocks.append(rp.warning(f"{rp.count(len(outliers), 'outlier')}:"))
        blocks.append(rp.bullets(f"{m['id']} on {m['host']}: {'; '.join(m['reasons'])}"
                                 for m in outliers))
    if f["gpus"]:
        blocks.append(rp.table(
            ["", "GPU", "host", "model", "PCIe", *[name for _, name in GPU_QUANTITIES]],
            [["OUTLIER" if m["outlier"] else "", m["id"], m["host"], m["model"],
              f"x{m['facts']['pcie_width']:.0f}" if "pcie_width" in m["facts"] else "-",
              *[figure_cell(rp, m, q) for q, _ in GPU_QUANTITIES]] for m in f["gpus"]],
            caption="GPUs by UUID: calibrated limits (× the group's median, × the reference)",
            numeric=set()))
        rows = sorted({x["quantity"] for m in f["gpus"] for x in m["rows"]})
        if rows:
            blocks.append(rp.table(
                ["GPU", *rows],
                [[m["id"], *[next((f"{rp.num(x['value'])} {x['unit']} (×{x.get('vs_median', 1):.2f})"
                                   for x in m["rows"] if x["quantity"] == q), "-") for q in rows]]
                 for m in f["gpus"]],
                caption="Chosen rows of each GPU (× the group's median)", numeric=set()))
    if f["nodes"]:
        quantities = sorted({x["quantity"] for m in f["nodes"] for x in m["limits"]
                             if x["quantity"].endswith("triad_gbps") or x["quantity"].endswith("gflops")})
        blocks.append(rp.table(
            ["", "node", "CPU", *quantities],
            [["OUTLIER" if m["outlier"] else "", m["id"], m["model"],
              *[figure_cell(rp, m, q) for q in quantities]] for m in f["nodes"]],
            caption="Nodes: their host spaces' limits (× the group's median)", numeric=set()))
    return rp.section("store-fleet", "Fleet (the results store)", *blocks,
                      lead="Is every node and GPU as fast as its peers and its model?")


def sections(rp, figs, store):
    """The two sections, built with the report's parts (rp: portalab.report.blocks)."""
    return [history_section(rp, figs, store["history"]), fleet_section(rp, store["fleet"])]
