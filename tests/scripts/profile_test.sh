#!/usr/bin/env bash
# scripts/dev/profile.sh with a fake nsys and the host binary: nsys found inside an
# Nsight Compute install (the newest of two), NSYS_LIBS first on
# LD_LIBRARY_PATH, the trace options, the report, SQLite export, stats
# summary and results written next to each other; and exit 2 with a message
# where no nsys can be found.
#   tests/scripts/profile_test.sh SOURCE_DIR PORTALAB_BINARY
set -euo pipefail
src=$(cd "$1" && pwd)
bin=$(realpath "$2")
tmp=$(mktemp -d /tmp/portalab_profile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

clean_path=/usr/bin:/bin
if PATH=$clean_path command -v nsys >/dev/null \
   || compgen -G "/opt/nvidia/nsight-*/*/*/nsys" >/dev/null \
   || compgen -G "/opt/nvidia/nsight-*/*/host/target-linux-x64/nsys" >/dev/null; then
  echo "SKIP: this machine's own nsys would be found before the test's"
  exit 77
fi

# Two Nsight Compute installs under a CUDA_HOME, each with an nsys: the older
# one (first in plain alphabetical order) must not be picked.
cuda=$tmp/cuda
for v in 2025.3.1 2025.10.0; do
  mkdir -p "$cuda/nsight-compute-$v/host/target-linux-x64"
done
old=$cuda/nsight-compute-2025.3.1/host/target-linux-x64/nsys
printf '#!/usr/bin/env bash\necho "the older nsys ran" >&2; exit 1\n' >"$old"
new=$cuda/nsight-compute-2025.10.0/host/target-linux-x64/nsys
cat >"$new" <<'NSYS'
#!/usr/bin/env bash
out=; args=("$@")
for a in "$@"; do case $a in --output=*) out=${a#--output=};; esac; done
case $1 in
  --version) echo "NVIDIA Nsight Systems version 2025.10.0 (fake)"; exit 0;;
  export) : >"$out"; exit 0;;
  stats) echo "fake nsys stats: ${*: -1}"; exit 0;;
esac
printf '%s\n' "$@" >"$out.nsys-args"
echo "$LD_LIBRARY_PATH" >"$out.ld-library-path"
: >"$out.nsys-rep"
i=1; while [[ ${args[$i]} == -* ]]; do i=$((i + 1)); done   # skip "profile" and options
exec "${args[@]:$i}"
NSYS
chmod +x "$old" "$new"
mkdir -p "$tmp/libs"

out=$tmp/out
PATH=$clean_path CUDA_HOME=$cuda NSYS_LIBS=$tmp/libs PORTALAB=$bin OMP_NUM_THREADS=2 \
  OMP_PROC_BIND=false "$src/scripts/dev/profile.sh" "$src/inputs/default.toml" "$out" \
  --spaces Serial --set "vector_poly.sizes=[1000]" --set "stream_copy.sizes=[1000]" \
  >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "profile.sh exited $?"; }

grep -q "2025.10.0 (fake) at $new" "$tmp/stderr" || fail "not the newest nsys: $(cat "$tmp/stderr")"
for f in profile.nsys-rep profile.sqlite profile-stats.txt results/results.json; do
  [ -f "$out/$f" ] || fail "no $out/$f"
done
for option in profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --cuda-graph-trace=node; do
  grep -qx -- "$option" "$out/profile.nsys-args" || fail "nsys not called with $option"
done
[[ $(cat "$out/profile.ld-library-path") == "$tmp/libs"* ]] || fail "NSYS_LIBS not first on LD_LIBRARY_PATH"
grep -q "fake nsys stats: $out/profile.sqlite" "$out/profile-stats.txt" || fail "no stats of the export"
grep -q "nsys_check.py $out/profile.sqlite $out/results/results.json" "$tmp/stdout" \
  || fail "profile.sh does not say how to check the profile"
python3 - "$out/results/results.json" <<'PY' || fail "results: not 3 repetitions everywhere"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert rows and all(r["reps"] == 3 for r in rows if r["check"] in ("PASS", "FAIL")), rows[:1]
PY

# No nsys anywhere: exit 2 and one line saying what to do.
rc=0
PATH=$clean_path CUDA_HOME=$tmp/nothing PORTALAB=$bin "$src/scripts/dev/profile.sh" \
  "$src/inputs/default.toml" "$tmp/none" >/dev/null 2>"$tmp/stderr" || rc=$?
[ "$rc" = 2 ] || fail "without nsys: exit $rc, not 2"
grep -q "module load nsight-systems" "$tmp/stderr" || fail "without nsys: $(cat "$tmp/stderr")"
echo "profile.sh test passed"
