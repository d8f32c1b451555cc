"""The page: its model (the sections in order) built from the runs, and the
HTML written from it with report.html.j2."""
import datetime
import os

from portalab import plot
from portalab import results as pr
from portalab import roofline
from portalab import text as quoting
from portalab.report import blocks, figures, store as store_sections
from portalab.report.blocks import join, text
from portalab.report.figures import Figures
from portalab.report.rows import (device_spaces, experiments_in, groups, many_hosts, one_copy_mode,
                                  ordered)
from portalab.report.experiments import NO_SUMMARY, experiment_section
from portalab.report.comparison import compare_section
from portalab.report.energy import energy_section
from portalab.report.failures import failures_section
from portalab.report.glance import glance_section
from portalab.report.limits import limits_section
from portalab.report.noise import noise_section
from portalab.report.provenance import provenance_section
from portalab.report.ranks import ranks_section
from portalab.report.reasons import reasons_section
from portalab.report.streams import streams_section

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = "report.html.j2"


# ---- The page ------------------------------------------------------------------

def build(runs, base_paths=None, phase="total", threshold=10.0, store=None, portalab=None):
    """The page's model: title and sections. store: store_sections.query_store's
    answers, for its history and fleet sections (alone where runs is empty);
    portalab: the binary that judges against base_paths."""
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if not runs:
        return {"title": "portalab: the results store", "generated": generated,
                "sources": [store["db"]],
                "sections": store_sections.sections(blocks, Figures(), store)}
    plot.plt = roofline.plt = figures.plt
    every = pr.newest_per_key([r for _, _, rs in runs for r in rs])
    order = experiments_in([r for _, _, rs in runs for r in rs])
    rank = {e: i for i, e in enumerate(order)}
    every.sort(key=lambda r: (rank[r["experiment"]], pr.sort_key(r)))
    rows = one_copy_mode(every)
    figs = Figures()
    has_gpu = bool(device_spaces(rows))
    many = many_hosts(rows)
    found, missing = pr.analysis(runs)
    for why in missing:
        pr.say(why)
    # A run interrupted that still wrote its summary: named as the others.
    pr.tell_incomplete(run for run in runs if not pr.missing_analysis(run[0], run[1]))
    crossovers = sorted(found["gpu_crossover"],
                        key=lambda c: (rank.get(c["experiment"], len(rank)), c["variant"],
                                       c["dtype"], c["device"], c["hostname"]))
    sections = [glance_section(rows, crossovers, has_gpu, many, runs, missing),
                reasons_section(rows, has_gpu, found)]
    if missing:
        sections[1]["blocks"].insert(1, text(NO_SUMMARY))
    of_experiment, crossovers_of = groups(rows, "experiment"), groups(crossovers, "experiment")
    of_kind = {kind: groups(found[kind], "experiment")
               for kind in ("fusion", "float64_over_float32", "hockney")}
    for e in order:
        summary = None if missing else {k: of_kind[k].get(e, []) for k in of_kind}
        sections.append(experiment_section(figs, of_experiment.get(e, []), e,
                                           crossovers_of.get(e, []), has_gpu, many, summary))
    sections += [streams_section(figs, rows), ranks_section(figs, rows, plot, found),
                 limits_section(figs, runs, roofline), energy_section(runs, rows),
                 noise_section(runs, rows),
                 failures_section(runs, every)]
    if base_paths:
        sections.append(compare_section(base_paths, every, phase, threshold, portalab))
    if store:
        sections += store_sections.sections(blocks, figs, store)
    sections.append(provenance_section(runs))
    hosts = join(ordered({r["hostname"] for r in rows}))
    decks = join(ordered({os.path.basename(r["deck"] or "") for r in rows} - {""}))
    return {"title": f"portalab: {decks or 'results'} on {hosts}",
            "generated": generated,
            "sources": [p for p, _, _ in runs] + ([store["db"]] if store else []),
            "sections": [s for s in sections if s]}


def render(page):
    import jinja2
    import markupsafe  # jinja2's own dependency
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    # Names from the files are HTML-escaped by the template and their control
    # characters quoted here (\x1b), as every message shows them.
    return quoting.page_safe(env.get_template(TEMPLATE).render(page=page, Markup=markupsafe.Markup))
