#!/usr/bin/env bash
# `portalab health` end to end on this host (docs/health.md): against a
# reference it meets (exit 0), a planted one above what the machine can do
# (exit 1, naming the node's CPU model and the figure), a reference file it
# cannot take (exit 2, nothing measured), no reference (its figures said to
# be unjudged), its own history in a store (planted earlier runs 100
# times faster: exit 1), and a synthetic node of 4 H100s judged with --from
# (one GPU named by its UUID). The Prometheus files it and `db fleet` write are
# served by Debian's prometheus-node-exporter, started here on a free
# loopback port with only its textfile collector, and `promtool check
# metrics` accepts them; node_exporter's part is skipped where it is not
# installed. How long each check took is printed, never asserted.
#   tests/health/health_test.sh PORTALAB_BINARY
set -euo pipefail
bin=$(realpath "$1")
tmp=$(mktemp -d /tmp/portalab_health.XXXXXX)
exporter_pid=
cleanup() {
  local rc=$?
  # wait gives 143 for the killed exporter: not the test's status (set -e).
  if [ -n "$exporter_pid" ]; then kill "$exporter_pid" 2>/dev/null; wait "$exporter_pid" 2>/dev/null || true; fi
  if ((rc != 0)); then echo "--- FAILED (exit $rc); kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=false
unset PORTALAB_DB PORTALAB_REFERENCE

# The node's CPU model and parallel host space, as portalab names them.
cpu=$("$bin" info | python3 -c 'import json, sys; print(json.load(sys.stdin)["host"]["cpu_model"])')
host=$("$bin" info | python3 -c 'import json, sys; print(json.load(sys.stdin)["host"]["hostname"])')
space=$("$bin" list | sed -n 's/^spaces compiled in: //p' | tr -d ' ' | tr ',' '\n' \
  | grep -xE 'OpenMP|Threads' | head -n 1 || true)
[ -n "$space" ] || space=Serial
references() {  # FILE VALUE: a reference for this CPU's triad (none where VALUE is empty)
  python3 - "$1" "$cpu" "$space triad_gbps" "$2" <<'PY'
import csv, sys
path, model, quantity, value = sys.argv[1:]
with open(path, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["model", "quantity", "value", "unit", "source", "date", "basis"])
    if value:
        w.writerow([model, quantity, value, "GB/s", "health_test.sh: planted", "2026-11-27", "portalab"])
        w.writerow([model, quantity, "1e6", "GB/s", "health_test.sh: a published one", "2026-11-27", "public"])
    else:  # none for this CPU (a file of no lines at all is refused as bad input)
        w.writerow(["no such model", quantity, "1", "GB/s", "health_test.sh: another model's", "2026-11-27", "portalab"])
PY
}
check() {  # NAME EXPECTED_EXIT ARGS...: runs portalab health, prints its time
  local name=$1 expect=$2 rc=0 t0 t1; shift 2
  t0=$(date +%s.%N)
  "$bin" health --out "$tmp/$name" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  t1=$(date +%s.%N)
  printf 'health %-10s exit %d in %s s\n' "$name" "$rc" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
  if [ "$rc" != "$expect" ]; then
    cat "$tmp/$name.out" "$tmp/$name.err" >&2
    fail "$name: exit $rc, expected $expect"
  fi
}
verdict() {  # DIR QUANTITY: the figure's verdict in health.json
  python3 - "$1/health.json" "$2" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
print(" ".join(f["verdict"] for f in h["figures"] if f["quantity"] == sys.argv[2]))
PY
}

mkdir -p "$tmp/textfile"
references "$tmp/met.csv" 0.001
references "$tmp/planted.csv" 1e9
references "$tmp/none.csv" ""
printf 'model,quantity,value,unit,source,date\n"%s",triad_gbps,fast,GB/s,x,2026-11-27\n' "$cpu" >"$tmp/bad.csv"

# A reference the machine meets: healthy, imported, written for Prometheus.
check met 0 --reference "$tmp/met.csv" --db "$tmp/store.sqlite" --prometheus "$tmp/textfile/portalab.prom"
grep -q "^health: healthy" "$tmp/met.out" || fail "met: no 'health: healthy'"
[ "$(verdict "$tmp/met" "$space triad_gbps")" = healthy ] || fail "met: triad not judged healthy"
grep -q "imported 1 run" "$tmp/met.out" || fail "met: not imported into the store"
grep -q "^portalab_health_figure{.*quantity=\"$space triad_gbps\".*reference=\"0.001\".*verdict=\"healthy\"} " \
  "$tmp/textfile/portalab.prom" || fail "met: no gauge of the judged figure"

# The same machine against a planted reference above it: degraded, said
# with the model, the figure and its share of the reference.
check planted 1 --reference "$tmp/planted.csv"
grep -q "^degraded: node $host ($cpu) $space triad_gbps [0-9.e+]* GB/s, 0.00 of the $cpu reference 1e+09" \
  "$tmp/planted.out" || { cat "$tmp/planted.out"; fail "planted: no reason naming the CPU and figure"; }
grep -q "^health: DEGRADED" "$tmp/planted.out" || fail "planted: no 'health: DEGRADED'"

# A reference file it cannot take: exit 2 naming the line, nothing measured.
check bad 2 --reference "$tmp/bad.csv"
grep -q "bad.csv:2: value 'fast': expected a positive number" "$tmp/bad.err" || fail "bad: no line named"
[ ! -e "$tmp/bad" ] || fail "bad: a results folder was written"

# No reference for this CPU, one earlier run in the store: unjudged, and said.
check unjudged 0 --reference "$tmp/none.csv" --db "$tmp/store.sqlite"
grep -q "^note: node $host ($cpu): [0-9]* figures unjudged" "$tmp/unjudged.out" \
  || fail "unjudged: not said"
[ "$(verdict "$tmp/unjudged" "$space triad_gbps")" = unjudged ] || fail "unjudged: triad judged"

# Its own history: three earlier runs of this node 100 times faster
# (planted), and one of another node whose names need escaping in the
# Prometheus format; then the node against them.
python3 - "$tmp/met/results.json" "$tmp/planted_runs" <<'PY'
import copy, json, os, sys
doc = json.load(open(sys.argv[1]))
for i, host in enumerate(["same", "same", "same", 'node "quoted" \\ back']):
    d = copy.deepcopy(doc)
    p = d["provenance"]
    p["started_at"] = f"2026-01-0{i + 1}T00:00:00Z"
    if host != "same":
        p["host"]["hostname"] = host
        p["host"]["cpu_model"] = 'CPU "model"\nwith a line feed'
    for s in p["calibration"]["spaces"]:
        for k in ("triad_gbps", "copy_kernel_gbps", "copy_deep_copy_gbps", "read_gbps", "memory_gbps"):
            if k in s: s[k] *= 100
    os.makedirs(f"{sys.argv[2]}/{i}")
    json.dump(d, open(f"{sys.argv[2]}/{i}/results.json", "w"))
PY
"$bin" db import --db "$tmp/store.sqlite" --quiet "$tmp/planted_runs" >/dev/null
check history 1 --reference "$tmp/none.csv" --db "$tmp/store.sqlite"
grep -q "^degraded: node $host ($cpu) $space triad_gbps .* of its own median over 5 earlier runs" \
  "$tmp/history.out" || { cat "$tmp/history.out"; fail "history: no reason against its own median"; }

# A node of 4 H100s, one rank each (synthetic: this host has none), judged
# with --from against the shipped references: GPU 2's triad, planted at 0.61
# of the H100 reference, is named by its UUID with that share; the other GPUs
# are healthy, the links and the allreduce unjudged (no reference for them).
python3 - "$tmp/met/results.json" "$tmp/gpus" <<'PY'
import copy, json, os, sys
doc = json.load(open(sys.argv[1]))
p = doc["provenance"]
p["host"]["hostname"] = "gpunode"  # another node's gauges beside this one's
h100 = "NVIDIA H100 80GB HBM3"
uuids = [f"GPU-0000000{i}-1111-2222-3333-444444444444" for i in range(4)]
def gpu_space(triad):
    return {"space": "Cuda", "host": False, "triad_gbps": triad, "copy_kernel_gbps": 2790,
            "copy_deep_copy_gbps": 2932, "launch_us": 14.6,
            "gemm_gflops": {"float32": 51000, "float64": 64000},
            "transfers": {"h2d_pinned": {"best_gbps": 48.5}, "d2h_pinned": {"best_gbps": 54.8}}}
host_spaces = [s for s in p["calibration"]["spaces"] if s.get("host")]
p["ranks"] = []
for i, u in enumerate(uuids):
    cal = copy.deepcopy(p["calibration"])
    cal["spaces"] = host_spaces + [gpu_space(1840 if i == 2 else 2990)]
    p["ranks"].append({"rank": i, "host": p["host"]["hostname"],
                       "device": {"uuid": u, "name": h100, "device_id": i}, "calibration": cal})
p["calibration"]["spaces"] = host_spaces + [gpu_space(2990)]
p["calibration"]["links"] = {
    "peer_one_way_gbps": [[0 if i == j else 370.0 for j in range(4)] for i in range(4)],
    "peer_both_ways_gbps": [[0 if i == j else 700.0 for j in range(4)] for i in range(4)],
    "peer_bytes": 268435456, "peer_note": "",
    "allreduce": [{"space": "Cuda", "path": "nccl", "ranks": 4, "bytes": 67108864, "busbw_gbps": 350.0}]}
p["started_at"] = "2026-01-05T00:00:00Z"
os.makedirs(sys.argv[2])
json.dump(doc, open(f"{sys.argv[2]}/results.json", "w"))
PY
rc=0
"$bin" health --from "$tmp/gpus" --prometheus "$tmp/textfile/gpus.prom" >"$tmp/gpus.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/gpus.out"; fail "4 GPUs: exit $rc, expected 1"; }
grep -q "^degraded: GPU-00000002-1111-2222-3333-444444444444 triad_gbps 1840 GB/s, 0.61 of the NVIDIA H100 80GB HBM3 reference 2994$" \
  "$tmp/gpus.out" || { cat "$tmp/gpus.out"; fail "4 GPUs: GPU 2 not named with its figure"; }
