#!/usr/bin/env bash
# The register-bank probe (probes/banks.h) with its reuse-cache patterns
# (probes/banks_reuse.h) on a GPU, from the relocatable bundle that `make
# dist` built elsewhere: `gpuprobe probe banks` once (a few seconds), then
# its reuse_cache member checked and summarised by tests/gpu/banks_reuse.py
# --file. Writes to $OUT (default tests/gpu/results/latest-banks):
# banks.json (the whole document), banks.db, reuse-summary.md, and the
# kernel's PTX and cubins under cubins/. DEVICE picks the GPU (default 0).
# Exit status 0 when every check passed, 1 when the probe failed or a check did.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle banks "${1:-}"
out=${OUT:-tests/gpu/results/latest-banks}
mkdir -p "$out"
run_probe banks banks || exit 1
python3 tests/gpu/banks_reuse.py --file "$out/banks.json" "$out"
