#!/usr/bin/env python3
"""Checks the ranges the real binary pushed (an nvtx_recorder log) against
the results.json of the same run, as scripts/dev/nsys_check.py checks an Nsight
Systems profile: the log becomes an export's NVTX_EVENTS table (one
microsecond per logged event, one thread), then `nsys_check.py --require
ranges` runs on it. So the checker's idea of the runner's ranges (a
measurement per variant, in the order of the rows) is tested on every build,
without a GPU.

    check_profile.py LOG RESULTS.json
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE, "tests", "scripts"))
sys.path.insert(0, os.path.join(SOURCE, "scripts", "dev"))  # nsys_check.py

import fake_nsys  # noqa: E402
import nsys_check  # noqa: E402


def log_to_export(log_path, db_path):
    fx = fake_nsys.FakeExport(db_path)
    stack, t = [], 0
    with open(log_path) as f:
        for number, line in enumerate(f, 1):
            t += 1_000
            line = line.rstrip("\n")
            if line.startswith("push "):
                stack.append((line[5:], t))
            elif line == "pop":
                if not stack:
                    sys.exit(f"{log_path}:{number}: pop without a push")
                name, start = stack.pop()
                fx.range(name, start, t)
    if stack:
        sys.exit(f"{log_path}: unclosed at the end: {[n for n, _ in stack]}")
    fx.close()


def main(log_path, results):
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "ranges.sqlite")
        log_to_export(log_path, db)
        return nsys_check.main([db, results, "--require", "ranges"])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
