#!/usr/bin/env bash
# The asynchronous-copy probe (probes/async_copy.h) alone on a GPU, from the
# relocatable bundle that `make dist` built elsewhere: `gpuprobe probe
# memory` once (the whole memory probe: its curves, the L1 set and L2
# partition searches, then the copies: ~18 latency and ~30 bandwidth
# launches of well under a millisecond, plus the JIT of ~35 small modules),
# then tests/gpu/check_async_copy.py on its document. Writes to $OUT
# (default tests/gpu/results/latest-async): memory.json, async_copy.json,
# async-copy-summary.md, the kernels' PTX and cubins under cubins/ (the
# async_* ones are this probe's). DEVICE picks the GPU (default 0). Exit
# status 0 when every check passed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle async "${1:-}"
out=${OUT:-tests/gpu/results/latest-async}
mkdir -p "$out"
run_probe memory async_copy || exit 1
python3 tests/gpu/check_async_copy.py "$out/memory.json" - "$out"
