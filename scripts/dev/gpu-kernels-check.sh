#!/usr/bin/env bash
# On a GPU node, with a built Cuda tree (builds nothing): issue 13's targets
# for the reference kernels. Runs the kernel and linear-algebra tests, then
# inputs/kernels-limits.toml (its own full calibration: the copy limit), then
# the matching Google Benchmark entries (and the host's gemm against its BLAS
# at 2048 in OpenMP), and prints each ratio against its
# target with scripts/dev/kernels_limits.py. Exit 1 if a test fails or a target
# is missed, 2 if the binaries are missing. Results under OUT.
#   scripts/dev/gpu-kernels-check.sh [BUILD_DIR] [OUT]   # build/cuda, results/gpu-kernels-check
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/cuda}
out=${2:-results/gpu-kernels-check}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
for b in portalab tests/portalab_tests tests/portalab_bench; do
  [ -x "$bin/$b" ] || { echo "gpu-kernels-check: no $bin/$b (build the cuda preset first)" >&2; exit 2; }
done
mkdir -p "$out"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv || echo "nvidia-smi not available"

status=0
echo "=== correctness: kernels and linear algebra at awkward sizes"
"$bin/tests/portalab_tests" --gtest_brief=1 --gtest_filter='*Kernels*:*Linalg*' || status=1

echo "=== inputs/kernels-limits.toml"
"$bin/portalab" run inputs/kernels-limits.toml --out "$out/run" >"$out/run.txt" || status=1
cat "$out/run.txt"

echo "=== Google Benchmark: the same kernels"
filter='^(stream_copy|stream_copy_naive)/Cuda/float(32|64)/100000000|^stream_copy_1e8/Cuda|^broadcast_add_(row|column)/Cuda|^dot_(native|vendor)/Cuda/float32|^gemm_(native|vendor)/Cuda/float(32|64)/4096|^gemm_(native|vendor)/OpenMP/float(32|64)/2048'
"$bin/tests/portalab_bench" --benchmark_filter="$filter" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/bench.json" \
  --benchmark_out_format=json | tee "$out/bench.txt" || status=1

echo "=== issue 13's ratios"
python3 "$here/kernels_limits.py" "$out/run/results.json" --bench "$out/bench.json" || status=1
exit $status
