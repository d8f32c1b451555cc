"""The analysis a run's summary carries, computed once by portalab
(miniapp/results/analysis.cpp) at the end of a run: the scripts read it and
never compute it again."""

from portalab import text
from portalab.rows import hashable


# The analysis results.json's summary carries, computed once by portalab
# (miniapp/results/analysis.cpp) at the end of a run: the scripts read it and
# never compute it again. Each kind with the fields that name one entry.
ANALYSIS = {
    "gpu_crossover": ("experiment", "variant", "dtype", "device", "ranks"),
    "multi_rank_crossover": ("experiment", "variant", "space", "dtype", "copies", "ranks"),
    "float64_over_float32": ("experiment", "variant", "space", "copies", "n"),
    "speedup_over_host": ("experiment", "variant", "dtype", "space", "ranks"),
    "fusion": ("experiment", "space", "dtype", "ranks", "n"),
}


# Conclusions added to the summary later, read where a file has them and
# never asked of one that lacks them (a file of before is not "missing" its
# analysis for want of these), with the fields that name one entry.
LATER_ANALYSIS = {
    "hockney": ("experiment", "variant", "parameters", "space", "dtype", "ranks"),
}


# The ways a gpu_crossover counts the device's time against the best host
# space's total: its total with pageable copies, with pinned ones, the best
# of both, and its kernel alone (every row's kernel phase, whatever its copies).
CROSSOVER_MODES = {"pageable": "with_pageable_copies", "pinned": "with_pinned_copies",
                   "copies": "with_copies", "none": "without_copies"}


# The fields each kind's entries need beside their key: files of version 2
# lack some (the schema cannot require them of those), so a summary is read
# whole or not at all.
ANALYSIS_VALUES = {
    "gpu_crossover": ("sizes", *CROSSOVER_MODES.values()),
    "multi_rank_crossover": ("sizes", "pays"),
    "float64_over_float32": ("kernel_ratio",),
    "speedup_over_host": ("against", "sizes"),
    "fusion": ("unfused_over_fused",),
}


def missing_analysis(path, doc):
    """None where doc's summary holds the whole analysis; else why not, one
    sentence naming path and the portalab that wrote it."""
    summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    if all(isinstance(summary.get(kind), list)
           and all(isinstance(e, dict) and e.keys() >= {*fields, *ANALYSIS_VALUES[kind]}
                   for e in summary[kind])
           for kind, fields in ANALYSIS.items()):
        return None
    what = "crossovers, speedups and ratios"
    if summary.get("incomplete"):
        return (f"{text.shown(path)}: the run did not finish ({text.shown(summary['incomplete'])}): "
                f"portalab writes the summary of its {what} at the end of a run, so there are none "
                "to show")
    commit = ((doc.get("provenance") or {}).get("portalab") or {}).get("git_commit") or "unknown"
    return (f"{text.shown(path)}: written by portalab {text.shown(commit[:12])} (schema_version "
            f"{text.shown(doc.get('schema_version', 1))}), before results.json carried the whole summary "
            f"of a run's {what}: they are not shown; run the deck again with this portalab "
            f"to have them")


def analysis(runs):
    """({kind: entries} of ANALYSIS and LATER_ANALYSIS over runs,
    [missing_analysis sentences]).
    runs: (path, document, rows) as load_runs(). Each entry gets its run's
    hostname; an entry that several runs of one host hold is the newest run's."""
    newest = {kind: {} for kind in (*ANALYSIS, *LATER_ANALYSIS)}
    missing = []
    for path, doc, _ in runs:
        why = missing_analysis(path, doc)
        if why:
            missing.append(why)
            continue
        prov = doc["provenance"]
        host = (prov.get("host") or {}).get("hostname", "")
        started = prov.get("started_at", "")
        for kind, fields in (*ANALYSIS.items(), *LATER_ANALYSIS.items()):
            entries = doc["summary"].get(kind)
            for entry in entries if isinstance(entries, list) else []:
                if not isinstance(entry, dict):
                    continue
                key = (host, *(hashable(entry.get(f)) for f in fields))
                if key not in newest[kind] or started >= newest[kind][key][0]:
                    newest[kind][key] = (started, dict(entry, hostname=host))
    return {kind: [e for _, e in found.values()] for kind, found in newest.items()}, missing


def describe_pays(p, sizes):
    """A crossover's pays (gpu_crossover, multi_rank_crossover) in words,
    sizes the entry's: "pays from n = 1,000,000", "never pays (n from 1,000
    to 100,000,000)", "not measured"."""
    if not p["measured"]:
        return "not measured"
    if p["smallest_n"] is None:
        return f"never pays (n from {sizes[0]:,} to {sizes[-1]:,})" if sizes else "never pays"
    return f"pays from n = {p['smallest_n']:,}" + (
        "" if p["holds_above"] else ", but not at every larger size")
