#!/usr/bin/env python3
"""Fails on an include, or a class declared, that reaches up the layers of
miniapp/ or out of kernels/, and on state kept in kernels/.

miniapp/layers.txt lists the folders of miniapp/, top first. A file in one of
them may include from its own folder, from the folders listed below it and
from kernels/; never from a folder above. Includes name their folder
("results/result.hpp", miniapp/ the root), so that a reader sees the layer:
one that names none, for a file of miniapp/, fails too, as does a file outside
the folders, and one that includes drivers/ (the command line's, above every
layer). A file of kernels/ includes kernels/ alone: kernels are pure, the
framework is built on them, not they on it. Nor do they keep state: a static
(or thread_local) variable in kernels/ that is not const fails, so that no
kernel's path depends on a setting made elsewhere (the caller passes its
choices: kernels/paths.hpp). Nor does a folder (or kernels/) declare a class
that only a folder above it defines: `struct Result;` in experiment/, Result
being defined in a header of results/, is the same dependency upward as the
include would be. The guide's table of layers (docs/architecture.md) lists
the same folders in the same order.

  layers.py [SOURCE_DIR]   the check of the source tree (ctest source.layers)
  layers.py --self-test    the check on made-up trees, each broken one way,
                           must catch each (ctest source.layers_self_test)
"""
import pathlib
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCES = {".hpp", ".cpp", ".h", ".in"}


