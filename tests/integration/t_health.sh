#!/usr/bin/env bash
# Proves /healthz, /readyz (ready with no GPU, saying why) and /openapi.json answer as documented, JSON as application/json; charset=utf-8, and every request logged in one key=value line. While discovery still runs, readyz is 503 and a trace sort or a job is queued (202) and runs once the scheduler starts.
. "$(dirname "$0")/lib.sh"

start_daemon

req GET /healthz
assert_status 200
[ "$(header content-type)" = "application/json; charset=utf-8" ] ||
    fail "healthz Content-Type: $(header content-type)"
assert_json .status ok
assert_json .version "$(tr -d '[:space:]' <"$REPO/VERSION")"

wait_ready
assert_json .ready true
assert_json .store ok
assert_json .scheduler running
assert_json .discovery "done"
assert_json .devices 0
assert_true '(.devices_reason | type) == "string" and (.devices_reason | length) > 0'

req GET /openapi.json
assert_status 200
[[ "$(header content-type)" == application/json* ]] || fail "openapi.json Content-Type: $(header content-type)"
assert_true '.openapi | test("^3\\.1\\.[0-9]+$")'
# The served document is the one in the source tree.
[ "$(printf '%s' "$BODY" | jq -S .)" = "$(jq -S . "$REPO/web/openapi.json")" ] ||
    fail "/openapi.json differs from web/openapi.json"

# Each request is one line of the log: method, path, status, bytes, milliseconds.
req GET /api/v1/nowhere
grep -qE 'level=info msg=request method=GET path=/healthz status=200 bytes=[0-9]+ ms=[0-9.]+$' "$LOG" ||
    fail "no request line for GET /healthz in the log"
grep -qE 'msg=request method=GET path=/api/v1/nowhere status=404 bytes=[0-9]+ ms=' "$LOG" ||
    fail "no request line for the 404"

stop_daemon

# While discovery is still under way HTTP answers, and what needs the
# scheduler waits for it: a libcuda that is a FIFO holds the discovery
# worker in dlopen until this test opens the other end.
mkfifo "$WORK/libcuda.fifo"
GPUPROBE_LIBCUDA=$WORK/libcuda.fifo start_daemon
req GET /readyz
assert_status 503
assert_json .discovery pending
REQ_CONTENT_TYPE=text/csv REQ_BODY_FILE=$REPO/tests/fixtures/traces/sample.csv req POST "/api/v1/traces/sort?sms=2"
assert_status 202
early_sort=$(json .id)
assert_json .state queued
submit '{"kind":"test","params":{}}'
early_job=$JOB_ID
: >"$WORK/libcuda.fifo" # opened and closed: dlopen reads an empty file and fails
wait_ready
assert_json .discovery "done"
wait_job_state "$early_sort" succeeded 30
wait_job_state "$early_job" succeeded 30
stop_daemon
