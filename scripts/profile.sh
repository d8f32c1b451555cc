#!/usr/bin/env bash
# Profiles a deck with Nsight Systems, and optionally one kernel with Nsight
# Compute, with few repetitions (profile_reps) and no calibration, and says
# where the reports are. Phases show as NVTX ranges portalab/<exp>/<space>/<phase>.
#
#   scripts/profile.sh DECK [OUT_DIR] [portalab run options...]
#
# Environment:
#   PORTALAB=build/cuda/portalab   the binary
#   PROFILE_REPS=3                 repetitions of every entry
#   CAPTURE=all | reps             reps: only the measured repetitions (the
#                                  program brackets them with cudaProfilerStart/
#                                  Stop; one report per entry)
#   NCU_KERNEL=regex               also profile the first matching kernel with ncu
#                                  (Kokkos kernel labels, e.g. vector_poly_fused)
set -euo pipefail
if [ $# -lt 1 ]; then sed -n '2,18p' "$0"; exit 2; fi
deck=$1
out=${2:-results/profile}
shift $(($# >= 2 ? 2 : 1))
portalab=${PORTALAB:-build/cuda/portalab}
command -v nsys >/dev/null || { echo "profile.sh: nsys not found (module load nsight-systems?)" >&2; exit 2; }
mkdir -p "$out"
run=("$portalab" run "$deck" --set "profile_reps=${PROFILE_REPS:-3}" --set calibrate=none "$@")

capture=()
if [ "${CAPTURE:-all}" = reps ]; then
  capture=(--capture-range=cudaProfilerApi --capture-range-end=repeat)
fi
nsys profile --trace=cuda,nvtx,osrt,openmp --sample=none --force-overwrite=true \
  "${capture[@]}" --output="$out/profile" "${run[@]}" --out "$out/results"
echo "profile.sh: Nsight Systems report(s):"
ls -1 "$out"/profile*.nsys-rep
echo "  summary: nsys stats --report nvtx_sum,cuda_gpu_kern_sum $out/profile.nsys-rep"

if [ -n "${NCU_KERNEL:-}" ]; then
  command -v ncu >/dev/null || { echo "profile.sh: ncu not found" >&2; exit 2; }
  # Skip the cold and warm-up launches: profile a steady-state one.
  ncu --kernel-name "regex:${NCU_KERNEL}" --launch-skip 3 --launch-count 1 --set full \
    --force-overwrite --export "$out/kernel" "${run[@]}" --out "$out/results-ncu"
  echo "profile.sh: Nsight Compute report: $out/kernel.ncu-rep (ncu --import $out/kernel.ncu-rep)"
fi
