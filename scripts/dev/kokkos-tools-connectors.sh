#!/usr/bin/env bash
# Kokkos Tools' own connectors (kokkos/kokkos-tools) loaded into portalab as a
# user loads them (docs/kokkos-tools.md): each is built from a kokkos-tools
# source folder as one shared library (g++ -shared -fPIC -O2 against its
# common/ and profiling/all/ headers), then `portalab run DECK` runs under
# each connector, in each space.
#   scripts/dev/kokkos-tools-connectors.sh PORTALAB KOKKOS_TOOLS_SRC OUT [DECK]
# PORTALAB: the binary; DECK: tests/decks/tools.toml by default; the
# libraries go to OUT/lib (kp_reader too), each run to OUT/CONNECTOR-SPACE/.
# One line per connector and space:
#   PASS|FAIL CONNECTOR SPACE exit=N warnings=N rows=P/M [why]
# warnings: the tool's "not in the currently allocated set" lines; rows: the
# PASS rows of the M measured (N/A and SKIPPED rows aside). A run passes when
# portalab exits 0, every measured row is PASS, there is no such warning nor
# a tool's word of an unbalanced event ("popRegion() called outside",
# "different kernel ID", "end root stack frame", "Program ended before"),
# and the tool's output is complete (its report or file).
# Environment: SPACES (default "Serial OpenMP"); CONNECTORS (default
# space-time-stack simple-kernel-timer kernel-logger memory-hwm memory-events
# chrome-tracing, and nvtx-connector where CUDA's NVTX3 headers are found:
# NVTX_INCLUDE, else $CUDA_HOME/include); CXX (g++); PORTALAB_ARGS (more
# options for each run). --build-only builds the libraries and stops.
# Exit 0 when every run passes, 1 if one fails, 2 on bad arguments or a
# connector that does not build.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(dirname "$(dirname "$here")")  # scripts/dev/ -> the source tree
usage() { sed -n '2,26p' "$0"; }
build_only=0
if [[ ${1:-} == --build-only ]]; then build_only=1; shift; fi
case ${1:-} in -h | --help) usage; exit 0 ;; esac
if (($# < 3)); then usage >&2; exit 2; fi
portalab=$1 src=$2 out=$3 deck=${4:-$source_dir/tests/decks/tools.toml}
[[ -x $portalab ]] || { echo "kokkos-tools-connectors: $portalab: no such executable" >&2; exit 2; }
[[ -f $src/profiling/space-time-stack/kp_space_time_stack.cpp ]] || {
  echo "kokkos-tools-connectors: $src: not a kokkos-tools source folder (no profiling/space-time-stack/kp_space_time_stack.cpp)" >&2
  exit 2
}
[[ -f $deck ]] || { echo "kokkos-tools-connectors: $deck: no such deck" >&2; exit 2; }
portalab=$(cd "$(dirname "$portalab")" && pwd)/$(basename "$portalab")
deck=$(cd "$(dirname "$deck")" && pwd)/$(basename "$deck")
src=$(cd "$src" && pwd)
mkdir -p "$out/lib" || exit 2
out=$(cd "$out" && pwd)
lib=$out/lib
cxx=${CXX:-g++}
nvtx_include=${NVTX_INCLUDE:-${CUDA_HOME:-/usr/local/cuda}/include}
read -r -a spaces <<<"${SPACES:-Serial OpenMP}"
default_connectors="space-time-stack simple-kernel-timer kernel-logger memory-hwm memory-events chrome-tracing"
[[ -f $nvtx_include/nvtx3/nvToolsExt.h ]] && default_connectors+=" nvtx-connector"
read -r -a connectors <<<"${CONNECTORS:-$default_connectors}"

# The library of CONNECTOR and the sources it is built from.
library() {
  case $1 in
    space-time-stack) echo kp_space_time_stack ;;
    simple-kernel-timer) echo kp_kernel_timer ;;
    kernel-logger) echo kp_kernel_logger ;;
    memory-hwm) echo kp_hwm ;;
    memory-events) echo kp_memory_events ;;
    chrome-tracing) echo kp_chrome_tracing ;;
    nvtx-connector) echo kp_nvtx_connector ;;
    *) return 1 ;;
  esac
}
sources() {
  case $1 in
    space-time-stack) echo profiling/space-time-stack/kp_space_time_stack.cpp ;;
    simple-kernel-timer)
      echo profiling/simple-kernel-timer/kp_kernel_timer.cpp profiling/simple-kernel-timer/kp_shared.cpp ;;
    kernel-logger) echo debugging/kernel-logger/kp_kernel_logger.cpp ;;
    memory-hwm) echo profiling/memory-hwm/kp_hwm.cpp ;;
    memory-events) echo profiling/memory-events/kp_memory_events.cpp ;;
    chrome-tracing) echo profiling/chrome-tracing/kp_chrome_tracing.cpp ;;
    nvtx-connector) echo profiling/nvtx-connector/kp_nvtx_connector.cpp ;;
  esac
}

