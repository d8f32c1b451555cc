#!/usr/bin/env bash
# Proves scripts/slurm/ on a real Slurm: starts munged, slurmctld and slurmd
# on this host with their own config, state, logs and sockets in a temporary
# folder (slurm_start.sh), submits each job script through submit.sh with a
# small CPU deck, waits (bounded), checks the jobs' states and result files, and stops every
# daemon it started, also when it fails.
#   tests/slurm/slurm_test.sh SOURCE_DIR PORTALAB_BINARY
# Exits 77 (skipped) without slurm-wlm and munge, or when not root (slurmd
# must be root to start jobs).
set -euo pipefail
src=$(cd "$1" && pwd)
bin=$(realpath "$2")
timeout_s=${PORTALAB_SLURM_TIMEOUT:-240}

# shellcheck source=tests/slurm/slurm_start.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_start.sh"
slurm_start ""
wait_for 60 "node $host idle" bash -c "sinfo -h -n $host -o %t | grep -qx idle"

# --- Submit through submit.sh, as a user would, from a work folder so that
# results/ lands there. Site settings come from the environment (site.sh keeps
# values already set): this partition, CPUs of this host, no modules.
export SBATCH_PARTITION=test SBATCH_TIMELIMIT=00:10:00 SBATCH_CPUS_PER_GPU=$cpus
PORTALAB_BUILD=$(dirname "$bin")
export PORTALAB_MODULES="" PORTALAB_BUILD
# Each job's report.html: written by the run_deck and the stopped job where a
# python3 here has matplotlib and jinja2 (seconds each), by no other.
report_python=
for p in python3 /usr/bin/python3; do
  if "$p" -c "import matplotlib, jinja2" 2>/dev/null; then report_python=$(command -v "$p"); break; fi
done
export PORTALAB_REPORT=no
report=(env)
[ -z "$report_python" ] || report=(env PORTALAB_REPORT=yes PORTALAB_PYTHON="$report_python")
# Serial and the build's parallel host space (OpenMP, or Threads).
host_spaces=$("$bin" list 2>/dev/null | sed -n 's/^spaces compiled in: //p' | tr -d ' ' \
  | tr ',' '\n' | grep -xE 'Serial|OpenMP|Threads' | paste -sd, -)
# A quick calibration in every job: the sweep's bandwidth deck asks for a
# full one, over a minute of the CI machine's two cores that tests no job
# script.
export PORTALAB_ARGS="--spaces $host_spaces --set reps=2 --set warmups=1 --set vector_poly.sizes=[1000] --set stream_copy.sizes=[1000] --set calibrate=quick"
cd "$tmp/work"
submit=$src/scripts/slurm/submit.sh
# A fake nsys: `profile` records its arguments, writes the report and runs
# the program; `export` writes the file named; `stats` prints a line.
cat >"$tmp/run/nsys" <<'NSYS'
#!/usr/bin/env bash
out=; args=("$@")
for a in "$@"; do case $a in --output=*) out=${a#--output=};; esac; done
case $1 in
  --version) echo "NVIDIA Nsight Systems version fake"; exit 0;;
  export) : >"$out"; exit 0;;
  stats) echo "fake nsys stats: ${*: -1}"; exit 0;;
esac
printf '%s\n' "$@" >"$out.nsys-args"; : >"$out.nsys-rep"
i=1; while [[ ${args[$i]} == -* ]]; do i=$((i + 1)); done   # skip "profile" and options
exec "${args[@]:$i}"
NSYS
chmod +x "$tmp/run/nsys"

job=$("${report[@]}" "$submit" "$src/scripts/slurm/run_deck.sbatch" "$src/inputs/default.toml")
array=$("$submit" --array=0-1 "$src/scripts/slurm/sweep.sbatch" \
  "$src/inputs/default.toml" "$src/inputs/bandwidth.toml")
profile=$(NSYS=$tmp/run/nsys "$submit" "$src/scripts/slurm/profile.sbatch" "$src/inputs/default.toml")
# A job that must fail: a deck that does not parse (portalab exits 2).
bad=$(PORTALAB_ARGS="" "$submit" "$src/scripts/slurm/run_deck.sbatch" "$src/tests/decks/unknown_key.toml")
# A long job stopped as its time limit would stop it: SIGTERM to every process.
long=$(PORTALAB_ARGS="--set reps=1000" \
  "${report[@]}" "$submit" "$src/scripts/slurm/run_deck.sbatch" "$src/tests/decks/long_run.toml")
