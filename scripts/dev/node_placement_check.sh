#!/usr/bin/env bash
# On a node of 4 GPUs (issue 58): the node deck on 4 ranks with the variables
# Kokkos' start-up warning advises (OMP_PROC_BIND=spread OMP_PLACES=threads)
# and without them; each rank's CPUs and its threads' CPUs
# (provenance.ranks[]: cpus, thread_cpus, placement, gpu_numa_node) and the
# allreduce rows (bus bandwidth, nccl-tests' definition) of each run, and
# whether the run finished within its limit. Results under OUT.
#   scripts/dev/node_placement_check.sh [BUILD_DIR] [OUT] [RANKS]
#     BUILD_DIR default build/cuda, OUT default results/node-placement, RANKS 4
# Shortened by --set reps=10 --set warmups=3; PORTALAB_NODE_SET overrides them.
set -uo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;; esac
bin=${1:-build/cuda}
out=${2:-results/node-placement}
ranks=${3:-4}
limit=${PORTALAB_NODE_LIMIT_S:-300}
python=${PORTALAB_PYTHON:-python3}
mkdir -p "$out"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
# shellcheck disable=SC2206  # words of the override on purpose
set_args=(${PORTALAB_NODE_SET:---set reps=10 --set warmups=3})

nvidia-smi topo -m 2>/dev/null || echo "nvidia-smi not available"
status=0
for case in unset advised; do
  vars=()
  [ "$case" = advised ] && vars=(-x OMP_PROC_BIND=spread -x OMP_PLACES=threads)
  echo "=== mpirun -np $ranks ${vars[*]} portalab run node ${set_args[*]}"
  start=$(date +%s)
  env -u OMP_PROC_BIND -u OMP_PLACES -u OMP_NUM_THREADS \
    timeout "$limit" mpirun "${root[@]}" -np "$ranks" --bind-to none "${vars[@]}" \
    "$bin/portalab" run node "${set_args[@]}" --out "$out/$case" >"$out/$case.txt" 2>&1
  rc=$?
  echo "exit $rc after $(($(date +%s) - start)) s (limit $limit s)"
  [ "$rc" = 0 ] || status=1
  grep -E "^(host threads|warning|error)|OMP_PROC_BIND" "$out/$case.txt"
  [ -f "$out/$case/results.json" ] || { tail -20 "$out/$case.txt"; continue; }
  "$python" - "$out/$case/results.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["provenance"]["ranks"]:
    print(f"rank {r['rank']} on {r['host']}: cpus {r['cpus']}, threads {r.get('thread_cpus')}, "
          f"GPU NUMA node {r.get('gpu_numa_node', '?')}, {r.get('placement', '?')}, "
          f"GPU {r.get('device', {}).get('pci_bus_id', '?')}")
print(f"{'variant':<10} {'n':>12} {'bytes':>12} {'kernel ms':>10} {'busbw GB/s':>10}")
for row in doc["results"]:
    if row["experiment"] == "allreduce" and row.get("check") == "PASS":
        print(f"{row['variant']:<10} {row['n']:>12} {row.get('bytes') or 0:>12.0f} "
              f"{row.get('kernel_ms') or 0:>10.3f} {row.get('gbps') or 0:>10.1f}")
EOF
done
exit $status
