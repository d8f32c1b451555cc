#!/usr/bin/env bash
# Runs each fuzzer (cmake --preset fuzz: the deck, --set, the command line
# before Kokkos, the results files `portalab db import` reads) for a bounded
# time, seeded with the decks in inputs/ and tests/decks, the --set examples
# in set_seeds.txt, the command lines in cli_seeds.txt, results files and
# journals made by tests/scripts/store_synthetic.py and deep inputs made here; first replays
# tests/fuzz/regressions/ and the deep inputs. Fails on any crash, leak, timeout or
# sanitizer report; the input that caused it is kept in build/fuzz/artifacts/.
# Then the result scripts (tests/scripts/fuzz_scripts.py) on mutated results
# files for an equal share: any traceback, undocumented exit or hang fails.
#   tests/fuzz/run_fuzz.sh [SECONDS]   # total for all fuzzers; default 60
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$root/build/fuzz"
seconds="${1:-60}"
fuzzers=(fuzz_deck fuzz_set fuzz_cli fuzz_results)
# Longest input per fuzzer: past each limit (a deck 1 MiB, an override 64
# KiB) would slow every mutation; deep nesting needs tens of kB.
declare -A max_len=([fuzz_deck]=262144 [fuzz_set]=70000 [fuzz_cli]=8192 [fuzz_results]=65536)
declare -A dict=([fuzz_deck]=deck.dict [fuzz_set]=deck.dict [fuzz_cli]=deck.dict
                 [fuzz_results]=results.dict)
