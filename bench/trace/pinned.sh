#!/usr/bin/env bash
# The sorter end to end pinned to one and to two cores (taskset), for a
# machine whose cores are otherwise idle: bench/trace/RESULTS.md, "On a
# quiet machine". BENCH is a bench binary built as run.sh builds it; on a
# machine without libjansson (a GPU node), LIBS names a folder holding it
# (the `make dist` bundle's lib/). Cores CORES (default "2,3": the first is
# the one-core runs').
# SHAPES (default: mixed scattered long mixed129 short gather) picks the
# shapes; GEN names the bench binary that makes the traces (default BENCH).
#   BENCH=path/to/bench [LIBS=dir] [CORES=2,3] [SHAPES=...] [GEN=...] bench/trace/pinned.sh
set -u
B=${BENCH:?BENCH=path to the bench binary}
[ -n "${LIBS:-}" ] && export LD_LIBRARY_PATH=$LIBS
cores=${CORES:-2,3}
one=${cores%%,*}
d=$(mktemp -d "${TMPDIR:-/tmp}/gpuprobe-pinned-XXXXXX")
trap 'rm -rf "$d"' EXIT
echo "cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
shapes=${SHAPES:-mixed scattered long mixed129 short gather}
gen=${GEN:-$B} # the traces' maker: a newer bench binary knows shapes an older one lacks
for s in $shapes; do "$gen" gen "$s" "$d/$s.bin" 1 >/dev/null; done
"$gen" csv "$d/mixed.bin" "$d/mixed.csv"
rate() { awk -v n="$1" -v s="$2" 'BEGIN {printf "%.1f", (s > 0 ? n / s / 1e6 : 0)}'; }
field() { sed -E "s/.*(^| )$1=([^ ]+).*/\2/" <<<"$2"; }
# Each run writes a new file (the last run's output removed first, outside
# the timing); with REPLACE=1 it replaces the last run's output instead, as
# a rerun into the same path does, and the time then includes the kernel
# freeing the old file (the sorter exchanges the two and unlinks the old).
best() { # fastest of 5: "M/s_wall M/s_cpu"
    local b="" l
    for _ in 1 2 3 4 5; do
        [ -n "${REPLACE:-}" ] || rm -f "$d/out.bin" "$d/out.csv"
        l=$("$@" 2>/dev/null | tail -n1)
        if [ -z "$b" ] || awk -v a="$(field seconds "$l")" -v c="$(field seconds "$b")" 'BEGIN{exit !(a<c)}'; then b=$l; fi
    done
    echo "$(rate "$(field records_in "$b")" "$(field seconds "$b")") $(rate "$(field records_in "$b")" "$(field cpu_seconds "$b")")"
}
printf '%-10s %-14s %-14s %-14s %-14s %-14s %-14s\n' shape "sort,1core" "bin,1core" "bin,2c,1sort" "bin,2c,2sort" \
    "bin,2c,2s,repl" "csv,2c"
for s in $shapes mixed.csv; do
    p=$d/$s.bin; [ "$s" = mixed.csv ] && p=$d/mixed.csv
    a="-"; [ "$s" != mixed.csv ] && a=$(best taskset -c "$one" "$B" sort "$p")
    o=$(GPUPROBE_TRACE_THREADS=1 best taskset -c "$one" "$B" pipe "$p" "$d/out.bin" out_format=bin)
    b=$(GPUPROBE_TRACE_THREADS=1 best taskset -c "$cores" "$B" pipe "$p" "$d/out.bin" out_format=bin)
    c=$(GPUPROBE_TRACE_THREADS=2 best taskset -c "$cores" "$B" pipe "$p" "$d/out.bin" out_format=bin)
    r=$(REPLACE=1 GPUPROBE_TRACE_THREADS=2 best taskset -c "$cores" "$B" pipe "$p" "$d/out.bin" out_format=bin)
    e=$(best taskset -c "$cores" "$B" pipe "$p" "$d/out.csv")
    printf '%-10s %-14s %-14s %-14s %-14s %-14s %-14s\n' "$s" "$a" "$o" "$b" "$c" "$r" "$e"
done
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
