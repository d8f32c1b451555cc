"""portalab's user tools on its results files: the results reader (results),
the report page (report), compare, collect, plot, validate, timeline, roofline,
pct_of_limit, and the modules they share (nsys_sqlite; results, the one door
to the modules that read the files: cli, files, upgrade, schema, problems,
reading, rows, analysis). Each tool
runs as `python3 -m portalab.TOOL` with scripts/ on PYTHONPATH, or as
scripts/TOOL.py. The development and GPU-node checks are in scripts/dev/; no
module here imports them.
"""
