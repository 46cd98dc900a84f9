#!/usr/bin/env bash
# Proves that with no GPU the device list is empty with a reason, unknown UUIDs are 404, and `gpuprobe devices` agrees.
. "$(dirname "$0")/lib.sh"

start_daemon
wait_ready

req GET /api/v1/devices
assert_status 200
assert_json .devices '[]'
assert_true '(.reason | type) == "string" and (.reason | length) > 0'
assert_true '(.host.hostname | type) == "string" and (.host.hostname | length) > 0'
assert_true '(.driver_version | type) == "string"'
api_reason=$(json .reason)

req GET /api/v1/devices/GPU-00000000-0000-0000-0000-000000000000
assert_problem 404 not-found

stop_daemon

# The command line's view: JSON on stdout, exit 0.
rc=0
timeout 60 "$GPUPROBE" devices >devices.json 2>devices.err || rc=$?
[ "$rc" -eq 0 ] || fail "gpuprobe devices exited $rc: $(head -c 400 devices.err)"
BODY=$(cat devices.json) STATUS=cli REQ_METHOD=gpuprobe REQ_PATH=devices
assert_json .devices '[]'
assert_true '(.reason | type) == "string" and (.reason | length) > 0'
assert_json .reason "$api_reason"
