#!/usr/bin/env bash
# The cache model benchmark: bench/cache/run.sh
#
#   1. Builds bench/cache/bench.c with cache/*.c, trace/*.c and util/*.c,
#      and the sorter's benchmark (bench/trace/bench.c: the trace generator
#      and a timed sort) at -O2, into a temporary directory.
#   2. Generates the sorter benchmark's synthetic gather kernel
#      (bench/trace/bench.c, `gen gather`: 209,716 threads of ~40 records
#      per unit of scale), scaled to come nearest BENCH_RECORDS (20M) input
#      records (scale 2: 16.5M), and sorts it once with arch=hopper
#      (sector32 coalescing, MSHR 512, M=200) into a sorted binary file:
#      about 8M sorted records, the scale at which the method's own
#      implementation needs ~1 GB.
#   3. Times the sorter alone on it (event-driven loop, output to a
#      checksum sink), then the cache model over the sorted file, each run
#      in its own process (its own peak RSS): the reuse-distance engine
#      alone (L1 only: the issue's target), the exact engine alone, and the
#      whole model (each engine and both, L1 and L2, on one thread; and
#      `both2`: both engines, each engine's walk on a thread of its own).
#      With BENCH_BASE=REF (a git ref, e.g. main), the cache model as it is
#      at REF is built too and every run is made with both, in the same
#      session on the same file: the before/after of a change.
#   4. Prints records/s (sorted records over the wall time of the whole
#      call: open, index pass, model, correction), CPU seconds, peak RSS, and
#      each run's throughput as a ratio to the sorter's on the same trace
#      (the sorter's rate counted in the same sorted records it produced).
#      Every run is made BENCH_REPEAT (3) times and the fastest kept, the
#      sorter's too: on a shared machine the slower runs measure the
#      neighbours.
# Target (one core): >= 20M records/s for the reuse-distance engine. Other
# work on the machine shows in the figures: the load average is printed with
# them, and CPU seconds are the figure to read when the cores are shared.
# It exits non-zero only when it cannot run. Everything it writes is removed
# on exit (BENCH_KEEP=1 keeps it). Tunables: BENCH_TMP (/tmp),
# BENCH_RECORDS (20000000), BENCH_REPEAT (3), BENCH_BASE (none),
# BENCH_BUILD_ONLY=DIR (build the binaries into DIR and stop), BENCH_BIN=DIR
# (run DIR's binaries instead of building: a machine without a compiler or
# jansson headers).
set -euo pipefail

cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
RECORDS=${BENCH_RECORDS:-20000000}
REPEAT=${BENCH_REPEAT:-3}
tmp=${BENCH_TMP:-/tmp}
dir=$(mktemp -d "$tmp/gpuprobe-bench-cache-XXXXXX")
cleanup() { if [ -z "${BENCH_KEEP:-}" ]; then rm -rf "$dir"; else echo "kept $dir"; fi; }
trap cleanup EXIT

flags=(-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I. -DGPUPROBE_VERSION='"bench"' -DGPUPROBE_GITREV='"bench"')
# The binaries: built here, or taken from BENCH_BIN, a folder a run with
# BENCH_BUILD_ONLY=DIR filled (a GPU node has no jansson headers to build
# with: build where it has, carry the folder, and run there with LD_LIBRARY_PATH
# naming the bundle's lib/).
bin=${BENCH_BIN:-${BENCH_BUILD_ONLY:-$dir}}
if [ -z "${BENCH_BIN:-}" ]; then
    mkdir -p "$bin"
    # shellcheck disable=SC2046
    $CC "${flags[@]}" -o "$bin/cache" bench/cache/bench.c cache/*.c trace/*.c util/*.c -ljansson -lm -lpthread
    # shellcheck disable=SC2046
    $CC "${flags[@]}" -o "$bin/sorter" bench/trace/bench.c cache/*.c trace/*.c util/*.c -ljansson -lm -lpthread
    if [ -n "${BENCH_BASE:-}" ]; then
        mkdir -p "$bin/base"
        git archive "$BENCH_BASE" cache bench/cache trace util | tar -x -C "$bin/base"
        (cd "$bin/base" && $CC "${flags[@]}" -o "$bin/cache-base" bench/cache/bench.c cache/*.c trace/*.c util/*.c \
            -ljansson -lm -lpthread)
        git rev-parse --short "$BENCH_BASE" >"$bin/base/REV"
    fi
    if [ -n "${BENCH_BUILD_ONLY:-}" ]; then
        echo "== built into $bin: run there with BENCH_BIN=$bin"
        exit 0
    fi
fi
if [ -x "$bin/cache-base" ]; then
    BENCH_BASE=${BENCH_BASE:-$(cat "$bin/base/REV")}
    echo "== base: the cache model at $BENCH_BASE ($(cat "$bin/base/REV"))"
fi

field() { sed -E "s/.*[ ^]$1=([^ ]+).*/\1/" <<<"$2"; }
# best CMD...: the output line of the fastest of REPEAT runs of CMD.
best() {
    local line keep="" t bt=""
    for _ in $(seq "$REPEAT"); do
        line=$("$@")
        t=$(field seconds "$line")
        if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN {exit !(a < b)}'; then
            keep=$line bt=$t
        fi
    done
    echo "$keep"
}

