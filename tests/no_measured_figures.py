#!/usr/bin/env python3
"""Fails on a comment that states a measured figure: a number with a unit of
bandwidth, FLOP rate or time (`2790 GB/s`, `51 TFLOP/s`, `14.6 µs`, `93 ms`).

Figures measured on one machine go stale in the source; they belong in the
guide (docs/performance.md, by topic, with the device, the date and how to
reproduce them). A comment says what the code does and why, and may name the
docs section that has the figures.

Checked: the comments of the C++ (`//`, `/* */`), Python (`#` and docstrings),
CMake and shell files of drivers/, miniapp/, kernels/, experiments/, tests/,
scripts/, cmake/ and the top CMakeLists.txt. String literals are not comments
and are not checked.

Exemptions, for numbers that are definitions, not measurements: text in
double quotes or backquotes within a comment (an example of what portalab
prints: "memory 4105 GB/s"); and a comment block (comment lines in a row)
that says `not measured` (a setting, a test's input, a unit's meaning:
"every 20 ms (a setting, not measured)"). Use them for that only.

A comment that names a section (`docs/performance.md, "The host's dot"`)
must name a heading of that page: the check fails on one that is gone.

    no_measured_figures.py [ROOT]      exit 0 clean, 1 figures found (listed)
    no_measured_figures.py --self-test exit 0 when the check finds what it must
"""
import io
import pathlib
import re
import sys
import tokenize

UNITS = r"(?:[GMKT]i?B/s|[GTP]FLOP/s|[GTP]FLOPS|µs|us|ns|ms)"
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?\s*" + UNITS + r"(?![\w/])")
EXEMPT = "not measured"
FOLDERS = ("drivers", "miniapp", "kernels", "experiments", "tests", "scripts", "cmake")
SUFFIXES = {".cpp": "c", ".hpp": "c", ".h": "c", ".cu": "c", ".py": "py", ".cmake": "hash",
            ".sh": "hash"}


def c_comments(text):
    """(line, comment text) of each line of C++ comments, strings and raw strings skipped."""
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i + 2:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for k, part in enumerate(text[i + 2:end].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, end)
            i = end + 2
        elif ch == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_end = text.find("(", i + 2)
            delim = text[i + 2:open_end]
            end = text.find(")" + delim + '"', open_end)
            end = n if end < 0 else end + len(delim) + 2
            line += text.count("\n", i, end)
            i = end
        elif ch in "\"'":
            if ch == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def py_comments(text):
    """(line, text) of Python comments and docstrings (a string that is a statement)."""
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return [(k, line.split("#", 1)[1]) for k, line in enumerate(text.splitlines(), 1) if "#" in line]
    statement_start = True
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string[1:]))
        elif tok.type == tokenize.STRING and statement_start:
            body = tok.string.lstrip("rRbBuUfF")
            quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
            for k, part in enumerate(body[len(quote):len(body) - len(quote)].split("\n")):
                out.append((tok.start[0] + k, part))
        if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            statement_start = True
        elif tok.type not in (tokenize.COMMENT, tokenize.NL):
            statement_start = False
    return out


def hash_comments(text):
    """(line, text) after a `#` outside quotes: shell and CMake."""
    out = []
    for k, line in enumerate(text.splitlines(), 1):
        quote = None
        for j, ch in enumerate(line):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                if ch == "'" and j > 0 and line[j - 1].isalnum():  # an apostrophe in a word
                    continue
                quote = ch
            elif ch == "#" and (j == 0 or line[j - 1] in " \t;(") and not line.startswith("#!"):
                out.append((k, line[j + 1:]))
                break
    return out


READERS = {"c": c_comments, "py": py_comments, "hash": hash_comments}


def kind_of(path):
    if path.name == "CMakeLists.txt":
        return "hash"
    return SUFFIXES.get(path.suffix)


QUOTED = re.compile(r'"[^"]*"|`[^`]*`')


