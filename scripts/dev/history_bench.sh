#!/usr/bin/env bash
# The store's verdicts' benchmark (issue 57), run by hand, not a test: how
# often `portalab db history` calls the latest run of a row changed against
# the earlier ones, and how often it finds a real change.
#   (a) the default deck RUNS times (default 8) on one build, imported into
#       a store one run at a time; after each from the third, the latest
#       against the earlier (--phase kernel): every FASTER or SLOWER is a
#       false verdict;
#   (b) the hog deck of verdict_bench.sh six times quiet, then once with a
#       CPU hog on CPU 1 (2 threads bound to CPUs 0-1): the share of its rows
#       said SLOWER; then once more quiet (b0): false verdicts.
# Prints one line per history and the time each run took. Give folders of
# earlier runs instead (--from A B: A the default deck's runs, B the hog
# deck's quiet runs then the loaded one, each a folder of results.json
# folders, imported in the order their runs started) to judge them again.
#   scripts/dev/history_bench.sh [BUILD_DIR] [OUT] [RUNS]   # build/host, results/history-bench, 8
#   scripts/dev/history_bench.sh [BUILD_DIR] [OUT] --from A B
set -uo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;; esac
# shellcheck source=scripts/dev/bench_runs.sh
. "$(dirname "$0")/bench_runs.sh"
bench_setup history-bench "${1:-build/host}" "${2:-results/history-bench}"
from_a="" from_b="" runs=8
if [ "${3:-}" = --from ]; then
  from_a=${4:?history-bench: --from A B}
  from_b=${5:?history-bench: --from A B}
else
  runs=${3:-8}
fi

started() {  # the folders holding results.json under $1, in the order their runs started
  "$python" - "$1" <<'PY'
import json, os, sys
found = []
for d, _, names in os.walk(sys.argv[1], followlinks=True):
    if "results.json" in names:
        with open(os.path.join(d, "results.json")) as f:
            found.append((json.load(f)["provenance"]["started_at"], d))
for _, d in sorted(found):
    print(d)
PY
}

judge() {  # label, the store, the verdicts that count
  "$portalab" db history --db "$2" --phase kernel --json >"$out/history.json" 2>/dev/null
  "$python" - "$out/history.json" "$1" "$3" <<'PY'
import collections, json, sys
h = json.load(open(sys.argv[1]))
runs = collections.Counter(len(r["runs"]) for r in h["rows"])
latest = max(runs) if runs else 0
rows = [r for r in h["rows"] if len(r["runs"]) == latest]  # the keys every run has
judged = [r for r in rows if r["verdict"] in ("SAME", "FASTER", "SLOWER")]
found = sum(r["verdict"] in sys.argv[3].split(",") for r in judged)
latest = h["noise"].get("latest")  # none from a build before it
print(f"{sys.argv[2]}: {found} of {len(judged)} rows {sys.argv[3].replace(',', ' or ')} "
      f"({100 * found / max(len(judged), 1):.1f}%); noise of the earlier runs "
      f"{100 * h['noise']['pooled']:.1f}%"
      + (f", of the latest {100 * latest['pooled']:.1f}%" if latest else ""))
PY
}

# (a) the default deck, one run imported at a time
store=$out/default.sqlite
if [ -n "$from_a" ]; then
  mapfile -t default_runs < <(started "$from_a")
else
  default_runs=()
  for i in $(seq 1 "$runs"); do
    run "default/$i" "$here/inputs/default.toml"
    default_runs+=("$out/default/$i")
  done
fi
k=0
for d in "${default_runs[@]}"; do
  k=$((k + 1))
  "$portalab" db import --db "$store" "$d" >/dev/null 2>&1 || echo "history-bench: importing $d failed"
  [ "$k" -ge 3 ] && judge "(a) run $k against $((k - 1)) earlier" "$store" "FASTER,SLOWER"
done

# (b) the hog deck: quiet runs, then one loaded, then one quiet again
store=$out/hog.sqlite
if [ -n "$from_b" ]; then
  mapfile -t hog_runs < <(started "$from_b")
  for d in "${hog_runs[@]}"; do
    "$portalab" db import --db "$store" "$d" >/dev/null 2>&1 || echo "history-bench: importing $d failed"
  done
  judge "(b) the last of ${#hog_runs[@]} runs" "$store" "SLOWER"
  exit 0
fi
export OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores
launch="taskset -c 0,1"
$launch true 2>/dev/null || launch=""
hog_deck=$here/scripts/dev/verdict_hog.toml
for i in 1 2 3 4 5 6; do
  run "quiet/$i" "$hog_deck" --set calibrate=none
  "$portalab" db import --db "$store" "$out/quiet/$i" >/dev/null 2>&1
done
"$python" -c 'while True: pass' &
hog=$!
[ -n "$launch" ] && taskset -pc 1 "$hog" >/dev/null
run loaded "$hog_deck" --set calibrate=none
kill "$hog"
wait "$hog" 2>/dev/null
cp "$store" "$out/hog-quiet.sqlite"
"$portalab" db import --db "$store" "$out/loaded" >/dev/null 2>&1
judge "(b) a hog on one of the two CPUs, after six quiet runs" "$store" "SLOWER"
run quiet/7 "$hog_deck" --set calibrate=none
"$portalab" db import --db "$out/hog-quiet.sqlite" "$out/quiet/7" >/dev/null 2>&1
judge "(b0) a seventh quiet run, after six" "$out/hog-quiet.sqlite" "FASTER,SLOWER"
