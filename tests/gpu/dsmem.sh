#!/usr/bin/env bash
# Distributed shared memory (probes/dsmem.h) on a GPU, from the relocatable
# bundle that `make dist` built elsewhere: `gpuprobe probe memory` once (the
# memory probe has no narrower option: its curves, the L1 set search and the
# L2 partition search run too, seconds on an H100), then its
# distributed_shared member checked and summarised by
# tests/gpu/check_dsmem.py --file. Writes to $OUT (default
# tests/gpu/results/latest-dsmem): memory.json (the whole document),
# dsmem.json (its member), dsmem-summary.md, and the kernels' PTX and
# cubins under cubins/ (dsmem_2 ... dsmem_16: each size's module as the
# driver's JIT compiled it). DEVICE picks the GPU (default 0).
# Exit status 0 when every check passed, 1 when the probe failed or a check did.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle dsmem "${1:-}"
out=${OUT:-tests/gpu/results/latest-dsmem}
mkdir -p "$out"
t0=$(date +%s.%N)
if ! "$bin" probe memory --device "${DEVICE:-0}" --json --keep-cubins "$out/cubins" \
        >"$out/memory.json" 2>"$out/memory.err"; then
    echo "FAIL gpuprobe probe memory: $(cat "$out/memory.err")"
    exit 1
fi
echo "probe memory: $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s wall"
python3 tests/gpu/check_dsmem.py --file "$out/memory.json" "$out"
