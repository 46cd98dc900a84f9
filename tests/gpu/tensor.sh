#!/usr/bin/env bash
# The latency probe's tensor-core entries (mma.sync, fp8 mma.sync and
# wgmma.mma_async) on a GPU, from the relocatable bundle that `make dist`
# built elsewhere, without a daemon: `gpuprobe probe latency` for those
# entries (a few seconds: each entry's JIT, its latency chain and two
# throughput runs), checked by tests/gpu/check_tensor.py. Writes to $OUT
# (default tests/gpu/results/latest-tensor): tensor.json (the document),
# tensor-summary.md, the kernels' PTX and cubins under cubins/ and, where
# cuobjdump exists, their disassembly (cubins/*.sass: the oracle for the
# SASS table's WARPGROUP, HGMMA, IGMMA and QGMMA). DEVICE picks the GPU
# (default 0). Exit status 0 when the checks pass.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle tensor "${1:-}"
out=${OUT:-tests/gpu/results/latest-tensor}
mkdir -p "$out"
list=$(python3 tests/gpu/check_tensor.py --list)
t0=$(date +%s.%N)
if ! "$bin" probe latency --device "${DEVICE:-0}" --instructions "$list" --json \
        --keep-cubins "$out/cubins" >"$out/latency.json" 2>"$out/latency.err"; then
    echo "FAIL gpuprobe probe latency: $(cat "$out/latency.err")"
    exit 1
fi
echo "probe latency (tensor entries): $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s wall"
if command -v cuobjdump >/dev/null; then
    for c in "$out"/cubins/*wgmma*.cubin "$out"/cubins/*mma_e*.cubin; do
        [ -f "$c" ] && cuobjdump -sass "$c" >"${c%.cubin}.sass" 2>&1
    done
fi
python3 tests/gpu/check_tensor.py --doc "$out/latency.json" "$out"