# The node job: 2 tasks of one GPU each, srun starting them as MPI ranks
# (PMIx); host spaces here, Open MPI's ranks over shared memory.
node=$(SBATCH_CPUS_PER_GPU=1 PORTALAB_ARGS="--spaces Serial" OMPI_MCA_btl=self,vader \
  OMPI_MCA_btl_vader_single_copy_mechanism=none \
  "$submit" --ntasks-per-node=2 --gpus-per-task=1 "$src/scripts/slurm/node.sbatch" \
  "$src/tests/decks/mpi_node.toml")
# The node job with one rank given more than the other (as a script that
# builds each rank's arguments might): every rank says which rank and what
# differed, and the job fails at once (exit 2) with nothing written.
cat >"$tmp/run/portalab-rank1-differs" <<WRAP
#!/usr/bin/env bash
extra=()
if [ "\${SLURM_PROCID:-0}" = 1 ] && [ "\${1:-}" = run ]; then extra=(--set reps=7); fi
exec "$bin" "\$@" "\${extra[@]}"
WRAP
chmod +x "$tmp/run/portalab-rank1-differs"
disagree=$(PORTALAB_BIN=$tmp/run/portalab-rank1-differs SBATCH_CPUS_PER_GPU=1 \
  PORTALAB_ARGS="--spaces Serial" OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
  "$submit" --ntasks-per-node=2 --gpus-per-task=1 "$src/scripts/slurm/node.sbatch" \
  "$src/tests/decks/mpi_node.toml")
# A report switch of another word: refused before sbatch (exit 2), not read
# as yes in the job.
rc=0
PORTALAB_REPORT=maybe "$submit" "$src/scripts/slurm/run_deck.sbatch" "$src/inputs/default.toml" \
  2>"$tmp/report-maybe.err" || rc=$?
if [ "$rc" != 2 ] || ! grep -q "PORTALAB_REPORT='maybe': expected yes or no" "$tmp/report-maybe.err"; then
  cat "$tmp/report-maybe.err" >&2; echo "PORTALAB_REPORT=maybe: exit $rc, not refused" >&2; exit 1
fi
echo "submitted: run_deck $job, sweep $array, profile $profile, bad deck $bad, long $long, node $node," \
  "node with a rank that differs $disagree"
# Until its first entry, or until it has ended (then it failed: said below,
# not waited for).
has_entry() {
  python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["results"])' \
    "results/$long/long_run/results.json" 2>/dev/null
}
wait_for "$timeout_s" "the long job's first entry" bash -c \
  "$(declare -f has_entry); long=$long; has_entry || [ -z \"\$(squeue -h -j $long)\" ]"
has_entry || { tail -n 20 "portalab-$long.out" >&2; echo "long job: ended with no entry" >&2; exit 1; }
scancel --signal=TERM --full "$long"

# shellcheck disable=SC2016  # expanded by that bash
wait_for "$timeout_s" "the jobs to finish" bash -c '[ -z "$(squeue -h)" ]'

state() { scontrol -o show job "$1" | grep -o 'JobState=[A-Z_]* .*ExitCode=[0-9:]*' \
  | sed 's/JobState=\([A-Z_]*\).*ExitCode=\([0-9:]*\)/\1 \2/' | sort -u; }
expect_state() {  # JOB "STATE EXIT:SIGNAL" (every task of an array)
  local got; got=$(state "$1")
  if [ "$got" != "$2" ]; then echo "job $1: expected '$2', got '$got'" >&2; return 1; fi
}
expect_state "$job" "COMPLETED 0:0"
expect_state "$array" "COMPLETED 0:0"
[ "$(scontrol -o show job "$array" | wc -l)" = 2 ] || { echo "sweep: not 2 tasks" >&2; exit 1; }
expect_state "$profile" "COMPLETED 0:0"
expect_state "$bad" "FAILED 2:0"
expect_state "$long" "FAILED 143:0"
expect_state "$node" "COMPLETED 0:0" || { cat "portalab-node-$node.out" >&2; exit 1; }
expect_state "$disagree" "FAILED 2:0" || { cat "portalab-node-$disagree.out" >&2; exit 1; }

