#!/usr/bin/env bash
# The fleet benchmark: bench/fleet/run.sh BINARY SYNTH   (`make bench-fleet`)
#
# One central gpuprobe takes a simulated fleet and is asked about it. The
# fleet (bench/fleet/synth.c): bundles of GPUs of 3 models made from the
# shipped reference measurements with seeded noise, a few with a planted
# fault (slow L2, low clock, another bank map, slow DRAM).
#   1. Whole results: $BENCH_FULL (1,000) GPUs' bundles as a node sends them
#      by default (every result whole, about 280 kB a GPU) pushed to a fresh
#      central by curl, $BENCH_PARALLEL (4) at a time: bundles/s, MB/s, the
#      daemon's CPU time per bundle, the store's size per GPU; and the
#      baseline: SYNTH --digest parses and digests them in one thread (the
#      least work any import of them must do) and the ratio to it.
#   2. Figures alone: $BENCH_GPUS (10,000) GPUs on $BENCH_HOSTS hosts (1,250)
#      as a node with upstream_content = figures sends them (about 20 kB a
#      GPU), $BENCH_OUTLIERS (12) planted, pushed the same way to a second
#      central: the same figures and its baseline.
#   3. Queries at 10,000 GPUs on that central: GET /healthz (the HTTP
#      floor), GET /api/v1/fleet and /api/v1/fleet/distribution,
#      $BENCH_QUERIES (100) each after one warm-up, and GET /api/v1/fleet
#      right after a new bundle each time (20: the view recomputed for a
#      changed model); p50 and p99 of curl's time_total, and their ratio to
#      /healthz.
#   4. Whether every planted GPU and no other was flagged.
# Targets: ingest >= 500 bundles/s, fleet p99 <= 100 ms at 10,000
# GPUs, every planted outlier found and no false positive; each printed PASS
# or MISS. A miss does not fail the script (a benchmark, not a test); it exits
# non-zero only when it cannot run. Everything goes in $BENCH_TMP (default
# /tmp; about 1 GB) and is removed on exit unless BENCH_KEEP=1. Other work on
# the machine shows in the figures: the load average is printed with them.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BINARY SYNTH   (build/release/gpuprobe build/release/bench/fleet-synth)" >&2
    exit 2
