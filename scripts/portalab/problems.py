"""Where the files portalab wrote break the schema, every problem named by
file and field: what validate.py prints and the tests of runs check."""

import io
import json
import os
import re

from portalab.cli import finite
from portalab.files import (NotAFile, ResultsError, no_json_constant, not_a_file, read_json, read_text,
                            walk)
from portalab.reading import JOURNAL, journal_lines
from portalab.schema import json_types, csv_columns, first_problem, schemas, validate
from portalab.upgrade import RENAMED_IN_VERSION_4, check_version, upgraded


# A number as JSON writes it (Python's int() and float() also take "nan",
# "inf", " 1", "1_000").
JSON_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")


JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _cell(text, types):
    """A CSV cell as the JSON value of a property of these types; text that
    is none of them stays text, for the schema to name."""
    if text == "" and ("null" in types or types == {"object"}):
        return None
    try:
        if "object" in types:
            return json.loads(text, parse_constant=no_json_constant, parse_float=finite)
        if "integer" in types and JSON_INTEGER.fullmatch(text):
            return int(text)
        if "number" in types and JSON_NUMBER.fullmatch(text):
            return finite(text)
    except (ValueError, RecursionError):
        pass
    if "boolean" in types:
        return {"true": True, "false": False}.get(text, text)
    return text


def csv_problems(path):
    """Where a results.csv breaks the schema: its header against
    csv_columns(), then each line read back into a row (cells as the
    schema's types, the limit and stats put together again) and validated."""
    import csv
    results = schemas()["results"]["$defs"]
    props = results["row"]["properties"]
    try:
        reader = csv.reader(io.StringIO(read_text(path, "results.csv"), newline=""))
        lines = [(reader.line_num, cells) for cells in reader if cells]
    except NotAFile:
        raise
    except (ResultsError, csv.Error) as e:
        return [str(e) if isinstance(e, ResultsError) else f"{path}:{reader.line_num}: not CSV ({e})"]
    # A file of version 3 or older names the row's speedup otherwise.
    header = [RENAMED_IN_VERSION_4["row"].get(h, h) for h in lines[0][1]] if lines else []
    expected = csv_columns()
    problems = []
    if sorted(header) != sorted(expected):
        problems.append(f"{path}: columns {sorted(set(header) - set(expected))[:10]} are not the "
                        f"schema's, and {sorted(set(expected) - set(header))[:10]} are missing")
        return problems
    phases = props["stats"]["properties"]
    for i, cells in lines[1:]:
        if len(cells) != len(header):
            problems.append(f"{path}:{i}: {len(cells)} cells, the header has {len(header)} columns")
            continue
        cells = dict(zip(header, cells))
        row = {k: _cell(v, json_types(props[k])) for k, v in cells.items() if k in props}
        limit = {k[len("limit_"):]: cells[k] for k in cells if k.startswith("limit_") and cells[k]}
        if "value" in limit:
            limit["value"] = _cell(limit["value"], {"number"})
        row["limit"] = limit or None
        row["stats"] = {p: {"median_ms": row[f"{p}_ms"],
                            **{s: _cell(cells[f"{p}_{s}"], {"number", "null"})
                               for s in results["phase"]["properties"] if s != "median_ms"}}
                        for p in phases}
        row["per_rank"] = []
        row["energy"] = None  # its columns are checked as $defs/energy_columns
        energy = {k: _cell(cells[k], json_types(v)) for k, v in results["energy_columns"]["properties"].items()}
        problems += [f"{path}:{i}: {e}" for e in validate(row, "results", "row")]
        problems += [f"{path}:{i}: {e}" for e in validate(energy, "results", "energy_columns")]
    return problems


