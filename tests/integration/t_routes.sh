#!/usr/bin/env bash
# Proves unknown paths get 404 problems and known paths with the wrong method get 405 with an Allow header.
. "$(dirname "$0")/lib.sh"

# assert_allow "GET, POST": the Allow header lists exactly these methods, in any order.
assert_allow() {
    local got want
    got=$(header allow | tr -d ' ' | tr ',' '\n' | sort | paste -sd,)
    want=$(echo "$1" | tr -d ' ' | tr ',' '\n' | sort | paste -sd,)
    [ "$got" = "$want" ] || fail "expected Allow: $1, got '$(header allow)' for $(last_request)"
}

start_daemon

for path in /nope /api/v1 /api/v1/nope /api/v1/jobs/1/extra /api/v2/jobs /healthz/x; do
    req GET "$path"
    assert_problem 404 not-found
done
req GET /api/v1/jobs/424242
assert_problem 404 not-found
# A job id that is not a number is refused, as a problem either way.
for id in abc -1 0 1x; do
    req GET "/api/v1/jobs/$id"
    case "$STATUS" in 400 | 404) assert_problem "$STATUS" ;; *) fail "expected 400 or 404, got $(last_request)" ;; esac
done

req PUT /api/v1/jobs '{"kind":"test"}'
assert_problem 405 method-not-allowed
assert_allow "GET, POST"

req DELETE /api/v1/devices
assert_problem 405 method-not-allowed
assert_allow "GET"

req POST /healthz '{}'
assert_problem 405 method-not-allowed
assert_allow "GET"

req PATCH /api/v1/jobs/1 '{}'
assert_problem 405 method-not-allowed
assert_allow "GET, DELETE"

# Nothing above created a job.
req GET /api/v1/jobs
assert_status 200
assert_json '.jobs | length' 0

stop_daemon
