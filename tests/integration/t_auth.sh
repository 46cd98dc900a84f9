#!/usr/bin/env bash
# Proves writes need a listed bearer token (none 401, wrong 403) and are all refused (403) without a token file.
. "$(dirname "$0")/lib.sh"

job='{"kind":"test","params":{"mode":"sleep","seconds":30}}'
start_daemon

req POST /api/v1/jobs "$job" ""
assert_problem 401 unauthorized
[[ "$(header www-authenticate)" == Bearer* ]] || fail "401 without WWW-Authenticate: Bearer (got '$(header www-authenticate)')"

req POST /api/v1/jobs "$job" wrong-token
assert_problem 403 forbidden
req POST /api/v1/jobs "$job" "${TOKEN}x"
assert_problem 403 forbidden

# Reads need no token.
req GET /api/v1/jobs "" ""
assert_status 200
assert_json '.jobs | length' 0

submit "$job"
id=$JOB_ID
# The token file's second line is a token too.
req POST /api/v1/jobs '{"kind":"test"}' "$TOKEN2"
assert_status 202

req DELETE "/api/v1/jobs/$id" "" ""
assert_problem 401 unauthorized
[[ "$(header www-authenticate)" == Bearer* ]] || fail "401 without WWW-Authenticate: Bearer"
req DELETE "/api/v1/jobs/$id" "" wrong-token
assert_problem 403 forbidden
req GET "/api/v1/jobs/$id"
assert_json .cancel_requested false

req DELETE "/api/v1/jobs/$id"
[ "$STATUS" = 200 ] || [ "$STATUS" = 202 ] || fail "expected 200 or 202, got $(last_request)"
wait_job_state "$id" cancelled 5

req GET /api/v1/jobs
assert_json '.jobs | length' 2
stop_daemon

# Without a token file every write is refused, with a reason.
start_daemon_args --db "$DB"
for token in "$TOKEN" ""; do
    req POST /api/v1/jobs '{"kind":"test"}' "$token"
    assert_problem 403 forbidden
    assert_true '.detail | test("token[ _-]?file"; "i")'
done
req DELETE "/api/v1/jobs/$id" "" "$TOKEN"
assert_problem 403 forbidden
req GET /api/v1/jobs "" ""
assert_status 200
assert_json '.jobs | length' 2
stop_daemon
