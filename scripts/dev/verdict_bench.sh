#!/usr/bin/env bash
# The verdicts' benchmark (issue 57), run by hand, not a test: how often
# compare.py's verdicts are false, and how often they find a real change.
#   (a) the default deck twice on one build, compared (--phase kernel):
#       every FASTER or SLOWER is a false verdict;
#   (b) a deck of OpenMP rows of several milliseconds, 2 threads bound to CPUs 0-1, run
#       quiet twice and then with a CPU hog on CPU 1: the share said SLOWER,
#       the run-to-run noise measured on the two quiet runs (--noise-from),
#       then on the quiet and loaded pair itself (compare.py's default).
# Each comparison twice: by the U test on the repetitions (the files as
# written), and by the older rule (the same files, repetitions removed).
# Prints one line per comparison and the time each run took.
#   scripts/dev/verdict_bench.sh [BUILD_DIR] [OUT]   # build/host, results/verdict-bench
set -uo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-build/host}
out=${2:-results/verdict-bench}
portalab=$bin/portalab
[ -x "$portalab" ] || { echo "verdict-bench: no $portalab (build first)" >&2; exit 2; }
export PORTALAB=$portalab
mkdir -p "$out"
python=${PYTHON:-python3}

run() {  # name, then portalab run's arguments
  local name=$1 start; shift
  start=$(date +%s.%N)
  ${launch:-} "$portalab" run "$@" --out "$out/$name" >"$out/$name.log" 2>&1 ||
    echo "verdict-bench: $name exited $?"
  echo "run $name: $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}') s"
}

judge() {  # label, base, new, the verdict that counts as found[, compare.py's options]
  local extra=("${@:5}")
  for rule in test older; do
    local b=$2 n=$3
    if [ $rule = older ]; then  # the same files without their repetitions
      for side in "$2" "$3"; do
        mkdir -p "$side-older"
        "$python" -c 'import json,sys; d=json.load(open(sys.argv[1]))
for r in d["results"]: r.pop("repetitions", None)
json.dump(d, open(sys.argv[2], "w"))' "$side/results.json" "$side-older/results.json"
      done
      b=$2-older n=$3-older
    fi
    "$python" "$here/scripts/compare.py" "$b" "$n" --phase kernel "${extra[@]}" \
      >"$out/compare.txt" 2>/dev/null
    "$python" - "$out/compare.txt" "$1" "$rule" "$4" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()[1:]
verdicts = [l.split()[-1] if not l.endswith("REGRESSION") else l.split()[-2] for l in lines]
judged = [v for v in verdicts if v in ("same", "faster", "slower")]
found = sum(v in sys.argv[4].split(",") for v in judged)
print(f"{sys.argv[2]}, {sys.argv[3]} rule: {found} of {len(judged)} rows "
      f"{sys.argv[4].replace(',', ' or ')} ({100 * found / max(len(judged), 1):.1f}%)")
PY
  done
}

# (a) two quiet runs of the default deck
run default-1 "$here/inputs/default.toml"
run default-2 "$here/inputs/default.toml"
judge "(a) default deck twice" "$out/default-1" "$out/default-2" "faster,slower"

# (b) rows of several milliseconds on two threads, quiet and with a hog on
# one of their CPUs. The scheduler shares the hog's CPU in slices of a few
# milliseconds: a repetition shorter than a slice runs either whole or after
# one of the hog's, and where most run whole the median does not move. So
# the rows are longer than a slice, with a budget that gives the U test
# tens of repetitions (docs/performance.md, Verdicts, measured).
cat >"$out/hog.toml" <<'DECK'
# verdict_bench.sh's rows longer than the scheduler's slice (2 threads on a 2-core VM)
spaces = ["OpenMP"]
copies = ["none"]
max_time_s = 0.5
[vector_poly]
sizes = [16_000_000, 32_000_000]
dtypes = ["float64", "float32"]
[stream_copy]
sizes = [32_000_000, 64_000_000]
dtypes = ["float64", "float32"]
[dot]
sizes = [32_000_000, 64_000_000]
dtypes = ["float64", "float32"]
variants = ["native", "vendor"]
DECK
# Each thread bound to its core, so that the hog shares a core with one of
# them in every row (with the first thread left free, as portalab places it
# by default, the scheduler moves it off the hog's CPU in some rows and not
# in others).
export OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores
launch="taskset -c 0,1"
$launch true 2>/dev/null || launch=""
run quiet "$out/hog.toml" --set calibrate=none
run quiet-2 "$out/hog.toml" --set calibrate=none
judge "(b0) the two quiet runs" "$out/quiet" "$out/quiet-2" "faster,slower"
"$python" -c 'while True: pass' &
hog=$!
[ -n "$launch" ] && taskset -pc 1 "$hog" >/dev/null
run loaded "$out/hog.toml" --set calibrate=none
kill "$hog"
judge "(b) a hog on one of the two CPUs" "$out/quiet" "$out/loaded" "slower" \
  --noise-from "$out/quiet" "$out/quiet-2"
# The same pair with the noise measured on it, as compare.py does by
# default: the hog moves every row alike, which that noise does not count.
judge "(b) the same, the noise from the pair itself" "$out/quiet" "$out/loaded" "slower"
