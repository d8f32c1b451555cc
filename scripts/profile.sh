#!/usr/bin/env bash
# Profiles a deck with Nsight Systems, and optionally one kernel with Nsight
# Compute, with few repetitions (profile_reps) and no calibration, and says
# where the reports are. Phases show as NVTX ranges portalab/<exp>/<space>/<phase>.
#
#   scripts/profile.sh DECK [OUT_DIR] [portalab run options...]
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
#   NSYS=nsys, NCU=ncu             the profilers' paths
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,20p' "$0"; exit 0 ;; esac
if [ $# -lt 1 ]; then sed -n '2,20p' "$0"; exit 2; fi
# Installed as <prefix>/share/portalab/scripts/profile.sh: <prefix>/bin/portalab.
here=$(cd "$(dirname "$0")" && pwd)
case $here in
  */share/portalab/scripts) default_bin=${here%/share/portalab/scripts}/bin/portalab ;;
  *) default_bin=build/cuda/portalab ;;
esac
deck=$1
out=${2:-results/profile}
shift $(($# >= 2 ? 2 : 1))
portalab=${PORTALAB:-$default_bin}
nsys=${NSYS:-nsys}
ncu=${NCU:-ncu}
have_nsys=1
if ! command -v "$nsys" >/dev/null; then
  have_nsys=0
  if [ -z "${NCU_KERNEL:-}" ]; then
    echo "profile.sh: nsys not found (module load nsight-systems?)" >&2
    exit 2
  fi
  echo "profile.sh: nsys not found: Nsight Compute only" >&2
fi
mkdir -p "$out"
run=("$portalab" run "$deck" --set "profile_reps=${PROFILE_REPS:-3}" --set calibrate=none "$@")

capture=()
if [ "${CAPTURE:-all}" = reps ]; then
  capture=(--capture-range=cudaProfilerApi --capture-range-end=repeat)
fi
if ((have_nsys)); then
  "$nsys" profile --trace=cuda,nvtx,osrt,openmp --sample=none --force-overwrite=true \
    "${capture[@]}" --output="$out/profile" "${run[@]}" --out "$out/results"
  echo "profile.sh: Nsight Systems report(s):"
  ls -1 "$out"/profile*.nsys-rep
  echo "  summary: nsys stats --report nvtx_sum,cuda_gpu_kern_sum $out/profile.nsys-rep"
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