def figures(text, kind):
    """(line, comment) of each comment line with a measured-looking figure,
    but for those of a block (comment lines in a row) that says EXEMPT."""
    blocks, last = [], None
    for line, c in READERS[kind](text):
        if last is None or line > last + 1:
            blocks.append([])
        blocks[-1].append((line, c))
        last = line
    return [(line, c.strip()) for block in blocks if not any(EXEMPT in c for _, c in block)
            for line, c in block if FIGURE.search(QUOTED.sub("", c))]


SECTION = re.compile(r'performance\.md,\s*(?:(?://|#)\s*)?"([^"]+)"')


def missing_sections(text, headings):
    """The sections of docs/performance.md a file's text names that are not headings."""
    names = (re.sub(r"\s*\n\s*(?:(?://|#)\s*)?", " ", n) for n in SECTION.findall(text))
    return [name for name in names if name not in headings]


def headings_of(page):
    return {re.sub(r"^#+\s*", "", line).strip() for line in page.splitlines()
            if line.startswith("#")}


def files(root):
    yield from (p for p in [root / "CMakeLists.txt"] if p.is_file())
    for folder in FOLDERS:
        for p in sorted((root / folder).rglob("*")):
            if p.is_file() and kind_of(p) and "__pycache__" not in p.parts:
                yield p


def self_test():
    cases = [  # (kind, text, lines expected)
        ("c", "// on an H100 it moved 2790 GB/s\nint x;\n", [1]),
        ("c", "int a; /* took\n 93 ms */ int b;\n", [2]),
        ("c", 'auto s = "memory 20 GB/s";  // the limit\n', []),
        ("c", 'auto s = R"(// 5 ms)";\n', []),
        ("c", "// every 10 ms (a setting, not measured)\n", []),
        ("c", "// at 10 GB/s a row takes\n// 10 ms (inputs, not measured)\n\n// 5 ms\n", [4]),
        ("c", '// prints "memory 20 GB/s" or `5 ms`, ran 7 ms\n', [1]),
        ("c", '// prints "memory 20 GB/s" or `5 ms`\n', []),
        ("c", "// 1.5-2.5 TFLOP/s on the CI VM\n", [1]),
        ("c", "// n = 1'000'000; 3 us a launch\n", [1]),
        ("c", "// 2 threads, 4 GB arrays, 5 msgs\n", []),
        ("py", "def f():\n    \"\"\"Reads 12.9 GB/s.\"\"\"\n    return '5 ms'  # 20 µs here\n", [2, 3]),
        ("py", "x = ('a'\n     '4 ms')\n", []),
        ("hash", 'set(X "5 ms")  # 14.6 us on a node\n', [1]),
        ("hash", "echo '# 5 ms'\n", []),
    ]
    bad = 0
    for kind, text, want in cases:
        got = [line for line, _ in figures(text, kind)]
        if got != want:
            print(f"self-test: {kind} {text!r}: lines {got}, expected {want}")
            bad = 1
    named = '// figures: docs/performance.md,\n// "Several\n// GPUs"; docs/performance.md, "Gone"\n'
    if missing_sections(named, {"Several GPUs"}) != ["Gone"]:
        print(f"self-test: sections named in {named!r}: {missing_sections(named, {'Several GPUs'})}")
        bad = 1
    print("self-test " + ("failed" if bad else f"passed: {len(cases) + 1} cases"))
    return bad


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
    found, gone = [], []
    page = root / "docs" / "performance.md"
    headings = headings_of(page.read_text(encoding="utf-8")) if page.is_file() else None
    for path in files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(root)}:{line}: {c}" for line, c in figures(text, kind_of(path))]
        if headings is not None and path.name != pathlib.Path(__file__).name:
            gone += [f"{path.relative_to(root)}: \"{name}\"" for name in missing_sections(text, headings)]
    if gone:
        print("sections of docs/performance.md named in comments but not headings of the page: "
              "name the section as it is now")
        print("\n".join(gone))
    if found:
        print("measured figures in comments: move them to docs/performance.md (by topic, with the "
              "device and date) and keep the why; a number that is a definition, not a "
              f"measurement, may stay on a line whose comment says '{EXEMPT}' "
              "(tests/no_measured_figures.py)")
        print("\n".join(found))
    if found or gone:
        return 1
    print(f"no measured figures in the comments under {root}, and every section they name is there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
