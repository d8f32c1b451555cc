#!/usr/bin/env python3
"""A stand-in for nvidia-smi, for scripts/dev/energy-check.sh's test: one GPU
(GPU-fake) drawing FAKE_SMI_WATTS (300) at 1980/2619 MHz.

    nvidia-smi --query-gpu=FIELDS --format=csv[,nounits] [-lms MS]

prints the header and one line, or with -lms a line every MS ms until
killed; timestamps in local time, as nvidia-smi's (TZ honoured). An unknown
field exits 2 as nvidia-smi does; FAKE_SMI_NO_INSTANT=1 makes
power.draw.instant unknown (a driver before 530).
"""
import datetime
import os
import sys
import time

WATTS = float(os.environ.get("FAKE_SMI_WATTS", "300"))
VALUES = {"name": lambda: "Fake H100", "driver_version": lambda: "580.0",
          "uuid": lambda: "GPU-fake", "power.limit": lambda: "700.00",
          "power.draw": lambda: f"{WATTS:.2f}", "power.draw.instant": lambda: f"{WATTS:.2f}",
          "clocks.sm": lambda: "1980", "clocks.max.sm": lambda: "1980", "clocks.mem": lambda: "2619",
          "temperature.gpu": lambda: "50",
          "timestamp": lambda: datetime.datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]}
UNITS = {"power.draw": " [W]", "power.draw.instant": " [W]", "power.limit": " [W]",
         "clocks.sm": " [MHz]", "clocks.max.sm": " [MHz]", "clocks.mem": " [MHz]"}

args = sys.argv[1:]
fields = next(a.split("=", 1)[1] for a in args if a.startswith("--query-gpu=")).split(",")
if os.environ.get("FAKE_SMI_NO_INSTANT"):
    VALUES.pop("power.draw.instant")
for f in fields:
    if f not in VALUES:
        print(f'Field "{f}" is not a valid field to query.', file=sys.stderr)
        sys.exit(2)
# As the real one (driver 580.159.04): the header gives the long names.
HEADER = {"clocks.sm": "clocks.current.sm", "clocks.mem": "clocks.current.memory",
          "clocks.max.sm": "clocks.max.sm"}
print(", ".join(HEADER.get(f, f) + UNITS.get(f, "") for f in fields), flush=True)
period = int(args[args.index("-lms") + 1]) / 1e3 if "-lms" in args else None
while True:
    print(", ".join(VALUES[f]() for f in fields), flush=True)
    if period is None:
        break
    time.sleep(period)