check_results() {  # DIR REPS: a run of the small deck, every entry passed, OMP from the allocation
  python3 - "$1" "$cpus" "$2" "$host_spaces" <<'PY'
import json, sys
d, cpus, reps, spaces = sys.argv[1], sys.argv[2], int(sys.argv[3]), set(sys.argv[4].split(","))
doc = json.load(open(f"{d}/results.json"))
rows = doc["results"]
assert rows, f"{d}: no rows"
# N/A: a variant the allocation cannot run (4 instances of a 2-thread OpenMP).
assert all(r["check"] in ("PASS", "N/A") for r in rows), f"{d}: a check did not pass"
assert any(r["check"] == "PASS" for r in rows), f"{d}: nothing passed"
assert {r["space"] for r in rows} == spaces, ({r["space"] for r in rows}, spaces)
assert all(r["reps"] == reps for r in rows), f"reps: not {reps}"
prov = doc["provenance"]
assert prov["slurm"]["job_id"], "no Slurm job id in the provenance"
omp = prov["host"]["omp_env"]
assert omp == {"OMP_NUM_THREADS": cpus, "OMP_PROC_BIND": "spread", "OMP_PLACES": "threads"}, omp
print(f"{d}: {len(rows)} rows, job {prov['slurm']['job_id']}, {omp}")
PY
  [ -s "$1/results.csv" ] && [ -s "$1/table.txt" ] && [ -s "$1/info.json" ] || return 1
  # Its files valid against schema/ (77: this python3 has no jsonschema).
  local rc=0
  python3 "$src/scripts/validate.py" "$1" || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 77 ]
}
check_results "results/$job/default" 2   # PORTALAB_ARGS' reps
check_results "results/$array/default" 2
check_results "results/$array/bandwidth" 2
check_results "results/$profile/default" 3  # the profile job's own, after PORTALAB_ARGS
fail() { echo "$*" >&2; exit 1; }
[ -f "results/$profile/default/profile.nsys-rep" ] || fail "profile: no report"
for option in --trace=cuda,nvtx --sample=none --cpuctxsw=none; do
  grep -qx -- "$option" "results/$profile/default/profile.nsys-args" \
    || fail "profile: nsys not called with $option"
done
[ -f "results/$profile/default/profile.sqlite" ] || fail "profile: no SQLite export"
grep -q "fake nsys stats: .*profile.sqlite" "results/$profile/default/profile-stats.txt" \
  || fail "profile: no nsys stats summary"
[ ! -e "results/$bad/unknown_key/results.json" ] || fail "bad deck: results written"
grep -q "unknown_key.toml:4:1" "portalab-$bad.out" || fail "bad deck: no parse error in the job output"
python3 - "results/$long/long_run/results.json" <<'PY' || fail "long job: results of a signalled run"
import json, sys
doc = json.load(open(sys.argv[1]))
stop, rows = doc["summary"]["interrupted"], doc["results"]
assert stop["signal"] == "SIGTERM" and rows and len(rows) + stop["not_run"] == 10, (stop, len(rows))
assert all(r["check"] == "PASS" for r in rows)
print(f"long job: stopped by {stop['signal']} after {len(rows)} entries, {stop['not_run']} not run")
PY
grep -q "interrupted by SIGTERM" "results/$long/long_run/table.txt" || fail "long job: table.txt cut short"
if [ -n "$report_python" ]; then
  for d in "results/$job/default" "results/$long/long_run"; do
    grep -q "<h2 id=\"glance-h\">" "$d/report.html" || fail "$d: no report.html"
  done
  grep -q "interrupted by SIGTERM" "results/$long/long_run/report.html" \
    || fail "long job: the report does not say it was interrupted"
  [ ! -e "results/$array/default/report.html" ] || fail "PORTALAB_REPORT=no: a report was written"
else
  echo "no python3 with matplotlib and jinja2 here: the jobs' reports are not checked"
fi
python3 - "results/$node/mpi_node/results.json" <<'PY' || fail "node job: its results"
import json, sys
doc = json.load(open(sys.argv[1]))
ranks = doc["provenance"]["ranks"]
assert sorted(r["rank"] for r in ranks) == [0, 1], ranks
assert doc["provenance"]["slurm"]["job_id"], "no Slurm job id in the provenance"
rows = doc["results"]
assert all(r["check"] in ("PASS", "N/A") for r in rows), [r for r in rows if r["check"] not in ("PASS", "N/A")]
two = {r["experiment"] for r in rows if r["ranks"] == 2 and r["check"] == "PASS"}
assert two == {"allreduce", "sendrecv", "dot_distributed", "gemm"}, two
print(f"node job: {len(rows)} rows, experiments on 2 ranks: {sorted(two)}")
PY
out=portalab-node-$disagree.out
for r in 0 1; do
  grep -q "^error: \[rank $r of 2\] ranks disagree on what to run: rank 1 .*--set reps=7.*reps=7 .*reps=3 " "$out" \
    || { cat "$out" >&2; fail "rank differing: rank $r did not say which rank and what differed"; }
done
grep -q "(exit 2: bad input, nothing ran" "$out" || fail "rank differing: the job's last line has no reason"
[ ! -e "results/$disagree/mpi_node/results.json" ] || fail "rank differing: results written"
echo "node job with a rank that differs: FAILED 2, said by both ranks"
echo "slurm test passed"
