#!/usr/bin/env bash
# Profiles a deck with Nsight Systems (CUDA and NVTX: portalab's ranges
# portalab/<exp>/<space>/<phase>), and optionally one kernel with Nsight
# Compute, with few repetitions (profile_reps) and no calibration. Writes
# into OUT_DIR the report, its SQLite export, the nsys stats summaries and
# the run's results, and says what to open.
#
#   scripts/dev/profile.sh DECK [OUT_DIR] [portalab run options...]
#
# Environment:
#   PORTALAB=build/cuda/portalab   the binary (installed: <prefix>/bin/portalab)
#   PROFILE_REPS=3                 repetitions of every entry
#   CAPTURE=all | reps             reps: only the measured repetitions (the
#                                  program brackets them with cudaProfilerStart/
#                                  Stop; one report per entry)
#   NCU_KERNEL=regex               also profile the first matching kernel with ncu
#                                  (matched in the demangled name, which holds
#                                  the kernel function, e.g. squared_diff_fused);
#                                  where nsys is missing, ncu alone runs
#   NSYS=nsys, NCU=ncu             the profilers (nsys: else on the PATH, else
#                                  inside an Nsight Systems or Compute install)
#   NSYS_LIBS=DIR                  put first on LD_LIBRARY_PATH (libdw, libelf)
#   NSYS_TRACE=cuda,nvtx           what nsys traces
#   NSYS_CUDA_GRAPH_TRACE=node     CUDA graphs per node (graph: as one block)
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,24p' "$0"; exit 0 ;; esac
if [ $# -lt 1 ]; then sed -n '2,24p' "$0"; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/dev/nsys_env.sh
source "$here/nsys_env.sh"
# The user tools, one folder up.
scripts=$(dirname "$here")
# Installed as <prefix>/share/portalab/scripts/dev/profile.sh: <prefix>/bin/portalab.
case $here in
  */share/portalab/scripts/dev) default_bin=${here%/share/portalab/scripts/dev}/bin/portalab ;;
  *) default_bin=build/cuda/portalab ;;
esac
deck=$1
out=${2:-results/profile}
shift $(($# >= 2 ? 2 : 1))
portalab=${PORTALAB:-$default_bin}
ncu=${NCU:-ncu}
have_nsys=1
if ! portalab_find_nsys; then
  have_nsys=0
  if [ -z "${NCU_KERNEL:-}" ]; then exit 2; fi
  echo "profile.sh: Nsight Compute only" >&2
fi
mkdir -p "$out"
run=("$portalab" run "$deck" --set "profile_reps=${PROFILE_REPS:-3}" --set calibrate=none "$@")

capture=()
if [ "${CAPTURE:-all}" = reps ]; then
  capture=(--capture-range=cudaProfilerApi --capture-range-end=repeat)
fi
if ((have_nsys)); then
  portalab_nsys_options
  "$NSYS" profile "${PORTALAB_NSYS_OPTIONS[@]}" "${capture[@]}" --output="$out/profile" \
    "${run[@]}" --out "$out/results"
  for rep in "$out"/profile*.nsys-rep; do portalab_nsys_summaries "$rep"; done
  cat <<MSG
profile.sh: Nsight Systems, in $out:
  profile*.nsys-rep     open in the Nsight Systems GUI (nsys-ui)
  profile*-stats.txt    NVTX ranges, kernels, memory copies (nsys stats)
  profile*.sqlite       every event as tables (nsys export --type sqlite)
  results/              the run's results.json, results.csv
  check the ranges:     $here/nsys_check.py $out/profile.sqlite $out/results/results.json
  draw a timeline:      $scripts/timeline.py $out/profile.sqlite --results $out/results/results.json \\
                          --range 'portalab/<experiment>/<space>\$' --out $out/timeline.png
MSG
fi

if [ -n "${NCU_KERNEL:-}" ]; then
  command -v "$ncu" >/dev/null || { echo "profile.sh: ncu not found" >&2; exit 2; }
  # Skip the cold and warm-up launches: profile a steady-state one. Clocks
  # as they are (ncu would otherwise lock them to base for the run: a change
  # to a shared card's settings, and figures unlike the unprofiled run's).
  "$ncu" --kernel-name-base demangled --kernel-name "regex:${NCU_KERNEL}" --launch-skip 3 \
    --launch-count 1 --set full --clock-control none --force-overwrite --export "$out/kernel" "${run[@]}" \
    --out "$out/results-ncu"
  echo "profile.sh: Nsight Compute report: $out/kernel.ncu-rep (ncu --import $out/kernel.ncu-rep)"
fi
