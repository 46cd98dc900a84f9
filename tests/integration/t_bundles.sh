#!/usr/bin/env bash
# Proves result bundles end to end: a new database gets the reference H100 and H200 results linked into the binary (listed with host "reference" and attached false, their results served, none added again at the next start, none with --no-reference, and taken out again by a start with --no-reference on a database that holds them, the fleet's own GPUs kept, and all back with it on); GET /devices/{uuid}/export answers a bundle with a valid digest that `gpuprobe import` takes into another database, twice with nothing added the second time and nothing added when it goes back where it came from, and an import that stores nothing leaves no new database behind; POST /api/v1/import (token) the same over HTTP; refusals that name the member (format, version, sha256, not JSON) write nothing; jobs cannot target an imported device; a bundle under import_limit that parsing would take more than 16 times import_limit to hold (small values: zeros, empty objects) is refused with 413 naming import_limit before jansson sees it, one nested deeper than 64 levels with 400 and the offset, nothing stored and the daemon still answering, while a real bundle is taken; the JSON API's bodies likewise under body_limit.
. "$(dirname "$0")/lib.sh"

# the GPUs the shipped reference data was measured on
H100=$(jq -r '.devices[0].uuid' "$REPO/data/reference/h100.json")
H200=$(jq -r '.devices[0].uuid' "$REPO/data/reference/h200.json")

# cli ARGS...: gpuprobe ARGS (at most 60 s); sets RC, OUT (stdout) and ERR.
cli() {
    RC=0
    timeout 60 "$GPUPROBE" "$@" >cli.out 2>cli.err || RC=$?
    OUT=$(cat cli.out) ERR=$(cat cli.err)
}

# ---- the reference data in a new database ------------------------------------------------
WITH_REFERENCE=1 start_daemon
wait_ready
grep -q 'msg=reference_imported devices=2 results=4 added=4' "$LOG" ||
    fail "the reference data was not imported: $(grep -m1 reference "$LOG")"
req GET /api/v1/devices
assert_status 200
assert_json '[.devices[] | select(.attached == false) | [.uuid, .host, .index]] | sort' \
    "$(jq -cn --arg a "$H100" --arg b "$H200" '[[$a, "reference", null], [$b, "reference", null]] | sort')"
for dev in $H100 $H200; do
    for path in latency memory banks control-codes dual-issue model-validation; do
        req GET "/api/v1/devices/$dev/$path"
        assert_status 200
    done
done
req GET "/api/v1/devices/$H200/latency"
assert_json '.entries | length' "$(jq '.devices[0].results[] | select(.kind == "suite") | .result.latency.entries | length' "$REPO/data/reference/h200.json")"
req GET "/api/v1/devices/$H100/model-validation"
assert_json .kernels_compared 16
# The model predicts from an imported device's measurements, or from a compute
# capability's newest ones; no token is needed for a calculation.
kernel='"kernel":{"grid":1024,"block":256,"regs":32,"per_warp":{"fp32":100,"coalesced":2}}'
req POST /api/v1/model/predict "{\"device\":\"$H100\",$kernel}" ""
assert_status 200
assert_json .device.uuid "$H100"
assert_true '.prediction.kernel_s > 0'
req POST /api/v1/model/predict "{\"compute_capability\":\"9.0\",$kernel}" ""
assert_status 200
assert_true ".device.uuid == \"$H100\" or .device.uuid == \"$H200\""
req POST /api/v1/model/predict "{\"compute_capability\":\"8.0\",$kernel}" ""
assert_problem 422 unknown-device
assert_field compute_capability
for cc in banana 9.-0 " 9.0" 9.0x; do
    req POST /api/v1/model/predict "{\"compute_capability\":\"$cc\",$kernel}" ""
    assert_problem 400 invalid-request
    assert_field compute_capability
done
req POST /api/v1/model/predict "{\"device\":\"\",$kernel}" ""
assert_problem 400 invalid-request
assert_field device
# Jobs run only on attached GPUs.
req POST /api/v1/jobs "{\"kind\":\"latency\",\"device\":\"$H100\"}"
assert_problem 422 unknown-device

# A device's bundle, downloaded.
req GET "/api/v1/devices/$H200/export"
assert_status 200
grep -qi '^content-disposition: attachment; filename="gpuprobe-'"$H200"'.json"' "$HEADERS" ||
    fail "no Content-Disposition on the export"
assert_json '[.format, .version, (.devices | length), .devices[0].host]' '["gpuprobe-bundle",1,1,"reference"]'
assert_true '.sha256 | test("^[0-9a-f]{64}$")'
assert_json '[.devices[0].results[].kind]' '["suite","model-validation"]'
cp "$WORK/.req.out" h200.json
stop_daemon

# Started again: nothing new to add.
WITH_REFERENCE=1 start_daemon
wait_ready
grep -q 'msg=reference_imported devices=2 results=4 added=0' "$LOG" ||
    fail "the second start added reference results again: $(grep -m1 reference "$LOG")"
stop_daemon

