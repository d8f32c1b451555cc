"""The scripts' voice: a message on stderr as one quoted line, bad input
refused with exit status 2 (as portalab itself), the numbers their options
take, and matplotlib where they draw."""

import math
import os
import sys

from portalab import text


def finite(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is beyond a double's range")
    return value


MATPLOTLIB_NEEDED = ("needs matplotlib to draw: install it (Debian/Ubuntu: apt-get install "
                     "python3-matplotlib; pip: python3 -m pip install matplotlib) or load a "
                     "module that has it.")


def require_matplotlib():
    """matplotlib.pyplot, drawing without a display; without matplotlib, the
    one sentence MATPLOTLIB_NEEDED on stderr and exit status 2 (no traceback)."""
    text.warnings_quoted()  # a name drawn may hold a control character
    try:
        import matplotlib
        matplotlib.use("Agg")  # batch nodes have no display
        import matplotlib.pyplot as plt
    except ImportError:
        fail(MATPLOTLIB_NEEDED)
    return plt


def finite_number(text):
    """An argparse type: a number that is finite ("nan" and "inf", which
    float() takes, are not)."""
    import argparse
    try:
        return finite(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a finite number") from None


def say(message, file=None):
    """A message of the script on stderr (or file), "<script>: <message>", one
    line quoted as the run's messages are (text.one_line): a name from a
    file, or a path, cannot retitle or clear the terminal it is read on."""
    print(f"{text.shown(os.path.basename(sys.argv[0]))}: {text.one_line(message)}",
          file=file or sys.stderr)


def fail(message):
    """Bad input: message on stderr, exit status 2 as portalab itself."""
    say(message)
    sys.exit(2)
