#!/usr/bin/env python3
"""The guide's hand-written tables of experiments agree with the registry.

    check_experiments.py --portalab build/host/portalab docs/experiments.md docs/several-gpus.md

The reference pages are generated from the binary; the chapters' tables say
in words what each variant does, and would drift as experiments are added or
renamed. A table row names experiments in its first cell and variants in its
second, each in `backticks`. Every registered experiment (`portalab list
--format json`) must have a row naming it whose second cell names each of its
variants, and every experiment a first cell names must be registered. Exit 0
they agree, 1 they do not (each difference said), 2 bad input.
"""
import argparse
import json
import re
import subprocess
import sys


def cells(line):
    """The cells of a Markdown table row ('\\|' is no separator)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def rows(page):
    with open(page, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("|") and not re.match(r"^\|\s*-", line):
                c = cells(line)
                if len(c) >= 2:
                    yield number, re.findall(r"`([^`]+)`", c[0]), set(re.findall(r"`([^`]+)`", c[1]))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--portalab", required=True)
    p.add_argument("pages", nargs="+", help="Markdown pages with tables of experiments")
    a = p.parse_args()
    run = subprocess.run([a.portalab, "list", "--format", "json"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"check_experiments: portalab list --format json: exit {run.returncode}: "
              f"{run.stderr.strip()}", file=sys.stderr)
        return 2
    registry = {e["name"]: [v["name"] for v in e["variants"]]
                for e in json.loads(run.stdout)["experiments"]}
    problems, documented = [], {}
    for page in a.pages:
        for number, names, variants in rows(page):
            for name in names:
                if name not in registry:
                    # Only a row whose variants are code can be a row of experiments.
                    if variants and re.fullmatch(r"[a-z][a-z0-9_]*", name):
                        problems.append(f"{page}:{number}: `{name}` is no registered experiment")
                    continue
                documented.setdefault(name, []).append((page, number, variants))
    for name, variants in registry.items():
        found = documented.get(name)
        if not found:
            problems.append(f"experiment `{name}` has no row in {', '.join(a.pages)}")
        elif not any(set(variants) <= v for _, _, v in found):
            page, number, v = max(found, key=lambda f: len(f[2] & set(variants)))
            missing = [x for x in variants if x not in v]
            problems.append(f"{page}:{number}: `{name}`'s row does not name its variant(s) "
                            f"{', '.join(missing)}")
    for problem in problems:
        print(f"DRIFT {problem}")
    print(f"check_experiments: {len(registry)} experiments, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