# ---- reference = off on a database a start with it on filled: the reference GPUs go ---------
# A central first started with the defaults, then given GPUs of its fleet's own
# hosts (bench/fleet/synth.c: 4 GPUs, measured like the reference ones but
# under their own UUIDs and hosts), then restarted with --no-reference.
REF_DB=$WORK/central.db
start_central() { start_daemon_args --db "$REF_DB" --token-file "$TOKEN_FILE" "$@"; wait_ready; }
WITH_REFERENCE=1 start_central
stop_daemon
synth_fleet own 4
"$GPUPROBE" import own/0*.json --db "$REF_DB" >/dev/null || fail "importing the fleet's own GPUs"
start_central
grep -q 'msg=reference_removed devices=2 results=4 reason=reference_off' "$LOG" ||
    fail "--no-reference did not remove the reference data: $(grep reference "$LOG")"
req GET /api/v1/devices
assert_json '[.devices[] | .host | test("^node")] | [length, all]' '[4,true]'
req GET /api/v1/fleet
assert_status 200
assert_true '([.models[].devices] | add) == 4 and ([.devices[] | select(.host == "reference")] | length) == 0'
for dev in $H100 $H200; do
    req GET "/api/v1/devices/$dev/latency"
    [ "$STATUS" = 404 ] || fail "the reference GPU $dev is still answered: $(last_request)"
done
[ "$(sqlite3 "$REF_DB" "SELECT count(*) FROM hosts WHERE hostname = 'reference'")" = 0 ] ||
    fail "the host reference is still in the store"
stop_daemon
# with it off again there is nothing left to remove, and nothing said
start_central
if grep -q reference_removed "$LOG"; then fail "a second start removed more: $(grep reference_removed "$LOG")"; fi
stop_daemon
# on again: all of it back, nothing of the fleet's own lost
WITH_REFERENCE=1 start_central
grep -q 'msg=reference_imported devices=2 results=4 added=4' "$LOG" ||
    fail "the reference data did not come back: $(grep reference "$LOG")"
req GET /api/v1/devices
assert_json '[.devices[] | .host] | sort | [length, .[4:]]' '[6,["reference","reference"]]'
stop_daemon

# ---- gpuprobe import / export ---------------------------------------------------------------
cli import h200.json --db other.db
[ "$RC" = 0 ] || fail "import exited $RC: $ERR"
assert_match "$(jq -c '.imported[0] | [.devices, .devices_added, .results, .results_added]' cli.out)" \
    '^\[1,1,2,2\]$' "the first import's counts"
cli import h200.json h200.json --db other.db
assert_match "$(jq -c '[.imported[] | [.results_added, .results_held]]' cli.out)" '^\[\[0,2\],\[0,2\]\]$' \
    "importing again"
# an import that stores nothing leaves no database it made (a typo, a bad file)
printf 'not a bundle\n' >bad.txt
printf '{"format": "something else"}\n' >other-format.json
for files in "bad.txt" "missing.json" "other-format.json" "bad.txt other-format.json"; do
    # shellcheck disable=SC2086
    cli import $files --db new.db
    [ "$RC" = 1 ] || fail "import $files exited $RC: $ERR"
    if ls new.db* >/dev/null 2>&1; then fail "a failed import of $files left $(ls new.db*)"; fi
done
# one that stores something keeps it, however the others went; a database that
# was there already stays whatever happens
cli import bad.txt h200.json --db new.db
[ "$RC" = 1 ] && [ -s new.db ] || fail "import bad.txt h200.json: exit $RC, $(ls new.db* 2>&1)"
cp other.db kept.db
cli import bad.txt --db kept.db
[ "$RC" = 1 ] && cmp -s other.db kept.db || fail "a failed import into kept.db: exit $RC, $(ls kept.db* 2>&1)"
cli export --db other.db -o back.json
[ "$RC" = 0 ] || fail "export exited $RC: $ERR"
[ "$(jq -r '.devices[0].results[0].job.host' back.json)" = reference ] ||
    fail "a re-exported result lost its origin"
cli import back.json --db "$DB"
assert_match "$(jq -c '.imported[0] | [.results_added, .results_held]' cli.out)" '^\[0,2\]$' \
    "a bundle back in the database it came from"
cli export --db other.db --device GPU-ffffffff-0000-0000-0000-000000000000 -o x.json
[ "$RC" = 2 ] && assert_match "$ERR" "no device GPU-ffffffff" "export of an unknown device"
[ ! -e x.json ] || fail "a failed export wrote its file"
# the bundle never goes over the database it comes from, nor its journal; a host name is one
sqlite3 other.db 'PRAGMA journal_mode=WAL' >/dev/null
for out in other.db ./other.db "$PWD/other.db" other.db-wal; do
    cp other.db before.db
    cli export --db other.db -o "$out"
    [ "$RC" = 2 ] && assert_match "$ERR" "is the database itself" "export -o $out"
    cmp -s other.db before.db || fail "export -o $out changed the database"
done
for host in "" $'node\n1'; do
    cli export --db other.db --host "$host" -o h.json
    [ "$RC" = 2 ] && [ ! -e h.json ] || fail "export --host '$host': exit $RC"
done