fi
BIN=$(realpath "$1")
SYNTH=$(realpath "$2")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
for tool in curl jq awk; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is missing: run 'make deps'" >&2; exit 2; }
done
GPUS=${BENCH_GPUS:-10000}
FULL=${BENCH_FULL:-1000}
HOSTS=${BENCH_HOSTS:-1250}
OUTLIERS=${BENCH_OUTLIERS:-12}
PARALLEL=${BENCH_PARALLEL:-4}
QUERIES=${BENCH_QUERIES:-100}
AFTER=20
WORK=$(mktemp -d "${BENCH_TMP:-/tmp}/gpuprobe-fleet.XXXXXX")
DAEMON=
cleanup() {
    [ -z "$DAEMON" ] || kill "$DAEMON" 2>/dev/null || true
    wait 2>/dev/null || true
    [ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# cpu_ticks PID: user + system clock ticks of a process so far
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# pct FILE P: the P-th percentile of the numbers in FILE (nearest rank), in ms
pct() { sort -g "$1" | awk -v p="$2" '{ v[NR] = $1 } END { i = int((p / 100) * NR + 0.999999); if (i < 1) i = 1; printf "%.1f", v[i] * 1000 }'; }
verdict() { awk -v ok="$1" 'BEGIN { print (ok ? "PASS" : "MISS") }'; }

echo "fleet benchmark on $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg) at the start"

# synth DIR N [--figures]: the fleet's first N GPUs
synth() {
    local dir=$1 n=$2
    shift 2
    mkdir -p "$dir"
    "$SYNTH" --out "$dir" --gpus "$n" --hosts "$HOSTS" --seed 2026 --outliers "$OUTLIERS" "$@" \
        "$REPO/data/reference/h100.json" "$REPO/data/reference/h200.json" \
        "$REPO/data/reference/h200.json=Synthetic GPU (H200 data)"
}

# start_central NAME: a daemon on a fresh database; sets DAEMON and URL
start_central() {
    echo bench-token >"$WORK/tokens"
    chmod 600 "$WORK/tokens"
    [ -z "$DAEMON" ] || { kill "$DAEMON"; wait "$DAEMON" 2>/dev/null || true; }
    "$BIN" serve --listen 127.0.0.1:0 --db "$WORK/$1.db" --token-file "$WORK/tokens" \
        --no-reference 2>"$WORK/$1.log" &
    DAEMON=$!
    local port=
    for _ in $(seq 100); do
        port=$(sed -n 's/.*msg=listening addr=[^ ]*:\([0-9]*\).*/\1/p' "$WORK/$1.log" | head -n1)
        [ -n "$port" ] && curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
        sleep 0.1
    done
    [ -n "$port" ] || { echo "$0: the daemon did not start: $(tail -n3 "$WORK/$1.log")" >&2; exit 1; }
    URL=http://127.0.0.1:$port
}

# one curl config entry per bundle; `next` separates them (curl would merge them otherwise)
push_config() {
    local first=1 f
    for f in "$@"; do
        [ $first = 1 ] || echo next
        first=0
        printf 'url = "%s/api/v1/import"\ndata-binary = "@%s"\nheader = "Authorization: Bearer bench-token"\nheader = "Content-Type: application/json"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n' "$URL" "$f"
    done
}

# ingest NAME DIR N: pushes DIR's first N bundles to a new central NAME and
# prints what it took; sets RATE
ingest() {
    local name=$1 dir=$2 n=$3
    local base files c0 c1 t0 t1 ok wall bytes
    base=$("$SYNTH" --digest "$dir" "$n" | awk '{ print $(NF - 2) }')
    start_central "$name"
    mapfile -t files < <(ls "$dir"/*.json | sort | head -n "$n")
    push_config "${files[@]}" >"$WORK/$name.cfg"
    c0=$(cpu_ticks "$DAEMON")
    t0=$(now)
    curl -s --parallel --parallel-max "$PARALLEL" -K "$WORK/$name.cfg" >"$WORK/$name.status" 2>/dev/null || true
    t1=$(now)
    c1=$(cpu_ticks "$DAEMON")
    ok=$(grep -c '^200$' "$WORK/$name.status" || true)
    wall=$(secs "$t0" "$t1")
    bytes=$(du -cb "${files[@]}" | tail -n1 | cut -f1)
    RATE=$(awk -v n="$ok" -v s="$wall" 'BEGIN { printf "%.1f", n / s }')
    echo "  $ok of $n accepted in $wall s: $RATE bundles/s," \
        "$(awk -v b="$bytes" -v s="$wall" 'BEGIN { printf "%.1f", b / s / 1048576 }') MB/s" \
        "($(awk -v b="$bytes" -v n="$n" 'BEGIN { printf "%.0f", b / n / 1024 }') kB a bundle)," \
        "$(awk -v c=$((c1 - c0)) -v n="$ok" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", c / hz * 1000 / n }') ms of daemon CPU a bundle"
    echo "  baseline (parse and digest, one thread): $base bundles/s; ratio" \
        "$(awk -v r="$RATE" -v b="$base" 'BEGIN { printf "%.2f", r / b }')"
    echo "  store: $(du -cb "$WORK/$name".db* | tail -n1 | awk -v n="$ok" '{ printf "%.0f MB, %.3f MB a GPU", $1 / 1048576, $1 / 1048576 / n }');" \
        "load average $(cut -d' ' -f1 /proc/loadavg)"
}

# ---- 1. whole results ------------------------------------------------------------------------
t0=$(now)
synth "$WORK/full" "$FULL"
echo "1. whole results: $FULL GPUs' bundles generated in $(secs "$t0" "$(now)") s"
ingest full "$WORK/full" "$FULL"
FULL_RATE=$RATE
rm -rf "$WORK/full" "$WORK"/full.db*

# ---- 2. figures alone --------------------------------------------------------------------------
t0=$(now)
synth "$WORK/fleet" $((GPUS + AFTER)) --figures
echo "2. figures alone: $GPUS GPUs of 3 models on $HOSTS hosts, $OUTLIERS planted, generated in $(secs "$t0" "$(now)") s"
ingest fleet "$WORK/fleet" "$GPUS"
FIG_RATE=$RATE
mapfile -t files < <(ls "$WORK/fleet"/*.json | sort)

# ---- 3. queries ------------------------------------------------------------------------------
# timed PATH N OUT: N GETs of PATH after one warm-up, curl's time_total each into OUT
timed() {
    curl -s -o /dev/null "$URL$1"
    for _ in $(seq "$2"); do curl -s -o /dev/null -w '%{time_total}\n' "$URL$1"; done >"$3"
}
metric=$(jq -rn '"gpuprobe_memory_latency_cycles{load=\"ca\",level=\"2\"}" | @uri')
timed /healthz "$QUERIES" "$WORK/t.healthz"
timed /api/v1/fleet "$QUERIES" "$WORK/t.fleet"
timed "/api/v1/fleet/distribution?model=NVIDIA%20H200&metric=$metric" "$QUERIES" "$WORK/t.dist"
: >"$WORK/t.after"
for f in "${files[@]:$GPUS:$AFTER}"; do
    curl -s -o /dev/null -H 'Authorization: Bearer bench-token' --data-binary "@$f" "$URL/api/v1/import"
    curl -s -o /dev/null -w '%{time_total}\n' "$URL/api/v1/fleet" >>"$WORK/t.after"
done
curl -s "$URL/api/v1/fleet" -o "$WORK/fleet.json"
hp99=$(pct "$WORK/t.healthz" 99)
echo "3. queries at $GPUS GPUs (ms)   p50      p99   p99 / healthz p99"
for q in healthz fleet dist after; do
    name=$(case $q in healthz) echo "GET /healthz" ;; fleet) echo "GET /api/v1/fleet" ;;
        dist) echo "distribution" ;; after) echo "fleet after a push" ;; esac)
    printf '  %-20s %7s  %7s  %8s\n' "$name" "$(pct "$WORK/t.$q" 50)" "$(pct "$WORK/t.$q" 99)" \
        "$(awk -v a="$(pct "$WORK/t.$q" 99)" -v b="$hp99" 'BEGIN { printf "%.1f", a / b }')"
done
echo "  the answer of GET /api/v1/fleet: $(($(stat -c %s "$WORK/fleet.json") / 1024)) kB"

# ---- 4. outliers -----------------------------------------------------------------------------
flagged=$(jq -r '[.models[].outliers[].uuid] | unique | .[]' "$WORK/fleet.json" | sort)
planted=$(cut -f1 "$WORK/fleet/planted.tsv" | sort)
found=$(comm -12 <(echo "$planted") <(echo "$flagged") | grep -c . || true)
false_pos=$(comm -13 <(echo "$planted") <(echo "$flagged") | grep -c . || true)
echo "4. outliers: $found of $(echo "$planted" | grep -c .) planted GPUs flagged, $false_pos others flagged"

# ---- targets ---------------------------------------------------------------------------------
fp99=$(pct "$WORK/t.fleet" 99)
ap99=$(pct "$WORK/t.after" 99)
echo "targets:"
echo "  ingest >= 500 bundles/s, whole:       $FULL_RATE   $(verdict "$(awk -v r="$FULL_RATE" 'BEGIN { print (r >= 500) }')")"
echo "  ingest >= 500 bundles/s, figures:     $FIG_RATE   $(verdict "$(awk -v r="$FIG_RATE" 'BEGIN { print (r >= 500) }')")"
echo "  fleet p99 <= 100 ms (unchanged fleet): $fp99   $(verdict "$(awk -v p="$fp99" 'BEGIN { print (p <= 100) }')")"
echo "  fleet p99 <= 100 ms (after a push):   $ap99   $(verdict "$(awk -v p="$ap99" 'BEGIN { print (p <= 100) }')")"
echo "  planted found, none else:             $found, $false_pos   $(verdict "$([ "$found" = "$(echo "$planted" | grep -c .)" ] && [ "$false_pos" = 0 ] && echo 1 || echo 0)")"
