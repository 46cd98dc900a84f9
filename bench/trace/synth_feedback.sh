#!/usr/bin/env bash
# What cache feedback in the sorter (docs/trace-sort.md, "Cache feedback")
# does to the hit rates of the synthetic kernels (docs/trace-synth.md): each
# kernel is synthesized (gpuprobe trace synth), sorted with the hopper preset
# four ways — off, --feedback, --mshr-merge, both — and each order is
# modelled by gpuprobe trace cache (L1 only, hopper geometry, latency and
# MSHRs from the sort's header). Prints per kernel and mode: the L1 hit rate
# of the exact engine and of the reuse-distance engine, the exact engine's
# lookup hit rate (hits and hits on a pending miss, what Nsight Compute
# counts), the sorter's own L1 figures during the ordering (hits and merges,
# as shares of the requests), and the sort's ticks.
#   bench/trace/synth_feedback.sh [GPUPROBE]   (SORT_ARGS="--arch hopper" to change the sort)
set -euo pipefail
g=${1:-build/release/gpuprobe}
sort_args=${SORT_ARGS:---arch hopper}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# kernel: "pattern size" (sizes: a few million records each)
kernels=(
    "matmul-naive 128" "matmul-naive-bt 128" "matmul-tiled 128" "matmul-tiled-bt 128"
    "transpose-naive 1024" "transpose-tiled 1024" "stencil7 64" "reduce 4194304" "stream 2097152"
    "strided 1048576"
)
modes=("off:" "fb:--feedback" "mg:--mshr-merge" "fbmg:--feedback --mshr-merge")

printf '%-16s %-5s %9s %8s %8s %8s %8s %8s %10s\n' pattern mode requests exact% reuse% lookup% sortHit% sortMrg% ticks
for k in "${kernels[@]}"; do
    read -r pattern size <<<"$k"
    "$g" trace synth --pattern "$pattern" --size "$size" -o "$tmp/t.bin" --quiet
    for m in "${modes[@]}"; do
        name=${m%%:*} opts=${m#*:}
        # shellcheck disable=SC2086
        "$g" trace sort "$tmp/t.bin" -o "$tmp/s.bin" --out-format bin --quiet --summary-json "$tmp/sum.json" \
            $sort_args $opts
        "$g" trace cache "$tmp/s.bin" --l2 none --json >"$tmp/c.json"
        read -r req ex re lk <<<"$(jq -r '.engines | "\(.exact.l1.requests) \(.exact.l1.hit_rate * 100)
            \(.reuse.l1.hit_rate * 100) \(.exact.l1.lookup_hit_rate * 100)"' "$tmp/c.json" | tr '\n' ' ')"
        read -r sh sm ticks <<<"$(jq -r '"\(if .l1 then .l1.hits / .requests_out * 100 else "-" end)
            \(if .l1 then .l1.merged / .requests_out * 100 else "-" end) \(.ticks)"' "$tmp/sum.json" | tr '\n' ' ')"
        fmt() { [ "$1" = - ] && echo - || printf '%.2f' "$1"; }
        printf '%-16s %-5s %9s %8.2f %8.2f %8.2f %8s %8s %10s\n' "$pattern" "$name" "$req" "$ex" "$re" "$lk" \
            "$(fmt "$sh")" "$(fmt "$sm")" "$ticks"
    done
done
