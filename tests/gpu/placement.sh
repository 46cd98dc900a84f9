#!/usr/bin/env bash
# The block placement experiment: on which SM the hardware runs each block
# of a launch, against the sorter's static placements (docs/trace-sort.md,
# step 1b). Needs nvcc (a development tool: the daemon never does).
# tests/gpu/kernels/placement/placement.cu records each block's SM for
# launches of several grid and block sizes; this script writes one file a
# launch, placement-GRID-BLOCK-SPIN.txt, and summary.md to $OUT (default
# tests/gpu/results/latest-placement):
#   - the SMs the first 132 blocks were dealt to, in order, and whether
#     every launch dealt them in the same order;
#   - for each launch, the blocks each SM ran and the gaps between the ids
#     of the blocks one SM ran (round-robin, `placement=rr`, makes every
#     gap the SM count);
#   - for the launch of matmul-tiled.cu at TILE=8 and n=256 (a 32 x 32 grid
#     of 64-thread blocks, one wave), the share of its global loads whose
#     tile an earlier block on the same SM loaded too (blocks of one grid
#     row share A's tiles, of one column B's): an upper bound of the L1
#     hits that sharing between blocks can give, for the measured placement
#     and for rr.
# DEVICE picks the GPU (CUDA_VISIBLE_DEVICES); exit status 0 when every
# launch ran. `placement.sh --summary DIR` writes DIR/summary.md again from
# DIR's files, without a GPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# grid block spin: one wave of 64-thread blocks (matmul-tiled t8's launch),
# the same without the spin, 256- and 1024-thread blocks, two waves of
# 128-thread blocks
launches=("1024 64 200000" "1024 64 0" "1024 256 200000" "264 1024 200000" "4096 128 200000")
if [ "${1:-}" = --summary ]; then
    out=${2:?usage: placement.sh --summary DIR}
else
    out=${OUT:-$here/results/latest-placement}
    mkdir -p "$out"
    export CUDA_VISIBLE_DEVICES=${DEVICE:-0}
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    nvcc -O2 -arch=sm_90 -o "$tmp/placement" "$here/kernels/placement/placement.cu"
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv >"$out/nvidia-smi.txt" 2>&1 || true
    date -u '+%Y-%m-%d %H:%M UTC' >"$out/date.txt"
    for l in "${launches[@]}"; do
        "$tmp/placement" $l >"$out/placement-${l// /-}.txt"
    done
fi

first=$out/placement-1024-64-200000.txt
sms=$(tail -n +2 "$first" | awk '{print $2}' | sort -un | wc -l)
{
    echo "# Block placement, $(tail -n 1 "$out/nvidia-smi.txt")"
    echo
    echo "$(cat "$out/date.txt" 2>/dev/null || echo "date not recorded"); $sms SMs ran blocks of the first launch."
    echo
    echo "The SMs the first $sms blocks of 1024 x 64 were dealt to, in order:"
    echo
    tail -n +2 "$first" | head -n "$sms" | awk '{printf "%s ", $2} END {print ""}'
    echo
    echo "| launch (grid block spin) | same first $sms SMs as above | distinct SMs among the first $sms blocks | SMs used | gaps between the ids of one SM's blocks: fewest-most, the six most frequent (gap x times) |"
    echo "|---|---|---:|---:|---|"
    for l in "${launches[@]}"; do
        f=$out/placement-${l// /-}.txt
        same=no
        cmp -s <(tail -n +2 "$f" | head -n "$sms" | awk '{print $2}') \
            <(tail -n +2 "$first" | head -n "$sms" | awk '{print $2}') && same=yes
        tail -n +2 "$f" | awk -v l="$l" -v same="$same" -v n="$sms" '
            NR <= n { d[$2] = 1 }
            { used[$2] = 1; if ($2 in last) gap[$1 - last[$2]]++; last[$2] = $1 }
            END {
                nd = 0; for (s in d) nd++; nu = 0; for (s in used) nu++
                lo = -1; hi = 0
                for (k in gap) { k += 0; if (lo < 0 || k < lo) lo = k; if (k > hi) hi = k }
                g = ""
                for (i = 0; i < 6; i++) {
                    best = -1
                    for (k in gap) if (!(k in shown) && (best < 0 || gap[k] > gap[best])) best = k
                    if (best < 0) break
                    shown[best] = 1; g = g sprintf("%s%d x %d", i ? ", " : "", best, gap[best])
                }
                printf "| %s | %s | %d | %d | %d-%d: %s |\n", l, same, nd, nu, lo, hi, g
            }'
    done
    echo
    echo "Blocks of matmul-tiled at TILE=8, n=256 (block b: row b / 32, column b % 32) whose A or B"
    echo "tile an earlier block on the same SM loaded, as a share of the tile loads:"
    echo
    tail -n +2 "$first" | awk -v sms="$sms" '
        function share(kind,   s, t, h) {
            t = 0; h = 0
            for (s in n) { t += 2 * n[s]; h += (n[s] - rows[s]) + (n[s] - cols[s]) }
            printf "- %s: %.1f%%\n", kind, 100 * h / t
        }
        function add(b, s) {
            n[s]++
            if (!((s, int(b / 32)) in r)) { r[s, int(b / 32)] = 1; rows[s]++ }
            if (!((s, b % 32) in c)) { c[s, b % 32] = 1; cols[s]++ }
        }
        { add($1, $2) }
        END {
            share("measured placement")
            delete n; delete r; delete c; delete rows; delete cols
            for (b = 0; b < 1024; b++) add(b, b % sms)
            share("round-robin (placement=rr)")
        }'
} >"$out/summary.md"
cat "$out/summary.md"