# ---- POST /api/v1/import, and what it refuses ---------------------------------------------
DB=$WORK/http.db start_daemon
wait_ready
REQ_BODY_FILE=h200.json req POST /api/v1/import "" ""
assert_problem 401 unauthorized
REQ_BODY_FILE=h200.json req POST /api/v1/import
assert_status 200
assert_json '[.devices_added, .results_added, .results_held]' '[1,2,0]'
REQ_BODY_FILE=h200.json req POST /api/v1/import
assert_json '[.devices_added, .results_added, .results_held]' '[0,0,2]'
req GET /api/v1/devices
assert_json '[.devices[] | [.uuid, .host, .attached]]' "[[\"$H200\",\"reference\",false]]"

count_jobs() { sqlite3 -batch "$WORK/http.db" 'SELECT count(*) FROM jobs'; }
before=$(count_jobs)
refused() { # refused MEMBER JQ-EDIT: the edited bundle is refused naming MEMBER
    jq "$2" h200.json >bad.json
    REQ_BODY_FILE=bad.json req POST /api/v1/import
    assert_problem 400 invalid-bundle
    assert_field "$1"
}
refused format '.format = "zip"'
refused version '.version = 2'
assert_true '.detail | test("version 2 is not one this gpuprobe reads")'
refused sha256 '.devices[0].results[0].result.repeats = 4'
assert_true '.detail | test("does not match the content")'
refused sha256 'del(.sha256)'
REQ_BODY_FILE=h200.json req POST "/api/v1/import?dry_run=1"
assert_problem 400 invalid-request
assert_field dry_run
printf '{"format":' >bad.json
REQ_BODY_FILE=bad.json req POST /api/v1/import
assert_problem 400 invalid-json
[ "$(count_jobs)" = "$before" ] || fail "a refused bundle wrote jobs"
stop_daemon

# ---- what parsing a body may cost: bounded before jansson sees it ---------------------------
# import_limit = 1 MiB: parsing a bundle may take 16 MiB. A bundle of small values under the
# byte limit would take more (400,000 zeros: 800 kB, about 22 MiB once parsed), and so would
# one of empty objects (300,000: 900 kB, 71 MiB); both are refused with 413 naming import_limit, nothing stored, the
# daemon still answering; a real bundle (the H200's, 0.9 MB) is taken.
write_config 'import_limit=1048576' 'reference=off'
DB=$WORK/bound.db start_daemon --config "$CONFIG"
wait_ready
count_rows() { sqlite3 -batch "$WORK/bound.db" 'SELECT (SELECT count(*) FROM jobs) || "/" || (SELECT count(*) FROM devices)'; }
before=$(count_rows)
small_values() { # small_values ITEM N: a bundle whose one result is an array of N ITEMs
    jq -nc --argjson n "$2" "{format: \"gpuprobe-bundle\", version: 1, devices: [{uuid: \"GPU-0\",
        results: [[range(\$n) | $1]]}], sha256: ([range(64) | \"0\"] | join(\"\"))}" >small.json
    [ "$(stat -c %s small.json)" -lt 1048576 ] || fail "the bundle of $2 $1 is not under import_limit"
}
for item in '0 400000' '{} 300000'; do
    small_values $item
    REQ_BODY_FILE=small.json req POST /api/v1/import
    assert_problem 413 payload-too-large
    assert_true '.detail | test("^parsing the body would take about [0-9]+ MiB of memory \\([0-9]+ JSON values in [0-9]+ bytes\\), more than this endpoint allows: 16 times import_limit \\(1048576 bytes\\), 16 MiB\\. Raise import_limit to take it$")'
    [ "$(count_rows)" = "$before" ] || fail "a bundle over the bound stored something"
done
# nesting deeper than 64 levels is refused where it starts (400: no bundle nests so deep)
prefix='{"format":"gpuprobe-bundle","devices":'
{ printf '%s' "$prefix"; printf '[%.0s' $(seq 70); printf ']%.0s' $(seq 70); printf '}'; } >deep.json
REQ_BODY_FILE=deep.json req POST /api/v1/import
assert_problem 400 invalid-json
assert_json .offset $((${#prefix} + 63))
assert_true '.detail | test("nests deeper than 64 levels")'
[ "$(count_rows)" = "$before" ] || fail "a bundle nested too deep stored something"
req GET /healthz
assert_status 200
REQ_BODY_FILE=h200.json req POST /api/v1/import
assert_status 200
assert_json '[.devices_added, .results_added]' '[1,2]'
# the JSON API the same, under body_limit (1 MiB: 16 MiB once parsed)
jq -nc '{kind: "latency", device: 0, params: {x: [range(400000) | 0]}}' >small.json
REQ_BODY_FILE=small.json req POST /api/v1/jobs
assert_problem 413 payload-too-large
assert_true '.detail | test("16 times body_limit \\(1048576 bytes\\).*Raise body_limit to take it$")'
{ printf '{"kernel":'; printf '[%.0s' $(seq 70); printf ']%.0s' $(seq 70); printf '}'; } >deep.json
REQ_BODY_FILE=deep.json req POST /api/v1/model/predict "" ""
assert_problem 400 invalid-json
assert_json .offset $((10 + 63))
stop_daemon