per_fuzzer=$((seconds / (${#fuzzers[@]} + 1)))  # and the scripts' share
((per_fuzzer >= 1)) || per_fuzzer=1

cd "$root"  # presets are found from the source directory
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
artifacts="$build/artifacts"
mkdir -p "$artifacts"

# Seeds. fuzz_deck reads its first line as a --set string and the rest as the
# deck: each deck once with no override and once with each --set example.
mkdir -p "$work/seeds/fuzz_deck" "$work/seeds/fuzz_set"
decks=("$root"/inputs/*.toml "$root"/tests/decks/*.toml)
for deck in "${decks[@]}"; do
  { echo; cat "$deck"; } >"$work/seeds/fuzz_deck/$(basename "$deck" .toml)"
done
i=0
while IFS= read -r set; do
  i=$((i + 1))
  printf '%s' "$set" >"$work/seeds/fuzz_set/set$i"
  for deck in "${decks[@]}"; do
    { printf '%s\n' "$set"; cat "$deck"; } >"$work/seeds/fuzz_deck/$(basename "$deck" .toml)-set$i"
  done
done <"$root/tests/fuzz/set_seeds.txt"
# Deep and large: a dotted key and a table header of 60,000 levels (300,000
# overflowed toml++'s stack before the nesting limit), lists and inline
# tables past it, a deck of many plain lines.
mkdir -p "$work/deep/fuzz_deck" "$work/deep/fuzz_set" "$work/seeds/fuzz_cli"
deep_key=$(printf 'a.%.0s' $(seq 60000))
{ echo; echo "${deep_key}a = 1"; } >"$work/deep/fuzz_deck/dotted-key"
{ echo; echo "[${deep_key}a]"; } >"$work/deep/fuzz_deck/dotted-header"
{ echo; echo '[vector_poly]'; printf 'sizes = '; printf '[%.0s' $(seq 300); echo 1; } \
  >"$work/deep/fuzz_deck/lists"
{ echo; echo '[vector_poly]'; printf 'sizes = '; printf '{a=%.0s' $(seq 300); echo 1; } \
  >"$work/deep/fuzz_deck/inline-tables"
{ echo; for i in $(seq 5000); do echo "# line $i"; done; echo '[vector_poly]'; } \
  >"$work/deep/fuzz_deck/long"
{ printf 'vector_poly.sizes='; printf '[%.0s' $(seq 5000); } >"$work/deep/fuzz_set/lists"
cp "$work"/deep/fuzz_deck/* "$work/seeds/fuzz_deck/"
cp "$work"/deep/fuzz_set/* "$work/seeds/fuzz_set/"
i=0
while IFS= read -r line; do
  i=$((i + 1))
  printf '%b' "$line" >"$work/seeds/fuzz_cli/cli$i"
done <"$root/tests/fuzz/cli_seeds.txt"
# Results files: valid ones of each schema_version read, a journal of each
# (its input's first byte J), and one cut short.
mkdir -p "$work/seeds/fuzz_results"
PYTHONPATH="$root/tests/scripts" python3 - "$work/seeds/fuzz_results" <<'PY'
import json, os, sys
import store_synthetic as ss
out = sys.argv[1]
for version in (2, 3, 4):
    doc = ss.run([ss.row(), ss.row(space="OpenMP", path="loops", throttled=True)],
                 gpu={"uuid": "GPU-1"}, limits=[ss.gpu_limits(), ss.host_limits()], version=version)
    text = json.dumps(doc)
    open(os.path.join(out, f"v{version}.json"), "w").write(text)
    head = json.dumps({"schema_version": version, "provenance": doc["provenance"]})
    lines = [head, json.dumps({"first": 0, "rows": doc["results"][:1]}),
             json.dumps({"first": 1, "rows": doc["results"][1:]})]
    open(os.path.join(out, f"v{version}.jsonl"), "w").write("J" + "\n".join(lines) + "\n")
    open(os.path.join(out, f"v{version}-cut.jsonl"), "w").write("J" + "\n".join(lines)[:-20])
PY

# Sanitizer reports are fatal (-fno-sanitize-recover); leaks are reported too.
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
status=0
for fuzzer in "${fuzzers[@]}"; do
  exe="$build/tests/fuzz/$fuzzer"
  regressions="$root/tests/fuzz/regressions/$fuzzer"
  replay=()
  [ -d "$regressions" ] && replay+=("$regressions"/*)
  [ -d "$work/deep/$fuzzer" ] && replay+=("$work/deep/$fuzzer"/*)
  if ((${#replay[@]})); then
    echo "fuzz: $fuzzer: replaying ${#replay[@]} regression and deep inputs"
    "$exe" "${replay[@]}" >"$work/$fuzzer.replay.log" 2>&1 ||
      { tail -n 40 "$work/$fuzzer.replay.log"; echo "fuzz: $fuzzer: a regression input fails"; status=1; continue; }
  fi
  echo "fuzz: $fuzzer for ${per_fuzzer}s"
  mkdir -p "$work/corpus/$fuzzer"
  if ! "$exe" -max_total_time="$per_fuzzer" -timeout=10 -rss_limit_mb=2048 -max_len="${max_len[$fuzzer]}" \
      -dict="$root/tests/fuzz/${dict[$fuzzer]}" -artifact_prefix="$artifacts/$fuzzer-" -print_final_stats=1 \
      "$work/corpus/$fuzzer" "$work/seeds/$fuzzer" >"$work/$fuzzer.log" 2>&1; then
    tail -n 60 "$work/$fuzzer.log"
    echo "fuzz: $fuzzer FAILED; the input is in $artifacts/ (add it to tests/fuzz/regressions/$fuzzer/ once fixed)"
    status=1
  else
    grep -E '^Done' "$work/$fuzzer.log" | sed "s/^/fuzz: $fuzzer: /"
  fi
done
# The scripts' files come from a run of the host build's binary where there
# is one, else from a hand-made run; Debian's python3 has matplotlib.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
host_binary="$root/build/host/portalab"
[ -x "$host_binary" ] || host_binary=""
echo "fuzz: scripts for ${per_fuzzer}s"
PORTALAB="$host_binary" "$python" "$root/tests/scripts/fuzz_scripts.py" --seconds "$per_fuzzer" \
  --keep "$artifacts/scripts" >"$work/scripts.log" 2>&1 && tail -n 1 "$work/scripts.log" ||
  { tail -n 60 "$work/scripts.log"; echo "fuzz: scripts FAILED; the files are in $artifacts/scripts/"; status=1; }
exit "$status"
