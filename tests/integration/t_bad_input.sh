#!/usr/bin/env bash
# Proves every malformed or invalid request is refused with the documented problem and creates nothing.
. "$(dirname "$0")/lib.sh"

# bad STATUS SLUG BODY: POST the body, expect that problem.
bad() {
    req POST /api/v1/jobs "$3"
    assert_problem "$1" "$2"
}

# bad_field BODY FIELD: POST the body, expect 400 (or 422) invalid-request naming FIELD.
bad_field() {
    req POST /api/v1/jobs "$1"
    case "$STATUS" in 400 | 422) ;; *) fail "expected 400 or 422, got $(last_request)" ;; esac
    assert_problem "$STATUS" invalid-request
    assert_field "$2"
}

start_daemon
wait_ready
nul_uuid=GPU-00000000-0000-0000-0000-000000000000

# Not JSON, not an object, duplicate keys: invalid-json with the offset.
for body in '{"kind": "test",' '{"kind":"test"}x' '{kind:"test"}' 'nope' ' '; do
    bad 400 invalid-json "$body"
    assert_true '(.offset | type) == "number" and .offset >= 0'
done
for body in '[]' '"test"' '42' 'null'; do
    bad 400 invalid-json "$body"
done
bad 400 invalid-json '{"kind":"test","kind":"test"}'
assert_true '.detail | test("duplicate"; "i")'
bad 400 invalid-json '{"kind":"test","params":{"seconds":1,"seconds":2}}'
assert_true '.detail | test("duplicate"; "i")'
bad 400 invalid-json $'{"kind":"te\xffst"}'
printf '{"kind":"te\0st"}' >nul.json
REQ_BODY_FILE=nul.json bad 400 invalid-json ""

# The top level.
bad_field '{}' kind
bad_field '{"kind":5}' kind
bad_field '{"kind":null}' kind
bad 422 unknown-kind '{"kind":"nosuch"}'
bad 422 unknown-kind '{"probe":"nosuch"}'

# Devices: required for a GPU kind and must exist; refused for a CPU kind.
bad_field '{"kind":"test-gpu"}' device
bad 422 unknown-device "{\"kind\":\"test-gpu\",\"device\":\"$nul_uuid\"}"
bad 422 unknown-device '{"kind":"test-gpu","device":0}'
bad_field '{"kind":"test-gpu","device":true}' device
bad_field "{\"kind\":\"test\",\"device\":\"$nul_uuid\"}" device
bad_field '{"kind":"test","device":0}' device

# Parameters, checked before the device: named even where no GPU is attached.
bad_field '{"kind":"latency","device":0,"params":{"repeats":1e30}}' params.repeats
bad_field '{"kind":"test","params":{"x":1}}' params.x
bad_field '{"kind":"test","params":[1]}' params
bad_field '{"kind":"test","params":"mode=ok"}' params
bad_field '{"kind":"test","params":{"seconds":3601}}' params.seconds
bad_field '{"kind":"test","params":{"seconds":-1}}' params.seconds
bad_field '{"kind":"test","params":{"seconds":"5"}}' params.seconds
bad_field '{"kind":"test","params":{"mode":"nope"}}' params.mode
bad_field '{"kind":"test","params":{"mode":5}}' params.mode
bad_field '{"kind":"test","params":{"exit_code":1.5}}' params.exit_code
bad_field '{"kind":"test","params":{"exit_code":256}}' params.exit_code
bad_field '{"kind":"test","params":{"echo":7}}' params.echo

# The deadline.
for t in 0 -5 86401 '"10"' 1.5 true; do
    bad_field "{\"kind\":\"test\",\"timeout_s\":$t}" timeout_s
done

# Media type.
REQ_CONTENT_TYPE=text/plain bad 415 unsupported-media-type '{"kind":"test"}'
REQ_CONTENT_TYPE=application/x-www-form-urlencoded bad 415 unsupported-media-type 'kind=test'

# The default cap (1 MiB): a 2 MiB body, announced by Content-Length, then chunked.
{ printf '{"kind":"test","params":{"echo":"'; head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' a; printf '"}}'; } >big.json
REQ_BODY_FILE=big.json bad 413 payload-too-large ""
REQ_BODY_FILE=big.json REQ_CHUNKED=1 bad 413 payload-too-large ""
req GET /healthz
assert_status 200

# Query arguments of the listing.
for q in state=nope limit=0 limit=501 limit=abc limit=-1 before=-1 before=abc limit=5%00x state=queued%00x; do
    req GET "/api/v1/jobs?$q"
    assert_problem 400
    assert_field "${q%%=*}"
done

# An argument without '=' is refused on every route, naming it (not read as
# absent), and before a write runs
for path in '/api/v1/jobs?state' '/api/v1/jobs?limit=5&before' \
    '/api/v1/devices/GPU-x/model-validation?job' '/healthz?verbose'; do
    req GET "$path"
    assert_problem 400 invalid-request
    assert_field "${path##*[?&]}"
done
# the dashboard's page reads no query: a bookmark's "/?v1" is the page, not a refusal
req GET '/?v1'
assert_status 200
[[ "$BODY" == *"<html"* ]] || fail "GET /?v1 is not the dashboard: ${BODY:0:200}"
req GET '/api/v1/jobs?limit=5&&state=queued'
assert_problem 400 invalid-request
req POST '/api/v1/jobs?wait' '{"kind":"test"}'
assert_problem 400 invalid-request
assert_field wait

# %00 is never decoded: a path or a value holding it is no other path or value
for path in /healthz%00x /api/v1/jobs%00 /api/v1/job-kinds%00/x; do
    req GET "$path"
    assert_problem 404 not-found
done

# Nothing above created anything.
req GET /api/v1/jobs
assert_status 200
assert_json .jobs '[]'
assert_json .next null
stop_daemon

# A small cap from the config file: 5000 bytes are refused, 3000 accepted.
write_config body_limit=4096
start_daemon --config "$CONFIG"
body_of_size() { printf '{"kind":"test","params":{"echo":"%s"}}' "$(head -c $(($1 - 36)) /dev/zero | tr '\0' b)"; }
body_of_size 5000 >over.json
REQ_BODY_FILE=over.json bad 413 payload-too-large ""
REQ_BODY_FILE=over.json REQ_CHUNKED=1 bad 413 payload-too-large ""
req GET /api/v1/jobs
assert_json .jobs '[]'
body_of_size 3000 >under.json
REQ_BODY_FILE=under.json submit ""
req GET /api/v1/jobs
assert_json '.jobs | length' 1
stop_daemon
