#!/usr/bin/env bash
# Proves a node pushes its results to a central gpuprobe: two real daemons on loopback, the node (host node-a, in its own UTS namespace, with two stand-in GPUs replaying the reference H200's suite) with `upstream` set; a result stored on the node arrives at the central with its host; with the central down the node retries and delivers once it is back, and a restart of either side loses nothing; the same result twice is one result; a wrong token is retried until mended, an invalid bundle (400) and one over the central's import_limit (413) are refused and not retried, all visible in GET /api/v1/upstream; an oversized import is refused with nothing stored; with upstream_content = figures the node sends the fleet figures alone (a fifth of the bundle at most) and the central compares them; and the command line: gpuprobe probe --device all --push [--content figures] and gpuprobe push; an upstream token file is read as the central reads its own (comments, trailing spaces); a 200 that is not an import's answer (a proxy's page) is not taken as delivered; refused results are sent again with push --requeue-refused.
. "$(dirname "$0")/lib.sh"

UP_TOKEN_FILE=$WORK/upstream-token
NODE_DB=$WORK/node.db
printf '%s\n' "$TOKEN" >"$UP_TOKEN_FILE"

# as_host NAME CMD...: CMD in a UTS namespace of its own whose host name is NAME,
# so the central can tell this node's results from its own.
as_host() {
    local name=$1
    shift
    unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
}

# The central and the node are both lib.sh daemons: `central` and `node` make
# one of them the current one (BASE_URL, DAEMON_PID, LOG) for lib.sh's functions.
central() { BASE_URL=$CENTRAL DAEMON_PID=$CENTRAL_PID LOG=$CENTRAL_LOG; }
node() { BASE_URL=$NODE DAEMON_PID=$NODE_PID LOG=$NODE_LOG; }
keep_central() { CENTRAL=$BASE_URL CENTRAL_PID=$DAEMON_PID CENTRAL_LOG=$LOG; }
keep_node() { NODE=$BASE_URL NODE_PID=$DAEMON_PID NODE_LOG=$LOG; }
NODE_PID= CENTRAL_PID=
both_cleanup() {
    DAEMON_PID=$NODE_PID cleanup
    DAEMON_PID=$CENTRAL_PID cleanup
}
trap both_cleanup EXIT

