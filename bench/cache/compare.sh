#!/usr/bin/env bash
# The cache model's counts against another build's: bench/cache/compare.sh
#
#   bench/cache/compare.sh BASE_GPUPROBE NEW_GPUPROBE [SORTED...]
#
# A change that only speeds the model up must leave every count as it was.
# This runs `trace cache --json` with both binaries and compares the
# documents byte for byte (both engines, per SM, histograms, miss classes)
# on: synthetic kernels (`trace synth`, then `trace sort --arch hopper`, with
# NEW_GPUPROBE) and any sorted files given (the benchmark's trace:
# BENCH_KEEP=1 bench/cache/run.sh keeps it), each under several geometries:
# the hopper and fermi presets, xor set indexing, an L2 latency, a small L2
# (capacity and conflict misses on small kernels), a fully associative L1
# and L2, the L2 in two partitions (a made-up search result: SMs
# alternating, homes by address bits 9 and 12), the hopper preset one
# engine at a time, and, when NEW_GPUPROBE has it (COMPARE_THREADS=1),
# both engines on two threads against BASE_GPUPROBE's one. Prints one line per
# comparison and a summary; exits 1 when any document differs (the first
# difference is kept, in the work directory, COMPARE_KEEP=1 keeps it all).
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 BASE_GPUPROBE NEW_GPUPROBE [SORTED...]" >&2
    exit 2
fi
base=$1 new=$2
shift 2
given=("$@")
dir=$(mktemp -d "${COMPARE_TMP:-/tmp}/gpuprobe-cache-compare-XXXXXX")
cleanup() { if [ -z "${COMPARE_KEEP:-}" ]; then rm -rf "$dir"; else echo "kept $dir"; fi; }
trap cleanup EXIT

# a partition search's verdict, as `probe memory` stores it
{
    printf '{"l2_partitions": {"verdict": "two partitions", "home": {"mask_bits": [9, 12]}, "sm_partition": ['
    for s in $(seq 0 131); do printf '%s%d' "$([ "$s" = 0 ] || echo ,)" $((s % 2)); done
    printf ']}}\n'
} >"$dir/parts.json"

kernels=("matmul-naive 256" "transpose-naive 1024" "matmul-tiled 512" "stencil7 64" "strided 4194304")
geometries=(
    "--arch hopper"
    "--arch fermi"
    "--arch hopper --set-index xor"
    "--arch hopper --l2-latency 40"
    "--arch hopper --l2 1M,16,128,32"
    "--arch fermi --l1 16K,full,128,32 --l2 256K,full,128,32"
    "--arch hopper --l2-partitions $dir/parts.json"
    "--arch hopper --engine exact"
    "--arch hopper --engine reuse"
)

inputs=()
for k in "${kernels[@]}"; do
    set -- $k
    name="$1-$2"
    "$new" trace synth --pattern "$1" --size "$2" -o "$dir/$name.trace" --quiet
    "$new" trace sort "$dir/$name.trace" -o "$dir/$name.sorted" --out-format bin --arch hopper 2>/dev/null
    rm -f "$dir/$name.trace"
    inputs+=("$dir/$name.sorted")
done
inputs+=("${given[@]}")

same=0 differ=0
for f in "${inputs[@]}"; do
    for g in "${geometries[@]}"; do
        # shellcheck disable=SC2086
        "$base" trace cache "$f" $g --json >"$dir/base.json"
        # shellcheck disable=SC2086
        "$new" trace cache "$f" $g ${COMPARE_THREADS:+--threads 2} --json >"$dir/new.json"
        if cmp -s "$dir/base.json" "$dir/new.json"; then
            same=$((same + 1))
            echo "same    $(basename "$f") $g ($(stat -c %s "$dir/new.json") bytes)"
        else
            differ=$((differ + 1))
            echo "DIFFER  $(basename "$f") $g"
            [ -e "$dir/first-differ.base.json" ] || {
                cp "$dir/base.json" "$dir/first-differ.base.json"
                cp "$dir/new.json" "$dir/first-differ.new.json"
            }
        fi
    done
done
echo "== $same identical, $differ different"
[ "$differ" -eq 0 ]
