# shellcheck shell=bash
# Sourced by scripts/dev/profile.sh, scripts/dev/gpu-profile-check.sh and the Slurm
# profile job: finds Nsight Systems and writes the summaries of a report.

# portalab_find_nsys: sets NSYS to a working nsys, or says why not and
# returns 1. Looks at $NSYS, then the PATH (module load nsight-systems), then
# the installs that carry one: Nsight Systems, and Nsight Compute, whose
# host/target-linux-x64/ holds an nsys. NSYS_LIBS, a folder, is put first on
# LD_LIBRARY_PATH: where nsys lacks libdw.so.1 and libelf.so.1 (Debian's
# libdw1, libelf1), point it at copies of them.
portalab_find_nsys() {
  if [ -n "${NSYS_LIBS:-}" ]; then
    export LD_LIBRARY_PATH="$NSYS_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  local found=${NSYS:-}
  if [ -z "$found" ]; then
    found=$(command -v nsys 2>/dev/null || true)
  fi
  if [ -z "$found" ]; then
    # In this order of preference, the newest version of each (sort -V:
    # 2025.3.1 before 2025.10.0).
    local pattern
    for pattern in "${CUDA_HOME:-/usr/local/cuda}/bin/nsys" "/opt/nvidia/nsight-systems/*/bin/nsys" \
                   "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys" \
                   "${CUDA_HOME:-/usr/local/cuda}/nsight-compute-*/host/target-linux-x64/nsys"; do
      found=$(compgen -G "$pattern" | sort -V | tail -n 1 || true)
      if [ -n "$found" ]; then break; fi
    done
  fi
  if [ -z "$found" ]; then
    echo "portalab: no nsys on the PATH or in an Nsight Systems or Nsight Compute install" \
         "(module load nsight-systems, or set NSYS)" >&2
    return 1
  fi
  if ! "$found" --version >/dev/null 2>&1; then
    echo "portalab: $found does not run ($("$found" --version 2>&1 | head -n 1));" \
         "if it lacks libdw.so.1 or libelf.so.1, set NSYS_LIBS to a folder holding them" >&2
    return 1
  fi
  NSYS=$found
  echo "portalab: $("$NSYS" --version 2>&1 | head -n 1) at $NSYS" >&2
}

# The options of every portalab profile: CUDA and NVTX only, no CPU sampling
# or context switches (with them a small run writes hundreds of MB); CUDA
# graphs traced per node, so that a replayed Kokkos Graph shows its kernels
# (nsys's default traces a graph as one block, its kernels unseen).
# NSYS_TRACE replaces the trace list (e.g. cuda,nvtx,osrt,openmp);
# NSYS_CUDA_GRAPH_TRACE the graph tracing (graph: as one block, lighter;
# empty: the option left out, for an nsys that lacks it).
portalab_nsys_options() {
  # shellcheck disable=SC2034  # read by the scripts that source this file
  PORTALAB_NSYS_OPTIONS=(--trace="${NSYS_TRACE:-cuda,nvtx}" --sample=none --cpuctxsw=none
                         --force-overwrite=true)
  local graphs=${NSYS_CUDA_GRAPH_TRACE-node}
  if [ -n "$graphs" ]; then
    PORTALAB_NSYS_OPTIONS+=(--cuda-graph-trace="$graphs")
  fi
}

# portalab_nsys_summaries REPORT.nsys-rep: next to it, REPORT.sqlite (every
# event as tables) and REPORT-stats.txt (NVTX ranges, kernels, memory copies
# by time and by size).
portalab_nsys_summaries() {
  local rep=$1 base=${1%.nsys-rep}
  "$NSYS" export --type=sqlite --force-overwrite=true --output="$base.sqlite" "$rep" >/dev/null \
    || { echo "portalab: nsys export of $rep failed" >&2; return 1; }
  "$NSYS" stats --report=nvtx_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum \
    "$base.sqlite" >"$base-stats.txt" || { echo "portalab: nsys stats of $rep failed" >&2; return 1; }
  echo "portalab: $rep, $base.sqlite, $base-stats.txt" >&2
}
