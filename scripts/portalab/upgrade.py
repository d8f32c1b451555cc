"""The versions of the files the scripts read, and an older file read under
the newest version's names, so that the scripts and the schema know one
name for each figure."""

import json

from portalab.files import ResultsError


# The newest version of the files this module reads
# (miniapp/results/schema_version.hpp), and the oldest: version 2 lacks the
# rows' path (read as None: unknown); versions 2 and 3 name the speedups
# otherwise (RENAMED_IN_VERSION_4, read under version 4's names). Files
# without schema_version are version 1, whose numbers were text.
SCHEMA_VERSION = 5


OLDEST_VERSION = 2


def check_version(doc, path, what="results file"):
    """doc, when its schema_version is one read here; else ResultsError in
    one line naming path and the version, older or newer."""
    if not isinstance(doc, dict) or (
            "schema_version" not in doc and not {"provenance", "results", "calibration"} & doc.keys()):
        return doc  # not portalab's at all: the caller names what it lacks
    version = doc.get("schema_version", 1)
    number = isinstance(version, int) and not isinstance(version, bool)
    if number and OLDEST_VERSION <= version <= SCHEMA_VERSION:
        return doc
    if number and version < OLDEST_VERSION:
        why = ("written before portalab numbered its formats, " if "schema_version" not in doc
               else "")
        advice = (f"{why}older than version {OLDEST_VERSION}, the oldest these scripts read: "
                  "run portalab again, or read it with the scripts of the portalab that wrote it")
    else:
        advice = (f"these scripts read versions {OLDEST_VERSION} to {SCHEMA_VERSION}: "
                  "read it with the scripts of the portalab that wrote it")
    raise ResultsError(f"{path}: a {what} of schema_version {json.dumps(version)}, {advice}")


# Fields of schema_version 2 that files written before they were added lack
# (energy, 2026-11-25): a reader takes such files; validate() names them.
ADDED_IN_VERSION_2 = {"energy", "energy_sizes", "energy_with_copies", "energy_without_copies"}


# Fields of schema_version 3, which version 2 files lack: unknown there
# (None); validate() takes a version 2 file without them.
ADDED_IN_VERSION_3 = {"path"}


# Names version 4 gave each speedup, by what it is against, and the names
# older files give them: a row's field, the summary's entry, a metric (of
# copy_overlap's pipelined rows).
RENAMED_IN_VERSION_4 = {
    "row": {"speedup": "speedup_over_baseline"},
    "summary": {"speedups": "speedup_over_host"},
    "metrics": {"speedup": "speedup_over_serial"},
}


def _renamed(obj, names):
    """obj (a dict) with its keys of older names under their new ones."""
    if not isinstance(obj, dict) or not names.keys() & obj.keys():
        return obj
    return {names.get(k, k): v for k, v in obj.items()}


def upgraded_row(row, version):
    """A row of a file of schema_version `version` under version 4's names."""
    if not isinstance(version, int) or version >= 4 or not isinstance(row, dict):
        return row
    row = _renamed(row, RENAMED_IN_VERSION_4["row"])
    if isinstance(row.get("metrics"), dict):
        row = dict(row, metrics=_renamed(row["metrics"], RENAMED_IN_VERSION_4["metrics"]))
    return row


def upgraded(doc):
    """A results document (or a journal's head) of an older schema_version
    under version 4's names, its schema_version kept: the scripts and the
    schema know one name for each figure."""
    version = doc.get("schema_version", 1) if isinstance(doc, dict) else None
    if not isinstance(version, int) or version >= 4:
        return doc
    doc = dict(doc)
    if isinstance(doc.get("summary"), dict):
        doc["summary"] = _renamed(doc["summary"], RENAMED_IN_VERSION_4["summary"])
    if isinstance(doc.get("results"), list):
        doc["results"] = [upgraded_row(r, version) for r in doc["results"]]
    return doc
