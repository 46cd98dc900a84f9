#!/usr/bin/env bash
# Proves /api/v1/job-kinds serves each kind's parameter schema (here the test build's kinds).
. "$(dirname "$0")/lib.sh"

start_daemon
req GET /api/v1/job-kinds
assert_status 200
assert_true '.kinds | type == "array"'
assert_true '[.kinds[].name] | index("test") != null and index("test-gpu") != null'
BODY=$(json '.kinds[] | select(.name == "test")')
assert_json .needs_gpu false
assert_json .default_timeout_s 60
assert_true '(.summary | length) > 0'
assert_json .params.mode.type enum
assert_json .params.mode.enum '["ok","sleep","crash","garbage","exit","hang","big"]'
assert_json .params.mode.default ok
assert_json .params.mode.required false
assert_json '.params.seconds | [.type, .minimum, .maximum, .default]' '["number",0,3600,0]'
assert_json '.params.exit_code | [.type, .minimum, .maximum, .default]' '["integer",0,255,1]'
assert_json .params.echo.type string
assert_true '.params.echo.default == null'

req GET /api/v1/job-kinds
BODY=$(json '.kinds[] | select(.name == "test-gpu")')
assert_json .needs_gpu true
assert_json '.params | keys' '["crash_on","seconds"]'
assert_json '.params.seconds | [.type, .minimum, .maximum, .default]' '["number",0,3600,0]'
assert_json .params.crash_on.type string
stop_daemon
