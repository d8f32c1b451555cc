# shellcheck shell=bash
# Sourced by the tests that start their own Slurm (slurm_test.sh,
# health_slurm_test.sh): munged, slurmctld and slurmd on this host with
# their own config, state, logs and sockets in a temporary folder $tmp, and
# every daemon stopped at exit, also when the test fails.
#   source tests/slurm/slurm_start.sh   # exits 77 (skipped) without slurm-wlm
#                                       # and munge, or when not root
#   slurm_start [EXTRA slurm.conf LINES]
# Sets tmp, host, cpus, SLURM_CONF; defines wait_for. On failure the daemon
# logs and $tmp/work/*.out are shown.
for cmd in munged slurmctld slurmd sbatch scontrol squeue scancel; do
  command -v "$cmd" >/dev/null || { echo "SKIP: $cmd not installed (slurm-wlm, munge)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to run slurmd"; exit 77; }

tmp=$(mktemp -d /tmp/portalab_slurm.XXXXXX)
mkdir -p "$tmp"/{state,spool,log,run,work}
export SLURM_CONF=$tmp/slurm.conf

started=()  # pid files of the daemons this test started
stop_all() {
  local rc=$?
  set +e
  if [ -f "$tmp/run/slurmctld.pid" ]; then
    scancel --full --user="$(id -un)" 2>/dev/null  # every job: this Slurm is ours alone
  fi
  # Reverse order: slurmd, slurmctld, then munged (they need it to the end).
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    local pidfile=${started[$i]} pid
    pid=$(cat "$pidfile" 2>/dev/null) || continue
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  if ((rc != 0)); then
    echo "--- FAILED (exit $rc): daemon logs and job output"
    tail -n 30 "$tmp"/log/*.log "$tmp"/work/*.out 2>/dev/null
  fi
  if [ -n "${PORTALAB_SLURM_KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap stop_all EXIT
trap 'exit 1' INT TERM

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2; shift 2
  for _ in $(seq $((limit * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "timed out after ${limit}s waiting for $what" >&2
  return 1
}

slurm_start() {
  # --- munge: its own key, socket and pid file.
  dd if=/dev/urandom of="$tmp/run/munge.key" bs=1024 count=1 status=none
  chmod 400 "$tmp/run/munge.key"
  started+=("$tmp/run/munged.pid")
  munged --force --key-file="$tmp/run/munge.key" --socket="$tmp/run/munge.socket" \
    --pid-file="$tmp/run/munged.pid" --log-file="$tmp/log/munged.log" \
    --seed-file="$tmp/run/munge.seed"
  wait_for 10 munged test -S "$tmp/run/munge.socket"

  # --- Slurm: one node, this host, a fake GPU (a GRES with no device file) so
  # that the scripts' --gpus-per-node request is scheduled as written.
  host=$(hostname -s)
  cpus=$(nproc)
  port=$((20000 + RANDOM % 20000))
  cat >"$SLURM_CONF" <<CONF
ClusterName=portalabtest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/run/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=3600
GresTypes=gpu
NodeName=$host CPUs=$cpus Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
${1:-}
CONF
  # Two stand-in GPUs (any character devices): the node job has a task on each.
  printf 'Name=gpu File=/dev/null\nName=gpu File=/dev/zero\n' >"$tmp/gres.conf"

  started+=("$tmp/run/slurmctld.pid")
  slurmctld -i
  wait_for 30 slurmctld scontrol ping
  started+=("$tmp/run/slurmd.pid")
  slurmd
}

