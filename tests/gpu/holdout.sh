#!/usr/bin/env bash
# The kernel-time model on kernels it was not built on (tests/gpu/holdout/):
# on a GPU machine, after `make gpu-check` (or model_check.sh) has left the
# device's latency, memory and model-validation runs in DB. Builds the
# kernels' PTX with nvcc and the timer with gcc, times each kernel and asks
# `gpuprobe model predict --hits` for it (holdout.py). Output in $OUT
# (default tests/gpu/results/latest-holdout).
#   tests/gpu/holdout.sh DB [BUNDLE.tar.gz]
set -uo pipefail
. "$(dirname "$0")/lib.sh"

db=${1:?usage: tests/gpu/holdout.sh DB [BUNDLE.tar.gz]}
unpack_bundle holdout "${2:-}"
out=${OUT:-tests/gpu/results/latest-holdout}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.sm,clocks.max.sm \
    --format=csv,noheader > "$out/gpu.csv" 2>/dev/null || true
"$bin" --version > "$out/version.txt"
nvcc --version | tail -n 2 > "$out/nvcc.txt"
nvcc -ptx -arch=sm_90 -o "$out/holdout.ptx" tests/gpu/holdout/kernels.cu || exit 1
gcc -std=c11 -O2 -Wall -I/usr/local/cuda/include -o "$work/time_ptx" \
    tests/gpu/holdout/time_ptx.c -L/usr/local/cuda/lib64/stubs -lcuda || exit 1
uuid=$("$bin" devices | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["uuid"])')
python3 tests/gpu/holdout/holdout.py "$bin" "$db" "$uuid" "$out/holdout.ptx" "$work/time_ptx" "$out"
