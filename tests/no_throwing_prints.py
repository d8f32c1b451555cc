#!/usr/bin/env python3
"""Fails on fmt::print to stdout or stderr in drivers/ or miniapp/.

fmt::print throws when the write fails: a closed stderr (`2>&-`) or a full
disk behind stdout stopped a run mid-way and lost its files. Every message
goes through portalab::print_to (miniapp/support/console.hpp), which never
throws, makes stderr text terminal-safe and leaves a failed stdout to be said
at exit. fmt::print to a std::ostream (the Sink's streams) does not throw.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
found = []
for source in sorted(p for folder in ("drivers", "miniapp") for p in (root / folder).rglob("*")
                     if p.suffix in (".cpp", ".hpp")):
    for number, line in enumerate(source.read_text().splitlines(), 1):
        code = line.split("//", 1)[0]
        if re.search(r'\bfmt::print\s*\(\s*(stderr|stdout|")', code):
            found.append(f"{source.relative_to(root)}:{number}: {line.strip()}")
if found:
    print("fmt::print to stdout or stderr throws when the write fails: use portalab::print_to "
          "(miniapp/support/console.hpp)")
    print("\n".join(found))
    sys.exit(1)
print(f"no fmt::print to stdout or stderr in drivers/ and miniapp/ under {root}")
