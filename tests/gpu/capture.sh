#!/usr/bin/env bash
# `gpuprobe trace capture` on a GPU, from the relocatable bundle
# that `make dist` built elsewhere. Captures the nvcc kernels of
# tests/gpu/kernels/capture/ and the model-validation kernels (the
# project's own PTX, at small sizes) and checks each with
# tests/gpu/check_capture.py: the same-answer check passed, the record count
# is the hand count, the trace is thread-major with every thread's accesses
# in program order. Then the same capture through a daemon (POST
# /api/v1/traces/capture, the job, its output), and a captured trace sorted
# by `trace sort`. Writes results to $OUT (default
# tests/gpu/results/latest-capture); the small tiled-matmul trace there is
# the committed fixture tests/fixtures/traces/capture-matmul-tiled-n16.bin.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle capture "${1:-}"
out=${OUT:-tests/gpu/results/latest-capture}
mkdir -p "$out"
fx=tests/fixtures/ptx/capture
pass=0 fail=0
note() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi; }

# capture CASE PTX [ENTRY-ARGS] -- ARGS...: runs, keeps the JSON, checks.
capture() {
    local case=$1; shift
    local t0=$(date +%s.%N)
    if "$bin" trace capture "$@" -o "$work/$case.trace" > "$out/$case.json" 2> "$work/$case.err"; then
        note python3 tests/gpu/check_capture.py "$case" "$out/$case.json" "$work/$case.trace"
    else
        echo "FAIL $case: $(cat "$work/$case.err")"; fail=$((fail + 1))
    fi
    echo "  $case: $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s wall"
}

b64=16384   # 64 x 64 floats
capture vecadd --ptx $fx/vecadd.ptx --grid 4 --block 256 --param 0=buf:4000:randf:1 \
    --param 1=buf:4000:randf:2 --param 2=buf:4000 --param 3=1000
capture matmul_naive --ptx $fx/matmul_naive.ptx --grid 4,4 --block 16,16 \
    --param 0=buf:$b64:randf:1 --param 1=buf:$b64:randf:2 --param 2=buf:$b64 --param 3=64
capture matmul_tiled --ptx $fx/matmul_tiled.ptx --grid 4,4 --block 16,16 \
    --param 0=buf:$b64:randf:1 --param 1=buf:$b64:randf:2 --param 2=buf:$b64 --param 3=64
capture chase --ptx $fx/chase_vec4.ptx --entry chase --grid 2 --block 128 \
    --param 0=buf:1024:iota --param 1=buf:1024 --param 2=10
capture copy4 --ptx $fx/chase_vec4.ptx --entry copy4 --grid 4 --block 256 \
    --param 0=buf:16000:rand:3 --param 1=buf:16000 --param 2=buf:2000 --param 3=buf:1000 --param 4=1000
capture fixture_tiled16 --ptx $fx/matmul_tiled.ptx --grid 1,1 --block 16,16 \
    --param 0=buf:1024:randf:1 --param 1=buf:1024:randf:2 --param 2=buf:1024 --param 3=16
cp "$work/fixture_tiled16.trace" "$out/capture-matmul-tiled-n16.bin"
# a grid-stride loop, whole and with only its first 3 of 8 blocks recording
gs="--ptx $fx/gridstride.ptx --entry saxpy_gs --grid 8 --block 128 --param 0=2.5
    --param 1=buf:40000:randf:1 --param 2=buf:40000:randf:2 --param 3=10000"
capture saxpy_gs $gs
capture saxpy_gs_sample3 $gs --sample-blocks 3
# float atomic adds: their rounding may differ run to run, within its bound
capture sum4_f32 --ptx $fx/gridstride.ptx --entry sum4_f32 --grid 40 --block 256 \
    --param 0=buf:40000:randf:3 --param 1=buf:16 --param 2=10000
