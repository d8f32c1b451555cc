#!/usr/bin/env python3
"""A picture of what ran when in an Nsight Systems profile of portalab: one
lane per CUDA stream (per process and report too: one report per MPI rank),
kernels and copies coloured by kind, portalab's NVTX ranges above them, and
each measured repetition shaded and numbered.

    timeline.py REPORT.sqlite [REPORT.sqlite...] --out timeline.png
        [--range REGEX [--occurrence N]] [--results results.json]

REPORT.sqlite is `nsys export --type sqlite` of the report (scripts/dev/profile.sh
writes it). --range draws only the time of the NVTX ranges whose name matches
(e.g. 'portalab/copy_overlap/Cuda$'), or of the N-th of them; by default the
span of the GPU work. --results names each measurement by its row's variant
and copy mode (as scripts/dev/nsys_check.py matches them). Several reports are
aligned on their sessions' start times. Needs matplotlib.
"""
import argparse
import os
import re
import sys

from portalab import nsys_sqlite as ns
from portalab import results as pr
from portalab import text

COLOURS = {
    "kernel": "#3b6fb6",  # portalab's kernels
    "library": "#8e5bb5",  # any other kernel: cuBLAS, cuSOLVER, Kokkos' own
    "h2d": "#3a9e4f",
    "d2h": "#d4612a",
    "copy": "#b8a23a",  # device to device, peer to peer
    "memset": "#8c8c8c",
    "graph": "#5fa8a0",  # a CUDA graph traced as a whole (nsys --cuda-graph-trace=graph)
}
RANGE_COLOURS = {"h2d": "#bfe3c6", "kernel": "#c6d8f0", "d2h": "#f5cdb8", "cold": "#e2e2e2",
                 "warmup": "#e2e2e2", "setup": "#efe6cc", "verify": "#efe6cc"}
LEGEND = [("kernel", "portalab kernel"), ("library", "other kernel"), ("h2d", "copy host→device"),
          ("d2h", "copy device→host"), ("copy", "other copy"), ("memset", "memset"),
          ("graph", "CUDA graph")]


def colour_key(a):
    if a.kind == "kernel":
        return "kernel" if "portalab" in a.name else "library"
    if a.kind == "memcpy":
        return a.copy if a.copy in ("h2d", "d2h") else "copy"
    return "graph" if a.kind == "graph" else "memset"


def load_reports(paths, results):
    """[(label, profile, shift_ns, measurements)] aligned on session starts."""
    reports = []
    for path in paths:
        p = ns.load(path)
        found = ns.measurements(p)
        if results is not None:
            ns.match_rows(found, results)
        reports.append([os.path.splitext(os.path.basename(path))[0], p, 0, found])
    starts = [r[1].session_start_utc_ns for r in reports]
    if len(reports) > 1 and all(s is not None for s in starts):
        for r, s in zip(reports, starts):
            r[2] = s - min(starts)
    return reports


def window(reports, pattern, occurrence):
    if pattern:
        rx = re.compile(pattern)
        hits = sorted((r.start + shift, r.end + shift) for _, p, shift, _ in reports
                      for r in p.ranges if rx.search(r.name))
        if not hits:
            raise ValueError(f"no NVTX range matches --range {pattern!r}")
        if occurrence:
            if occurrence > len(hits):
                raise ValueError(f"--occurrence {occurrence}: only {len(hits)} ranges match {pattern!r}")
            hits = [hits[occurrence - 1]]
        return min(h[0] for h in hits), max(h[1] for h in hits)
    spans = [(a.start + shift, a.end + shift) for _, p, shift, _ in reports for a in p.activities()]
    if not spans:
        raise ValueError("no kernels or copies in the report (profiled with -t cuda?)")
    return min(s for s, _ in spans), max(e for _, e in spans)


