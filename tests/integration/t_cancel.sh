#!/usr/bin/env bash
# Proves cancellation: a queued job at once (200), a running one by killing its process (202), a finished one refused (409).
. "$(dirname "$0")/lib.sh"

write_config cpu_workers=1
start_daemon --config "$CONFIG"
wait_ready

# One worker: the sleeper runs, the next job waits in the queue.
submit '{"kind":"test","params":{"mode":"sleep","seconds":60}}'
sleeper=$JOB_ID
wait_job_state "$sleeper" running 10
submit '{"kind":"test"}'
queued=$JOB_ID
sleep 0.5
req GET "/api/v1/jobs/$queued"
assert_json .state queued

req DELETE "/api/v1/jobs/$queued"
assert_status 200
assert_json .id "$queued"
assert_json .state cancelled
req GET "/api/v1/jobs/$queued"
assert_json .state cancelled
assert_json .started_at null
assert_json .attempt 0
assert_json '.events[-1].state' cancelled

# The running job: its worker process is killed.
workers=$(descendants "$DAEMON_PID" | tr '\n' ' ')
[ -n "$workers" ] || fail "the running job has no process under the daemon"
req DELETE "/api/v1/jobs/$sleeper"
assert_status 202
assert_json .state running
assert_json .cancel_requested true
wait_job_state "$sleeper" cancelled 3
assert_json '.events[-1].state' cancelled
assert_true '.finished_at != null'
wait_pids_gone "$workers" 2

# Finished jobs cannot be cancelled; unknown ones are not found.
for id in "$queued" "$sleeper"; do
    req DELETE "/api/v1/jobs/$id"
    assert_problem 409 conflict
done
submit '{"kind":"test"}'
done_id=$JOB_ID
wait_job_state "$done_id" succeeded 15
req DELETE "/api/v1/jobs/$done_id"
assert_problem 409 conflict
req GET "/api/v1/jobs/$done_id"
assert_json .state succeeded
req DELETE /api/v1/jobs/999999
assert_problem 404 not-found
stop_daemon
