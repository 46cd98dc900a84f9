#!/usr/bin/env bash
# Proves /healthz, /readyz (ready with no GPU, saying why) and /openapi.json answer as documented.
. "$(dirname "$0")/lib.sh"

start_daemon

req GET /healthz
assert_status 200
[[ "$(header content-type)" == application/json* ]] || fail "healthz Content-Type: $(header content-type)"
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

stop_daemon
