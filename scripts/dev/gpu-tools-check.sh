#!/usr/bin/env bash
# On a GPU node: Kokkos Tools loaded into portalab's Cuda runs (docs/kokkos-tools.md),
# with the connectors of kokkos/kokkos-tools built here from its source folder
# (scripts/dev/kokkos-tools-connectors.sh: g++ -shared -fPIC -O2, the
# nvtx-connector against CUDA's NVTX3) into OUT/connectors/lib.
#   scripts/dev/gpu-tools-check.sh BUILD_DIR KOKKOS_TOOLS_SRC [OUT]   # OUT: results/gpu-tools-check
#  1. `ctest -L tools` in BUILD_DIR: portalab's own test tool
#     (tests/tools/event_checker.cpp) over tests/decks/tools.toml in every
#     compiled space, Cuda included.
#  2. tests/decks/tools.toml with Cuda under each of space-time-stack,
#     simple-kernel-timer, kernel-logger, memory-hwm, memory-events and
#     chrome-tracing: one line each with portalab's exit code and the tool's
#     "not in the currently allocated set" warnings; each run must exit 0,
#     every measured row PASS, no such warning, the tool's output complete.
#  3. space-time-stack and 4. simple-kernel-timer over the lab decks with
#     Cuda (2 repetitions): each run exits 0, the tool's report is complete
#     and names every experiment's portalab/<experiment>/Cuda/kernel region
#     (and cuBLAS' region where a row's library is cuBLAS); no popRegion
#     outside a region.
#  5. Nsight Systems with the nvtx-connector beside portalab's own NVTX
#     ranges, over tests/decks/tools.toml, the streams deck and lab6-vector:
#     scripts/dev/nsys_check.py with `closed` (every range ended) and
#     `tool_copies` (each portalab range exactly twice, the connector's copy
#     around portalab's own) required, beside the deck's own assertions.
# Prints PASS/FAIL per check; exit 1 if any fails, 2 if something is missing.
# Environment: NSYS, NSYS_LIBS (as scripts/dev/profile.sh), PYTHON; DECKS (the
# lab decks of steps 3 and 4, by name); SPACE (Cuda) runs steps 2 to 4 in
# another space (SPACE=Serial DECKS=cupy-numba: a try on a host build);
# NVTX_INCLUDE (CUDA's include folder with nvtx3/; default $CUDA_HOME/include).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(dirname "$(dirname "$here")")  # scripts/dev/ -> the source tree
case ${1:-} in -h | --help) sed -n '2,30p' "$0"; exit 0 ;; esac
if (($# < 2)); then
  sed -n '2,30p' "$0" >&2
  exit 2
fi
bin=$(cd "$1" 2>/dev/null && pwd) src=$2 out=${3:-results/gpu-tools-check}
[ -x "$bin/portalab" ] || { echo "gpu-tools-check: no $1/portalab" >&2; exit 2; }
[ -f "$src/profiling/space-time-stack/kp_space_time_stack.cpp" ] || {
  echo "gpu-tools-check: $src is not a kokkos-tools source folder" >&2
  exit 2
}
python=${PYTHON:-python3}
space=${SPACE:-Cuda}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
mkdir -p "$out"
out=$(cd "$out" && pwd)
connectors=$out/connectors
tools=$connectors/lib
# Every connector and kp_reader, built once; the nvtx-connector needs NVTX3.
"$here/kokkos-tools-connectors.sh" --build-only "$bin/portalab" "$src" "$connectors" || {
  echo "gpu-tools-check: the connectors did not build (see $tools/*.build.txt)" >&2
  exit 2
}

# tool NAME: the connector library NAME (libNAME.so from CMake, NAME.so from a Makefile).
tool() {
  local found
  found=$(find "$tools" \( -name "lib$1.so" -o -name "$1.so" \) -print -quit)
  [ -n "$found" ] || { echo "gpu-tools-check: no $1.so under $tools" >&2; exit 2; }
  echo "$found"
}
space_time_stack=$(tool kp_space_time_stack) || exit 2
kernel_timer=$(tool kp_kernel_timer) || exit 2
kp_reader=$(find "$tools" -name kp_reader -type f -perm -u+x -print -quit)
[ -n "$kp_reader" ] || { echo "gpu-tools-check: no kp_reader under $tools" >&2; exit 2; }

status=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; status=1; }

# expect_regions NAME REPORT RESULTS: every experiment with a measured row in
# the space has its kernel region in REPORT; cuBLAS' region where a row's
# library is cuBLAS.
expect_regions() {
  local name=$1 report=$2 results=$3 missing
  missing=$("$python" - "$report" "$results" "$space" <<'EOF'
import json, sys
report = open(sys.argv[1], errors="replace").read()
space = sys.argv[3]
rows = [r for r in json.load(open(sys.argv[2]))["results"]
        if r["space"] == space and r["check"] in ("PASS", "FAIL")]
want = {f"portalab/{r['experiment']}/{space}/kernel" for r in rows}
if any(r.get("library") == "cuBLAS" for r in rows):
    want.add("TPL_CUBLAS")
print(" ".join(sorted(w for w in want if w not in report)) if rows else f"no measured {space} row")
EOF
)
  if [ -z "$missing" ]; then
    pass "$name: every experiment's region reported"
  else
    fail "$name: missing $missing"
  fi
}

# run_deck NAME DECK TOOL_LIB [ARGS]: portalab over DECK in the space under
# TOOL_LIB, in OUT/NAME/; ARGS more options.
run_deck() {
  local name=$1 deck=$2 lib=$3
  shift 3
  mkdir -p "$out/$name"
  (cd "$out/$name" && "$bin/portalab" run "$source_dir/inputs/$deck.toml" --out results \
      --spaces "$space" --set calibrate=none --set profile_reps=2 --set warmups=1 \
      "--kokkos-tools-libs=$lib" "$@" >stdout.txt 2>stderr.txt)
}

echo "=== 1. portalab's test tool (ctest -L tools)"
if ctest --test-dir "$bin" -L tools --output-on-failure >"$out/ctest-tools.txt" 2>&1; then
  pass "ctest -L tools"
else
  fail "ctest -L tools (see $out/ctest-tools.txt)"
fi

echo "=== 2. each connector over tests/decks/tools.toml with $space (exit code, warnings)"
if SPACES=$space CONNECTORS="space-time-stack simple-kernel-timer kernel-logger memory-hwm memory-events chrome-tracing" \
   "$here/kokkos-tools-connectors.sh" "$bin/portalab" "$src" "$connectors" >"$out/connectors.txt" 2>&1; then
  pass "connectors over tools.toml"
else
  fail "connectors over tools.toml (see $out/connectors.txt)"
fi
grep -E "^(PASS|FAIL) " "$out/connectors.txt"

read -r -a decks <<<"${DECKS:-cupy-intro cupy-continued cupy-numba lab6-matmul lab6-vector streams}"
echo "=== 3. space-time-stack over ${decks[*]}"
for deck in "${decks[@]}"; do
  name=space-time-stack-$deck
  # Its argument: the share of the time below which it leaves a frame out (0.1%).
  run_deck "$name" "$deck" "$space_time_stack" --kokkos-tools-args=0 || {
    fail "$name: portalab exited $? (see $out/$name/)"
    continue
  }
  if grep -q "END KOKKOS PROFILING REPORT" "$out/$name/stdout.txt"; then
    expect_regions "$name" "$out/$name/stdout.txt" "$out/$name/results/results.json"
  else
    fail "$name: no complete report in $out/$name/stdout.txt"
  fi
done

echo "=== 4. simple-kernel-timer over ${decks[*]}"
for deck in "${decks[@]}"; do
  name=kernel-timer-$deck
  run_deck "$name" "$deck" "$kernel_timer" || {
    fail "$name: portalab exited $? (see $out/$name/)"
    continue
  }
  if grep -q "popRegion() called outside" "$out/$name/stderr.txt"; then
    fail "$name: the kernel timer saw a pop without its push ($out/$name/stderr.txt)"
  fi
  dat=$(find "$out/$name" -maxdepth 1 -name "*.dat" -print -quit)
  if [ -n "$dat" ] && "$kp_reader" "$dat" >"$out/$name/kp_reader.txt" 2>&1; then
    expect_regions "$name" "$out/$name/kp_reader.txt" "$out/$name/results/results.json"
  else
    fail "$name: no .dat file, or kp_reader could not read it"
  fi
done

echo "=== 5. Nsight Systems with the nvtx-connector beside portalab's NVTX ranges"
# shellcheck source=scripts/dev/nsys_env.sh
source "$here/nsys_env.sh"
if ! nvtx_connector=$(tool kp_nvtx_connector); then
  fail "no nvtx-connector under $tools: the Nsight Systems check did not run"
elif portalab_find_nsys; then
  portalab_nsys_options
  # profile NAME DECK REQUIRED [portalab args]; DECK: a name in inputs/, or a path
  profile() {
    local name=$1 deck=$2 required=$3
    shift 3
    [[ $deck == */* ]] || deck=$source_dir/inputs/$deck.toml
    "$NSYS" profile "${PORTALAB_NSYS_OPTIONS[@]}" --output="$out/$name" \
      "$bin/portalab" run "$deck" --out "$out/$name" --spaces Cuda \
      --set calibrate=none --set profile_reps=2 --set warmups=1 \
      "--kokkos-tools-libs=$nvtx_connector" "$@" >"$out/$name.txt" 2>&1 ||
      fail "$name: portalab under nsys exited $? (see $out/$name.txt)"
    if [ -f "$out/$name.nsys-rep" ] && portalab_nsys_summaries "$out/$name.nsys-rep" &&
       "$python" "$here/nsys_check.py" "$out/$name.sqlite" "$out/$name/results.json" \
         --require "$required" >"$out/$name-check.txt"; then
      pass "$name: nsys_check.py --require $required"
    else
      fail "$name: see $out/$name-check.txt"
    fi
    cat "$out/$name-check.txt" 2>/dev/null
  }
  profile nvtx-tools-deck "$source_dir/tests/decks/tools.toml" ranges,kernel_labels,closed,tool_copies
  profile nvtx-streams streams ranges,kernel_labels,streams,closed,tool_copies \
    --set "inverse_pair.sizes=[2048]" --set "copy_overlap.sizes=[16000000]" \
    --set copy_overlap.chunks=8 --set concurrent_small.kernels=64
  profile nvtx-copies lab6-vector ranges,kernel_labels,copy_phases,closed,tool_copies \
    --set "vector_poly.sizes=[4000000]" --set "stream_copy.sizes=[4000000]"
else
  fail "no nsys: the nvtx-connector check did not run"
fi

if ((status == 0)); then echo "gpu-tools-check: PASS"; else echo "gpu-tools-check: FAIL"; fi
exit "$status"