def read_layers(root):
    """The folders of miniapp/layers.txt, bottom first."""
    layers = []
    for line in (root / "miniapp/layers.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            layers.append(line.split()[0])
    return layers[::-1]


def includes(path):
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        match = INCLUDE.match(line)
        if match:
            yield number, match.group(1) == '"', match.group(2)


def sources(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SOURCES)


# `static` or `thread_local` and what follows, up to what ends a declaration
# or starts a function's parameters; static_assert and static_cast are words
# of their own.
STATIC = re.compile(r"\b(static|thread_local)\b([^;=({]*)([;=({])")


def mutable_statics(path):
    """(line, text) of each static variable of path that is not const."""
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        code = re.sub(r'"(\\.|[^"\\])*"', '""', line.split("//", 1)[0])
        for match in STATIC.finditer(code):
            declared, end = match.group(2), match.group(3)
            if end == "(" and not declared.strip().endswith(("*", "&")):
                continue  # a static member function (or a constructor's arguments: rare)
            if re.search(r"\b(const|constexpr|constinit)\b", declared.split("*")[0]):
                continue
            yield number, line.strip()


# A class declared without its body (`struct Result;`, `class Comm;`): not an
# `enum class`, a `friend class` or a template's parameter.
DECLARED = re.compile(r"^\s*(?:template\s*<[^;{]*>\s*)?(?:struct|class)\s+(\w+)\s*;")
# A class defined: `struct Result {`, `class CaseImpl final : public Case {`.
DEFINED = re.compile(r"^\s*(?:template\s*<[^;{]*>\s*)?(?:struct|class)\s+(\w+)"
                     r"(?:\s+final)?\s*(?::[^;{]*)?\{")


def classes(path, pattern):
    """(line, name) of each class path declares or defines, as pattern matches."""
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        match = pattern.match(line.split("//", 1)[0])
        if match:
            yield number, match.group(1)


def upward_declarations(files, level):
    """Declarations of a class that only a folder above defines (in a header):
    files is [(path, shown, folder)], level the folders' places, kernels/ -1."""
    defined = {}  # class -> the folders that define it (a pimpl's in its .cpp too)
    headers = {}  # class -> the folders whose headers define it
    for path, _, folder in files:
        for _, name in classes(path, DEFINED):
            defined.setdefault(name, set()).add(folder)
            if path.suffix != ".cpp":
                headers.setdefault(name, set()).add(folder)
    for path, shown, folder in files:
        for number, name in classes(path, DECLARED):
            if name in headers and all(level[f] > level[folder] for f in defined[name]):
                above = "/, ".join(sorted(headers[name], key=level.get))
                yield (f"{shown}:{number}: {name}: declared here, defined in {above}/, "
                       f"above {folder}/: move what needs it up, or the type down")


def exists(path):
    return path.is_file() or path.with_name(path.name + ".in").is_file()


def check(root):
    """The problems found under root, one line each."""
    root = pathlib.Path(root)
    miniapp, kernels = root / "miniapp", root / "kernels"
    level = {name: i for i, name in enumerate(read_layers(root))}
    problems = []
    for path in sources(miniapp):
        rel = path.relative_to(miniapp)
        own = rel.parts[0]
        if len(rel.parts) < 2 or own not in level:
            problems.append(f"miniapp/{rel}: in no folder of miniapp/layers.txt")
            continue
        for number, quoted, name in includes(path):
            where = f'miniapp/{rel}:{number}: #include "{name}"'
            first = name.split("/", 1)[0]
            if first == "drivers":  # the command line's: it includes the layers, never they it
                problems.append(f"{where}: drivers/ is above every layer of miniapp/")
            elif first in level and "/" in name:  # <limits> is the standard's
                if level[first] > level[own]:
                    problems.append(f"{where}: {first}/ is above {own}/ in miniapp/layers.txt")
            elif first != "kernels" and quoted:
                # A header of ours named without its folder (a generated
                # one, git_commit.hpp, is in none: not ours to check).
                for candidate in (path.parent / name, miniapp / name):
                    if exists(candidate) and miniapp in candidate.resolve().parents:
                        problems.append(f"{where}: name its folder, from miniapp/")
                        break
    files = [(p, f"miniapp/{p.relative_to(miniapp)}", p.relative_to(miniapp).parts[0])
             for p in sources(miniapp) if p.relative_to(miniapp).parts[0] in level]
    files += [(p, str(p.relative_to(root)), "kernels") for p in sources(kernels)]
    problems += upward_declarations(files, {**level, "kernels": -1})
    # The guide's table of layers (docs/architecture.md), top first, as here.
    guide = root / "docs/architecture.md"
    if guide.is_file():
        table = re.findall(r"^\| *\d+ *\| *`([a-z_]+)/` *\|", guide.read_text(), re.M)
        if table != list(level)[::-1] + ["kernels"]:
            problems.append(f"docs/architecture.md: its table of layers ({' '.join(table)}) is not "
                            f"miniapp/layers.txt's, top first, and kernels")
    for path in sources(kernels):
        for number, quoted, name in includes(path):
            if not quoted and not (name.split("/", 1)[0] in level and "/" in name):
                continue  # Kokkos, the vendor libraries, the standard library
            found = [c.resolve() for c in (path.parent / name, root / name) if exists(c)]
            if not found or kernels.resolve() not in found[0].parents:
                problems.append(f'{path.relative_to(root)}:{number}: #include "{name}": '
                                "kernels/ includes kernels/ alone")
        for number, text in mutable_statics(path):
            problems.append(f"{path.relative_to(root)}:{number}: {text}: a static kernels/ "
                            "keeps: pass the choice in (kernels/paths.hpp)")
    return problems


def self_test():
    """Each way of breaking the layers, in a tree of its own, must be caught;
    the unbroken tree must pass."""
    clean = {
        "miniapp/layers.txt": "# top first\nrun  the loop\nresults  rows\nlimits  x\nplatform  spaces\n",
        "miniapp/platform/spaces.hpp": "#pragma once\n#include <limits>\nstruct Space {};\n",
        "miniapp/results/result.hpp": '#include "platform/spaces.hpp"\n#include "kernels/k.hpp"\n'
                                      "struct Row {\n  class Nested;\n};\n"
                                      "template <class T>\nclass Table final : public Row {\n};\n",
        "miniapp/results/result.cpp": '#include "results/result.hpp"\n#include "git_commit.hpp"\n',
        "miniapp/run/runner.cpp": '#include "results/result.hpp"\n#include <fmt/format.h>\n'
                                  "class Pimpl;\n",
        "miniapp/run/runner.hpp": "#pragma once\nclass Pimpl;\nstruct Row;\n"
                                  "template <class T>\nstruct Trait;\n",
        "miniapp/run/pimpl.hpp": "struct Pimpl {\n};\nstruct Trait<int> {};\n",
        "miniapp/limits/limit.hpp": "#pragma once\nstruct Space;  // defined beneath\n"
                                    "enum class Kind;\nstruct Pimpl;  // its own, in a .cpp\n",
        "miniapp/limits/limit.cpp": "struct Pimpl {};\n",
        "kernels/k.hpp": '#include "range.hpp"\n#include <Kokkos_Core.hpp>\n#include <limits>\n',
        "kernels/range.hpp": "#pragma once\nstruct S {\n  static constexpr int n = 4;\n"
                             "  static const S& one() { static const S s; return s; }\n"
                             "  static int twice(int k) { static_assert(n > 0); return 2 * k; }\n"
                             "};\n// static int commented_out = 0;\n"
                             'inline const char* said() { return "static int x;"; }\n',
        "docs/architecture.md": "| 3 | `run/` | a |\n| 2 | `results/` | b |\n"
                                "| 1 | `limits/` | c |\n| 0 | `platform/` | d |\n| 0 | `kernels/` | e |\n",
    }
    broken = {
        "an include from a layer above": (
            "miniapp/platform/spaces.hpp", '#include "results/result.hpp"\n', "is above"),
        "an include without its folder": (
            "miniapp/results/result.cpp", '#include "result.hpp"\n', "name its folder"),
        "a file in no layer's folder": (
            "miniapp/loose.cpp", "\n", "in no folder"),
        "a file in an unlisted folder": (
            "miniapp/elsewhere/x.hpp", "\n", "in no folder"),
        "a kernel including the framework by its layer": (
            "kernels/k.hpp", '#include "platform/spaces.hpp"\n', "kernels/ alone"),
        "a kernel including the framework by path": (
            "kernels/k.hpp", '#include "miniapp/platform/spaces.hpp"\n', "kernels/ alone"),
        "a kernel including the framework relatively": (
            "kernels/k.hpp", '#include "../miniapp/platform/spaces.hpp"\n', "kernels/ alone"),
        "a kernel keeping a setting": (
            "kernels/k.hpp", "inline long& bytes() {\n  static long b = -1;\n  return b;\n}\n",
            "a static kernels/ keeps"),
        "a kernel keeping a cache": (
            "kernels/k.hpp", "void f() { static std::map<int, int>* cache = nullptr; }\n",
            "a static kernels/ keeps"),
        "a kernel keeping a lock": (
            "kernels/k.hpp", "void g() { static std::mutex lock; }\n", "a static kernels/ keeps"),
        "a kernel keeping a value per thread": (
            "kernels/k.hpp", "thread_local int last = 0;\n", "a static kernels/ keeps"),
        "a class of a layer above declared": (
            "miniapp/platform/spaces.hpp", "struct Row;  // for a callback's rows\n",
            "Row: declared here, defined in results/, above platform/"),
        "a class template of a layer above declared": (
            "miniapp/limits/limit.hpp", "template <class T>\nclass Table;\n",
            "Table: declared here, defined in results/, above limits/"),
        "a class of the framework declared in a kernel": (
            "kernels/range.hpp", "class Row;\n", "Row: declared here, defined in results/"),
        "an include of the driver": (
            "miniapp/results/result.cpp", '#include "drivers/list.hpp"\n', "above every layer"),
        "a guide whose layers differ": (
            "docs/architecture.md", "| 9 | `plan/` | new |\n", "table of layers"),
    }
    failures = []
    for case, change in [("the unbroken tree", None)] + list(broken.items()):
        with tempfile.TemporaryDirectory() as tmp:
            tree = dict(clean)
            if change:
                tree[change[0]] = tree.get(change[0], "") + change[1]
            for name, text in tree.items():
                (pathlib.Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
                (pathlib.Path(tmp) / name).write_text(text)
            problems = check(tmp)
            caught = change and len(problems) == 1 and change[2] in problems[0]
            if (change and not caught) or (not change and problems):
                failures.append(f"{case}: {problems or 'nothing found'}")
            else:
                print(f"{case}: {problems[0] if problems else 'passes'}")
    if failures:
        print("the layers check misses:\n" + "\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
    problems = check(root)
    if problems:
        print("includes or declarations that go up the layers (miniapp/layers.txt, "
              "docs/architecture.md), or state kept in kernels/:")
        print("\n".join(problems))
        sys.exit(1)
    print(f"every include and declaration of miniapp/ goes down its layers; kernels/ "
          f"includes kernels/ alone and keeps no state "
          f"({' < '.join(read_layers(root))})")
