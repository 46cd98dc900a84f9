#!/usr/bin/env bash
# The kernel-time model on a GPU machine, alone (make gpu-check runs the same
# two steps inside tests/gpu/run.sh): the latency, memory and model-validation
# jobs through a real daemon (check_model.py: the sixteen validation kernels
# timed, their SASS read, their hit rates modelled over a captured sample, and
# predicted), then model_hits.py: `model predict --hits` on the command line
# agrees with the job. Output in $OUT (default tests/gpu/results/latest-model).
#   tests/gpu/model_check.sh [BUNDLE.tar.gz]
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle model_check "${1:-}"
out=${OUT:-tests/gpu/results/latest-model}
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.sm,clocks.max.sm \
    --format=csv,noheader > "$out/gpu.csv" 2>/dev/null || true
"$bin" --version > "$out/version.txt"
echo tok > "$work/tokens"
"$bin" serve --listen 127.0.0.1:0 --db "$work/model.db" --token-file "$work/tokens" \
    2> "$work/model-daemon.log" &
daemon=$!
port=$(wait_ready "$work/model-daemon.log") || { echo "model_check: daemon not ready" >&2; exit 1; }
uuid=$(curl -fsS -H "Authorization: Bearer tok" "http://127.0.0.1:$port/api/v1/devices" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["uuid"])')
fail=0
python3 tests/gpu/check_model.py "http://127.0.0.1:$port" tok "$uuid" "$out" || fail=1
kill -TERM "$daemon"; wait "$daemon" || true; daemon=""
cp "$work/model-daemon.log" "$out/model-daemon.log"
TMPDIR=$work python3 tests/gpu/model_hits.py "$bin" "$work/model.db" "$uuid" "$out" || fail=1
cp "$work/model.db" "$out/model.db"
exit $fail
