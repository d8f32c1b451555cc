"""Reading portalab's results.json files: shared by collect.py, plot.py and
compare.py so that the three agree on what a row and its key are. A run that
did not finish (killed, or out of disk) leaves its journal, results.jsonl,
beside the files; it is then read instead, as it holds every completed entry.

A row is one entry of a file's "results" list, flattened: the row's own
fields, the phase statistics as <phase>_<stat>_ms (total_min_ms, ...), and
the run it came from (host name, the device of the row's space, Slurm job,
deck, git commit, start time, file path)."""

import os

from portalab import text
from portalab.cli import fail, say
from portalab.files import LIMITS_MAX_BYTES, ResultsError, parse_json, read_json, read_text, walk
from portalab.rows import PHASES, RUN_FIELDS, STATS
from portalab.schema import first_problem
from portalab.upgrade import check_version, upgraded


def read_limits(path):
    """A calibration file (`portalab calibrate --out FILE`), its version
    checked: {"schema_version", "provenance", "calibration"}."""
    doc = read_json(path, "portalab calibration file", LIMITS_MAX_BYTES)
    check_version(doc, path, "calibration file")
    if not isinstance(doc, dict) or "calibration" not in doc:
        raise ResultsError(f"{path}: not a portalab calibration file (no \"calibration\" in it)")
    problem = first_problem(doc, "limits")
    if problem:
        raise ResultsError(f"{path}: not a valid portalab calibration file ({problem})")
    return doc


def journal_lines(path):
    """A journal's head (its first line: version and provenance) and its
    updates, [(line number, update)]. A last line cut short by a kill is
    left out (what came before stands); any other line that is not an update
    {"first": n, "rows": [...]} carrying on from the rows before it is a
    ResultsError naming it: rows are never dropped without a word."""
    lines = read_text(path, "portalab journal", errors="replace").split("\n")
    head = parse_json(lines[0], f"{path}:1", "portalab journal")
    if not isinstance(head, dict) or not isinstance(head.get("provenance"), dict):
        raise ResultsError(f"{path}:1: not a portalab journal (no provenance on its first line)")
    check_version(head, path, "journal")
    body = [(i, line) for i, line in enumerate(lines[1:], start=2) if line]
    updates, count = [], 0
    for k, (i, line) in enumerate(body):
        try:
            update = parse_json(line, f"{path}:{i}", "journal line")
        except ResultsError:
            if i == len(lines):
                break  # the last line, with no end: cut short by a kill
            raise
        first = update.get("first") if isinstance(update, dict) else None
        if not isinstance(first, int) or isinstance(first, bool) \
                or not isinstance(update.get("rows"), list) or not 0 <= first <= count:
            raise ResultsError(f"{path}:{i}: not an update {{\"first\": 0 to {count}, "
                               f"\"rows\": [...]}} of the {count} rows before it")
        count = first + len(update["rows"])
        updates.append((i, update))
    return head, updates


