#!/usr/bin/env python3
"""Run the shell examples of portalab's Markdown pages on a host build.

    run_examples.py --portalab build/host/portalab --source . --work DIR PAGE.md...

Every ```sh block runs, in order, as a bash script (set -euo pipefail) in a
folder made to look like the repository's root: inputs/, scripts/, schema/,
tests/ and docs/ are the repository's, build/host/ is the build that holds
--portalab, and that build (then --python as python3) is first on PATH (`portalab run ...` works as
written). The blocks of one page share their folder, so that a block may use
what an earlier one wrote. A block that needs what a host build cannot give
says so on its first line, and is listed, not run:

    # needs: gpu            a GPU, or a GPU build (cuda, hip presets)
    # needs: mpi            several MPI ranks (mpirun)
    # needs: slurm          a cluster's Slurm
    # needs: kokkos-tools   a Kokkos Tools build ($TOOLS)
    # needs: long           minutes on a host: builds, fuzzing, full decks
    # needs: runs           result folders of your own (results/<job id>)
    # needs: gpu, mpi (why)  several, and why in parentheses

Exit 0 when every block that runs succeeds, 1 when one fails or names an
unknown need (each said with its page and line), 2 bad input.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

NEEDS = {"gpu", "mpi", "slurm", "kokkos-tools", "long", "runs"}
SHELL_FENCES = {"sh", "bash", "shell"}
REPOSITORY_FOLDERS = ["inputs", "scripts", "schema", "tests", "docs"]


def blocks(text):
    """(first line number, info string, body) of each fenced code block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+|~~~+)\s*([^\s`{]*)", lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(2), m.group(3).lower(), i + 1
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1
        yield start + 1, info, "\n".join(body)


def needs_of(body):
    """The needs the block's first line names ([] when it has none)."""
    first = next((line.strip() for line in body.split("\n") if line.strip()), "")
    m = re.match(r"^#\s*needs:\s*([^(]*)", first)  # "(why)" may follow the needs
    return [n.strip() for n in m.group(1).split(",") if n.strip()] if m else []


def workspace(work, source, build, python):
    """The page's folder, and the PATH its blocks run with."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "build"))
    for folder in REPOSITORY_FOLDERS:
        os.symlink(os.path.join(source, folder), os.path.join(work, folder))
    os.symlink(build, os.path.join(work, "build", "host"))
    path = [build]
    if python:  # `scripts/report.py` runs the first python3 on PATH
        python_bin = os.path.join(work, ".python-bin")
        os.makedirs(python_bin)
        os.symlink(os.path.abspath(python), os.path.join(python_bin, "python3"))
        path.append(python_bin)
    return os.pathsep.join(path + [os.environ.get("PATH", "")])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--portalab", required=True, help="the portalab binary of a host build")
    p.add_argument("--source", required=True, help="the repository")
    p.add_argument("--work", required=True, help="a folder to run in (emptied first)")
    p.add_argument("--timeout", type=float, default=120, help="seconds per block")
    p.add_argument("--python", help="the python3 the scripts run with (one with matplotlib)")
    p.add_argument("pages", nargs="+", help="Markdown pages")
    a = p.parse_args()
    build = os.path.dirname(os.path.abspath(a.portalab))
    source = os.path.abspath(a.source)
    if not os.access(a.portalab, os.X_OK):
        print(f"run_examples: {a.portalab}: not an executable", file=sys.stderr)
        return 2
    failed = ran = listed = 0
    for page in a.pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        work = os.path.join(os.path.abspath(a.work), os.path.splitext(os.path.basename(page))[0])
        env = dict(os.environ, PATH=workspace(work, source, build, a.python))
        for line, info, body in blocks(text):
            if info not in SHELL_FENCES:
                continue
            where = f"{page}:{line}"
            needs = needs_of(body)
            unknown = [n for n in needs if n not in NEEDS]
            if unknown:
                print(f"FAIL {where}: needs {', '.join(unknown)}: not one of "
                      f"{', '.join(sorted(NEEDS))}")
                failed += 1
                continue
            if needs:
                print(f"not run {where}: needs {', '.join(needs)}")
                listed += 1
                continue
            start = time.monotonic()
            try:
                run = subprocess.run(["bash", "-c", "set -euo pipefail\n" + body], cwd=work,
                                     env=env, capture_output=True, text=True, timeout=a.timeout)
                code, output = run.returncode, run.stdout + run.stderr
            except subprocess.TimeoutExpired as e:
                code = f"timeout after {a.timeout:.0f} s"
                output = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(
                    errors="replace")
            took = time.monotonic() - start
            ran += 1
            if code == 0:
                print(f"ran {where} ({took:.1f} s)")
                continue
            failed += 1
            tail = "\n".join(output.rstrip().split("\n")[-20:])
            print(f"FAIL {where}: exit {code} ({took:.1f} s); the block:\n{body}\n"
                  f"its output's end:\n{tail}\n")
    print(f"run_examples: {ran} blocks ran, {failed} failed, {listed} need what this host lacks")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
