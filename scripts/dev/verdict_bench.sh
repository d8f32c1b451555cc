#!/usr/bin/env bash
# The verdicts' benchmark (issue 57), run by hand, not a test: how often
# compare.py's verdicts are false, and how often they find a real change,
# with one run a side and with two.
#   (a) the default deck four times on one build, runs 1 and 3 against 2
#       and 4 (--phase kernel): every FASTER or SLOWER is a false verdict;
#   (b) a deck of OpenMP rows of several milliseconds, 2 threads bound to
#       CPUs 0-1, run quiet and with a CPU hog on CPU 1, taking turns
#       (quiet, loaded, quiet, loaded): the share said SLOWER;
#   (b0) its two quiet runs against each other: false verdicts;
#   (c), (c0) the same with rows whose time is set by their arithmetic
#       (verdict_compute.toml), not by the memory.
# One run a side is compare.py on two results.json; two a side, on two
# folders of two runs each, where each entry's change must also exceed its
# runs' spread. Prints one line per comparison (with how NEW moved as a
# whole and the median change a row had to pass) and the time each run took.
#   scripts/dev/verdict_bench.sh [BUILD_DIR] [OUT]   # build/host, results/verdict-bench
set -uo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;; esac
# shellcheck source=scripts/dev/bench_runs.sh
. "$(dirname "$0")/bench_runs.sh"
bench_setup verdict-bench "${1:-build/host}" "${2:-results/verdict-bench}"

judge() {  # label, base, new, the verdicts that count as found
  "$python" "$here/scripts/compare.py" "$2" "$3" --phase kernel >"$out/compare.txt" \
    2>"$out/compare.err"
  "$python" - "$out/compare.txt" "$1" "$4" "$out/compare.err" <<'PY'
import re, statistics, sys
lines = open(sys.argv[1]).read().splitlines()[1:]
# Each line's words and where its verdict is (a REGRESSION mark follows it).
rows = [(w, -2 if w[-1] == "REGRESSION" else -1) for w in (l.split() for l in lines)]
judged = [w[v] for w, v in rows if w[v] in ("same", "faster", "slower")]
found = sum(v in sys.argv[3].split(",") for v in judged)
# What a change had to pass (the column before the verdict), and how NEW
# moved as a whole (compare.py's own figures): a miss where the quiet runs
# moved as much is the machine's.
needed = [float(w[v - 1].rstrip("%")) for w, v in rows if re.fullmatch(r"[\d.]+%", w[v - 1])]
whole = re.search(r"as a whole: (\S+)", open(sys.argv[4]).read())
print(f"{sys.argv[2]}: {found} of {len(judged)} rows "
      f"{sys.argv[3].replace(',', ' or ')} ({100 * found / max(len(judged), 1):.1f}%); "
      f"NEW as a whole {whole.group(1) if whole else '?'}, median needed "
      f"{f'+{statistics.median(needed):.0f}%' if needed else '?'}")
PY
}

# (a) four quiet runs of the default deck, the two sides taking turns
for i in 1 2 3 4; do
  run "default-$(((i + 1) % 2 + 1))/$i" "$here/inputs/default.toml"
done
judge "(a) default deck, one run a side" "$out/default-1/1" "$out/default-2/2" "faster,slower"
judge "(a) default deck, two runs a side" "$out/default-1" "$out/default-2" "faster,slower"

# (b) rows of several milliseconds on two threads, quiet and with a hog on
# one of their CPUs. The scheduler shares the hog's CPU in slices of a few
# milliseconds: a repetition shorter than a slice runs either whole or after
# one of the hog's, and where most run whole the median does not move. So
# the rows are longer than a slice, with a budget that gives the U test
# tens of repetitions (docs/performance.md, Verdicts, measured).
hog_deck=$here/scripts/dev/verdict_hog.toml
# Each thread bound to its core, so that the hog shares a core with one of
# them in every row (with the first thread left free, as portalab places it
# by default, the scheduler moves it off the hog's CPU in some rows and not
# in others).
export OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores
launch="taskset -c 0,1"
$launch true 2>/dev/null || launch=""
quiet_and_loaded() {  # deck, prefix of the folders: two quiet runs and two loaded, by turns
  local i hog
  for i in 1 2; do
    run "${2}quiet/$i" "$1" --set calibrate=none
    "$python" -c 'while True: pass' &
    hog=$!
    [ -n "$launch" ] && taskset -pc 1 "$hog" >/dev/null
    run "${2}loaded/$i" "$1" --set calibrate=none
    kill "$hog"
    wait "$hog" 2>/dev/null
  done
}
quiet_and_loaded "$hog_deck" ""
judge "(b0) the two quiet runs" "$out/quiet/1" "$out/quiet/2" "faster,slower"
judge "(b) a hog on one of the two CPUs, one run a side" "$out/quiet/1" "$out/loaded/1" "slower"
judge "(b) the same, two runs a side" "$out/quiet" "$out/loaded" "slower"

# (c) as (b), rows whose time is set by their arithmetic: on the CI VM the
# memory's speed moves from second to second and the cores' does not.
quiet_and_loaded "$here/scripts/dev/verdict_compute.toml" compute/
judge "(c0) compute rows, the two quiet runs" "$out/compute/quiet/1" "$out/compute/quiet/2" \
  "faster,slower"
judge "(c) compute rows with the hog, one run a side" "$out/compute/quiet/1" \
  "$out/compute/loaded/1" "slower"
judge "(c) the same, two runs a side" "$out/compute/quiet" "$out/compute/loaded" "slower"
