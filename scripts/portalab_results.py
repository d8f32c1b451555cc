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


def read_run(path):
    """(document, flattened rows) of one results.json (or of its run's journal)."""
    try:
        doc = read_document(path)
        prov = doc["provenance"]
        rows = doc["results"]
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise TypeError("its results are not a list of rows")
        return doc, rows_of(path, prov, rows)
    except KeyError as e:
        raise ResultsError(f"{path}: not a portalab results.json (no {e} in it)") from e
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise ResultsError(f"{path}: not a portalab results.json ({e})") from e


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


# Kokkos' execution spaces that run on the host, in host memory: their copies
# are no copies (copies_alias), and they are what a device is compared with.
HOST_SPACES = ("Serial", "OpenMP", "Threads", "HPX")


def own_energy(row):
    """The row's own energy figures (its GPU's for a device space, else its
    CPU's) where they were measured; else None."""
    e = row.get("energy")
    if not isinstance(e, dict):
        return None
    own = e.get("gpu") if "gpu" in e else e.get("cpu")
    if not isinstance(own, dict) or own.get("joules") is None or not own.get("reps"):
        return None
    return own


def joules_per_rep(row):
    """Joules per repetition over all of them (as the binary's crossover
    counts them: a coarse counter moves in a few), or None."""
    own = own_energy(row)
    return own["joules"] / own["reps"] if own else None


def is_host_space(space):
    return space in HOST_SPACES


def pays(host, device):
    """Where a device beats the host, as portalab's summary decides it
    (miniapp/results/analysis.cpp): host and device map n to the best time there; over
    the sizes both ran, the smallest n at which the device is faster, and
    whether it stays faster at every larger size."""
    sizes = sorted(n for n in host if n in device)
    faster = [device[n] < host[n] for n in sizes]
    first = faster.index(True) if True in faster else None
    return {"measured": bool(sizes), "sizes": sizes,
            "smallest_n": sizes[first] if first is not None else None,
            "holds_above": first is not None and all(faster[first:])}


def _keep_best(best, n, ms):
    if ms and ms > 0:
        best[n] = min(best.get(n, ms), ms)


# The ways a device's time is counted against the host's total: its total
# with pageable copies, with pinned ones, the best of both ("copies", the
# summary's with_copies), and its kernel alone ("none", the summary's
# without_copies: the kernel phase of every row, whatever its copies).
CROSSOVER_MODES = ("pageable", "pinned", "copies", "none")


def gpu_crossovers(rows):
    """Per machine, experiment, variant, type, rank count and device space:
    pays() for each of CROSSOVER_MODES against the best host space's total.
    Rows whose check passed only. The summary's gpu_crossover holds the
    "copies" and "none" of one run; this adds the copy modes apart, and
    serves runs that have no summary (a journal)."""
    host, device = {}, {}
    for r in rows:
        if not passed(r):
            continue
        key = (r["hostname"], r["experiment"], r["variant"], r["dtype"], r.get("ranks", 1))
        if is_host_space(r["space"]):
            _keep_best(host.setdefault(key, {}), r["n"], r["total_ms"])
            continue
        modes = device.setdefault((key, r["space"]), {m: {} for m in CROSSOVER_MODES})
        if r["copies"] != "none":
            _keep_best(modes[r["copies"]], r["n"], r["total_ms"])
            _keep_best(modes["copies"], r["n"], r["total_ms"])
        _keep_best(modes["none"], r["n"], r["kernel_ms"])
    out = []
    for (key, space), modes in device.items():
        if key not in host:
            continue  # no host space to compare with
        hostname, experiment, variant, dtype, ranks = key
        out.append({"hostname": hostname, "experiment": experiment, "variant": variant,
                    "dtype": dtype, "ranks": ranks, "device": space,
                    **{m: pays(host[key], modes[m]) for m in CROSSOVER_MODES}})
    return out


def describe_pays(p):
    """pays() in words: "pays from n = 1,000,000", "never pays (n from 1,000
    to 100,000,000)", "not measured"."""
    if not p["measured"]:
        return "not measured"
    if p["smallest_n"] is None:
        return f"never pays (n from {p['sizes'][0]:,} to {p['sizes'][-1]:,})"
    return f"pays from n = {p['smallest_n']:,}" + (
        "" if p["holds_above"] else ", but not at every larger size")


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
