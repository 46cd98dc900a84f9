#!/usr/bin/env bash
# The trace sorter benchmark: bench/trace/run.sh   (the lead's `make bench-trace`)
#
#   1. Builds bench/trace/bench.c with the sorter's sources (trace/params.c,
#      rng.c, schedule.c, coalesce.c, order.c, order_ref.c, binfmt.c,
#      spool.c, sort.c) at -O2, into a temporary directory.
#   2. Generates thread-major binary request traces of the same synthetic
#      kernel (bench.c says which), 10M and 100M records (320 MB and 3.2 GB;
#      40 records per thread, the grid grows), and a third of 30M records
#      whose threads are 10000 records long ("long": 12 blocks of 82 MB,
#      read through per-thread buffers), in $BENCH_TMP (default /tmp, or
#      /work when /tmp has less than 5 GB free).
#   3. Sorts the first two with the event-driven loop, each run in its own
#      process so its peak RSS (getrusage ru_maxrss) is its own, with the default
#      parameters (the fermi preset: line128, round-robin, normal delays,
#      M=40, sigma=10, mshr 32) and again with arch=volta (sector32, mshr
#      512, M=100, sigma=25); then the literal 6a-6f reference loop on the 10M
#      trace with both, and prints records/s, peak RSS, the fast/reference
#      ratio, and whether the two outputs' checksums agree.
#   4. Sorts the long trace (default parameters), then the 10M trace once
#      more into a binary output file, to show the cost of writing the result.
# Records/s count input records over the wall time of the whole call (open,
# the checking pass, ordering, output); cpu_s is the process's user + system
# time, the figure to look at when other work shares the cores. Targets (2-core machine, one thread): >= 30M
# records/s on binary input; RSS that does not grow with trace length.
# Other work on the machine shows up in the figures: the load average is
# printed with them. A miss does not fail the script; it exits non-zero only
# when it cannot run. Everything it writes is removed on exit
# (BENCH_KEEP=1 keeps it). Tunables: BENCH_TMP, BENCH_SMALL (10000000),
# BENCH_LARGE (100000000), BENCH_LONG (30000000).
set -euo pipefail

cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
SMALL=${BENCH_SMALL:-10000000}
LARGE=${BENCH_LARGE:-100000000}
LONG=${BENCH_LONG:-30000000}

need_gb=5
tmp=${BENCH_TMP:-/tmp}
free_kb=$(df -Pk "$tmp" | awk 'NR==2 {print $4}')
if [ -z "${BENCH_TMP:-}" ] && [ "$free_kb" -lt $((need_gb * 1024 * 1024)) ]; then
    tmp=/work
    free_kb=$(df -Pk "$tmp" | awk 'NR==2 {print $4}')
fi
if [ "$free_kb" -lt $((need_gb * 1024 * 1024)) ]; then
    echo "bench-trace: need ${need_gb} GB free in $tmp, have $((free_kb / 1024)) MB" >&2
    exit 1
fi
dir=$(mktemp -d "$tmp/gpuprobe-bench-trace-XXXXXX")
cleanup() { if [ -z "${BENCH_KEEP:-}" ]; then rm -rf "$dir"; else echo "kept $dir"; fi; }
trap cleanup EXIT

src=$(echo trace/*.c util/*.c)
# shellcheck disable=SC2086
$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I. -o "$dir/bench" bench/trace/bench.c $src -ljansson -lm

echo "== generating traces in $dir"
"$dir/bench" gen "$dir/small.bin" "$SMALL"
"$dir/bench" gen "$dir/large.bin" "$LARGE"
"$dir/bench" gen "$dir/long.bin" "$LONG" 1 2000
for f in small large long; do echo "   $f.bin $(stat -c %s "$dir/$f.bin") bytes"; done

field() { sed -E "s/.*[ ^]$1=([^ ]+).*/\1/" <<<"$2"; }
run() { "$dir/bench" sort "$@"; }

echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-7s %-5s %12s %10s %9s %9s %12s %10s\n' preset trace loop records records/s seconds cpu_s peak_rss_kb checksum
declare -A rate sum rss cpu
for preset in fermi volta; do
    args=()
    [ "$preset" = volta ] && args=(arch=volta)
    for size in small large; do
        line=$(run "$dir/$size.bin" fast "${args[@]}")
        rate[$preset.$size]=$(field records_per_s "$line")
        sum[$preset.$size]=$(field checksum "$line")
        rss[$preset.$size]=$(field peak_rss_kb "$line")
        cpu[$preset.$size]=$(field cpu_seconds "$line")
        printf '%-8s %-7s %-5s %12s %10s %9s %9s %12s %10s\n' "$preset" "$size" fast "$(field records_in "$line")" \
            "${rate[$preset.$size]}" "$(field seconds "$line")" "$(field cpu_seconds "$line")" \
            "$(field peak_rss_kb "$line")" "${sum[$preset.$size]:0:8}"
    done
    line=$(run "$dir/small.bin" ref "${args[@]}")
    rate[$preset.ref]=$(field records_per_s "$line")
    sum[$preset.ref]=$(field checksum "$line")
    printf '%-8s %-7s %-5s %12s %10s %9s %9s %12s %10s\n' "$preset" small ref "$(field records_in "$line")" \
        "${rate[$preset.ref]}" "$(field seconds "$line")" "$(field cpu_seconds "$line")" \
        "$(field peak_rss_kb "$line")" "${sum[$preset.ref]:0:8}"
done

echo "== summary"
for preset in fermi volta; do
    ratio=$(awk -v f="${rate[$preset.small]}" -v r="${rate[$preset.ref]}" 'BEGIN {printf "%.1f", f / r}')
    same=$([ "${sum[$preset.small]}" = "${sum[$preset.ref]}" ] && echo "identical output" || echo "OUTPUTS DIFFER")
    echo "   $preset: fast/reference on the small trace ${ratio}x ($same)"
done
for size in small large; do
    r=${rate[fermi.$size]}
    n=$([ "$size" = small ] && echo "$SMALL" || echo "$LARGE")
    per_cpu=$(awk -v n="$n" -v c="${cpu[fermi.$size]}" 'BEGIN {printf "%.0f", n / c}')
    verdict=$(awk -v r="$r" 'BEGIN {print (r >= 30000000) ? "PASS" : "MISS"}')
    echo "   $verdict >= 30M records/s ($size trace, default parameters): $r (wall), $per_cpu per CPU-second"
done
for preset in fermi volta; do
    s=${rss[$preset.small]} l=${rss[$preset.large]}
    verdict=$(awk -v s="$s" -v l="$l" 'BEGIN {print (l <= s * 1.25) ? "PASS" : "MISS"}')
    echo "   $verdict peak RSS flat with trace length ($preset): ${s} kB at $SMALL records, ${l} kB at $LARGE"
done

line=$(run "$dir/long.bin" fast)
s=${rss[fermi.small]} l=$(field peak_rss_kb "$line")
verdict=$(awk -v s="$s" -v l="$l" 'BEGIN {print (l <= s * 1.25) ? "PASS" : "MISS"}')
echo "== long threads: $(field records_in "$line") records, $(field records_per_s "$line") records/s," \
     "peak RSS $l kB ($verdict: flat against the ${s} kB of the small trace)"

line=$(run "$dir/small.bin" fast "$dir/out.bin")
echo "== with a binary output file: $(field records_per_s "$line") records/s," \
     "$(stat -c %s "$dir/out.bin") bytes written, peak RSS $(field peak_rss_kb "$line") kB"
