#!/usr/bin/env python3
"""Fails on a KOKKOS_LAMBDA in a header of kernels/ or miniapp/.

A kernel template in a header is instantiated in several translation units of
one binary. nvcc's extended lambdas there called a null copy function on an
H200 (kernels/operators.hpp says why): kernels in headers are named functors.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
found = []
for header in sorted(list(root.glob("kernels/**/*.hpp")) + list(root.glob("miniapp/**/*.hpp"))):
    for number, line in enumerate(header.read_text().splitlines(), 1):
        code = line.split("//", 1)[0]
        if re.search(r"\bKOKKOS_(CLASS_)?LAMBDA\b", code):
            found.append(f"{header.relative_to(root)}:{number}: {line.strip()}")
if found:
    print("KOKKOS_LAMBDA in a header: make it a named functor (kernels/operators.hpp says why)")
    print("\n".join(found))
    sys.exit(1)
print(f"no KOKKOS_LAMBDA in the headers of kernels/ and miniapp/ under {root}")
