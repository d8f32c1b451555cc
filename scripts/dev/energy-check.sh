#!/usr/bin/env bash
# On a GPU node, with a built Cuda tree (builds nothing): issue 30's checks of
# the energy figures, in a few minutes. nvidia-smi samples the
# GPU's power and clocks every 20 ms (a setting, not measured) while portalab runs
#   (a) a few Cuda entries of several seconds each (gemm 8192 in float32 and
#       float64, stream_copy): each entry's NVML joules against the integral
#       of the sampled power over the entry's window;
#   (b) the gemm entries: joules against mean power × time;
#   (c) one deliberately long entry (gemm, about 40 s): its clocks recorded;
# then, with the sampler stopped, (d) the same entries, fewer repetitions,
# twice with --energy off and twice on: the queries' cost. scripts/dev/energy_check.py
# prints PASS or FAIL for each and writes OUT/energy-check.md for
# docs/performance.md. Exit 1 if a check failed or a run did, 2 if the binary
# or nvidia-smi is missing.
#   scripts/dev/energy-check.sh [BUILD_DIR] [OUT]   # build/cuda, results/energy-check
# BUILD_DIR is any folder holding a Cuda build's portalab (an install's bin).
# ENERGY_CHECK_LONG_MIN_S: the shortest the long run may last (default 20 s;
# the script's own test runs a fake portalab).
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/cuda}
out=${2:-results/energy-check}
portalab=$bin/portalab
[ -x "$portalab" ] || { echo "energy-check: no $portalab (build the cuda preset first)" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "energy-check: no nvidia-smi on PATH" >&2; exit 2; }
mkdir -p "$out"

# The entries: long enough that a 20 ms sampler sees each for seconds (sized
# for an H100's gemm and memory rates; the 20 ms is set, not measured); the
# long run tens of seconds of
# float32 gemm.
deck_head() { printf 'calibrate = "none"\nspaces = ["Cuda"]\ncopies = "none"\nwarmups = 3\n'; }
gemm() {  # DTYPES REPS
  printf '\n[gemm]\nsizes = [8192]\ndtypes = %s\nvariants = ["vendor"]\nreps = %s\n' "$1" "$2"
}
copy() {  # REPS
  printf '\n[stream_copy]\nsizes = [200_000_000]\ndtypes = ["float64"]\nvariants = ["kernel"]\nreps = %s\n' "$1"
}
{ deck_head; gemm '["float32", "float64"]' 250; copy 3000; } >"$out/entries.toml"
{ deck_head; gemm '["float32", "float64"]' 40; copy 400; } >"$out/cost.toml"
{ deck_head; gemm '["float32"]' 1800; } >"$out/long.toml"

nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv | tee "$out/gpu.csv"
# power.draw.instant where the driver has it (530 and later): power.draw is a
# one-second mean on Ampere and later.
fields=timestamp,uuid,power.draw.instant,power.draw,clocks.sm,clocks.mem
nvidia-smi --query-gpu=$fields --format=csv,nounits >/dev/null 2>&1 ||
  fields=timestamp,uuid,power.draw,clocks.sm,clocks.mem

status=0
run() {  # NAME DECK ARGS...: portalab's output in OUT/NAME.txt
  local name=$1 deck=$2
  shift 2
  echo "=== $name"
  "$portalab" run "$deck" --out "$out/$name" "$@" >"$out/$name.txt" 2>&1 ||
    { echo "portalab run $name failed: see $out/$name.txt" >&2; status=1; }
  grep -E '^energy:|THROTTLED|J/rep' "$out/$name.txt" || true
}

echo "=== sampling: nvidia-smi --query-gpu=$fields -lms 20"
TZ=UTC nvidia-smi --query-gpu=$fields --format=csv,nounits -lms 20 >"$out/samples.csv" &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT
sleep 2  # the idle GPU before the first entry
run entries "$out/entries.toml" --energy on
run long "$out/long.toml" --energy on
sleep 2  # past the last window, by more than power.draw's one second
kill $sampler
wait $sampler 2>/dev/null || true
trap - EXIT

# The cost, without the sampler's own queries beside portalab's.
for round in 1 2; do
  run "cost_off_$round" "$out/cost.toml" --energy off
  run "cost_on_$round" "$out/cost.toml" --energy on
done

echo "=== checks"
python3 "$here/energy_check.py" --samples "$out/samples.csv" \
  --entries "$out/entries/results.json" --long "$out/long/results.json" \
  --cost-off "$out/cost_off_1/results.json" "$out/cost_off_2/results.json" \
  --cost-on "$out/cost_on_1/results.json" "$out/cost_on_2/results.json" \
  --long-min-s "${ENERGY_CHECK_LONG_MIN_S:-20}" \
  --markdown "$out/energy-check.md" || status=1
exit $status
