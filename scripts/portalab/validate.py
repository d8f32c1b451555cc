#!/usr/bin/env python3
"""Checks the files portalab writes against their JSON Schemas in schema/
(docs/results-schema.md): results.json, its journal results.jsonl,
results.csv, and calibration (limits) files, in the folders or files named.
Each problem is one line naming the file and the field; a file of another
schema_version is one line naming its version.

    validate.py results/ limits.json
    validate.py --newer-than STAMP build/tests    # files changed since STAMP

Numbers JSON does not allow (NaN, Infinity, beyond a double's range), times
below zero and measured rows of no repetition are problems like any field.

Exit status: 0 every file valid, 1 a file is not, 2 a path that is not there
or not a file (a folder where a file is named, a FIFO, a device, unreadable),
77 python3-jsonschema missing (nothing checked).
"""
import argparse
import os
import sys

from portalab import results as pr
from portalab import text

NOT_CHECKED = 77


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="files, or folders to search")
    ap.add_argument("--newer-than", metavar="FILE",
                    help="only the files changed since FILE was (a stamp the tests touch)")
    args = ap.parse_args(argv)
    if not pr.have_jsonschema():
        print(f"{os.path.basename(sys.argv[0])}: needs python3-jsonschema (Debian/Ubuntu: apt-get "
              "install python3-jsonschema; pip: python3 -m pip install jsonschema): nothing checked",
              file=sys.stderr)
        sys.exit(NOT_CHECKED)
    try:
        since = os.path.getmtime(args.newer_than) if args.newer_than else None
        files = pr.written_files(args.paths, since)
    except (OSError, pr.ResultsError) as e:
        pr.fail(str(e))
    bad = 0
    for f in files:
        try:
            problems = pr.file_problems(f)
        except pr.ResultsError as e:
            if f not in args.paths and not os.path.lexists(f):
                continue  # found in a folder, removed since (a test cleaning up)
            pr.fail(str(e))
        bad += bool(problems)
        for p in pr.shown(problems):
            print(text.one_line(p))
    print(f"{len(files)} files checked against schema/, {bad} with problems", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
