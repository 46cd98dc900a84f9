#!/usr/bin/env bash
# The tile communication operator patent's claim, measured on synthesized
# traces (docs/trace-synth.md):
# synthesizes each kernel (gpuprobe trace synth), sorts it (gpuprobe trace
# sort) under each arch preset's coalescing rule, and prints the sorter's
# figures: records in, requests out (L1 requests after coalescing), the
# coalescing ratio (in / out), and the requests out relative to the tiled
# kernel of the same family measured in the same run.
#   bench/trace/synth_coalescing.sh [GPUPROBE]   (N=128 TN=1024 ARCHES="fermi hopper")
set -euo pipefail
g=${1:-build/release/gpuprobe}
n=${N:-128}
tn=${TN:-1024}
arches=${ARCHES:-fermi hopper}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# figures PATTERN SIZE ARCH: "records_in requests_out ratio"
figures() {
    "$g" trace synth --pattern "$1" --size "$2" -o "$tmp/t.bin" --quiet
    "$g" trace sort "$tmp/t.bin" -o "$tmp/s.bin" --out-format bin --arch "$3" --quiet \
        --summary-json "$tmp/sum.json"
    jq -r '"\(.records_in) \(.requests_out) \(.coalescing_ratio)"' "$tmp/sum.json"
}

printf '%-16s %-6s %-7s %12s %12s %9s %10s\n' pattern size arch records_in requests_out ratio vs_tiled
for arch in $arches; do
    for family in "matmul $n matmul-tiled matmul-naive matmul-naive-bt matmul-tiled-bt" \
                  "transpose $tn transpose-tiled transpose-naive"; do
        set -- $family
        size=$2 base=$3
        shift 2
        read -r _ base_out _ <<<"$(figures "$base" "$size" "$arch")"
        for p in "$@"; do
            read -r in out ratio <<<"$(figures "$p" "$size" "$arch")"
            printf '%-16s %-6s %-7s %12s %12s %9.3f %10.2f\n' "$p" "$size" "$arch" "$in" "$out" \
                "$ratio" "$(awk -v a="$out" -v b="$base_out" 'BEGIN { print a / b }')"
        done
    done
done
