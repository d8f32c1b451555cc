"""Reading portalab's results.json files: shared by collect.py, plot.py and
compare.py so that the three agree on what a row and its key are. A run that
did not finish (killed, or out of disk) leaves its journal, results.jsonl,
beside the files; it is then read instead, as it holds every completed entry.

A row is one entry of a file's "results" list, flattened: the row's own
fields, the phase statistics as <phase>_<stat>_ms (total_min_ms, ...), and
the run it came from (host name, the device of the row's space, Slurm job,
deck, git commit, start time, file path).
"""
import json
import os
import sys

PHASES = ("h2d", "kernel", "d2h", "total")
STATS = ("min_ms", "max_ms", "std_ms")

# What one measurement is: the machine (host and the device the space ran on),
# then what ran. Two rows with the same key measured the same thing.
MACHINE_KEY = ("hostname", "device")
# Rows on several ranks (MPI) and rows of other parameters are other
# measurements; files older than either field read as one rank, no parameters.
ENTRY_KEY = ("space", "experiment", "variant", "dtype", "n", "copies", "parameters", "ranks")
KEY = MACHINE_KEY + ENTRY_KEY

RUN_FIELDS = ("job_id", "array_task_id", "deck", "git_commit", "started_at", "source")


class ResultsError(Exception):
    """A file that is not a portalab results.json, or no file at all."""


def find_results(paths):
    """The results.json files named by paths: files as given, folders searched
    recursively (a Slurm job's results/<job id>/ holds one per deck)."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, names in os.walk(p):
                dirs.sort()
                # A run killed before its first full file has its journal only.
                if "results.json" in names or JOURNAL in names:
                    found.append(os.path.join(root, "results.json"))
            if not found:
                raise ResultsError(f"{p}: no results.json below this folder")
            files += found
        elif os.path.isfile(p) or os.path.isfile(os.path.join(os.path.dirname(p), JOURNAL)):
            files.append(p)
        else:
            raise ResultsError(f"{p}: no such file or folder")
    return files


def flatten(row, run, devices):
    out = {k: v for k, v in row.items() if k != "stats"}
    out.setdefault("parameters", "")
    out.setdefault("ranks", 1)
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
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    try:
        head = json.loads(lines[0])
        prov = head["provenance"]
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise ResultsError(f"{path}: not a portalab journal ({e})") from e
    rows = []
    for line in lines[1:]:
        if not line:
            continue
        try:
            update = json.loads(line)
            first, new = update["first"], update["rows"]
        except (ValueError, KeyError, TypeError):
            break  # cut short: what came before stands
        rows[first:] = new
    counts = {c: sum(r.get("check") == c for r in rows)
              for c in ("PASS", "FAIL", "ERROR", "SKIPPED", "N/A")}
    summary = {"entries": len(rows), "failed": counts["FAIL"], "errors": counts["ERROR"],
               "skipped": counts["SKIPPED"], "not_applicable": counts["N/A"],
               "incomplete": "the run did not finish: rows read from its journal"}
    return {"provenance": prov, "summary": summary, "results": rows}


def read_document(path):
    """results.json as a run left it: while a journal lies beside it, the run
    did not finish (killed, or its files could not be written) and the
    journal holds every completed entry, results.json perhaps fewer."""
    journal = os.path.join(os.path.dirname(path), JOURNAL)
    if os.path.basename(path) == JOURNAL:
        return read_journal(path)
    if os.path.exists(journal):
        try:
            return read_journal(journal)
        except (OSError, ResultsError):
            pass  # a journal begun but empty: results.json, if any, stands
    with open(path) as f:
        return json.load(f)


def read_file(path):
    """The flattened rows of one results.json (or of its run's journal)."""
    try:
        doc = read_document(path)
        prov = doc["provenance"]
        rows = doc["results"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ResultsError(f"{path}: not a portalab results.json ({e})") from e
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


def load(paths):
    """Every row of every results.json under paths."""
    rows = []
    for f in find_results(paths):
        rows += read_file(f)
    return rows


def key_of(row, fields=KEY):
    return tuple(row[k] for k in fields)


def newest_per_key(rows):
    """One row per key: that of the most recent run."""
    newest = {}
    for r in rows:
        k = key_of(r)
        if k not in newest or r["started_at"] > newest[k]["started_at"]:
            newest[k] = r
    return list(newest.values())


def sort_key(row):
    # n numerically, the rest as text.
    return tuple(row[k] if k == "n" else str(row[k]) for k in KEY)


def dtype_bytes(dtype):
    """Bytes of an element of a portalab type name (float32, int64, ...)."""
    digits = "".join(c for c in dtype if c.isdigit())
    return int(digits) // 8 if digits else 8


def passed(row):
    return row.get("check") == "PASS"


MATPLOTLIB_NEEDED = ("needs matplotlib to draw: install it (Debian/Ubuntu: apt-get install "
                     "python3-matplotlib; pip: python3 -m pip install matplotlib) or load a "
                     "module that has it.")


def require_matplotlib():
    """matplotlib.pyplot, drawing without a display; without matplotlib, the
    one sentence MATPLOTLIB_NEEDED on stderr and exit status 2 (no traceback)."""
    try:
        import matplotlib
        matplotlib.use("Agg")  # batch nodes have no display
        import matplotlib.pyplot as plt
    except ImportError:
        fail(MATPLOTLIB_NEEDED)
    return plt


def fail(message):
    """Bad input: message on stderr, exit status 2 as portalab itself."""
    print(f"{os.path.basename(sys.argv[0])}: {message}", file=sys.stderr)
    sys.exit(2)