def _json_problems(path, doc, kind, what):
    """Where one JSON document breaks schema/<kind>.schema.json: its version
    first (one problem naming it), then each field, "<path>: <field>: <what>"."""
    try:
        check_version(doc, path, what)
    except ResultsError as e:
        return [str(e)]
    if kind == "results":
        doc = upgraded(doc)
    problems = validate(doc, kind)
    # What jsonschema does not check: integers past 64 bits.
    beyond = None if problems else first_problem(doc, kind)
    return [f"{path}: {e}" for e in problems + [beyond] * bool(beyond)]


def journal_problems(path):
    """Where a journal (results.jsonl) breaks the schema: its first line (the
    version and the provenance), then every row of every update. A last line
    cut short by a kill is left out, as read_journal() leaves it."""
    try:
        head, updates = journal_lines(path)
    except NotAFile:
        raise
    except ResultsError as e:
        return [str(e)]
    problems = [f"{path}:1: {e}"
                for e in validate(head.get("provenance"), "results", "provenance", "provenance")]
    for i, update in updates:
        for j, row in enumerate(update["rows"]):
            problems += [f"{path}:{i}: {e}" for e in validate(row, "results", "row", f"rows/{j}",
                                                              head.get("schema_version"))]
    return problems


def file_problems(path):
    """Where one file portalab wrote breaks its schema, "<file>: <field>:
    <what>" each: results.json, its journal results.jsonl, results.csv, or
    any other .json holding "calibration" (a limits file); [] for a file of
    none of these kinds. Needs python3-jsonschema."""
    name = os.path.basename(path)
    if name == JOURNAL:
        return journal_problems(path)
    if name.endswith(".csv"):
        return csv_problems(path) if name == "results.csv" else []
    if not name.endswith(".json"):
        return []
    try:
        doc = read_json(path, "JSON file")
    except NotAFile:
        raise
    except ResultsError as e:
        # Not JSON as portalab writes it: a problem of a results file, or of
        # a calibration file when a laxer reading (NaN taken) finds one.
        try:
            lax = json.loads(read_text(path, "JSON file"))
        except (ResultsError, ValueError, RecursionError):
            lax = None
        calibration = isinstance(lax, dict) and "calibration" in lax
        return [str(e)] if name == "results.json" or calibration else []
    if name == "results.json":
        return _json_problems(path, doc, "results", "results file")
    if isinstance(doc, dict) and "calibration" in doc:
        return _json_problems(path, doc, "limits", "calibration file")
    return []


def written_files(paths, newer_than=None):
    """The files portalab writes (results.json, results.jsonl, results.csv,
    other .json) named by paths, folders searched; with newer_than (seconds
    since the epoch), those changed since then only."""
    found = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in walk(p):
                found += [os.path.join(root, n) for n in sorted(names)
                          if n in (JOURNAL, "results.csv") or n.endswith(".json")]
        elif os.path.lexists(p):
            try:
                what = not_a_file(os.stat(p).st_mode)
            except OSError as e:
                raise NotAFile(f"{p}: cannot read it ({e.strerror})") from e
            if what:
                raise NotAFile(f"{p}: {what}, not a file")
            found.append(p)
        else:
            raise NotAFile(f"{p}: no such file or folder")
    return [f for f in found if newer_than is None or os.lstat(f).st_mtime >= newer_than]


def have_jsonschema():
    try:
        import jsonschema  # noqa: F401
        return True
    except ImportError:
        return False


def check_files(*paths):
    """For the tests of runs: every file portalab wrote under paths validated
    against schema/ (where python3-jsonschema is installed); ResultsError
    listing every problem, each naming the file and the field."""
    if not have_jsonschema():
        return
    problems = [p for f in written_files(paths) for p in shown(file_problems(f))]
    if problems:
        raise ResultsError("files that break schema/*.schema.json:\n" + "\n".join(problems))


def shown(problems, most=10):
    """A file's first problems, and how many more (a field wrong in every row
    is one mistake, not hundreds)."""
    return problems[:most] + [f"... and {len(problems) - most} more"] * (len(problems) > most)
