"""The portalab binary the scripts ask what is decided in C++ alone: the
store's history and fleet (report.py --db) and the verdicts of a comparison
(compare.py), so that each rule has one implementation."""
import os
import shutil
import subprocess

from portalab import text
from portalab.cli import fail


def find_portalab(given=None, purpose="--db: no portalab binary to read the store"):
    """--portalab, $PORTALAB, the installed one beside these scripts
    (<prefix>/share/portalab/scripts -> <prefix>/bin), the source tree's
    host build, or portalab on PATH. `purpose` opens the refusal where none
    is found."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # scripts/
    if given == "":
        fail("--portalab '': give the path of a portalab binary")
    env = os.environ.get("PORTALAB")
    if env is not None and given is None:
        if env == "" or not (os.path.isfile(env) and os.access(env, os.X_OK)):
            fail(f"PORTALAB={text.shown(env)}: " + (
                "empty: set it to a portalab binary, or unset it" if env == ""
                else "no executable there: set it to a portalab binary, or unset it"))
    candidates = [given, env,
                  os.path.join(here, "..", "..", "..", "bin", "portalab"),
                  os.path.join(here, "..", "build", "host", "portalab"), shutil.which("portalab")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    if given:
        fail(f"--portalab {text.shown(given)}: no executable there")
    fail(f"{purpose} (give --portalab BIN or set PORTALAB)")


def run(binary, args, stdin=None, timeout=600):
    """(exit status, stdout bytes, the last line the binary said on stderr
    without its "error: "), or a one-line failure naming the command where
    it cannot be run or does not answer in time."""
    command = " ".join(text.shown(a) for a in [binary, *args])
    try:
        p = subprocess.run([binary, *args], capture_output=True, timeout=timeout,
                           input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail(f"{command}: no answer in {timeout} s: stopped")
    except OSError as e:
        fail(f"{command}: cannot run it ({e.strerror or e})")
    said = p.stderr.decode("utf-8", "replace").strip()
    said = said.splitlines()[-1].removeprefix("error: ") if said else ""
    return p.returncode, p.stdout, said
