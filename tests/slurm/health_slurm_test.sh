#!/usr/bin/env bash
# scripts/slurm/healthcheck.sh run by a real Slurm as its HealthCheckProgram
# (slurm_start.sh starts munged, slurmctld and slurmd here, checking every
# 10 s): with a planted reference above what this machine can do, the node
# is drained with portalab's reason, shown by `sinfo -R`; with a reference
# it meets, the wrapper resumes the node it drained, which goes back to
# idle. Then the Epilog form on the healthy node leaves it idle. Bounded:
# every wait has its limit, and every daemon stops at exit.
#   tests/slurm/health_slurm_test.sh SOURCE_DIR PORTALAB_BINARY
# Exits 77 (skipped) without slurm-wlm and munge, or when not root.
set -euo pipefail
src=$(cd "$1" && pwd)
bin=$(realpath "$2")
limit_s=${PORTALAB_SLURM_TIMEOUT:-180}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=false

# shellcheck source=tests/slurm/slurm_start.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_start.sh"

# The wrapper as a site installs it: its settings in a file, which the test
# switches between the two references. slurmd gives the program none of
# this shell's environment: a one-line program names the file.
cpu=$("$bin" info | python3 -c 'import json, sys; print(json.load(sys.stdin)["host"]["cpu_model"])')
space=$("$bin" list | sed -n 's/^spaces compiled in: //p' | tr -d ' ' | tr ',' '\n' \
  | grep -xE 'OpenMP|Threads' | head -n 1 || true)
[ -n "$space" ] || space=Serial
for ref in met:0.001 planted:1e9; do
  python3 - "$tmp/run/${ref%%:*}.csv" "$cpu" "$space triad_gbps" "${ref#*:}" <<'PY'
import csv, sys
path, model, quantity, value = sys.argv[1:]
with open(path, "w", newline="") as f:
    csv.writer(f).writerows([["model", "quantity", "value", "unit", "source", "date"],
                             [model, quantity, value, "GB/s", "health_slurm_test.sh: planted", "2026-11-27"]])
PY
done
settings() {  # REFERENCE: the settings file the wrapper reads
  cat >"$tmp/run/health.conf" <<CONF
PORTALAB_BIN=$bin
PORTALAB_REFERENCE=$tmp/run/$1.csv
PORTALAB_HEALTH_DIR=$tmp/health
PORTALAB_HEALTH_RANKS=1
OMP_NUM_THREADS=$(nproc)
OMP_PROC_BIND=false
CONF
}
cat >"$tmp/run/healthcheck" <<SHIM
#!/usr/bin/env bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF=$SLURM_CONF PORTALAB_HEALTH_CONF=$tmp/run/health.conf
exec "$src/scripts/slurm/healthcheck.sh" "\$@"
SHIM
chmod +x "$tmp/run/healthcheck"
settings planted
slurm_start "HealthCheckProgram=$tmp/run/healthcheck
HealthCheckInterval=10
HealthCheckNodeState=ANY"

reason() { sinfo -h -R -n "$host" -o '%E' 2>/dev/null; }
t0=$(date +%s)
wait_for "$limit_s" "the planted reference to drain $host" \
  bash -c "sinfo -h -R -n $host -o '%E' | grep -q '^portalab health: node $host .*$space triad_gbps .* of the .* reference 1e+09'" \
  || { sinfo -R; ls -l "$tmp/health" 2>/dev/null; tail -n 20 "$tmp"/health/*.log 2>/dev/null; exit 1; }
echo "drained in $(($(date +%s) - t0)) s; sinfo -R:"
sinfo -R -n "$host" -o '%n %E'
sinfo -h -n "$host" -o %t | grep -qE '^drain' || { sinfo -n "$host"; echo "not drained" >&2; exit 1; }

settings met
t0=$(date +%s)
wait_for "$limit_s" "$host idle again" bash -c "sinfo -h -n $host -o %t | grep -qx idle" \
  || { sinfo -R; tail -n 20 "$tmp"/health/*.log 2>/dev/null; exit 1; }
[ -z "$(reason)" ] || { echo "idle with a reason left: $(reason)" >&2; exit 1; }
echo "resumed by the wrapper in $(($(date +%s) - t0)) s: $(sinfo -h -n "$host" -o '%n %t')"

# The Epilog form, as slurmd runs it after a job (SLURM_SCRIPT_CONTEXT), on
# the healthy node: nothing drained; then with the planted reference it
# drains (and the Prolog form would exit 1 for Slurm to requeue the job).
SLURM_SCRIPT_CONTEXT=epilog_slurmd "$tmp/run/healthcheck"
sinfo -h -n "$host" -o %t | grep -qx idle || { sinfo -R; echo "epilog: a healthy node left idle? no" >&2; exit 1; }
settings planted
rc=0
SLURM_SCRIPT_CONTEXT=prolog_slurmd "$tmp/run/healthcheck" || rc=$?
[ "$rc" = 1 ] || { echo "prolog on a degraded node: exit $rc, expected 1" >&2; exit 1; }
reason | grep -q '^portalab health: ' || { sinfo -R; echo "prolog: not drained" >&2; exit 1; }
echo "prolog on the degraded node: exit 1, drained: $(reason)"
echo "health slurm test passed"
