#!/usr/bin/env bash
# On a GPU node: profiles the streams deck and a deck with copy phases under
# Nsight Systems (CUDA and NVTX, no sampling), exports them to SQLite and
# checks them with scripts/dev/nsys_check.py against the runs' results.json:
# every measured entry's ranges, portalab's kernels in the kernel phases,
# copies in the h2d/d2h phases, copy_overlap's pipelined copies overlapping
# kernels of other streams (and serial ones not), each variant on as many
# streams as it has instances. Prints PASS/FAIL per assertion; exit 1 if any
# fails, 2 if nsys or the binary is missing. Writes into OUT the reports, their
# SQLite exports and nsys stats summaries, the results, and timeline pictures
# of copy_overlap (pinned, pageable) and inverse_pair.
#   scripts/dev/gpu-profile-check.sh [BUILD_DIR] [OUT]   # build/cuda, results/gpu-profile-check
# Environment: NSYS, NSYS_LIBS (a folder with libdw.so.1 and libelf.so.1 for
# an nsys that lacks them), PYTHON (default: a python3 with matplotlib if
# there is one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/cuda}
out=${2:-results/gpu-profile-check}
# shellcheck source=scripts/dev/nsys_env.sh
source "$here/nsys_env.sh"
portalab_find_nsys || exit 2
[ -x "$bin/portalab" ] || { echo "gpu-profile-check: no $bin/portalab" >&2; exit 2; }
python=${PYTHON:-}
if [ -z "$python" ]; then
  for p in python3 /usr/bin/python3; do
    if "$p" -c "import matplotlib" 2>/dev/null; then python=$p; break; fi
  done
  python=${python:-python3}
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
mkdir -p "$out"
portalab_nsys_options

status=0
# profile NAME DECK [portalab args]: OUT/NAME.nsys-rep, .sqlite, -stats.txt,
# NAME.txt (the table) and NAME/ (results). Few repetitions, modest sizes: a
# profile of a few MB.
profile() {
  local name=$1 deck=$2
  shift 2
  echo "=== profile $name: $deck $*"
  "$NSYS" profile "${PORTALAB_NSYS_OPTIONS[@]}" --output="$out/$name" \
    "$bin/portalab" run "$deck" --out "$out/$name" --spaces Cuda --set calibrate=none \
    --set profile_reps=2 --set warmups=1 "$@" >"$out/$name.txt" || {
    echo "FAIL $name: portalab under nsys exited $? (see $out/$name.txt)"
    status=1
  }
  if [ -f "$out/$name.nsys-rep" ]; then
    portalab_nsys_summaries "$out/$name.nsys-rep" || status=1
  fi
}
# check NAME ASSERTIONS: the assertions that must find something to check.
check() {
  echo "=== check $1"
  if [ -f "$out/$1.sqlite" ] && [ -f "$out/$1/results.json" ]; then
    "$python" "$here/nsys_check.py" "$out/$1.sqlite" "$out/$1/results.json" --require "$2" || status=1
  else
    echo "FAIL $1: no export or no results to check"
    status=1
  fi
}
# picture NAME.png PROFILE RANGE [OCCURRENCE]
picture() {
  local png=$1 name=$2 range=$3 occurrence=${4:-}
  [ -f "$out/$name.sqlite" ] || return 0
  if "$python" "$here/../timeline.py" "$out/$name.sqlite" --results "$out/$name/results.json" \
       --range "$range" ${occurrence:+--occurrence "$occurrence"} --out "$out/$png" >/dev/null; then
    echo "picture: $out/$png"
  else
    echo "FAIL picture $png"
    status=1
  fi
}

# The streams deck (Cuda only), small: 8 chunks of copy_overlap (pinned
# first, then pageable, as the deck lists them), compute about as long as
# the copies; two 2048² inverses; 64 small kernels.
profile streams inputs/streams.toml --set "inverse_pair.sizes=[2048]" \
  --set "copy_overlap.sizes=[16000000]" --set copy_overlap.chunks=8 \
  --set concurrent_small.kernels=64
# Copy phases: vector_poly with pageable and pinned copies, and without.
profile copies inputs/lab6-vector.toml --set "vector_poly.sizes=[4000000]" \
  --set vector_poly.dtypes=float32 --set "stream_copy.sizes=[4000000]" \
  --set stream_copy.dtypes=float32

check streams ranges,kernel_labels,copy_phases,copy_overlap,streams
check copies ranges,kernel_labels,copy_phases

picture copy_overlap_pinned.png streams 'portalab/copy_overlap/Cuda$' 1
picture copy_overlap_pageable.png streams 'portalab/copy_overlap/Cuda$' 2
picture inverse_pair.png streams 'portalab/inverse_pair/Cuda$'
picture vector_poly_copies.png copies 'portalab/vector_poly/Cuda$' 1

ls -l "$out"
if ((status == 0)); then echo "gpu-profile-check: PASS"; else echo "gpu-profile-check: FAIL"; fi
exit "$status"