def draw(reports, t0, t1, out, title):
    import matplotlib
    matplotlib.use("Agg")  # batch nodes have no display
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    ms = lambda t: (t - t0) / 1e6  # noqa: E731
    several = len(reports) > 1

    # Rows, top to bottom: each thread's NVTX ranges by depth, then the lanes.
    range_rows, lanes = [], []
    for label, p, shift, _ in reports:
        prefix = f"{label} " if several else ""
        shown = [r for r in p.ranges if r.kind == ns.NVTX_PUSH_POP and r.name.startswith("portalab")
                 and r.end + shift > t0 and r.start + shift < t1]
        for tid in sorted({r.tid for r in shown}):
            mine = [r for r in shown if r.tid == tid]
            for depth in sorted({r.depth for r in mine}):
                range_rows.append((f"{prefix}NVTX {depth}", [r for r in mine if r.depth == depth], shift))
        acts = [a for a in p.activities() if a.end + shift > t0 and a.start + shift < t1]
        pids = sorted({a.pid for a in acts})
        for lane in sorted({a.lane for a in acts}):
            pid, device, stream = lane
            who = prefix + (f"pid {pid} " if len(pids) > 1 else "")
            lanes.append((f"{who}GPU {device} stream {stream}", [a for a in acts if a.lane == lane], shift))

    n_rows = len(range_rows) + len(lanes)
    width_in = 14
    fig, ax = plt.subplots(figsize=(width_in, 1.2 + 0.42 * max(n_rows, 3)))

    def fits(text, span_ms, points):
        """Whether text at that font size fits in span_ms of the axis (a
        character is about 0.6 of the font size wide; the axis ~85% of the
        figure)."""
        chars_in = len(text) * 0.6 * points / 72
        return span_ms / max(ms(t1), 1e-12) * 0.85 * width_in >= chars_in

    y_labels = []
    y = n_rows  # top row first
    for label, ranges, shift in range_rows:
        y -= 1
        y_labels.append((y, label))
        for r in ranges:
            s, e = max(ms(r.start + shift), ms(t0)), min(ms(r.end + shift), ms(t1))
            phase = r.name.rsplit("/", 1)[-1]
            ax.broken_barh([(s, e - s)], (y - 0.4, 0.8), facecolors=RANGE_COLOURS.get(phase, "#f0f0f0"),
                           edgecolors="#666666", linewidth=0.4)
            text = r.name.replace("portalab/", "", 1)
            if fits(text, e - s, 6):
                ax.text((s + e) / 2, y, text, ha="center", va="center", fontsize=6, clip_on=True)
    lanes_top = y
    for label, acts, shift in lanes:
        y -= 1
        y_labels.append((y, label))
        by_colour = {}
        for a in acts:
            by_colour.setdefault(colour_key(a), []).append((ms(a.start + shift), (a.end - a.start) / 1e6))
        for key, bars in by_colour.items():
            ax.broken_barh(bars, (y - 0.35, 0.7), facecolors=COLOURS[key], edgecolors="none")

    # The measured repetitions, shaded over the lanes and numbered, and each
    # measurement's name above its first repetition.
    for _, p, shift, found in reports:
        for m in found:
            if m.end + shift < t0 or m.start + shift > t1:
                continue
            for i, rep in enumerate(m.reps):
                s, e = ms(rep.start + shift), ms(rep.end + shift)
                ax.broken_barh([(s, e - s)], (-0.5, lanes_top), zorder=0, linewidth=0,
                               facecolors="#ffe680" if i % 2 == 0 else "#fff3b0", alpha=0.6)
                if fits(f"rep {i + 1}", e - s, 6):
                    ax.text(s, lanes_top - 0.5, f"rep {i + 1}", fontsize=6, va="bottom", ha="left",
                            color="#7a6000", clip_on=True)
            # The NVTX rows name the experiment and space: the variant is what they lack.
            name = f"{m.row['variant']} ({m.row['copies']})" if m.row else m.experiment
            if m.start + shift > t0:
                ax.axvline(ms(m.start + shift), color="#444444", linewidth=0.6, linestyle="--")
            s, e = max(ms(m.start + shift), ms(t0)), min(ms(m.end + shift), ms(t1))
            if fits(name, e - s, 7):
                ax.text(s, n_rows - 0.45, name, fontsize=7, va="bottom", ha="left",
                        fontweight="bold", clip_on=True)

    ax.set_yticks([yy for yy, _ in y_labels])
    ax.set_yticklabels([lab for _, lab in y_labels], fontsize=7)
    ax.set_ylim(-0.6, n_rows + 0.6)
    ax.set_xlim(0, ms(t1))
    ax.set_xlabel("time (ms) from the window's start")
    if lanes:
        ax.axhline(lanes_top - 0.5, color="#444444", linewidth=0.6)
    ax.grid(axis="x", linewidth=0.3, alpha=0.5)
    ax.set_title(title, fontsize=9)
    fig.legend(handles=[Patch(color=COLOURS[k], label=t) for k, t in LEGEND], loc="lower center",
               ncol=len(LEGEND), fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.5 / fig.get_figheight(), 1, 1))  # room for the legend
    data = pr.png(fig, 150)
    plt.close(fig)
    pr.save(out, data)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", help="nsys export --type sqlite of each report")
    ap.add_argument("--out", required=True, help="the PNG to write")
    ap.add_argument("--range", help="regular expression: draw the time of the NVTX ranges matching it")
    ap.add_argument("--occurrence", type=int, help="with --range: only the N-th match (from 1)")
    ap.add_argument("--results", help="the run's results.json: name measurements by variant")
    ap.add_argument("--title", help="the picture's title (default: the reports and the range)")
    a = ap.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("timeline.py: needs matplotlib, which this python3 lacks "
              "(apt-get install python3-matplotlib, or pip install matplotlib)", file=sys.stderr)
        return 1
    results = None
    if a.results:
        # The rows alone, as the profile named them (an Nsight check may hand a
        # partial file): no schema check here.
        results = pr.load_document(a.results)["results"]  # else one line and exit status 2
    try:
        if a.range:
            re.compile(a.range)
        reports = load_reports(a.reports, results)
        t0, t1 = window(reports, a.range, a.occurrence)
    except (ns.ExportError, OSError, ValueError, re.error) as e:
        pr.say(str(e))
        return 2
    title = a.title or (", ".join(os.path.basename(r) for r in a.reports)
                        + (f" — {a.range}" if a.range else "")
                        + (f" #{a.occurrence}" if a.occurrence else ""))
    pr.out_folder("--out's folder", os.path.dirname(os.path.abspath(a.out)))
    draw(reports, t0, t1, a.out, title)
    print(text.shown(a.out, text.PATH_MAX_BYTES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
