#!/usr/bin/env bash
# Proves SIGTERM with a job running stops the daemon promptly with status 0, and the job runs again on restart.
. "$(dirname "$0")/lib.sh"

start_daemon
wait_ready
submit '{"kind":"test","params":{"mode":"sleep","seconds":4,"echo":"survivor"}}'
id=$JOB_ID
wait_job_state "$id" running 10
workers=$(descendants "$DAEMON_PID" | tr '\n' ' ')

t0=$(now_ms)
stop_daemon
took=$(($(now_ms) - t0))
[ "$took" -le 3000 ] || fail "the daemon took $took ms to stop; it should not wait for the 4 s job"
wait_pids_gone "$workers" 1

start_daemon
wait_job_state "$id" succeeded 20
assert_json .attempt 2
assert_json .result.echo survivor
assert_json '[.events[].state]' '["queued","running","queued","running","succeeded"]'
stop_daemon