b256=262144 # 256 x 256 floats: 33.6 M records, for the passes' times
capture naive256 --ptx $fx/matmul_naive.ptx --grid 16,16 --block 16,16 \
    --param 0=buf:$b256:randf:1 --param 1=buf:$b256:randf:2 --param 2=buf:$b256 --param 3=256
# the model-validation kernels (probes/validation_ptx.c), smaller than measured
capture val_copy --ptx $fx/validation_copy.ptx --grid 64 --block 256 \
    --param p_out=buf:65536 --param p_in=buf:65536:randf:4
capture val_mixed --ptx $fx/validation_mixed.ptx --grid 64 --block 256 \
    --param p_out=buf:65536 --param p_in=buf:65536:randf:5 --param p_iters=16 \
    --param p_m=1065353216 --param p_c=0
capture val_reduce --ptx $fx/validation_reduce.ptx --grid 16 --block 256 \
    --param p_out=buf:64 --param p_in=buf:65536:randf:6
capture val_ffma --ptx $fx/validation_ffma.ptx --grid 16 --block 256 \
    --param p_out=buf:16384 --param p_iters=512 --param p_m=1065353216 --param p_c=0
for k in mm_naive:matmul_naive mm_tiled:matmul_tiled mm_abt:matmul_abt; do
    capture val_${k%%:*} --ptx $fx/validation_${k#*:}.ptx --grid 4,4 --block 16,16 \
        --param p_c=buf:$b64 --param p_a=buf:$b64:randf:7 --param p_b=buf:$b64:randf:8 --param p_n=64
done

# A bad parameter is refused before the GPU is touched.
if "$bin" trace capture --ptx $fx/vecadd.ptx --grid 1 --block 32 --param 0=buf:64 -o "$work/x" \
        2> "$work/bad.err"; then
    echo "FAIL a missing parameter was not refused"; fail=$((fail + 1))
else
    echo "PASS missing parameter refused: $(cat "$work/bad.err")"; pass=$((pass + 1))
fi

# The captured naive matmul through the trace sorter (Hopper preset).
if "$bin" trace sort "$work/matmul_naive.trace" -o "$work/sorted.csv" --arch hopper --quiet \
        --summary-json "$out/sort-summary.json"; then
    echo "PASS trace sort of the captured matmul_naive"; pass=$((pass + 1))
else
    echo "FAIL trace sort of the captured matmul_naive"; fail=$((fail + 1))
fi

# The same capture through the daemon: POST /api/v1/traces/capture, the job, its output.
echo tok > "$work/tokens"
"$bin" serve --listen 127.0.0.1:0 --db "$work/d.db" --token-file "$work/tokens" \
    2> "$work/daemon.log" &
daemon=$!
port=$(wait_ready "$work/daemon.log") || port=""
q="grid=4&block=256&param=0=buf:4000:randf:1&param=1=buf:4000:randf:2&param=2=buf:4000&param=3=1000"
curl -sS -H 'Authorization: Bearer tok' --data-binary @$fx/vecadd.ptx \
    "http://127.0.0.1:$port/api/v1/traces/capture?$q" > "$out/api-submit.json"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$out/api-submit.json" 2>/dev/null)
for _ in $(seq 300); do
    curl -sS "http://127.0.0.1:$port/api/v1/jobs/$id" > "$out/api-job.json"
    grep -q '"state": *"\(succeeded\|failed\|cancelled\)"' "$out/api-job.json" && break
    sleep 0.2
done
curl -sS -o "$work/api.trace" "http://127.0.0.1:$port/api/v1/jobs/$id/output"
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["result"], open(sys.argv[2], "w"))' \
    "$out/api-job.json" "$work/api-result.json" 2>/dev/null
note python3 tests/gpu/check_capture.py vecadd "$work/api-result.json" "$work/api.trace"
kill -TERM "$daemon"; wait "$daemon"; daemon=""

{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; } \
    > "$out/machine.txt" 2>&1
echo "capture: $pass passed, $fail failed"
[ "$fail" = 0 ]