includes=(-I"$src/common" -I"$src/common/makefile-only" -I"$src/profiling/all")
for c in "${connectors[@]}"; do
  name=$(library "$c") || { echo "kokkos-tools-connectors: unknown connector $c" >&2; exit 2; }
  extra=()
  if [[ $c == nvtx-connector ]]; then
    # CUDA 13 ships NVTX3 alone (header-only); the connector includes "nvToolsExt.h".
    mkdir -p "$lib/nvtx-shim"
    echo '#include <nvtx3/nvToolsExt.h>' >"$lib/nvtx-shim/nvToolsExt.h"
    extra=(-I"$lib/nvtx-shim" -I"$nvtx_include" -ldl)
  fi
  read -r -a files <<<"$(sources "$c")"
  if ! (cd "$src" && "$cxx" -std=c++17 -shared -fPIC -O2 "${includes[@]}" "${files[@]}" \
          -o "$lib/$name.so" "${extra[@]}") >"$lib/$name.build.txt" 2>&1; then
    echo "kokkos-tools-connectors: $c did not build (see $lib/$name.build.txt)" >&2
    exit 2
  fi
done
(cd "$src" && "$cxx" -std=c++17 -O2 "${includes[@]}" profiling/simple-kernel-timer/kp_reader.cpp \
   profiling/simple-kernel-timer/kp_shared.cpp -o "$lib/kp_reader") >"$lib/kp_reader.build.txt" 2>&1 ||
  echo "kokkos-tools-connectors: kp_reader did not build (see $lib/kp_reader.build.txt)" >&2
((build_only)) && exit 0

# complete CONNECTOR DIR: why the tool's output in DIR is not complete, or nothing.
complete() {
  local dir=$2
  case $1 in
    space-time-stack) grep -q "END KOKKOS PROFILING REPORT" "$dir/stdout.txt" || echo "no complete report" ;;
    simple-kernel-timer) compgen -G "$dir/*.dat" >/dev/null || echo "no .dat file" ;;
    kernel-logger) grep -q "KokkosP: Kokkos library finalization called" "$dir/stdout.txt" || echo "no finalization line" ;;
    memory-hwm) grep -q "High water mark memory consumption" "$dir/stdout.txt" || echo "no high water mark" ;;
    memory-events) compgen -G "$dir/*.mem_events" >/dev/null || echo "no .mem_events file" ;;
    chrome-tracing)
      local json
      json=$(compgen -G "$dir/*.json" | head -1)
      [[ -n $json ]] && [[ $(tail -n 1 "$json") == "]" ]] || echo "no complete trace" ;;
    nvtx-connector) grep -q "Finalization of NVTX Connector. Complete" "$dir/stdout.txt" || echo "no finalization line" ;;
  esac
}

status=0
for c in "${connectors[@]}"; do
  name=$(library "$c")
  for space in "${spaces[@]}"; do
    dir=$out/$c-$space
    rm -rf "$dir" && mkdir -p "$dir"
    # shellcheck disable=SC2086 # PORTALAB_ARGS: options, split on purpose
    (cd "$dir" && "$portalab" run "$deck" --out results --spaces "$space" \
        "--kokkos-tools-libs=$lib/$name.so" ${PORTALAB_ARGS:-} >stdout.txt 2>stderr.txt)
    code=$?
    warnings=$(cat "$dir/stdout.txt" "$dir/stderr.txt" | grep -c "not in the currently allocated set")
    rows=$(python3 - "$dir/results/results.json" <<'EOF'
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["results"]
except Exception:
    print("0/0")
    sys.exit()
measured = [r for r in rows if r.get("check") not in ("N/A", "SKIPPED")]
print(f"{sum(r.get('check') == 'PASS' for r in measured)}/{len(measured)}")
EOF
)
    why=()
    ((code == 0)) || why+=("portalab exited $code")
    ((warnings == 0)) || why+=("allocation warnings")
    [[ ${rows%/*} == "${rows#*/}" && ${rows#*/} != 0 ]] || why+=("rows not all PASS")
    unbalanced=$(cat "$dir/stdout.txt" "$dir/stderr.txt" |
      grep -c -e "popRegion() called outside" -e "different kernel ID" \
        -e "end root stack frame" -e "Program ended before")
    ((unbalanced == 0)) || why+=("$unbalanced unbalanced-event lines")
    incomplete=$(complete "$c" "$dir")
    [[ -z $incomplete ]] || why+=("$incomplete")
    if ((${#why[@]} == 0)); then
      echo "PASS $c $space exit=$code warnings=$warnings rows=$rows"
    else
      status=1
      echo "FAIL $c $space exit=$code warnings=$warnings rows=$rows: $(IFS=';'; echo "${why[*]}") (see $dir/)"
    fi
  done
done
if ((status == 0)); then echo "kokkos-tools-connectors: PASS"; else echo "kokkos-tools-connectors: FAIL"; fi
exit "$status"
