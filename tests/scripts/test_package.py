"""scripts/ as a package (issue 46): every module of scripts/portalab/
imports, every tool answers --help as `python3 -m portalab.TOOL` and as its
command scripts/TOOL.py, and no module of the user package imports the
development checks of scripts/dev/.

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
    """The modules with a main(): the package's command-line tools."""
    names = []
    for name, path in package_modules().items():
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


if __name__ == "__main__":
    unittest.main()
