# shellcheck shell=bash
# Sourced by portalab's job scripts: modules, OpenMP environment from the
# allocation, the binary, the results folder. Not a job script itself.

portalab_setup() {
  set -euo pipefail
  cd "${SLURM_SUBMIT_DIR:-.}"
  if [ -n "${PORTALAB_MODULES:-}" ]; then
    if command -v module >/dev/null 2>&1; then
      # shellcheck disable=SC2086  # a list of module names
      module load $PORTALAB_MODULES
    else
      echo "portalab: no 'module' command here: not loading $PORTALAB_MODULES" >&2
    fi
  fi
  # One OpenMP thread per CPU Slurm gave this job, spread over them and pinned,
  # so that the OpenMP space uses the allocation and nothing else. Host
  # instances of the streams experiments need PORTALAB_OMP_PROC_BIND=false:
  # pinned, they would share the cores of the thread that starts them.
  local cpus=${SLURM_CPUS_PER_TASK:-${SLURM_CPUS_ON_NODE:-$(nproc)}}
  export OMP_NUM_THREADS=$cpus
  export OMP_PROC_BIND=${PORTALAB_OMP_PROC_BIND:-spread}
  export OMP_PLACES=threads
  PORTALAB_BIN=${PORTALAB_BIN:-${PORTALAB_BUILD:-build/cuda}/portalab}
  if [ ! -x "$PORTALAB_BIN" ]; then
    echo "portalab: no executable $PORTALAB_BIN (set PORTALAB_BUILD in scripts/slurm/site.sh)" >&2
    exit 2
  fi
  # Extra arguments for every portalab run, e.g. PORTALAB_ARGS="--set reps=3".
  # Split on blanks only: no globbing of [1e6,1e7].
  read -r -a PORTALAB_EXTRA <<<"${PORTALAB_ARGS:-}"
  PORTALAB_LAUNCH=()
  echo "portalab: job ${SLURM_JOB_ID:-none} on $(hostname): OMP_NUM_THREADS=$OMP_NUM_THREADS" \
       "OMP_PROC_BIND=$OMP_PROC_BIND OMP_PLACES=$OMP_PLACES" \
       "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset} bin=$PORTALAB_BIN"
}

# results/<job id>/ (an array's tasks share their array job's folder).
portalab_job_dir() {
  echo "${PORTALAB_RESULTS:-results}/${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-local}}"
}

# Where portalab_run_deck DECK writes: <job dir>/<deck name>/.
portalab_deck_dir() {
  echo "$(portalab_job_dir)/$(basename "$1" .toml)"
}

# portalab_run_deck DECK [portalab args]: runs DECK into portalab_deck_dir,
# table on stdout and in table.txt; returns portalab's exit status. A command
# in the array PORTALAB_LAUNCH (a profiler) runs portalab.
portalab_run_deck() {
  local deck=$1; shift
  local out
  out=$(portalab_deck_dir "$deck")
  mkdir -p "$out"
  "$PORTALAB_BIN" info >"$out/info.json"
  local status=0
  # At its time limit Slurm sends SIGTERM to every process of the job (as
  # `scancel --signal=TERM --full` does; --signal=USR1@60 a warning, a
  # closed session SIGHUP): portalab stops at a safe point, writes its
  # results and exits 128 + the signal, but this shell and tee would die at
  # once, losing the end of table.txt and the exit status. They ignore those
  # signals while portalab runs (which sets its own handlers); `set -e` then
  # ends the job with portalab's status.
  trap '' TERM INT HUP USR1 USR2 XCPU
  "${PORTALAB_LAUNCH[@]}" "$PORTALAB_BIN" run "$deck" --out "$out" "${PORTALAB_EXTRA[@]}" "$@" \
    | tee "$out/table.txt" || status=${PIPESTATUS[0]}
  trap - TERM INT HUP USR1 USR2 XCPU
  if ((status == 0)); then
    echo "portalab: $deck -> $out (exit 0)"
  else
    echo "portalab: $deck -> $out (exit $status: $(portalab_exit_reason "$status"))" >&2
  fi
  portalab_report "$out"
  portalab_import "$out"
  return "$status"
}

# portalab_import DIR: DIR's runs into the results store $PORTALAB_DB, once,
# from this one task (the batch script, never the ranks: SQLite's locks and
# shared file systems do not mix). Only where PORTALAB_DB is set; an array
# task imports nothing (its siblings would write at once on other nodes):
# scripts/slurm/import.sbatch imports the array's folder after it. A store
# that cannot be written is said on stderr and does not change the job's
# exit status: the results folder holds the runs.
portalab_import() {
  local dir=$1
  [ -n "${PORTALAB_DB:-}" ] || return 0
  if [ -n "${SLURM_ARRAY_JOB_ID:-}" ]; then
    echo "portalab: array task: not importing; after the array: scripts/slurm/submit.sh" \
         "--dependency=afterany:$SLURM_ARRAY_JOB_ID scripts/slurm/import.sbatch $(portalab_job_dir)"
    return 0
  fi
  if "$PORTALAB_BIN" db import --db "$PORTALAB_DB" --quiet "$dir"; then
    echo "portalab: $dir imported into $PORTALAB_DB"
  else
    echo "portalab: $dir not imported into $PORTALAB_DB (see above); import it later:" \
         "portalab db import --db $PORTALAB_DB $dir" >&2
  fi
}

# portalab_exit_reason STATUS: what portalab's exit status means (portalab
# help), for the job's last line; portalab said the details above it.
portalab_exit_reason() {
  case $1 in
    1) echo "a check failed, an entry raised an error, or the result files could not be written to the end" ;;
    2) echo "bad input, nothing ran: the deck, an option or a variable; with several ranks, ranks given different decks or options, or one that could not start (every rank said which above)" ;;
    3) echo "an unexpected error, or a rank that did not start within PORTALAB_STARTUP_TIMEOUT_S or stopped before a collective (the watchdog): see above" ;;
    4) echo "nothing was measured: every entry was N/A or skipped for memory" ;;
    *) if (($1 > 128)); then
         echo "stopped by SIG$(kill -l $(($1 - 128)) 2>/dev/null || echo "nal $(($1 - 128))"); the result files hold the entries done"
       else
         echo "see the messages above"
       fi ;;
  esac
}

# The scripts beside this file (share/portalab/scripts when installed).
portalab_scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# portalab_report DIR: DIR/report.html, one page of DIR's results
# (scripts/report.py, with $PORTALAB_PYTHON, default python3), also of a run
# that failed or was stopped; PORTALAB_REPORT=no writes none. A page that
# cannot be written is said on stderr and does not change the job's exit
# status: the results are what counts.
portalab_report() {
  local dir=$1
  case ${PORTALAB_REPORT:-yes} in
    yes | no) ;;
    *) echo "portalab: PORTALAB_REPORT='$PORTALAB_REPORT': expected yes or no; no report for $dir" >&2
       return 0 ;;
  esac
  if [ "${PORTALAB_REPORT:-yes}" = no ] \
     || { [ ! -f "$dir/results.json" ] && [ ! -f "$dir/results.jsonl" ]; }; then
    return 0  # not wanted, or stopped before measuring anything
  fi
  if "${PORTALAB_PYTHON:-python3}" "$portalab_scripts_dir/report.py" "$dir" \
      --out "$dir/report.html" >/dev/null; then
    echo "portalab: report $dir/report.html (one file: open it in a browser, or send it)"
  else
    echo "portalab: no report for $dir (scripts/report.py failed: see above)" >&2
  fi
}