def find_results(paths):
    """The results.json files named by paths: files as given, folders searched
    recursively (a Slurm job's results/<job id>/ holds one per deck)."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, names in walk(p):
                # A run killed before its first full file has its journal only.
                if "results.json" in names or JOURNAL in names:
                    found.append(os.path.join(root, "results.json"))
            if not found:
                raise ResultsError(f"{p}: no results.json below this folder")
            files += found
        elif os.path.lexists(p) or os.path.lexists(os.path.join(os.path.dirname(p), JOURNAL)):
            files.append(p)  # read_bytes() names what it is if not a file
        else:
            raise ResultsError(f"{p}: no such file or folder")
    return files


# Parameters of named choices that files before 2026-11-26 held as numbers
# (scaling 0): read as their names, so that old and new rows compare.
NAMED_CHOICES = {("dot_distributed", "scaling"): ("strong", "weak")}


def flatten(row, run, devices):
    out = {k: v for k, v in row.items() if k != "stats"}
    out["parameters"] = dict(out.get("parameters") or {})
    for name, value in out["parameters"].items():
        choices = NAMED_CHOICES.get((out.get("experiment"), name))
        if choices and isinstance(value, int) and 0 <= value < len(choices):
            out["parameters"][name] = choices[value]
    out.setdefault("ranks", 1)
    out.setdefault("path", None)  # version 2: not recorded, unknown
    for phase in PHASES:
        stats = row.get("stats", {}).get(phase, {})
        for s in STATS:
            out[f"{phase}_{s}"] = stats.get(s)
    out["hostname"] = run["hostname"]
    out["device"] = devices.get(row["space"], "")
    out.update({k: run[k] for k in RUN_FIELDS})
    return out


JOURNAL = "results.jsonl"


def read_journal(path):
    """The document a run's journal (results.jsonl) holds: its provenance and
    every row it recorded, each update's rows replacing those from its
    "first" on. A last line cut short by a kill is left out."""
    head, updates = journal_lines(path)
    prov = head["provenance"]
    rows = []
    for _, update in updates:
        rows[update["first"]:] = update["rows"]
    counts = {c: sum(isinstance(r, dict) and r.get("check") == c for r in rows)
              for c in ("PASS", "FAIL", "ERROR", "SKIPPED", "N/A")}
    summary = {"entries": len(rows), "failed": counts["FAIL"], "errors": counts["ERROR"],
               "skipped": counts["SKIPPED"], "not_applicable": counts["N/A"],
               "incomplete": "the run did not finish: rows read from its journal"}
    return upgraded({"schema_version": head["schema_version"], "provenance": prov,
                     "summary": summary, "results": rows})


def read_document(path):
    """results.json as a run left it: while a journal lies beside it, the run
    did not finish (killed, or its files could not be written) and the
    journal holds every completed entry, results.json perhaps fewer."""
    return _read_document(path)[0]


def _read_document(path):
    """(read_document(path), the file it was read from)."""
    journal = os.path.join(os.path.dirname(path), JOURNAL)
    if os.path.basename(path) == JOURNAL:
        return read_journal(path), path
    if os.path.lexists(journal):
        try:
            return read_journal(journal), journal
        except ResultsError:
            if not (os.path.isfile(journal) and os.path.getsize(journal) == 0
                    and os.path.lexists(path)):
                raise
            # a journal begun but empty: results.json stands
    return upgraded(check_version(read_json(path), path)), path


def load_document(path):
    """read_document, for a script: a file that cannot be read, or of
    another schema_version, stops it with one line (fail(): exit status 2).
    Its rows are not checked against the schema (read_run() checks them)."""
    try:
        return read_document(path)
    except ResultsError as e:
        fail(str(e))


def load_run(path):
    """The document of one run (read_run(): its journal if it did not
    finish, checked against the schema), for a script: a file that cannot
    be read or breaks the schema stops it with one line (fail()), and a run
    that did not finish is named on stderr (tell_incomplete())."""
    try:
        doc, _ = read_run(path)
    except ResultsError as e:
        fail(str(e))
    tell_incomplete([(path, doc)])
    return doc


def read_run(path, check=True):
    """(document, flattened rows) of one results.json (or of its run's
    journal), checked against the schema: the first field that breaks it is
    a ResultsError naming the file and the field. check=False: only the
    shape the rows need, for a script whose inputs need not be complete
    files (energy_check.py)."""
    doc, source = _read_document(path)  # a ResultsError (another version) as it is
    if not isinstance(doc, dict):
        raise ResultsError(f"{source}: not a portalab results.json (not a JSON object)")
    for key in ("provenance", "results"):
        if key not in doc:
            raise ResultsError(f"{source}: not a portalab results.json (no '{key}' in it)")
    problem = document_problem(doc) if check else None
    if problem:
        raise ResultsError(f"{source}: {problem}")
    try:
        return doc, rows_of(path, doc["provenance"], doc["results"])
    except KeyError as e:
        raise ResultsError(f"{source}: not a portalab results.json (no {e} in it)") from e
    except (ValueError, TypeError, AttributeError) as e:
        raise ResultsError(f"{source}: not a portalab results.json ({e})") from e


def document_problem(doc):
    """The first way a results document breaks its schema, as the scripts
    read it: a summary made from a journal is the scripts' own, left out."""
    rows = doc["results"]
    if isinstance(doc.get("summary"), dict) and "incomplete" in doc["summary"]:
        problem = first_problem(doc["provenance"], "results", "provenance", "provenance")
    else:
        problem = first_problem(dict(doc, results=[]))
    if problem or not isinstance(rows, list):
        return problem or "results: not a list of rows"
    return next(filter(None, (first_problem(r, "results", "row", f"results/{i}")
                              for i, r in enumerate(rows))), None)


def rows_of(path, prov, rows):
    slurm = prov.get("slurm", {})
    run = {
        "hostname": prov.get("host", {}).get("hostname", ""),
        "job_id": slurm.get("job_id", ""),
        "array_task_id": slurm.get("array_task_id", ""),
        "deck": prov.get("deck", {}).get("path", ""),
        "git_commit": prov.get("portalab", {}).get("git_commit", "")[:12],
        "started_at": prov.get("started_at", ""),
        "source": path,
    }
    devices = {d["space"]: d.get("name", "") for d in prov.get("devices", [])}
    return [flatten(r, run, devices) for r in rows]


def read_file(path):
    """The flattened rows of one results.json (or of its run's journal)."""
    return read_run(path)[1]


def load(paths):
    """Every row of every results.json under paths."""
    rows = []
    for f in find_results(paths):
        rows += read_file(f)
    return rows


def load_runs(paths):
    """(path, document, flattened rows) of every results.json under paths."""
    return [(f, *read_run(f)) for f in find_results(paths)]


def incomplete(path, doc):
    """A sentence naming path when its run did not finish (killed, out of
    disk: its rows those it completed) or was interrupted (entries
    abandoned or not run), else None: every script that reads a run says
    so, as report.py's page does."""
    summary = doc.get("summary") if isinstance(doc, dict) else None
    if not isinstance(summary, dict):
        return None
    if summary.get("incomplete"):
        return (f"{text.shown(path)}: the run did not finish ({text.shown(summary['incomplete'])}):"
                " only the entries it completed are read")
    stop = summary.get("interrupted")
    if isinstance(stop, dict):
        return (f"{text.shown(path)}: the run was interrupted by {text.shown(stop.get('signal'))}: "
                f"{text.shown(stop.get('abandoned', 0))} entries abandoned, "
                f"{text.shown(stop.get('not_run', 0))} not run")
    return None


def fail_without_rows(message, runs):
    """Refuse in one line (fail()): message, and why runs hold fewer rows
    than they should (incomplete()), said here rather than on a line before."""
    why = [w for w in (incomplete(path, doc) for path, doc, *_ in runs) if w]
    fail(message + (f" ({'; '.join(why)})" if why else ""))


def tell_incomplete(runs):
    """incomplete() of each (path, document, ...) of runs, on stderr (say())."""
    for path, doc, *_ in runs:
        why = incomplete(path, doc)
        if why:
            say(why)
