# Sourced by verdict_bench.sh and history_bench.sh, after their arguments:
#   bench_setup NAME BUILD_DIR OUT   sets here, portalab (exported as
#                                    PORTALAB), out (emptied) and python
#   run FOLDER ARGS...               portalab run ARGS into $out/FOLDER
#                                    (${launch:-} before it), its time printed
# BENCH_ARGS adds arguments to every run: BENCH_ARGS="--set passes=1" times
# the same build as it measured before passes.
bench_setup() {
  bench=$1
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  portalab=$2/portalab
  [ -x "$portalab" ] || { echo "$bench: no $portalab (build first)" >&2; exit 2; }
  export PORTALAB=$portalab
  out=$3
  rm -rf "$out"
  mkdir -p "$out"
  python=${PYTHON:-python3}
}

run() {
  local name=$1 start; shift
  start=$(date +%s.%N)
  mkdir -p "$(dirname "$out/$name")"
  # shellcheck disable=SC2086 # BENCH_ARGS is words
  ${launch:-} "$portalab" run "$@" ${BENCH_ARGS:-} --out "$out/$name" >"$out/$name.log" 2>&1 ||
    echo "$bench: $name exited $?"
  echo "run $name: $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}') s"
}
