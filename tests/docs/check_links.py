#!/usr/bin/env python3
"""Every internal link of portalab's guide and README resolves, anchors too.

    check_links.py --site build/host/docs/site --readme README.md

MkDocs (1.4) checks that a link's page exists, not its #section. This reads
the built site: every <a href> and <img src> that stays inside it must name a
file of the site and, with #anchor, an element with that id there. The
README is not part of the site: its links into docs/ are checked against the
pages built from them, its own #anchors against its headings, and its other
relative links against the repository's files. Exit 0 all resolve, 1 some do
not (each listed), 77 no site built (ctest: skipped).
"""
import argparse
import os
import re
import sys
import unicodedata
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    """The ids and the links of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        target = a.get("href") if tag == "a" else a.get("src") if tag == "img" else None
        if target is not None:
            self.links.append(target)


def external(target):
    parts = urlsplit(target)
    return bool(parts.scheme or parts.netloc)


def read_site(site):
    pages = {}
    for folder, _, files in os.walk(site):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(folder, name)
                page = Page()
                with open(path, encoding="utf-8") as f:
                    page.feed(f.read())
                pages[os.path.relpath(path, site)] = page
    return pages


def check_target(site, pages, base, target):
    """Why a link from the site's page `base` to `target` is broken, or None."""
    parts = urlsplit(target)
    path = unquote(parts.path)
    if path.startswith("/"):
        return "an absolute path: the site must read from any folder"
    resolved = os.path.normpath(os.path.join(os.path.dirname(base), path)) if path else base
    if resolved.startswith(".."):
        return "leads out of the site"
    if not os.path.exists(os.path.join(site, resolved)):
        return f"no file {resolved} in the site"
    if parts.fragment:
        page = pages.get(resolved)
        if page is None:
            return f"#{parts.fragment} into {resolved}, which is no page"
        if unquote(parts.fragment) not in page.ids:
            return f"no section #{parts.fragment} in {resolved}"
    return None


def slugify(text):
    """Python-Markdown's toc slug, as MkDocs makes a heading's id."""
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*_]{1,2}([^*_]+)[*_]{1,2}", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def markdown_links(text):
    """(line, target) of every inline link and image outside code."""
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text,
                  flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1)


def check_readme(readme, site, pages):
    """The README's internal links counted, and the broken ones as (line, target, why)."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    headings = {slugify(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M)}
    root = os.path.dirname(os.path.abspath(readme))
    count, broken = 0, []
    for line, target in markdown_links(text):
        if external(target):
            continue
        count += 1
        parts = urlsplit(target)
        path = unquote(parts.path)
        if not path:
            if parts.fragment not in headings:
                broken.append((line, target, f"no heading #{parts.fragment} in the README"))
            continue
        if path.startswith("docs/") and path.endswith(".md"):
            page = path[len("docs/"):-len(".md")] + ".html"
            why = check_target(site, pages, "index.html",
                               page + (f"#{parts.fragment}" if parts.fragment else ""))
            if why:
                broken.append((line, target, why))
        elif not os.path.exists(os.path.join(root, path)):
            broken.append((line, target, f"no file {path} in the repository"))
    return count, broken


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--site", required=True, help="the built site (mkdocs' site_dir)")
    p.add_argument("--readme", help="the README, whose links go into docs/")
    a = p.parse_args()
    if not os.path.isfile(os.path.join(a.site, "index.html")):
        print(f"check_links: {a.site}: no index.html (docs.build failed or was skipped): "
              "nothing to check")
        return 77
    pages = read_site(a.site)
    broken, links = [], 0
    for name, page in sorted(pages.items()):
        if name == "404.html":  # MkDocs writes it with links from the server's root
            continue
        for target in page.links:
            if external(target) or target.startswith(("mailto:", "javascript:")) or target == "#":
                continue
            links += 1
            why = check_target(a.site, pages, name, target)
            if why:
                source = name[:-len(".html")] + ".md"
                broken.append(f"{source} (built {name}): link '{target}': {why}")
    readme_links = 0
    if a.readme:
        readme_links, readme_broken = check_readme(a.readme, a.site, pages)
        for line, target, why in readme_broken:
            broken.append(f"{a.readme}:{line}: link '{target}': {why}")
    for b in broken:
        print(f"BROKEN {b}")
    print(f"check_links: {len(pages)} pages, {links} internal links checked"
          f"{f' and {readme_links} of the README' if a.readme else ''}, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
