#!/usr/bin/env bash
# Proves a worker that crashes, prints garbage, exits badly, hangs past its deadline or answers too much fails the job with the reason, and the daemon carries on.
. "$(dirname "$0")/lib.sh"

# fails_with PARAMS REGEX [TIMEOUT_S [TOP-LEVEL JSON]]: the job fails with an error matching REGEX.
fails_with() {
    submit "{\"kind\":\"test\",\"params\":$1${4:+,$4}}"
    wait_job_state "$JOB_ID" failed "${3:-15}"
    assert_true "(.error | type) == \"string\" and (.error | test(\"$2\"; \"i\"))"
    assert_json .result null
    assert_json .attempt 1
    assert_json '.events[-1].state' failed
    assert_true '.finished_at != null'
    req GET /healthz
    assert_status 200
    req GET "/api/v1/jobs/$JOB_ID"
}

start_daemon
wait_ready

fails_with '{"mode":"crash"}' 'SIGSEGV|signal 11'
fails_with '{"mode":"garbage"}' 'json|invalid'
fails_with '{"mode":"exit","exit_code":3}' 'exit[a-z ]*3'
fails_with '{"mode":"exit","exit_code":0}' 'json|invalid|result|empty|output'

# A hang is killed at its deadline: failed within about 5 s of submission.
t0=$(now_ms)
fails_with '{"mode":"hang"}' 'deadline' 8 '"timeout_s":2'
took=$(($(now_ms) - t0))
[ "$took" -ge 1900 ] || fail "hang job failed after $took ms, before its 2 s deadline"
[ "$took" -le 5000 ] || fail "hang job took $took ms to fail, expected at most 5 s"
assert_true '.error | test("2 ?s")'

# An oversized result ends the job one way or the other, with a reason if it fails.
submit '{"kind":"test","params":{"mode":"big"}}'
big=$JOB_ID
deadline=$((SECONDS + 30))
while req GET "/api/v1/jobs/$big" && [[ "$(json .state)" =~ ^(queued|running)$ ]]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "big-result job not finished after 30 s: ${BODY:0:300}"
    sleep 0.2
done
case "$(json .state)" in
    succeeded) assert_json '.result.blob | length' $((2 * 1024 * 1024)) ;;
    failed) assert_true '(.error | length) > 0' ;;
    *) fail "big-result job ended $(json .state)" ;;
esac
req GET /healthz
assert_status 200

# Still healthy: an ordinary job succeeds.
submit '{"kind":"test","params":{"echo":"after"}}'
wait_job_state "$JOB_ID" succeeded 15
assert_json .result.echo after

# Every worker was reaped: nothing is left under the daemon, not even a zombie.
sleep 0.3
left=$(ps -o pid=,stat=,args= --ppid "$DAEMON_PID" || true)
[ -z "$left" ] || fail "processes left under the daemon after all jobs ended: $left"
stop_daemon
