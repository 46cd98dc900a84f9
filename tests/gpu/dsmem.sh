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
run_probe memory dsmem || exit 1
python3 tests/gpu/check_dsmem.py --file "$out/memory.json" "$out"
