#!/usr/bin/env bash
# The GPU test suite (`make gpu-check`): runs on a machine with an NVIDIA GPU,
# from the relocatable bundle that `make dist` built elsewhere, because a GPU
# node need not have a compiler or gpuprobe's libraries. It checks that the
# bundle runs with nothing but the node's driver, that discovery agrees with
# nvidia-smi, and that the daemon serves the same devices over HTTP.
# Writes a summary and the raw JSON to $OUT (or tests/gpu/results/latest).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle gpu-check "${1:-}"
out=${OUT:-tests/gpu/results/latest}
mkdir -p "$out"

pass=0 fail=0
check() { # check NAME COMMAND...
    if "${@:2}"; then echo "PASS $1"; pass=$((pass + 1)); else echo "FAIL $1"; fail=$((fail + 1)); fi
}

# 1. The bundle runs in an empty environment and lists the GPU.
env -i PATH=/usr/bin:/bin "$bin" --version | tee "$out/version.txt"
env -i PATH=/usr/bin:/bin "$bin" devices > "$out/devices.json"
nvidia-smi --query-gpu=index,uuid,name,memory.total,clocks.max.sm,driver_version,pci.bus_id \
    --format=csv,noheader,nounits > "$out/nvidia-smi.csv" || true
check "devices agree with nvidia-smi" python3 tests/gpu/check_devices.py \
    "$out/devices.json" "$out/nvidia-smi.csv"

# 2. The daemon discovers the same devices and serves them.
"$bin" serve --listen 127.0.0.1:0 --db "$work/gpuprobe.db" 2> "$work/daemon.log" &
daemon=$!
port=$(wait_ready "$work/daemon.log")
curl -fsS "http://127.0.0.1:$port/readyz" > "$out/readyz.json"
curl -fsS "http://127.0.0.1:$port/api/v1/devices" > "$out/api-devices.json"
check "daemon serves the discovered devices" python3 tests/gpu/check_devices.py \
    "$out/api-devices.json" "$out/nvidia-smi.csv"
uuid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["uuid"])' \
    "$out/api-devices.json")
check "device endpoint answers for $uuid" curl -fsS -o "$out/api-device.json" \
    "http://127.0.0.1:$port/api/v1/devices/$uuid"
kill -TERM "$daemon"
check "daemon stops cleanly on SIGTERM" wait "$daemon"
daemon=""
cp "$work/daemon.log" "$out/daemon.log"