[ "$(grep -c '^degraded:' "$tmp/gpus.out")" = 1 ] || { cat "$tmp/gpus.out"; fail "4 GPUs: more than GPU 2 named"; }
[ "$(python3 -c 'import json, sys; h = json.load(open(sys.argv[1])); print(sorted({f["kind"] for f in h["figures"] if f["verdict"] == "healthy"}))' "$tmp/gpus/health.json")" = "['gpu']" ] \
  || fail "4 GPUs: the GPUs' other figures not judged healthy"
grep -q 'gpu_uuid="GPU-00000002-1111-2222-3333-444444444444",peer_uuid="",model="NVIDIA H100 80GB HBM3",space="Cuda",quantity="triad_gbps",unit="GB/s",reference="2994",.*published="3350",verdict="degraded"} 1840' \
  "$tmp/textfile/gpus.prom" || fail "4 GPUs: no degraded gauge of GPU 2 with the reference and the published peak"
grep -q 'peer_uuid="GPU-00000003-1111-2222-3333-444444444444".*quantity="peer_gbps".*verdict="unjudged"} 370' \
  "$tmp/textfile/gpus.prom" || fail "4 GPUs: no gauge of a link to GPU 3"
rc=0
"$bin" health --from "$tmp/no-such-check" >/dev/null 2>"$tmp/from.err" || rc=$?
if [ "$rc" != 2 ] || ! grep -q "no results.json there" "$tmp/from.err"; then
  fail "--from a folder of no check: exit $rc"
