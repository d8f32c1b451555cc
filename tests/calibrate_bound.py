"""`portalab calibrate` costs what it says (issue 58): the bound it prints
before measuring ("at most N s") holds, from that line to its exit:

    python3 tests/calibrate_bound.py build/host/portalab [--expect TEXT] [--quick] [--spaces S]

--expect: TEXT must also be printed (on stdout or stderr), e.g. the limits
table's note of arrays shrunk for a slow first touch.

A check of the bound's correctness, not a timing target: each step is due
by the sum of the shares up to it and sizes its work from the rates
measured before it (docs/limits.md, "What calibration costs").
"""
import re
import subprocess
import sys
import time

portalab, args = sys.argv[1], sys.argv[2:]
expect = None
if args[:1] == ["--expect"]:
    expect, args = args[1], args[2:]
proc = subprocess.Popen([portalab, "calibrate", "--energy", "off", *args],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
bound, said_at, lines = None, None, []
for line in proc.stderr:
    lines.append(line)
    m = re.match(r"calibrate: at most ([0-9.]+) s", line)
    if m and bound is None:
        bound, said_at = float(m.group(1)), time.monotonic()
out = proc.stdout.read()
proc.wait(timeout=600)
ended = time.monotonic()
text = "".join(lines)
if proc.returncode != 0:
    sys.exit(f"calibrate exited {proc.returncode}:\n{text[-3000:]}")
if bound is None:
    sys.exit(f"no bound printed:\n{text[-3000:]}")
wall = ended - said_at
print(f"bound {bound:.1f} s, wall {wall:.1f} s from the bound's line to the exit")
if wall > bound:
    sys.exit(f"calibration took {wall:.1f} s, over its printed bound of {bound:.1f} s:\n"
             f"{text[-3000:]}")
if expect is not None and expect not in out + text:
    sys.exit(f"calibration did not say {expect!r}:\n{out[-3000:]}{text[-3000:]}")
