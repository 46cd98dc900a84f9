#!/usr/bin/env bash
# The trace sorter benchmark, end to end: bench/trace/run.sh (`make bench-trace`)
#
#   1. Builds bench/trace/bench.c with trace/ and util/ at -O2 into a
#      temporary directory.
#   2. Generates the trace shapes bench.c describes, 8.4 M records each
#      (268 MB binary): mixed (the issue's 65,536 threads x 128 loads, a
#      quarter of them scattered), scattered (no coalescing at all), long
#      (512 threads x 16,384 loads: blocks read through per-thread buffers),
#      mixed129 (65,024 threads x 129 loads: blocks just over 1 MiB, short
#      threads read through per-thread buffers), short (2 M threads x 4 loads: 8,192 blocks), gather (40 loads a
#      thread, divergent); and mixed as CSV input, plus a CSV four times as
#      long (33.5 M records) to show that CSV memory does not grow with it.
#   3. For each input, each in its own process (so peak RSS is its own):
#        read   the baseline: reading the input alone (records touched in
#               place; CSV through the reader into a counting sink)
#        read2  (CSV input only) reading it alone on two threads
#               (trace_csv_read_fd_batch: the pipeline's copy with a core free)
#        sort   the baseline: the sorter alone, output discarded
#        fb, mg, fbmg  the sorter alone with cache feedback (docs/trace-sort.md,
#               "Cache feedback"): --feedback, --mshr-merge, both (the L1 of
#               the parameters' preset); their vs_sort is the ratio to sort,
#               and l1 the share of the requests that hit / merged
#        csv    the real pipeline (trace/pipeline.h, what `gpuprobe trace
#               sort IN -o OUT` runs) writing CSV to a file
#        bin    the same writing the binary format
#        bin1   bin with one sorting thread forced (GPUPROBE_TRACE_THREADS=1):
#               the one-core figure (the writer thread still runs beside it)
#        bin2   bin with two sorting threads forced (SMs in parallel)
#        csv1   (CSV input only) csv with one sorting thread, for the check
#               that memory does not grow with the CSV file: a second
#               sorting thread adds up to 32 MiB of held records, a constant
#      and prints records/s over wall time and over the process's CPU time
#      (M/s_cpu: every thread's CPU seconds added up, what one core would
#      give doing all of it: the figure that another job on the machine
#      disturbs least), that CPU time, peak RSS, and the speed against the sorter alone. The default parameters (fermi
#      preset) throughout.
#   4. Writes as many bytes as the largest output with plain 1 MiB write(2)
#      calls to a new file: the machine's own page-cache write cost, the
#      floor under every "written" figure.
# A PASS/MISS line per input compares the end-to-end CSV and binary runs
# with 30 M records/s (wall). The machine's 2 cores are shared: the load average is
# printed before and after. A miss does not fail the script; it exits
# non-zero only when it cannot run. Everything it writes is removed on exit
# (BENCH_KEEP=1 keeps it). Tunables: BENCH_TMP (default /tmp, else /work),
# BENCH_SCALE (1: thread counts multiplied), BENCH_CSV_LARGE (4; 0 skips the
# long CSV), BENCH_REPEAT (3: each run is repeated and the fastest kept, the
# one least disturbed by other work), BENCH_BEFORE (a git revision: bench.c is also built against that
# revision's trace/ and util/, and its pipeline to CSV is run as "before", to
# binary as "binb" (binb1, binb2: one or two sorting threads forced, as bin1
# and bin2), its sorter alone as "sortb"), BENCH_RUNS (the runs to make, default all of them),
# BENCH_SHAPES (the trace shapes, default all), BENCH_PARAMS (name=value
# settings for every run, e.g. "arch=hopper"; default none: the fermi preset).
# The end-to-end runs sort as `gpuprobe trace sort` does: with a second
# sorting thread when a core is idle now (util/cores.h; GPUPROBE_TRACE_THREADS
# = 1 or 2 forces it; the column "thr" says which); "sort" is one thread.
set -euo pipefail

cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
SCALE=${BENCH_SCALE:-1}
CSV_LARGE=${BENCH_CSV_LARGE:-4}
REPEAT=${BENCH_REPEAT:-3}

need_gb=$((4 * SCALE + 2))
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

