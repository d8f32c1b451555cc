"""The entries that did not pass, and runs incomplete or interrupted."""
from portalab.report.blocks import join, section, size, table, text, warning


def failures_section(runs, rows):
    blocks = []
    for path, doc, _ in runs:
        s = doc.get("summary", {})
        if s.get("incomplete"):
            blocks.append(warning(f"{path}: {s['incomplete']}."))
        if s.get("interrupted"):
            i = s["interrupted"]
            blocks.append(warning(f"{path}: interrupted by {i.get('signal')}: "
                                  f"{i.get('abandoned', 0)} entries abandoned, "
                                  f"{i.get('not_run', 0)} not run."))
    bad = [r for r in rows if r["check"] != "PASS"]
    counts = {}
    for r in bad:
        counts[r["check"]] = counts.get(r["check"], 0) + 1
    if bad:
        blocks.append((warning if any(r["check"] in ("FAIL", "ERROR") for r in bad) else text)(
            f"{len(bad)} of {len(rows)} entries did not pass: "
            + join(f"{v} {k}" for k, v in sorted(counts.items())) + "."))
        blocks.append(table(["check", "experiment", "variant", "space", "type", "n", "copies",
                             "reason"],
                            [[r["check"], r["experiment"], r["variant"], r["space"], r["dtype"],
                              size(r["n"]), r["copies"], r.get("note") or ""] for r in bad],
                            numeric=set()))
    else:
        blocks.append(text(f"Every one of the {len(rows)} entries passed its check."))
    return section("failures", "Entries that did not pass", *blocks)
