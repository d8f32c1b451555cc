#!/usr/bin/env bash
# On a GPU node: run the test suite, then the default, bandwidth, lab-6 and
# streams decks, each calibrating the machine's limits first, and print each result
# against them. Results go under OUT (default results/gpu-check), with
# OUT/report.html: one page of every deck's results (scripts/report.py; needs
# a python3 with matplotlib and jinja2, $PORTALAB_PYTHON or python3).
#   scripts/dev/gpu-check.sh [BUILD_DIR] [OUT]      # BUILD_DIR default build/cuda
set -euo pipefail
bin=${1:-build/cuda}
out=${2:-results/gpu-check}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
mkdir -p "$out"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv || echo "nvidia-smi not available"

status=0
"$bin/tests/portalab_tests" --gtest_brief=1 || status=1
for deck in default bandwidth lab6-vector streams; do
  echo "=== $deck"
  "$bin/portalab" run "inputs/$deck.toml" --out "$out/$deck" >"$out/$deck.txt" || status=1
  cat "$out/$deck.txt"
done
echo "=== results against the limits measured in the same run"
for deck in bandwidth lab6-vector; do
  python3 "$(dirname "$0")/../pct_of_limit.py" "$out/$deck/results.json" --min-n 1000000
done
echo "=== one page of every deck's results"
# A page that cannot be written is said and does not fail the check.
"${PORTALAB_PYTHON:-python3}" "$(dirname "$0")/../report.py" "$out" --out "$out/report.html" \
  || echo "gpu-check: no $out/report.html (scripts/report.py failed: see above)" >&2
exit $status