src=$(ls trace/*.c cache/*.c util/*.c | grep -v '^util/version\.c$')
# shellcheck disable=SC2086
$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I. -o "$dir/bench" bench/trace/bench.c $src \
    -ljansson -lpthread -lm

runs="read read2 sort fb mg fbmg csv bin bin1 bin2 csv1"
# shellcheck disable=SC2206
params=(${BENCH_PARAMS:-})
if [ -n "${BENCH_BEFORE:-}" ]; then
    mkdir "$dir/before"
    git archive "$BENCH_BEFORE" trace util | tar -x -C "$dir/before"
    (cd "$dir/before" && $CC -std=c11 -D_GNU_SOURCE -O2 -I. -o "$dir/bench_before" \
        "$OLDPWD/bench/trace/bench.c" $(cd "$dir/before" && ls trace/*.c util/*.c | grep -v '^util/version\.c$') \
        -ljansson -lpthread -lm)
    runs="$runs before binb binb1 binb2 sortb"
fi
runs=${BENCH_RUNS:-$runs}

shapes=${BENCH_SHAPES:-mixed scattered long mixed129 short gather}
echo "== generating traces in $dir"
for s in $shapes; do "$dir/bench" gen "$s" "$dir/$s.bin" "$SCALE"; done
inputs=$shapes
if [[ " $shapes " == *" mixed "* ]]; then
    "$dir/bench" csv "$dir/mixed.bin" "$dir/mixed.csv"
    inputs="$inputs mixed.csv"
fi
if [ "$CSV_LARGE" -gt 0 ] && [[ " $shapes " == *" mixed "* ]]; then
    "$dir/bench" gen mixed "$dir/big.bin" $((SCALE * CSV_LARGE))
    "$dir/bench" csv "$dir/big.bin" "$dir/big.csv"
    rm -f "$dir/big.bin"
    inputs="$inputs big.csv"
fi
for f in $shapes; do echo "   $f.bin $(stat -c %s "$dir/$f.bin") bytes"; done
[ -f "$dir/mixed.csv" ] && echo "   mixed.csv $(stat -c %s "$dir/mixed.csv") bytes"
[ -f "$dir/big.csv" ] && echo "   big.csv $(stat -c %s "$dir/big.csv") bytes (mixed x $CSV_LARGE)"

field() { sed -E "s/.*(^| )$1=([^ ]+).*/\2/" <<<"$2"; }
path_of() { case $1 in *.csv) echo "$dir/$1" ;; *) echo "$dir/$1.bin" ;; esac; }
mrate() { awk -v n="$1" -v s="$2" 'BEGIN {printf "%.1f", (s > 0 ? n / s / 1e6 : 0)}'; }

echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (start)"
echo "== parameters: ${BENCH_PARAMS:-the defaults (fermi preset)}"
printf '%-10s %-6s %3s %11s %9s %8s %7s %12s %11s %8s  %s\n' input run thr records M/s_wall M/s_cpu cpu_s peak_rss_kb out_bytes vs_sort l1
declare -A res
declare -A l1=([fb]=l1=feedback [mg]=l1=merge [fbmg]=l1=both)
largest=0
for in in $inputs; do
    p=$(path_of "$in")
    sort_s=
    for run in $runs; do
        best=
        for _ in $(seq "$REPEAT"); do
            # each run writes a new file: replacing the last run's output would
            # time the kernel freeing it too (bench/trace/RESULTS.md)
            rm -f "$dir/out.csv" "$dir/out.bin"
            case $run in
            read) line=$("$dir/bench" read "$p") ;;
            read2) [ "${in##*.}" = csv ] || continue
                  line=$("$dir/bench" read2 "$p") ;;
            sort|fb|mg|fbmg) [ "${in##*.}" = csv ] && continue
                  line=$("$dir/bench" sort "$p" "${params[@]}" ${l1[$run]:+"${l1[$run]}"} 2>/dev/null) ;;
            sortb) [ "${in##*.}" = csv ] && continue
                  line=$("$dir/bench_before" sort "$p" "${params[@]}" 2>/dev/null) ;;
            csv1) [ "${in##*.}" = csv ] || continue
                  line=$(GPUPROBE_TRACE_THREADS=1 "$dir/bench" pipe "$p" "$dir/out.csv" "${params[@]}") ;;
            csv)  line=$("$dir/bench" pipe "$p" "$dir/out.csv" "${params[@]}") ;;
            bin)  line=$("$dir/bench" pipe "$p" "$dir/out.bin" out_format=bin "${params[@]}") ;;
            bin1) line=$(GPUPROBE_TRACE_THREADS=1 "$dir/bench" pipe "$p" "$dir/out.bin" out_format=bin "${params[@]}") ;;
            bin2) line=$(GPUPROBE_TRACE_THREADS=2 "$dir/bench" pipe "$p" "$dir/out.bin" out_format=bin "${params[@]}") ;;
            binb) line=$("$dir/bench_before" pipe "$p" "$dir/out.bin" out_format=bin "${params[@]}") ;;
            binb1) line=$(GPUPROBE_TRACE_THREADS=1 "$dir/bench_before" pipe "$p" "$dir/out.bin" out_format=bin "${params[@]}") ;;
            binb2) line=$(GPUPROBE_TRACE_THREADS=2 "$dir/bench_before" pipe "$p" "$dir/out.bin" out_format=bin "${params[@]}") ;;
            before) line=$("$dir/bench_before" pipe "$p" "$dir/out.csv" "${params[@]}") ;;
            esac
            if [ -z "$best" ] || awk -v a="$(field seconds "$line")" -v b="$(field seconds "$best")" 'BEGIN {exit !(a < b)}'; then
                best=$line
            fi
        done
        [ -z "$best" ] && continue
        line=$best
        n=$(field records_in "$line") s=$(field seconds "$line") c=$(field cpu_seconds "$line")
        b=$(field output_bytes "$line")
        [ "$b" -gt "$largest" ] && largest=$b
        [ "$run" = sort ] && sort_s=$s
        vs=$([ -n "$sort_s" ] && [ "$run" != read ] && awk -v a="$sort_s" -v b="$s" 'BEGIN {printf "%.2fx", a / b}' || echo -)
        res[$in.$run]=$(mrate "$n" "$s")
        res[$in.$run.cpu]=$(mrate "$n" "$(field main_cpu_seconds "$line")")
        res[$in.$run.all]=$(mrate "$n" "$c") # over every thread's CPU seconds
        thr=$(grep -q 'threads=' <<<"$line" && field threads "$line" || echo 1)
        share=-
        if grep -q 'l1_hits=' <<<"$line"; then
            share=$(awk -v h="$(field l1_hits "$line")" -v m="$(field l1_merged "$line")" \
                -v o="$(field requests_out "$line")" 'BEGIN {printf "hit %.1f%% merged %.1f%%", 100 * h / o, 100 * m / o}')
        fi
        printf '%-10s %-6s %3s %11s %9s %8s %7s %12s %11s %8s  %s\n' "$in" "$run" "$thr" "$n" "$(mrate "$n" "$s")" \
            "$(mrate "$n" "$c")" "$c" \
            "$(field peak_rss_kb "$line")" "$b" "$vs" "$share"
        [ "$in" = big.csv ] && [ "$run" = csv1 ] && res[big.rss]=$(field peak_rss_kb "$line")
        [ "$in" = mixed.csv ] && [ "$run" = csv1 ] && res[small.rss]=$(field peak_rss_kb "$line")
    done