# the generator takes a scale, 209716 threads x ~39.4 records each
scale=$(awk -v r="$RECORDS" 'BEGIN {s = int(r / 8269000 + 0.5); print s < 1 ? 1 : s}')
echo "== generating the gather kernel at scale $scale (~$((scale * 8269))k records) and sorting it (arch=hopper) in $dir"
"$bin/sorter" gen gather "$dir/in.bin" "$scale"
"$bin/sorter" pipe "$dir/in.bin" "$dir/sorted.bin" arch=hopper out_format=bin >/dev/null
echo "   sorted file: $(stat -c %s "$dir/sorted.bin") bytes"

echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
line=$(best "$bin/sorter" sort "$dir/in.bin" arch=hopper)
sorted=$(field requests_out "$line")
sort_s=$(field seconds "$line")
sort_rate=$(awk -v n="$sorted" -v s="$sort_s" 'BEGIN {printf "%.0f", n / s}')
printf '%-28s %10s %12s %8s %8s %12s %9s\n' run records records/s seconds cpu_s peak_rss_kb x_sorter
printf '%-28s %10s %12s %8s %8s %12s %9s\n' "sorter alone" "$sorted" "$sort_rate" "$sort_s" \
    "$(field cpu_seconds "$line")" "$(field peak_rss_kb "$line")" 1.00
declare -A rate cpu
runs=("reuse 0" "exact 0" "exact 1" "reuse 1" "both 1" "both2 1")
for run in "${runs[@]}"; do
    set -- $run
    for which in "" base; do
        [ -z "$which" ] || [ -n "${BENCH_BASE:-}" ] || continue
        line=$(best "$bin/cache${which:+-$which}" "$dir/sorted.bin" "$1" "$2")
        case $1 in
            both) label="both engines" ;;
            both2) label="both, 2 threads" ;;
            *) label="$1 engine" ;;
        esac
        name="${which:+base }$label $([ "$2" = 1 ] && echo "L1+L2" || echo "L1")"
        r=$(field records_per_s "$line")
        if [ -z "$which" ] && [ "$2" = 0 ]; then
            rate[$1]=$r
            cpu[$1]=$(field cpu_seconds "$line")
        fi
        printf '%-28s %10s %12s %8s %8s %12s %9s\n' "$name" "$(field records "$line")" "$r" \
            "$(field seconds "$line")" "$(field cpu_seconds "$line")" "$(field peak_rss_kb "$line")" \
            "$(awk -v a="$r" -v b="$sort_rate" 'BEGIN {printf "%.2f", a / b}')"
        echo "   hit rates: $(tr ' ' '\n' <<<"$line" | grep _hit= | tr '\n' ' ')"
    done
done
per_cpu=$(awk -v n="$sorted" -v c="${cpu[reuse]}" 'BEGIN {printf "%.0f", n / c}')
verdict=$(awk -v r="${rate[reuse]}" 'BEGIN {print (r >= 20000000) ? "PASS" : "MISS"}')
echo "== $verdict >= 20M records/s, reuse-distance engine (L1), one core: ${rate[reuse]} (wall), $per_cpu per CPU-second"
