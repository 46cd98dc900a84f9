#!/usr/bin/env bash
# Proves SIGTERM stops gracefully: running jobs finish within stop_grace_s; an in-flight synchronous sort (even one whose job still waited for a worker) gets its full reply; past the grace a job is re-queued without counting the attempt, so a job stopped three times still runs and succeeds; the daemon exits 0 and its workers are gone.
. "$(dirname "$0")/lib.sh"

SAMPLE=$REPO/tests/fixtures/traces/sample.csv

# waited_sort NAME: POSTs the sample to /api/v1/traces/sort in the
# background, its client waiting (answer in $WORK/NAME.out, status in
# $WORK/NAME.status); returns once its job is queued, CURL_PID set.
waited_sort() {
    curl -sS -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: text/csv' \
        --data-binary "@$SAMPLE" -o "$WORK/$1.out" -w '%{http_code}' --max-time 60 \
        "$BASE_URL/api/v1/traces/sort?sms=2" >"$WORK/$1.status" 2>"$WORK/$1.err" &
    CURL_PID=$!
    local deadline=$((SECONDS + 10))
    until [ "$(sqlite3 "$DB" "SELECT count(*) FROM jobs WHERE kind = 'trace-sort' AND state = 'queued'")" -gt 0 ]; do
        [ "$SECONDS" -ge "$deadline" ] && fail "the $1 sort never reached the queue"
        sleep 0.05
    done
}

# 1. Within the grace: the running job finishes before the daemon exits.
write_config cpu_workers=1 stop_grace_s=20
start_daemon --config "$CONFIG"
wait_ready
submit '{"kind":"test","params":{"mode":"sleep","seconds":2,"echo":"finished"}}'
id=$JOB_ID
wait_job_state "$id" running 10
t0=$(now_ms)
stop_daemon
took=$(($(now_ms) - t0))
[ "$took" -le 10000 ] || fail "the stop took $took ms for a 2 s job"
[ "$(sqlite3 "$DB" "SELECT state || ' ' || attempt FROM jobs WHERE id = $id")" = "succeeded 1" ] ||
    fail "the job running at SIGTERM did not finish within the grace: $(sqlite3 "$DB" "SELECT state, attempt, error FROM jobs WHERE id = $id")"

# 2. A synchronous sort in flight at SIGTERM gets its whole answer, though
# its job waits behind another for the only CPU worker.
start_daemon --config "$CONFIG"
wait_ready
REQ_CONTENT_TYPE=text/csv REQ_BODY_FILE=$SAMPLE req POST "/api/v1/traces/sort?sms=2"
assert_status 200
cp "$WORK/.req.out" "$WORK/expected.csv"
submit '{"kind":"test","params":{"mode":"sleep","seconds":2}}'
blocker=$JOB_ID
wait_job_state "$blocker" running 10
waited_sort second
stop_daemon
wait "$CURL_PID" || fail "the sort in flight at SIGTERM failed: $(cat "$WORK/second.err")"
[ "$(cat "$WORK/second.status")" = 200 ] || fail "the sort in flight at SIGTERM answered $(cat "$WORK/second.status"): $(head -c 300 "$WORK/second.out")"
cmp -s "$WORK/second.out" "$WORK/expected.csv" || fail "the sort in flight at SIGTERM answered a different trace"
[ "$(sqlite3 "$DB" "SELECT state FROM jobs WHERE id = $blocker")" = succeeded ] || fail "the blocking job did not finish within the grace"

# 3. Past the grace the job goes back to the queue, its attempt not counted:
# three stops later it still runs, and succeeds.
write_config cpu_workers=1 stop_grace_s=0
start_daemon --config "$CONFIG"
wait_ready
submit '{"kind":"test","params":{"mode":"sleep","seconds":3,"echo":"survivor"}}'
id=$JOB_ID
for _ in 1 2 3; do
    wait_job_state "$id" running 10
    workers=$(descendants "$DAEMON_PID" | tr '\n' ' ')
    t0=$(now_ms)
    stop_daemon
    took=$(($(now_ms) - t0))
    [ "$took" -le 3000 ] || fail "the daemon took $took ms to stop with stop_grace_s = 0"
    wait_pids_gone "$workers" 1
    [ "$(sqlite3 "$DB" "SELECT state || ' ' || attempt FROM jobs WHERE id = $id")" = "queued 0" ] ||
        fail "a stopped job should be queued with no attempt counted: $(sqlite3 "$DB" "SELECT state, attempt FROM jobs WHERE id = $id")"
    start_daemon --config "$CONFIG"
done
wait_job_state "$id" succeeded 20
assert_json .attempt 1
assert_json .result.echo survivor
assert_json '[.events[].state]' '["queued","running","queued","running","queued","running","queued","running","succeeded"]'
assert_true '.events[2].message | test("not counted")'
stop_daemon

# 4. A client still waiting on its sort when the grace ends is answered 202
# with the job, not held until the job ends (or the 600 s wait): the daemon
# stops within the grace and a moment, the jobs go back to the queue, and
# after a restart the sort runs and its output is served.
write_config cpu_workers=1 stop_grace_s=2
start_daemon --config "$CONFIG"
wait_ready
submit '{"kind":"test","params":{"mode":"sleep","seconds":60}}'
blocker=$JOB_ID
wait_job_state "$blocker" running 10
waited_sort waited
sort_id=$(sqlite3 "$DB" "SELECT max(id) FROM jobs WHERE kind = 'trace-sort'")
t0=$(now_ms)
stop_daemon
took=$(($(now_ms) - t0))
[ "$took" -le 8000 ] || fail "the daemon took $took ms to stop with stop_grace_s = 2 and a client waiting"
wait "$CURL_PID" || fail "the waiting client got no answer: $(cat "$WORK/waited.err")"
[ "$(cat "$WORK/waited.status")" = 202 ] ||
    fail "the waiting client got $(cat "$WORK/waited.status"), not 202: $(head -c 300 "$WORK/waited.out")"
[ "$(jq -r .id "$WORK/waited.out")" = "$sort_id" ] || fail "the 202 does not name the sort job: $(head -c 300 "$WORK/waited.out")"
[ "$(sqlite3 "$DB" "SELECT state || ' ' || attempt FROM jobs WHERE id = $blocker")" = "queued 0" ] ||
    fail "the running job was not stopped and re-queued: $(sqlite3 "$DB" "SELECT state, attempt FROM jobs WHERE id = $blocker")"
start_daemon --config "$CONFIG"
wait_ready
req DELETE "/api/v1/jobs/$blocker"
wait_job_state "$sort_id" succeeded 30
req GET "/api/v1/jobs/$sort_id/output"
assert_status 200
stop_daemon
