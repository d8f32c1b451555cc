#!/usr/bin/env python3
"""A stand-in for a Cuda build's portalab, for scripts/dev/energy-check.sh's test:
`portalab run DECK --out DIR [--energy on|off]` writes DIR/results.json with
one passed Cuda row per entry of the deck, each "running" 0.3 s at the fake
nvidia-smi's 300 W: NVML's joules 300 W × its window × FAKE_JOULES_FACTOR (1),
its clocks those nvidia-smi reports. FAKE_PORTALAB_EXIT=N: exits N at once.
"""
import json
import os
import sys
import time
import tomllib

args = sys.argv[1:]
if os.environ.get("FAKE_PORTALAB_EXIT"):
    sys.exit(int(os.environ["FAKE_PORTALAB_EXIT"]))
assert args[0] == "run", args
deck, out = args[1], args[args.index("--out") + 1]
energy = args[args.index("--energy") + 1] if "--energy" in args else "on"
factor = float(os.environ.get("FAKE_JOULES_FACTOR", "1"))
with open(deck, "rb") as f:
    d = tomllib.load(f)
rows = []
for experiment, t in d.items():
    if not isinstance(t, dict):
        continue
    for dtype in t["dtypes"]:
        for n in t["sizes"]:
            for variant in t["variants"]:
                reps = t.get("reps", d.get("reps", 10))
                t0 = time.time()
                time.sleep(0.3)
                t1 = time.time()
                ms = 0.9 * 300 / reps
                row = {"experiment": experiment, "variant": variant, "space": "Cuda",
                       "dtype": dtype, "n": n, "copies": "none", "reps": reps, "check": "PASS",
                       "kernel_ms": ms, "total_ms": ms, "energy": None}
                if energy == "on":
                    j = 300 * (t1 - t0) * factor
                    row["energy"] = {
                        "gpu": {"joules": j, "joules_per_rep": j / reps, "seconds": t1 - t0,
                                "kernel_joules": j, "kernel_joules_per_rep": j / reps,
                                "mean_power_w": j / (t1 - t0), "reps": reps, "reps_counted": reps},
                        "cpu": {"not_available": "fake"}, "start_unix_s": t0, "end_unix_s": t1,
                        "sm_clock_mhz": 1980.0, "mem_clock_mhz": 2619.0, "power_w": 300.0,
                        "temperature_c": 50.0, "clock_event_reasons": [], "throttled": False,
                        "gflop_per_j": 1.0, "gb_per_j": None}
                rows.append(row)
device = {"space": "Cuda", "name": "Fake H100", "uuid": "GPU-fake", "cuda_driver": 13000}
doc = {"schema_version": 2,  # portalab's (miniapp/results/schema_version.hpp)
       "provenance": {"ranks": [{"device": device}], "devices": [device],
                      "energy": {"gpu": {"name": "Fake H100"}} if energy == "on" else {"off": True}},
       "results": rows, "summary": {}}
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump(doc, f)
print(f"energy: {'GPU Fake H100 through NVML' if energy == 'on' else 'off'}", file=sys.stderr)
