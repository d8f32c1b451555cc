#!/usr/bin/env python3
"""Build portalab's guide: docs/ with its reference pages generated from the
binary (`portalab list --format markdown`, `portalab list --decks --format
markdown`), through `mkdocs build --strict` (any warning fails the build).

    build_docs.py --portalab build/host/portalab --source . --out build/host/docs

writes OUT/src (docs/ and the generated reference/), OUT/mkdocs.yml and the
site in OUT/site. The generated pages live in the build tree only, so that
they cannot drift from the code. Exit 0 built, 1 mkdocs failed, 2 bad input,
77 mkdocs not installed (ctest: skipped).
"""
import argparse
import os
import shutil
import subprocess
import sys


def generate(portalab, args, path):
    """One reference page from the binary's output; failing, say how."""
    run = subprocess.run([portalab, "list", *args, "--format", "markdown"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"build_docs: `portalab list {' '.join(args)} --format markdown` "
                 f"exited {run.returncode}: {run.stderr.strip()}")
    with open(path, "w") as f:
        f.write(run.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--portalab", required=True, help="the portalab binary")
    p.add_argument("--source", required=True, help="the repository (mkdocs.yml, docs/)")
    p.add_argument("--out", required=True, help="folder for the sources and the site")
    p.add_argument("--mkdocs", default=shutil.which("mkdocs"), help="the mkdocs program")
    a = p.parse_args()
    if not a.mkdocs:
        print("build_docs: mkdocs not found (Debian's package mkdocs): skipped")
        return 77
    source, out = os.path.abspath(a.source), os.path.abspath(a.out)
    src, site = os.path.join(out, "src"), os.path.join(out, "site")
    shutil.rmtree(src, ignore_errors=True)
    shutil.rmtree(site, ignore_errors=True)  # a failed build leaves no old site to check
    shutil.copytree(os.path.join(source, "docs"), src)
    os.makedirs(os.path.join(src, "reference"), exist_ok=True)
    generate(a.portalab, [], os.path.join(src, "reference", "experiments.md"))
    generate(a.portalab, ["--decks"], os.path.join(src, "reference", "decks.md"))

    # The repository's configuration with the folders moved to the build
    # tree: docs_dir and site_dir are its only relative paths.
    with open(os.path.join(source, "mkdocs.yml")) as f:
        config = f.read()
    if "\ndocs_dir: docs\n" not in config:
        sys.exit("build_docs: mkdocs.yml has no line 'docs_dir: docs' to move")
    config = config.replace("\ndocs_dir: docs\n", f"\ndocs_dir: {src}\nsite_dir: {site}\n")
    config_path = os.path.join(out, "mkdocs.yml")
    with open(config_path, "w") as f:
        f.write(config)
    build = subprocess.run([a.mkdocs, "build", "--strict", "--clean", "-q", "-f", config_path])
    if build.returncode != 0:
        # MkDocs writes the pages before it aborts on its warnings: none stay.
        shutil.rmtree(site, ignore_errors=True)
        print(f"build_docs: mkdocs build --strict failed (exit {build.returncode})")
        return 1
    print(f"build_docs: the guide is in {site}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
