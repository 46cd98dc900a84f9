#!/usr/bin/env bash
# Proves trace capture as far as a machine without a GPU can: `gpuprobe trace capture` rewriting offline (--emit-ptx: the sites JSON, the instrumented module, both modes), its usage errors (exit 2) and a PTX error (exit 1, no trace left), the trace-capture kind listed as internal and refused by POST /api/v1/jobs, POST /api/v1/traces/capture checking its arguments (400 naming the argument) and the device (422 with no GPU), and, with a stand-in GPU, the whole job path: 202 with the job, the worker failing it for want of a driver (a GPU reason) or for the PTX (error_class input, before any GPU is touched), GET .../output 404 for a failed job, and nothing left in upload_dir.
. "$(dirname "$0")/lib.sh"

FIX=$REPO/tests/fixtures/ptx/capture
UPLOADS=$WORK/uploads

cli() { RC=0; timeout 30 "$GPUPROBE" trace capture "$@" >cli.out 2>cli.err || RC=$?; }

# capture_http QUERY FILE [TOKEN]: POSTs FILE to /api/v1/traces/capture?QUERY.
capture_http() {
    REQ_CONTENT_TYPE=text/plain REQ_BODY_FILE=$2 req POST "/api/v1/traces/capture?$1" "" "${3-$TOKEN}"
}

# ---- the CLI, offline -------------------------------------------------------------
cli --help
[ "$RC" -eq 0 ] || fail "trace capture --help exited $RC"
assert_match "$(cat cli.out)" "buf:BYTES\[:FILL\]" "trace capture --help"
cli --ptx "$FIX/matmul_tiled.ptx" --emit-ptx mm.ptx
[ "$RC" -eq 0 ] || fail "--emit-ptx exited $RC: $(cat cli.err)"
BODY=$(cat cli.out) REQ_METHOD=CLI REQ_PATH=emit STATUS=0
assert_json .entry matmul_tiled
assert_json '[.sites[] | [.kind, .width, .dep]]' '[["load",4,1],["load",4,1],["store",4,0]]'
assert_json '.not_covered.atomics' 0
grep -q '.param .u64 gpcap_records' mm.ptx || fail "the rewrite lacks the record parameter"
[ "$(grep -c 'atom.global.add.u64 %gpc_s' mm.ptx)" -eq 3 ] || fail "the rewrite has not one record sequence per site"
cli --ptx "$FIX/matmul_tiled.ptx" --emit-ptx mmc.ptx --emit-count
[ "$(grep -c 'red.global.add.u64 \[%gpc_ctl\], 1;' mmc.ptx)" -eq 3 ] || fail "the counting rewrite"
# usage
cli --grid 1 --block 1 -o x
[ "$RC" -eq 2 ] || fail "no --ptx: exit $RC, expected 2"
cli --ptx "$FIX/vecadd.ptx" --grid 0 --block 32 -o x
[ "$RC" -eq 2 ] || fail "--grid 0: exit $RC, expected 2"
assert_match "$(cat cli.err)" "--grid" "the --grid error"
cli --ptx "$FIX/chase_vec4.ptx" --emit-ptx x.ptx
[ "$RC" -eq 1 ] || fail "two kernels, no --entry: exit $RC, expected 1"
assert_match "$(cat cli.err)" "chase, copy4" "the kernels named"
cli --ptx "$FIX/vecadd.ptx" --grid 4 --block 256 --param 0=buf:64 -o t.trace
[ "$RC" -eq 1 ] || fail "a parameter missing: exit $RC, expected 1"
assert_match "$(cat cli.err)" "vecadd_param_1" "the missing parameter named"
[ ! -e t.trace ] && [ ! -e t.trace.part ] || fail "a failed capture left a trace"

# ---- the daemon ---------------------------------------------------------------------
write_config "upload_dir=$UPLOADS"
start_daemon --config "$CONFIG"
wait_ready
req GET /api/v1/job-kinds
assert_json '.kinds[] | select(.name == "trace-capture") | [.internal, .needs_gpu]' '[true,true]'
req POST /api/v1/jobs '{"kind":"trace-capture","device":0,"params":{"ptx":"x","grid":"1","block":"1"}}'
assert_problem 422 unknown-kind
capture_http "block=32" "$FIX/vecadd.ptx"
assert_problem 400 invalid-request
assert_field grid
capture_http "grid=1&block=32&colour=red" "$FIX/vecadd.ptx"
assert_problem 400 invalid-request
assert_field colour
capture_http "grid=1&block=32&grid=2" "$FIX/vecadd.ptx"
assert_problem 400 invalid-request
assert_field grid
capture_http "grid=1&block=2000" "$FIX/vecadd.ptx"
assert_problem 400 invalid-request
assert_field block
for p in "0=buf:-1" "0=buf:64:rand:x" "0=buf:64&param=0=buf:128"; do
    capture_http "grid=1&block=32&param=$p" "$FIX/vecadd.ptx"
    assert_problem 400 invalid-request
    assert_field params
done
capture_http "grid=1&block=32&param=nonsense" "$FIX/vecadd.ptx"
assert_problem 400 invalid-request
assert_field params
capture_http "grid=1&block=32" /dev/null
assert_problem 400 invalid-request
capture_http "grid=1&block=32&param=0=buf:64" "$FIX/vecadd.ptx"
assert_problem 422 unknown-device
capture_http "grid=1&block=32" "$FIX/vecadd.ptx" ""
assert_status 401
uploads_hold ""
stop_daemon

# ---- with a stand-in GPU: the job path up to the driver -----------------------------
DAEMON_PREFIX=(env GPUPROBE_STANDIN_GPUS=1)
start_daemon --config "$CONFIG"
wait_ready
Q="grid=4&block=256&param=0=buf:4000:randf:1&param=1=buf:4000:randf:2&param=2=buf:4000&param=3=1000"
capture_http "$Q" "$FIX/vecadd.ptx"
assert_status 202
assert_json .kind trace-capture
assert_json '.params.params' '0=buf:4000:randf:1 1=buf:4000:randf:2 2=buf:4000 3=1000'
assert_match "$(json .params.ptx)" '^capture-[A-Za-z0-9]{6}\.ptx$' "the kept PTX's name"
id=$(json .id)
wait_job_state "$id" failed 60
assert_match "$(json .error)" "(libcuda|GPU|device|CUDA)" "a driver reason"
req GET "/api/v1/jobs/$id/output"
assert_problem 404 not-found
# a PTX the worker cannot read fails as the input's fault, before any GPU work
printf '.version 8.0\n.target sm_90\n.address_size 64\n' >nokernel.ptx
capture_http "grid=1&block=32" nokernel.ptx
assert_status 202
id=$(json .id)
wait_job_state "$id" failed 60
assert_match "$(json .error)" "no .entry" "the PTX's fault"
assert_json .error_class input
uploads_hold ""
stop_daemon
