#!/usr/bin/env bash
# portalab's node health check for Slurm (docs/health.md): slurmd runs it as
#   HealthCheckProgram=<prefix>/share/portalab/scripts/slurm/healthcheck.sh
# and, around jobs, as a Prolog or Epilog (Prolog=.../healthcheck.sh: Slurm
# says which in SLURM_SCRIPT_CONTEXT; or --prolog, --epilog).
# It runs `portalab health` (one rank per GPU where there are several), and
#   degraded (exit 1): drains the node, the reason portalab's first finding:
#     scontrol update nodename=NODE state=drain reason="portalab health: GPU-... triad_gbps ..."
#   healthy (exit 0): resumes the node where a drain of its own (a reason
#     starting "portalab health:") holds it; leaves any other drain alone.
#   bad input (exit 2) or no check at all: drains nothing, says why on stderr
#     (slurmd's log): a broken install must not drain the whole cluster.
# A Prolog that drains exits 1 (Slurm requeues the job elsewhere); the
# health check and an Epilog exit 0 once the node is drained.
# Settings: this file's environment, or PORTALAB_HEALTH_CONF (default
# /etc/portalab/health.conf), a shell file that sets them:
#   PORTALAB_BIN        the portalab to run (default: ../../../bin/portalab
#                       beside an installed copy of this script, else portalab on PATH)
#   PORTALAB_HEALTH_ARGS more arguments for `portalab health` (--db, --prometheus, ...)
#   PORTALAB_REFERENCE  the reference figures (default: those shipped)
#   PORTALAB_HEALTH_DIR where each check's results go (default /var/lib/portalab/health);
#                       the newest PORTALAB_HEALTH_KEEP (default 20) are kept
#   PORTALAB_HEALTH_RANKS ranks, one per GPU (default: the GPUs nvidia-smi lists, at least 1)
#   PORTALAB_MPIRUN     the launcher of several ranks (default: mpirun --allow-run-as-root)
#   PORTALAB_HEALTH_TIMEOUT seconds before the check counts as failed (default 120)
set -uo pipefail
case ${SLURM_SCRIPT_CONTEXT:-} in
  prolog_slurmd) mode=prolog ;;
  epilog_slurmd) mode=epilog ;;
  *) mode=health ;;
esac
case ${1:-} in
  --prolog) mode=prolog ;;
  --epilog) mode=epilog ;;
  -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
  "") ;;
  *) echo "healthcheck.sh: unknown argument '$1' (--prolog, --epilog, --help or none)" >&2; exit 2 ;;
esac
conf=${PORTALAB_HEALTH_CONF:-/etc/portalab/health.conf}
if [ -r "$conf" ]; then
  set -a  # what it sets reaches portalab (OMP_NUM_THREADS, PORTALAB_DB, ...)
  # shellcheck source=/dev/null
  source "$conf"
  set +a
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case $here in
  */share/portalab/scripts/slurm) default_bin=${here%/share/portalab/scripts/slurm}/bin/portalab ;;
  *) default_bin=$(command -v portalab || echo portalab) ;;
esac
bin=${PORTALAB_BIN:-$default_bin}
node=${SLURMD_NODENAME:-$(hostname -s)}
dir=${PORTALAB_HEALTH_DIR:-/var/lib/portalab/health}
keep=${PORTALAB_HEALTH_KEEP:-20}
timeout_s=${PORTALAB_HEALTH_TIMEOUT:-120}
say() { echo "portalab healthcheck ($mode, $node): $*" >&2; }

if [ ! -x "$bin" ]; then say "no executable portalab at '$bin' (set PORTALAB_BIN in $conf): nothing checked"; exit 0; fi
mkdir -p "$dir" || { say "cannot create $dir: nothing checked"; exit 0; }
# One check at a time on a node: the periodic check skips its turn while
# another runs; a Prolog or Epilog waits for it, then checks.
exec 9>"$dir/.lock"
if [ "$mode" = health ]; then
  flock -n 9 || { say "another check is running: this one skipped"; exit 0; }
else
  flock -w "${PORTALAB_HEALTH_TIMEOUT:-120}" 9 || { say "another check held the node: not checked"; exit 0; }
fi

ranks=${PORTALAB_HEALTH_RANKS:-}
if [ -z "$ranks" ]; then
  ranks=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  [ "${ranks:-0}" -ge 1 ] || ranks=1
fi
launch=()
if ((ranks > 1)); then
  read -r -a launch <<<"${PORTALAB_MPIRUN:-mpirun --allow-run-as-root} -np $ranks"
fi
out=$dir/$(date -u +%Y%m%dT%H%M%SZ)
log=$out.log
read -r -a extra <<<"${PORTALAB_HEALTH_ARGS:-}"
[ -z "${PORTALAB_REFERENCE:-}" ] || extra+=(--reference "$PORTALAB_REFERENCE")
timeout "$timeout_s" "${launch[@]}" "$bin" health --out "$out" "${extra[@]}" >"$log" 2>&1
status=$?
# Old checks go: the newest $keep kept (folders and their logs).
find "$dir" -mindepth 1 -maxdepth 1 -name '????????T??????Z*' -printf '%f\n' 2>/dev/null \
  | sed 's/\.log$//' | sort -u | head -n -"$keep" | while read -r old; do
      rm -rf "${dir:?}/$old" "${dir:?}/$old.log"; done

state=$(scontrol show node "$node" 2>/dev/null)
reason=$(sed -n 's/^ *Reason=\(.*\) \[.*$/\1/p; s/^ *Reason=\(.*\)$/\1/p' <<<"$state" | head -n 1)
case $status in
  0)
    if [[ $reason == "portalab health:"* ]]; then
      scontrol update nodename="$node" state=resume && say "healthy again: resumed (was: $reason)"
    fi
    exit 0 ;;
  1)
    # portalab's first finding, on one line, cut to what sinfo -R shows well.
    why=$(sed -n 's/^degraded: //p' "$log" | head -n 1)
    [ -n "$why" ] || why="the check failed: see $log"
    why="portalab health: ${why:0:200}"
    if scontrol update nodename="$node" state=drain reason="$why"; then
      say "drained: $why"
    else
      say "could not drain: $why"
    fi
    [ "$mode" = prolog ] && exit 1
    exit 0 ;;
  124)
    say "the check did not end within ${timeout_s}s ($log): draining"
    scontrol update nodename="$node" state=drain \
      reason="portalab health: the check did not end within ${timeout_s}s"
    [ "$mode" = prolog ] && exit 1
    exit 0 ;;
  *)
    say "portalab health exited $status (2: bad input, the install or settings; see $log): nothing drained"
    exit 0 ;;
esac
