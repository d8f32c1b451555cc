#!/usr/bin/env python3
"""Checks an NVTX log written by nvtx_recorder: balanced pushes and pops, every
range nested in its parent by name (portalab/<experiment>/<space>/<phase>
inside portalab/<experiment>/<space> inside portalab/<experiment>), and the
expected names present.

    check_ranges.py LOG EXPECTED_NAME...
"""
import sys


def main(log_path, expected):
    stack, seen, errors = [], set(), []
    with open(log_path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("push "):
                name = line[5:]
                if name.startswith("portalab/"):
                    parent = name.rsplit("/", 1)[0]
                    if parent != "portalab" and (not stack or stack[-1] != parent):
                        errors.append(f"line {number}: {name} opened inside "
                                      f"{stack[-1] if stack else 'nothing'}, not {parent}")
                stack.append(name)
                seen.add(name)
            elif line == "pop":
                if not stack:
                    errors.append(f"line {number}: pop without a push")
                else:
                    stack.pop()
    if stack:
        errors.append(f"unclosed at the end: {stack}")
    for name in expected:
        if name not in seen:
            errors.append(f"never pushed: {name}")
    if not seen:
        errors.append("no range recorded: the injection library was not loaded")
    for e in errors:
        print("error:", e)
    print(f"{len(seen)} distinct ranges, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