# start_central [ARGS...]: the central on CENTRAL_PORT (any port the first time).
start_central() {
    start_daemon --listen "127.0.0.1:${CENTRAL_PORT:-0}" "$@"
    keep_central
    CENTRAL_PORT=${BASE_URL##*:}
}
stop_central() { central; stop_daemon; CENTRAL_PID=; }

# start_node [KEY=VALUE...]: the node daemon, host node-a, two stand-in GPUs,
# pushing to the central; the settings go to its configuration too.
start_node() {
    write_config "upstream=http://127.0.0.1:$CENTRAL_PORT" "upstream_token_file=$UP_TOKEN_FILE" \
        upstream_retry_max_s=2 "$@"
    DAEMON_PREFIX=(env GPUPROBE_STANDIN_GPUS=2 unshare --uts sh -c 'hostname node-a && exec "$@"' sh)
    start_daemon_args --db "$NODE_DB" --token-file "$TOKEN_FILE" --config "$CONFIG"
    DAEMON_PREFIX=()
    keep_node
}
stop_node() { node; stop_daemon; NODE_PID=; }

# on URL: the following requests go there.
on() { BASE_URL=$1; }

# node_job DEVICE_INDEX: a suite-standin job on the node, until it succeeded; sets JOB_ID.
node_job() {
    on "$NODE"
    submit "{\"kind\":\"suite-standin\",\"device\":$1}"
    wait_job_state "$JOB_ID" succeeded 30
}

# wait_for WHAT SECONDS JQ_EXPR: polls GET (the current BASE_URL's) REQ_PATH until
# the body satisfies JQ_EXPR.
wait_for() {
    local what=$1 deadline=$((SECONDS + $2)) expr=$3 path=$4
    while :; do
        req GET "$path"
        [ "$STATUS" = 200 ] && printf '%s' "$BODY" | jq -e "$expr" >/dev/null 2>&1 && return 0
        [ "$SECONDS" -ge "$deadline" ] && fail "$what: not within $2 s; last: $(last_request)"
        sleep 0.2
    done
}

# central_results UUID: the central's succeeded jobs of that device.
central_results() {
    on "$CENTRAL"
    req GET "/api/v1/jobs?device=$1&state=succeeded"
    assert_status 200
    json '.jobs | length'
}

# ---- a result stored on the node arrives at the central with its host -----------------------
start_central
start_node
on "$NODE"
wait_ready
req GET /api/v1/devices
assert_json '[.devices[] | select(.attached) | [.name, .host]] | unique' '[["NVIDIA H200 (stand-in)","node-a"]]'
GPU0=$(json '.devices[0].uuid') GPU1=$(json '.devices[1].uuid')
req GET /api/v1/upstream
assert_status 200
assert_json '[.url, .pending, .refused, .last_success_at]' "[\"http://127.0.0.1:$CENTRAL_PORT\",0,0,null]"
grep -q 'msg=pusher_started' "$NODE_LOG" || fail "no pusher_started line in the node's log"

node_job 0
FIRST_JOB=$JOB_ID
on "$CENTRAL"
wait_for "the first result at the central" 15 ".devices[] | select(.uuid == \"$GPU0\")" /api/v1/devices
assert_json "[.devices[] | select(.uuid == \"$GPU0\") | [.host, .attached, .name]]" \
    '[["node-a",false,"NVIDIA H200 (stand-in)"]]'
req GET "/api/v1/devices/$GPU0/latency"
assert_status 200
assert_json '.entries | length' "$(jq '.devices[0].results[] | select(.kind == "suite") | .result.latency.entries | length' "$REPO/data/reference/h200.json")"
[ "$(central_results "$GPU0")" = 1 ] || fail "the central holds $(central_results "$GPU0") results of $GPU0"
on "$NODE"
wait_for "the node's outbox emptied" 10 '.pending == 0 and .last_success_at != null' /api/v1/upstream
grep -q "msg=push job=$FIRST_JOB kind=suite-standin device=$GPU0 status=200" "$NODE_LOG" ||
    fail "the push is not logged: $(grep -m2 push "$NODE_LOG")"

# ---- the same result twice is one result -------------------------------------------------------
on "$NODE"
req GET "/api/v1/devices/$GPU0/export"
assert_status 200
cp "$WORK/.req.out" node-a.json
on "$CENTRAL"
REQ_BODY_FILE=$WORK/node-a.json req POST /api/v1/import
assert_status 200
assert_json '[.results_added, .results_held]' '[0,1]'
[ "$(central_results "$GPU0")" = 1 ] || fail "importing the result again added one"

# ---- the central down: the node retries, and both sides restart, losing nothing ----------------
stop_central
node_job 1
SECOND_JOB=$JOB_ID
on "$NODE"
wait_for "the node retrying" 20 '.pending == 1 and .attempts >= 2 and (.last_error | test("127.0.0.1"))' \
    /api/v1/upstream
assert_json '.outbox[0] | [.job_id, .refused, (.next_attempt_at != null)]' "[$SECOND_JOB,false,true]"
grep -q "msg=push_retry job=$SECOND_JOB" "$NODE_LOG" || fail "the retry is not logged"
stop_node
start_node
start_central
on "$CENTRAL"
wait_for "the second result after both restarts" 20 ".devices[] | select(.uuid == \"$GPU1\")" /api/v1/devices
[ "$(central_results "$GPU0")" = 1 ] || fail "the central lost the first result in its restart"
[ "$(central_results "$GPU1")" = 1 ] || fail "the central holds $(central_results "$GPU1") results of $GPU1"
on "$NODE"
wait_for "the node's outbox emptied again" 10 '.pending == 0 and .refused == 0' /api/v1/upstream

# ---- a wrong token is retried until it is mended --------------------------------------------
printf 'not-the-central-token\n' >"$UP_TOKEN_FILE"
node_job 0
on "$NODE"
wait_for "the wrong token retried" 20 '.pending == 1 and .refused == 0 and .attempts >= 2 and (.last_error | test("^HTTP 40[13] "))' \
    /api/v1/upstream
printf '%s\n' "$TOKEN" >"$UP_TOKEN_FILE"
wait_for "delivered once the token is mended" 20 '.pending == 0 and .refused == 0' /api/v1/upstream
[ "$(central_results "$GPU0")" = 2 ] || fail "the central holds $(central_results "$GPU0") results of $GPU0, not 2"

# ---- refusals: an invalid bundle (400) and one over the central's limit (413) ----------------
stop_central
node_job 1
BAD_JOB=$JOB_ID
# the stored result damaged on the node: the central's check of the kind refuses it
sqlite3 "$NODE_DB" "PRAGMA busy_timeout = 5000; UPDATE jobs SET result_json = json_set(result_json, '\$.latency.repeats', 0) WHERE id = $BAD_JOB;"
start_central
on "$NODE"
wait_for "the invalid bundle refused" 20 '.refused == 1 and .pending == 0' /api/v1/upstream
assert_true "[.outbox[] | select(.job_id == $BAD_JOB)] | length == 1 and (.[0].refused) and (.[0].attempts >= 1) and (.[0].last_error | test(\"^HTTP 400 invalid-bundle: .*repeats\"))"
# the pusher may have tried once while the central was down (connection refused);
# the 400 refuses the row whatever the count was, and it is never tried again
refused_attempts=$(json "[.outbox[] | select(.job_id == $BAD_JOB) | .attempts][0]")
grep -q "msg=push_refused job=$BAD_JOB" "$NODE_LOG" || fail "the refusal is not logged"
sleep 3 # two backoff caps: a refused row is never tried again
req GET /api/v1/upstream
assert_json "[.outbox[] | select(.job_id == $BAD_JOB) | .attempts]" "[$refused_attempts]"
stop_central
printf 'import_limit = 100000\n' >"$WORK/central.conf"
start_central --config "$WORK/central.conf"
node_job 0
BIG_JOB=$JOB_ID
on "$NODE"
wait_for "the bundle over the central's limit refused" 20 '.refused == 2' /api/v1/upstream
assert_true "[.outbox[] | select(.job_id == $BIG_JOB)][0] | .refused and .attempts == 1 and (.last_error | test(\"^HTTP 413 payload-too-large\"))"
# and straight to the central: refused, nothing stored
on "$CENTRAL"
before=$(central_results "$GPU0")
REQ_BODY_FILE=$WORK/node-a.json req POST /api/v1/import
assert_problem 413 payload-too-large
REQ_BODY_FILE=$WORK/node-a.json REQ_CHUNKED=1 req POST /api/v1/import
assert_problem 413 payload-too-large
[ "$(central_results "$GPU0")" = "$before" ] || fail "an oversized import stored something"
stop_node

# ---- refused rows sent again once their cause is gone: push --requeue-refused -----------------
stop_central
start_central # without the import_limit that refused BIG_JOB
push_node() { RC=0; "$GPUPROBE" push --db "$NODE_DB" --upstream "$CENTRAL" --token-file "$UP_TOKEN_FILE" \
    --tries 1 "$@" >cli.out 2>cli.err || RC=$?; }
push_node
[ "$RC" = 0 ] && grep -q '2 result(s) refused before are held, not sent; --requeue-refused' cli.err ||
    fail "push with refused rows held exited $RC: $(cat cli.err)"
assert_match "$(jq -c '[.acknowledged, .refused, .left, .refused_held]' cli.out)" '^\[0,0,0,2\]$' \
    "push without --requeue-refused"
push_node --requeue-refused
[ "$RC" = 1 ] || fail "push --requeue-refused exited $RC: $(cat cli.err)"
# the bundle over the old limit is taken now; the damaged one is refused again
assert_match "$(jq -c '[.acknowledged, .refused, .left, .refused_held]' cli.out)" '^\[1,1,0,1\]$' \
    "push --requeue-refused"
[ "$(sqlite3 "$NODE_DB" "SELECT group_concat(job_id) FROM outbox WHERE refused = 1")" = "$BAD_JOB" ] ||
    fail "the node's refused rows: $(sqlite3 "$NODE_DB" 'SELECT job_id, refused FROM outbox')"

# ---- upstream_content = figures: the fleet figures alone -------------------------------------
stop_central
start_central
start_node upstream_content=figures
on "$NODE"
wait_ready
grep -q 'msg=pusher_started .* content=figures' "$NODE_LOG" || fail "the pusher does not say it sends figures"
node_job 1
FIG_JOB=$JOB_ID
on "$NODE"
wait_for "the figures delivered" 20 '.pending == 0' /api/v1/upstream
grep -q "msg=push job=$FIG_JOB kind=suite-standin device=$GPU1 status=200" "$NODE_LOG" ||
    fail "the figures' push is not logged"
pushed=$(grep "msg=push job=$FIG_JOB " "$NODE_LOG" | grep -o 'bytes=[0-9]*' | cut -d= -f2)
full=$(stat -c %s "$WORK/node-a.json")
[ "$pushed" -lt $((full / 5)) ] || fail "a figures push of $pushed bytes, the whole result's bundle is $full"
on "$CENTRAL"
req GET "/api/v1/jobs?device=$GPU1&state=succeeded&kind=fleet-figures"
assert_status 200
assert_json '.jobs | length' 1
fig_id=$(json '.jobs[0].id')
req GET "/api/v1/jobs/$fig_id"
assert_true '.result.probe == "fleet-figures" and .result.kind == "suite-standin" and (.result.figures | length) > 100'
nfig=$(json '.result.figures | length')
req GET /api/v1/fleet
assert_json "[.devices[] | select(.uuid == \"$GPU1\") | [.host, .figures]]" "[[\"node-a\",$nfig]]"
stop_node

# ---- the command line: probe --device all --push, and push ----------------------------------
stop_central
start_central
cli() { RC=0; GPUPROBE_STANDIN_GPUS=${STANDINS:-1} as_host "$1" "${@:2}" >cli.out 2>cli.err || RC=$?; }
cli cli-node "$GPUPROBE" probe suite-standin --device all --compact --push "$CENTRAL" \
    --token-file "$UP_TOKEN_FILE" --db cli.db
[ "$RC" = 0 ] || fail "probe --push exited $RC: $(cat cli.err)"
grep -q 'result(s) acknowledged by' cli.err || fail "probe --push said: $(cat cli.err)"
on "$CENTRAL"
req GET /api/v1/devices
assert_json '[.devices[] | select(.host == "cli-node") | .name]' '["NVIDIA H200 (stand-in)"]'
[ "$(sqlite3 cli.db 'SELECT count(*) FROM outbox')" = 0 ] || fail "acknowledged rows stayed in cli.db"
# the figures alone from the command line
cli cli-node-f "$GPUPROBE" probe suite-standin --device all --compact --push "$CENTRAL" \
    --token-file "$UP_TOKEN_FILE" --content figures
[ "$RC" = 0 ] || fail "probe --push --content figures exited $RC: $(cat cli.err)"
on "$CENTRAL"
req GET /api/v1/fleet
assert_json '[.devices[] | select(.host == "cli-node-f") | .figures > 100]' '[true]'
# bad usage
cli cli-node "$GPUPROBE" probe suite-standin --device all --push "$CENTRAL"
[ "$RC" = 2 ] || fail "--push without --token-file exited $RC"
cli cli-node "$GPUPROBE" probe suite-standin --device all --push "$CENTRAL" --token-file "$UP_TOKEN_FILE" --content some
[ "$RC" = 2 ] && grep -q "expected full or figures, got 'some'" cli.err || fail "--content some exited $RC: $(cat cli.err)"
# the central down: not acknowledged, exit 1 with one line, kept in --db's outbox
stop_central
STANDINS=2 cli cli-node-2 "$GPUPROBE" probe suite-standin --device all --compact --push "$CENTRAL" \
    --token-file "$UP_TOKEN_FILE" --db cli2.db --tries 2
[ "$RC" = 1 ] || fail "probe --push with the central down exited $RC"
[ "$(grep -c 'gpuprobe probe: ' cli.err)" -ge 1 ] && grep -q '2 of 2 result(s) not acknowledged' cli.err ||
    fail "probe --push with the central down said: $(cat cli.err)"
[ "$(sqlite3 cli2.db 'SELECT count(*) || "," || sum(attempts) FROM outbox WHERE refused = 0')" = 2,4 ] ||
    fail "cli2.db's outbox: $(sqlite3 cli2.db 'SELECT * FROM outbox')"
start_central
RC=0
"$GPUPROBE" push --db cli2.db --upstream "$CENTRAL" --token-file "$UP_TOKEN_FILE" >cli.out 2>cli.err || RC=$?
[ "$RC" = 0 ] || fail "push exited $RC: $(cat cli.err)"
assert_match "$(jq -c '[.acknowledged, .refused, .left]' cli.out)" '^\[2,0,0\]$' "push's counts"
on "$CENTRAL"
req GET /api/v1/devices
assert_json '[.devices[] | select(.host == "cli-node-2")] | length' 2
stop_central

# ---- the upstream token file read as the central reads its own ----------------------------------
# (a comment above the token and spaces after it were sent as part of it: 403 for ever)
start_central
printf '# the central'"'"'s write token\n\n%s   \n' "$TOKEN" >"$WORK/commented-token"
cli cli-node-3 "$GPUPROBE" probe suite-standin --device all --compact --push "$CENTRAL" \
    --token-file "$WORK/commented-token" --db cli3.db
[ "$RC" = 0 ] || fail "probe --push with a commented token file exited $RC: $(cat cli.err)"
stop_central

# ---- a 200 that is not an import's answer delivers nothing ------------------------------------
# (a reverse proxy's or a web server's page on the upstream's address: the rows were deleted as
# acknowledged)
python3 - "$WORK/fake.port" <<'PY' &
import http.server, sys
class Page(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"<html>welcome to the proxy</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Page)
open(sys.argv[1] + ".tmp", "w").write(str(server.server_port))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
PY
FAKE_PID=$!
trap 'kill "$FAKE_PID" 2>/dev/null || true; both_cleanup' EXIT # (errexit holds in a trap too)
for _ in $(seq 50); do [ -s "$WORK/fake.port" ] && break; sleep 0.1; done
[ -s "$WORK/fake.port" ] || fail "the stand-in web server did not start"
cli cli-node-4 "$GPUPROBE" probe suite-standin --device all --compact \
    --push "http://127.0.0.1:$(cat "$WORK/fake.port")" --token-file "$UP_TOKEN_FILE" --db cli4.db --tries 2
[ "$RC" = 1 ] && grep -q '1 of 1 result(s) not acknowledged' cli.err ||
    fail "probe --push to a web page exited $RC: $(cat cli.err)"
grep -q 'HTTP 200: <html>welcome to the proxy' cli.err || fail "the page is not named: $(cat cli.err)"
[ "$(sqlite3 cli4.db 'SELECT count(*) FROM outbox WHERE refused = 0')" = 1 ] ||
    fail "cli4.db's outbox: $(sqlite3 cli4.db 'SELECT * FROM outbox')"
