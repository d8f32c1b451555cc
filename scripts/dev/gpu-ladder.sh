#!/usr/bin/env bash
# On a GPU node: the bandwidth ladder of the Cuda space (L2 and HBM) from a
# full calibration, then rows at working sets in the L2 (n = 1e6 to 1e7) and
# beyond it (1e8) held to their levels, each printed against its limit.
# Writes OUT (default results/gpu-ladder): calibration.json, ladder.toml,
# run/results.json, and the text of each step.
#   scripts/dev/gpu-ladder.sh [BUILD_DIR] [OUT]      # BUILD_DIR default build/cuda
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;; esac
bin=${1:-build/cuda}
out=${2:-results/gpu-ladder}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true

echo "=== the ladder: a full calibration of Cuda"
"$bin/portalab" calibrate --spaces Cuda --out "$out/calibration.json" 2>&1 | tee "$out/calibrate.txt"

# A dot of 1e6 float64 reads 16 MB, a copy 16 MB, vector_poly fused 24 MB:
# in an H100's 50 MB L2. At 1e7 they straddle it; at 1e8 (1.6 GB) HBM.
cat >"$out/ladder.toml" <<'EOF'
reps = 20
warmups = 3
copies = "none"
spaces = ["Cuda"]

[stream_copy]
sizes = [1_000_000, 2_000_000, 10_000_000, 100_000_000]
variants = ["kernel"]

[dot]
sizes = [1_000_000, 2_000_000, 10_000_000, 100_000_000]
dtypes = ["float32", "float64"]

[vector_poly]
sizes = [1_000_000, 2_000_000, 10_000_000, 100_000_000]
dtypes = ["float64"]
variants = ["fused"]
EOF
echo "=== rows held to their levels"
"$bin/portalab" run "$out/ladder.toml" --calibration "$out/calibration.json" --out "$out/run" \
  2>&1 | tee "$out/run.txt"
python3 "$(dirname "$0")/../pct_of_limit.py" "$out/run/results.json" | tee "$out/pct_of_limit.txt"
python3 - "$out/calibration.json" "$out/run/results.json" <<'EOF'
import json, sys
cal = json.load(open(sys.argv[1]))["calibration"]
for s in cal["spaces"]:
    for v in s.get("ladder", {}).get("levels", []):
        print(f"{s['space']} {v['name']:7} ends {v['end_bytes'] / 1e6:9.1f} MB  rows up to "
              f"{(v['holds_up_to_bytes'] or 0) / 1e6:9.1f} MB  read {v['read_gbps']:8.0f}  "
              f"copy/triad {v['memory_gbps']:8.0f} GB/s  reported {v['reported_bytes'] / 1e6:.1f} MB")
    for n in s.get("ladder", {}).get("notes", []):
        print(f"{s['space']} note: {n}")
rows = [r for r in json.load(open(sys.argv[2]))["results"] if r.get("pct_of_limit")]
for r in rows:
    lim = r["limit"]
    print(f"{r['experiment']:12} {r['variant']:7} {r['dtype']:7} n={r['n']:<10} "
          f"{lim.get('level', '-'):7} {100 * r['pct_of_limit']:6.1f}%  {lim.get('suspect', '')}")
print(f"{len(rows)} rows, {sum(1 for r in rows if r['limit'].get('suspect'))} suspect, "
      f"max {100 * max(r['pct_of_limit'] for r in rows):.1f}%")
EOF
