"""scripts/ as a package (issue 46): every module of scripts/portalab/
imports, every tool answers --help as `python3 -m portalab.TOOL` and as its
command scripts/TOOL.py, no module of the user package imports the
development checks of scripts/dev/, and its modules import each other at
their top, in no cycle (issue 55).

    python3 tests/scripts/test_package.py
"""
import ast
import glob
import importlib
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(SOURCE, "scripts")
PACKAGE = os.path.join(SCRIPTS, "portalab")
sys.path.insert(0, SCRIPTS)


def package_modules():
    """{dotted name: file} of every module under scripts/portalab/."""
    found = {}
    for path in sorted(glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True)):
        rel = os.path.relpath(path, SCRIPTS)[:-len(".py")].split(os.sep)
        if rel[-1] == "__init__":
            rel = rel[:-1]
        found[".".join(rel)] = path
    return found


def tools():
    """The package's command-line tools: its modules with a main(), and its
    packages with a __main__ (portalab.report)."""
    names = []
    for name, path in package_modules().items():
        if name.endswith(".__main__"):
            names.append(name[:-len(".__main__")])
        elif name.count(".") == 1:
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            if any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body):
                names.append(name)
    return names


def imported(path):
    """The module names a file imports (`import a.b`, `from a import b` as a, a.b)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def package_imports(path, modules):
    """[(module of the package imported, line, whether inside a function)]
    of one file: `from portalab.report import store` names portalab.report
    and portalab.report.store, `import portalab.x.y` portalab.x and portalab.x.y."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []

    def visit(node, nested):
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            names = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                names = [child.module] + [f"{child.module}.{a.name}" for a in child.names]
            for name in names:
                parts = name.split(".")
                for k in range(1, len(parts) + 1):
                    if ".".join(parts[:k]) in modules:
                        found.append((".".join(parts[:k]), child.lineno, inner))
            visit(child, inner)
    visit(tree, False)
    return found


def cycle(graph):
    """A cycle of graph ({name: names it imports}) as [a, b, ..., a], or None."""
    state, path = {}, []

    def visit(name):
        state[name] = "open"
        path.append(name)
        for other in sorted(graph.get(name, ())):
            if state.get(other) == "open":
                return path[path.index(other):] + [other]
            found = visit(other) if other not in state else None
            if found:
                return found
        path.pop()
        state[name] = "done"
        return None
    for name in sorted(graph):
        found = visit(name) if name not in state else None
        if found:
            return found
    return None


def run(*args, env=None):
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120,
                       cwd=SOURCE, env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


class PackageTest(unittest.TestCase):

    def test_every_module_imports(self):
        modules = package_modules()
        self.assertIn("portalab.results", modules)
        self.assertIn("portalab.report", modules)
        for name in modules:
            if name.endswith(".__main__"):
                continue  # runs its tool: -m runs it below
            with self.subTest(module=name):
                importlib.import_module(name)

    def test_every_tool_answers_help_as_a_module_and_a_command(self):
        found = tools()
        for tool in ("report", "compare", "collect", "plot", "validate"):
            self.assertIn(f"portalab.{tool}", found)
        for name in found:
            with self.subTest(tool=name):
                # From elsewhere than scripts/, the package found on PYTHONPATH only.
                rc, out, err = run("-m", name, "--help", env={"PYTHONPATH": SCRIPTS})
                self.assertEqual(rc, 0, err)
                self.assertIn("usage:", out)
                command = os.path.join(SCRIPTS, name.split(".")[1] + ".py")
                self.assertTrue(os.access(command, os.X_OK), f"{command}: no executable command")
                rc, out, err = run(command, "--help")
                self.assertEqual(rc, 0, err)
                self.assertIn("usage:", out)

    def test_every_command_runs_a_tool_of_the_package(self):
        commands = {os.path.basename(p)[:-len(".py")]
                    for p in glob.glob(os.path.join(SCRIPTS, "*.py"))}
        self.assertEqual(commands, {name.split(".")[1] for name in tools()})

    def test_the_user_package_imports_no_development_check(self):
        dev = {os.path.basename(p)[:-len(".py")]
               for p in glob.glob(os.path.join(SCRIPTS, "dev", "*.py"))}
        self.assertIn("nsys_check", dev)
        for name, path in package_modules().items():
            with self.subTest(module=name):
                wrong = {m for m in imported(path) if m.split(".")[0] in dev | {"dev"}}
                self.assertEqual(wrong, set(), f"{path} imports a development check")


    def test_modules_import_at_their_top_in_no_cycle(self):
        modules = package_modules()
        graph = {}
        for name, path in modules.items():
            graph[name] = set()
            for other, line, nested in package_imports(path, modules):
                self.assertFalse(nested, f"{path}:{line}: imports {other} inside a function: "
                                         "a lazy import hides a cycle; import it at the top")
                if other != name and not name.startswith(other + "."):
                    graph[name].add(other)
            # A submodule's import runs its package's __init__ first.
            parent = name.rsplit(".", 1)[0]
            if parent in modules and parent != name:
                graph[name].add(parent)
        self.assertIn("portalab.results", graph["portalab.reading"] | graph["portalab.collect"])

        found = cycle(graph)
        self.assertIsNone(found, "modules of scripts/portalab/ import each other in a cycle: "
                                 + " -> ".join(found or []))

    def test_the_cycle_finder_finds_one(self):
        # The test above on a package made for it: a -> b -> a, and a lazy import.
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            for name, body in (("a", "from portalab import b\n"), ("b", "import portalab.a\n"),
                               ("c", "def f():\n    from portalab import a\n")):
                with open(os.path.join(tmp, f"{name}.py"), "w") as f:
                    f.write(body)
            modules = {f"portalab.{n}": os.path.join(tmp, f"{n}.py") for n in "abc"}
            self.assertEqual(package_imports(modules["portalab.a"], modules),
                             [("portalab.b", 1, False)])
            self.assertEqual(package_imports(modules["portalab.b"], modules),
                             [("portalab.a", 1, False)])
            self.assertEqual(package_imports(modules["portalab.c"], modules),
                             [("portalab.a", 2, True)])
        self.assertEqual(cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}))


if __name__ == "__main__":
    unittest.main()