fi

# db fleet's figures for Prometheus, the escaped names among them.
rc=0
"$bin" db fleet --db "$tmp/store.sqlite" --since 2026-01-01 --references "$tmp/met.csv" \
  --prometheus "$tmp/textfile/fleet.prom" >"$tmp/fleet.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$tmp/fleet.out"; fail "fleet: exit $rc"; }
grep -qF 'host="node \"quoted\" \\ back",model="CPU \"model\"\nwith a line feed"' "$tmp/textfile/fleet.prom" \
  || fail "fleet: label values not escaped"
[ -z "$(find "$tmp/textfile" -type f ! -name '*.prom')" ] || fail "a temporary file was left beside the .prom files"

if ! command -v promtool >/dev/null || ! command -v prometheus-node-exporter >/dev/null; then
  echo "no promtool or prometheus-node-exporter (Debian: prometheus, prometheus-node-exporter):" \
       "the Prometheus files are not checked by them"
  echo "health test passed"
  exit 0
fi
for f in "$tmp"/textfile/*.prom; do
  promtool check metrics <"$f" || fail "promtool rejects $f"
done
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
  --collector.textfile --collector.textfile.directory="$tmp/textfile" >"$tmp/exporter.log" 2>&1 &
exporter_pid=$!
for _ in $(seq 100); do
  python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=2)" \
    "http://127.0.0.1:$port/metrics" 2>/dev/null && break
  kill -0 "$exporter_pid" 2>/dev/null || { cat "$tmp/exporter.log"; fail "node_exporter stopped"; }
  sleep 0.2
done
python3 -c "import urllib.request, sys; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())" \
  "http://127.0.0.1:$port/metrics" >"$tmp/metrics.txt" || { cat "$tmp/exporter.log"; fail "no /metrics"; }
grep -q '^node_textfile_scrape_error 0' "$tmp/metrics.txt" \
  || { grep textfile "$tmp/metrics.txt" "$tmp/exporter.log"; fail "node_exporter could not read the files"; }
grep -q "^portalab_health_figure{.*quantity=\"$space triad_gbps\".*verdict=\"healthy\"} " "$tmp/metrics.txt" \
  || fail "node_exporter does not serve portalab_health_figure"
grep -q '^portalab_health_degraded{host=".*"} 0' "$tmp/metrics.txt" || fail "no portalab_health_degraded"
grep -qF 'host="node \"quoted\" \\ back"' "$tmp/metrics.txt" || fail "the escaped host not served"
echo "node_exporter on 127.0.0.1:$port serves $(grep -c '^portalab_' "$tmp/metrics.txt") portalab gauges"
echo "health test passed"
