#!/usr/bin/env bash
# On a GPU node of several GPUs (the lead's 4-GPU check of issue 56):
# `portalab health` with one rank per GPU, first unloaded (expected exit 0),
# then with one GPU kept busy by another process, a PyTorch (else CuPy)
# matrix-product loop (expected exit 1, naming that GPU's UUID). Prints both
# outputs and how long each check took; exits 0 when both went as expected.
#   scripts/dev/health_gpu_check.sh [BUILD_DIR] [OUT]   # default build/cuda, results/health-gpu-check
# LOAD_GPU: the index (nvidia-smi's) of the GPU to load (default the last);
# RANKS: ranks (default: every GPU nvidia-smi lists); PORTALAB_PYTHON: the
# python3 with torch or cupy.
set -uo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;; esac
bin=$(realpath "${1:-build/cuda}")/portalab
out=${2:-results/health-gpu-check}
python=${PORTALAB_PYTHON:-python3}
rm -rf "$out"
mkdir -p "$out"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4} OMP_PROC_BIND=${OMP_PROC_BIND:-false}

mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader | tr -d ' ')
((${#uuids[@]} >= 1)) || { echo "health_gpu_check: nvidia-smi lists no GPU" >&2; exit 2; }
ranks=${RANKS:-${#uuids[@]}}
load=${LOAD_GPU:-$((${#uuids[@]} - 1))}
loaded=${uuids[$load]}
nvidia-smi --query-gpu=index,uuid,name,clocks.sm,temperature.gpu,power.draw,utilization.gpu --format=csv
launch=()
((ranks > 1)) && launch=(mpirun --allow-run-as-root -np "$ranks")

check() {  # NAME: one check, its output in OUT/NAME.txt; prints its time and exit
  local name=$1 t0 t1 rc=0
  t0=$(date +%s.%N)
  "${launch[@]}" "$bin" health --out "$out/$name" --prometheus "$out/$name.prom" \
    >"$out/$name.txt" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  echo "=== $name: exit $rc in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s ($ranks ranks)"
  cat "$out/$name.txt"
  return "$rc"
}

status=0
check unloaded
rc=$?
[ "$rc" = 0 ] || { echo "health_gpu_check: unloaded: exit $rc, expected 0" >&2; status=1; }

# The load: GPU $loaded alone (CUDA_VISIBLE_DEVICES by UUID, whatever the
# numbering), products of 8192 x 8192 float32 back to back for up to 10 min.
cat >"$out/load.py" <<'PY'
import sys, time
try:
    import torch
    a = torch.randn(8192, 8192, device="cuda")
    step, sync, lib = (lambda: a @ a), torch.cuda.synchronize, "torch"
except ImportError:
    import cupy
    a = cupy.random.rand(8192, 8192, dtype=cupy.float32)
    step, sync, lib = (lambda: a @ a), cupy.cuda.Device().synchronize, "cupy"
print(f"load: {lib} matrix products on this GPU", flush=True)
end = time.time() + 600
while time.time() < end:
    for _ in range(10):
        step()
    sync()
PY
CUDA_VISIBLE_DEVICES=$loaded "$python" "$out/load.py" >"$out/load.txt" 2>&1 &
load_pid=$!
trap 'kill $load_pid 2>/dev/null' EXIT
for _ in $(seq 60); do grep -q "^load:" "$out/load.txt" 2>/dev/null && break; sleep 0.5; done
grep -q "^load:" "$out/load.txt" || { cat "$out/load.txt"; echo "health_gpu_check: the load did not start" >&2; exit 1; }
sleep 3  # its clocks up
echo "=== loading $loaded (GPU $load): $(cat "$out/load.txt")"
nvidia-smi --query-gpu=index,uuid,utilization.gpu,clocks.sm --format=csv

check loaded
rc=$?
kill "$load_pid" 2>/dev/null
wait "$load_pid" 2>/dev/null
if [ "$rc" != 1 ]; then
  echo "health_gpu_check: loaded: exit $rc, expected 1" >&2; status=1
elif ! grep -q "^degraded: $loaded " "$out/loaded.txt"; then
  echo "health_gpu_check: loaded: no 'degraded:' line names $loaded" >&2; status=1
fi
others=$(grep "^degraded: GPU-" "$out/loaded.txt" | grep -v "^degraded: $loaded " || true)
[ -z "$others" ] || echo "health_gpu_check: other GPUs named too (not expected):"$'\n'"$others"
echo "=== health_gpu_check: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
