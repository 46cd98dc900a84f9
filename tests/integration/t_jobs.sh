#!/usr/bin/env bash
# Proves a job's life through the API: submission, defaults, result, events, timings, filters and keyset pagination.
. "$(dirname "$0")/lib.sh"

T='test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$")'
start_daemon
wait_ready

# Submission: 202, Location, the job as queued with defaults filled in.
submit '{"kind":"test","params":{"echo":"hello"}}'
id=$JOB_ID
[ "$(header location)" = "/api/v1/jobs/$id" ] || fail "Location is '$(header location)', expected /api/v1/jobs/$id"
[[ "$(header content-type)" == application/json* ]] || fail "Content-Type: $(header content-type)"
assert_json .kind test
assert_json .device null
# (the scheduler may already have started it by the time the answer is encoded)
assert_true '.state == "queued" or .state == "running" or .state == "succeeded"'
assert_json .max_attempts 3
assert_json .timeout_s 60
assert_json .cancel_requested false
assert_true '.params == {"mode":"ok","seconds":0,"exit_code":1,"echo":"hello"}'
assert_true ".created_at | $T"
assert_true 'if .state == "queued" then [.attempt, .started_at, .finished_at, .duration_s, .error] == [0, null, null, null, null] else true end'

# It runs in its own process and succeeds.
wait_job_state "$id" succeeded 15
assert_json .result.echo hello
assert_true '.result.pid | type == "number"'
assert_true ".result.pid != $DAEMON_PID"
assert_json .attempt 1
assert_json .error null
assert_true "(.started_at | $T) and (.finished_at | $T)"
assert_true '.created_at <= .started_at and .started_at <= .finished_at'
assert_true '(.duration_s | type) == "number" and .duration_s >= 0 and .duration_s < 15'
assert_json '[.events[].state]' '["queued","running","succeeded"]'
assert_true ".events | all(.at | $T)"
assert_true '.events[0].message | test("submit"; "i")'
assert_true '[.events[].at] == ([.events[].at] | sort)'

# "probe" is a synonym of "kind"; params may be omitted or empty; device may be null;
# a charset in the media type is fine; timeout_s overrides the default.
submit '{"probe":"test"}'
assert_json .kind test
assert_true '.params == {"mode":"ok","seconds":0,"exit_code":1}'
submit '{"kind":"test","params":{},"device":null,"timeout_s":5}'
assert_true '.params == {"mode":"ok","seconds":0,"exit_code":1}'
assert_json .timeout_s 5
REQ_CONTENT_TYPE='application/json; charset=utf-8' submit '{"kind":"test","params":{"mode":"sleep","seconds":0.2}}'
assert_json .params.seconds 0.2

# Seven more, then every job is listed once, newest first, three at a time.
for i in 1 2 3 4 5 6 7; do submit "{\"kind\":\"test\",\"params\":{\"echo\":\"page $i\"}}"; done
wait_job_state "$JOB_ID" succeeded 30
req GET '/api/v1/jobs?limit=500'
assert_status 200
all=$(json '[.jobs[].id]')
[ "$(jq length <<<"$all")" = 11 ] || fail "expected 11 jobs, listed $all"
assert_true '[.jobs[].id] == ([.jobs[].id] | sort | reverse)'
assert_true '.jobs | all(has("result") | not)'

page='/api/v1/jobs?limit=3'
seen='[]'
pages=0
while [ "$page" != null ]; do
    req GET "$page"
    assert_status 200
    assert_true '(.jobs | length) <= 3'
    seen=$(jq -c --argjson p "$(json '[.jobs[].id]')" '. + $p' <<<"$seen")
    page=$(json .next)
    pages=$((pages + 1))
    [ "$pages" -le 5 ] || fail "pagination does not end: at $page after $seen"
done
[ "$seen" = "$all" ] || fail "pages of 3 gave $seen, expected $all"
[ "$pages" -eq 4 ] || fail "11 jobs in pages of 3 took $pages pages, expected 4"
# A page that ends the list exactly has no next link.
req GET '/api/v1/jobs?limit=11'
assert_json '[(.jobs | length), .next]' '[11,null]'
req GET '/api/v1/jobs?limit=10'
assert_true '.next | test("before=")'
# A misspelt or repeated filter is refused, not ignored.
req GET '/api/v1/jobs?stat=running'
assert_problem 400 invalid-request
assert_field stat
req GET '/api/v1/jobs?state=running&state=queued'
assert_problem 400 invalid-request
assert_field state

# Filters, and next keeps them.
submit '{"kind":"test","params":{"mode":"sleep","seconds":30}}'
sleeper=$JOB_ID
wait_job_state "$sleeper" running 10
req GET '/api/v1/jobs?state=running'
assert_json '[.jobs[].id]' "[$sleeper]"
req GET '/api/v1/jobs?state=queued'
assert_json .jobs '[]'
req GET '/api/v1/jobs?state=succeeded&limit=4'
assert_json '.jobs | length' 4
assert_true '.jobs | all(.state == "succeeded")'
assert_true '.next | test("state=succeeded")'
req GET "$(json .next)"
assert_status 200
assert_true '(.jobs | length) > 0 and (.jobs | all(.state == "succeeded"))'
req GET '/api/v1/jobs?kind=test&limit=500'
assert_json '.jobs | length' 12
req GET '/api/v1/jobs?kind=test-gpu'
assert_json .jobs '[]'
req GET "/api/v1/jobs?device=GPU-00000000-0000-0000-0000-000000000000"
assert_json .jobs '[]'
req GET "/api/v1/jobs?before=$sleeper&limit=1"
assert_json '[.jobs[].id]' "[$((sleeper - 1))]"

req DELETE "/api/v1/jobs/$sleeper"
wait_job_state "$sleeper" cancelled 5

# A long parameter (300 kB, well under the 1 MiB body cap) reaches the worker intact.
long=$(head -c 300000 /dev/zero | tr '\0' L)
submit "{\"kind\":\"test\",\"params\":{\"echo\":\"$long\"}}"
wait_job_state "$JOB_ID" succeeded 15
[ "$(json .result.echo)" = "$long" ] || fail "the 300 kB echo did not come back intact"

stop_daemon