# 3. A GPU job end to end: the test build (which has the "test-gpu" kind) runs
#    with the bundle's libraries; the job must reach the GPU by index and UUID.
testbin=${2:-build/test/gpuprobe}
if [ -x "$testbin" ]; then
    echo tok > "$work/tokens"
    LD_LIBRARY_PATH=$(echo "$work"/*/lib) "$testbin" serve --listen 127.0.0.1:0 \
        --db "$work/test.db" --token-file "$work/tokens" 2> "$work/test-daemon.log" &
    daemon=$!
    port=$(wait_ready "$work/test-daemon.log")
    check "GPU jobs by index and by UUID succeed on the GPU" python3 tests/gpu/check_gpu_jobs.py \
        "http://127.0.0.1:$port" tok "$uuid" "$out/gpu-jobs.json"
    kill -TERM "$daemon"; wait "$daemon" || true; daemon=""
fi

# 4. The probes end to end through a real daemon (release bundle): stored,
#    served, verified, repeatable, within the time budget.
echo tok > "$work/tokens"
"$bin" serve --listen 127.0.0.1:0 --db "$work/probes.db" --token-file "$work/tokens" \
    2> "$work/probes-daemon.log" &
daemon=$!
port=$(wait_ready "$work/probes-daemon.log")
check "latency and memory probes through the daemon" python3 tests/gpu/check_probes.py \
    "http://127.0.0.1:$port" tok "$uuid" "$out"
# ... the memory result's asynchronous copies, stored and served
check "asynchronous copies (cp.async, TMA) in the memory result" python3 tests/gpu/check_async_copy.py \
    "$out/memory.json" "$out/api-results.json" "$out"
# ... and its block placement: the dealing order, and a launch it predicts
check "block placement (the order blocks are dealt to SMs) in the memory result" \
    python3 tests/gpu/check_placement.py "$out/memory.json" "$out/api-results.json" "$out"
# 4b. The machine-code editing probes on the same database (the latency
#     endpoint then shows each instruction's smallest safe stall).
check "banks, control-codes, dual-issue and suite through the daemon" \
    python3 tests/gpu/check_edit_probes.py "http://127.0.0.1:$port" tok "$uuid" "$out"
# 4c. The issue order after a stall or yield (the control-code probe's
#     "scheduler" experiment, probes/issue_order.h): run, stored, served.
check "issue order after a stall or yield through the daemon" \
    python3 tests/gpu/check_sched.py "http://127.0.0.1:$port" tok "$uuid" "$out"
# 4d. Distributed shared memory (the memory job's distributed_shared):
#     clusters of 2, 4, 8 launched as asked, 16 launched or refused with a
#     reason, remote loads slower than local ones, the served copy the same.
check "distributed shared memory through the daemon" \
    python3 tests/gpu/check_dsmem.py "http://127.0.0.1:$port" tok "$uuid" "$out"
# 4e. The tensor-core entries (mma.sync, fp8 mma.sync, wgmma) on the same
#     database: verified HGMMA/IGMMA/QGMMA, stored and served, wgmma f16
#     faster than mma.sync f16.
check "tensor cores: wgmma and mma.sync entries through the daemon" \
    python3 tests/gpu/check_tensor.py "http://127.0.0.1:$port" tok "$uuid" "$out"
kill -TERM "$daemon"; wait "$daemon" || true; daemon=""
check "gpuprobe probe dual-issue runs without a daemon" sh -c \
    "'$bin' probe dual-issue --device 0 --json > '$out/cli-dual-issue.json'"
# The latency job's PTX and cubins are kept beside the database and
# disassemble (its id: the reference results imported at start take the first).
lat_dir=$(dirname "$(ls "$work"/cubins/job-*/latency_ffma_lat.cubin 2>/dev/null | head -n1)")
kept=$(ls "$lat_dir"/*.cubin 2>/dev/null | wc -l || true)
check "the latency job ($lat_dir) kept its $kept cubins for inspection" test "$kept" -ge 66
if command -v cuobjdump >/dev/null; then
    check "a kept cubin disassembles to the timed FFMA chain" \
        test "$(cuobjdump -sass "$lat_dir/latency_ffma_lat.cubin" | grep -c FFMA)" -ge 48
fi

# 5. Occupancy: the rules of model/occupancy.c against the driver's
#    cuOccupancyMaxActiveBlocksPerMultiprocessor over every configuration of
#    the capture (exit 1 on any disagreement).
check "occupancy rules agree with the driver" sh -c \
    "'$bin' model occupancy --device 0 --sweep --check > '$out/occupancy-check.json'"

# 6. The kernel-time model through a real daemon: latency and memory probes
#    (its parameters), then the model-validation job (16 kernels timed and
#    predicted), the validation endpoint and the model endpoints.
"$bin" serve --listen 127.0.0.1:0 --db "$work/model.db" --token-file "$work/tokens" \
    2> "$work/model-daemon.log" &
daemon=$!
port=$(wait_ready "$work/model-daemon.log")
check "model validation through the daemon" python3 tests/gpu/check_model.py \
    "http://127.0.0.1:$port" tok "$uuid" "$out"
kill -TERM "$daemon"; wait "$daemon" || true; daemon=""
cp "$work/model-daemon.log" "$out/model-daemon.log"
# ... and with the cache model's hit rates from each kernel's captured trace
check "model predict --hits agrees with the validation job" env TMPDIR="$work" python3 \
    tests/gpu/model_hits.py "$bin" "$work/model.db" "$uuid" "$out"

# 7. The patch-and-run harness (probes/gpu/patch.h) through the test build: an
#    unedited run stores its value, a deliberately bad edit (an invalid
#    opcode) fails its job with the CUDA error, and the next GPU job and
#    /healthz are unaffected.
if [ -x "$testbin" ]; then
    LD_LIBRARY_PATH=$(echo "$work"/*/lib) "$testbin" serve --listen 127.0.0.1:0 \
        --db "$work/patch.db" --token-file "$work/tokens" 2> "$work/patch-daemon.log" &
    daemon=$!
    port=$(wait_ready "$work/patch-daemon.log")
    check "a faulting edit fails only its job" python3 tests/gpu/check_bad_edit.py \
        "http://127.0.0.1:$port" tok "$out/bad-edit.json"
    kill -TERM "$daemon"
    check "the daemon stops cleanly after the faulting job" wait "$daemon"
    daemon=""
    cp "$work/patch-daemon.log" "$out/patch-daemon.log"
fi

# The databases the probes and the model filled, for inspection and for the
# result bundles built from them; each daemon closed its store
# cleanly, so the files hold everything without their WAL.
cp "$work/probes.db" "$work/model.db" "$out/" 2>/dev/null || true

python3 tests/gpu/summary.py "$out" > "$out/summary.md"
[ ! -f "$out/probes-summary.md" ] || cat "$out/probes-summary.md" >> "$out/summary.md"
[ ! -f "$out/async-copy-summary.md" ] || cat "$out/async-copy-summary.md" >> "$out/summary.md"
[ ! -f "$out/placement-summary.md" ] || cat "$out/placement-summary.md" >> "$out/summary.md"
[ ! -f "$out/edit-probes-summary.md" ] || cat "$out/edit-probes-summary.md" >> "$out/summary.md"
[ ! -f "$out/sched-summary.md" ] || cat "$out/sched-summary.md" >> "$out/summary.md"
[ ! -f "$out/dsmem-summary.md" ] || cat "$out/dsmem-summary.md" >> "$out/summary.md"
[ ! -f "$out/tensor-summary.md" ] || cat "$out/tensor-summary.md" >> "$out/summary.md"
[ ! -f "$out/model-summary.md" ] || cat "$out/model-summary.md" >> "$out/summary.md"
cat "$out/summary.md"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