done
line=$("$dir/bench" write "$dir/plain.out" "$largest")
rm -f "$dir/plain.out"
echo "== writing $largest bytes with plain write(2) calls to a new file: $(field seconds "$line") s," \
     "$(awk -v b="$largest" -v s="$(field seconds "$line")" 'BEGIN {printf "%.0f", b / s / 1e6}') MB/s"
echo "== machine: load average $(cut -d' ' -f1-3 /proc/loadavg) (end)"

echo "== cache feedback: the sorter alone with it, as a ratio to the sorter alone without"
echo "   (M records/s over wall time, then over the sorting thread's CPU time: steadier on a busy machine)"
for in in $shapes; do
    [ -n "${res[$in.sort]:-}" ] || continue
    line="   $in: off ${res[$in.sort]} / ${res[$in.sort.cpu]}"
    for run in fb mg fbmg sortb; do
        [ -n "${res[$in.$run]:-}" ] &&
            line="$line, $run ${res[$in.$run]} / ${res[$in.$run.cpu]} ($(awk -v a="${res[$in.$run]}" \
                -v b="${res[$in.sort]}" -v c="${res[$in.$run.cpu]}" -v d="${res[$in.sort.cpu]}" \
                'BEGIN {printf "%.2f / %.2f", a / b, c / d}'))"
    done
    echo "$line"
done

[ -n "$(for in in $inputs; do echo "${res[$in.csv]:-}"; done)" ] &&
    echo "== summary (end to end, output written to a file, CSV and binary output; 30 M records/s target)"
for in in $inputs; do
    [ -n "${res[$in.csv]:-}" ] || continue
    r=${res[$in.csv]}
    verdict=$(awk -v r="$r" -v b="${res[$in.bin]:-0}" \
        'BEGIN {printf "%s CSV, %s binary", (r >= 30) ? "PASS" : "MISS", (b >= 30) ? "PASS" : "MISS"}')
    before=${res[$in.before]:+, before: ${res[$in.before]} M/s to CSV}
    before=$before${res[$in.binb]:+, ${res[$in.binb]} to binary}
    b1=${res[$in.bin1]:+, ${res[$in.bin1]} with one sorting thread}${res[$in.bin2]:+, ${res[$in.bin2]} with two}
    echo "   $verdict $in: ${r} M records/s to CSV, ${res[$in.bin]:-n/a} M/s to binary$b1 (sorter alone, one thread: ${res[$in.sort]:-n/a} M/s$before)"
done
for in in $inputs; do # this tree against BENCH_BEFORE, the sorting threads forced alike
    for k in 1 2; do
        a=${res[$in.bin$k]:-} b=${res[$in.bin${k}b]:-}
        [ -n "$a" ] && [ -n "$b" ] || continue
        echo "   $in to binary, $k sorting thread(s) forced: $a M/s wall, ${res[$in.bin$k.all]} per CPU second;" \
            "before $b, ${res[$in.bin${k}b.all]}: x$(awk -v a="$a" -v b="$b" -v c="${res[$in.bin$k.all]}" \
            -v d="${res[$in.bin${k}b.all]}" 'BEGIN {printf "%.2f wall, x%.2f per CPU second", a / b, c / d}')"
    done
done
if [ -n "${res[big.rss]:-}" ]; then
    s=${res[small.rss]} l=${res[big.rss]}
    verdict=$(awk -v s="$s" -v l="$l" 'BEGIN {print (l <= s * 1.25) ? "PASS" : "MISS"}')
    echo "   $verdict CSV input memory flat (one sorting thread): peak RSS ${s} kB at 8.4 M records, ${l} kB at $CSV_LARGE times that"
fi
