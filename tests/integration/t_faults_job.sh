#!/usr/bin/env bash
# Proves a job survives a store that cannot write at any point of its life: the Nth write (then the Nth fsync) after the daemon is ready fails and every later one until space returns, for every N along submit, start, events and result; the daemon stays up, /readyz is 503 meanwhile, and then the job succeeds with its real result (or its submission was refused with 503 and no job exists), integrity_check is ok.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

job_done() {
    req GET "/api/v1/jobs/$ID"
    [ "$STATUS" = 200 ] && [ "$(json .state)" = succeeded ]
}
no_job() { false; }

# one_job OP N: a job's whole life with OP's Nth call failing.
one_job() {
    fault_start "$1" "$2"
    local echo="life-$1-$2"
    req POST /api/v1/jobs "{\"kind\":\"test\",\"params\":{\"echo\":\"$echo\"}}"
    if [ "$STATUS" = 202 ]; then
        ID=$(json .id)
        fault_wait_met job_done
        if [ "$MET" = 1 ]; then # while the disk is full the job is kept, never failed
            req GET "/api/v1/jobs/$ID"
            assert_status 200
            assert_true '.state == "queued" or .state == "running"'
        fi
        fault_space_returns
        wait_job_state "$ID" succeeded 20
        assert_json .result.echo "$echo"
        SUBMITTED=$((SUBMITTED + 1))
    else
        assert_problem 503 unavailable # the submission itself met the full disk
        fault_wait_met no_job
        fault_space_returns
    fi
    fault_finish
    req_count=$(sqlite3 "$DB" 'SELECT count(*) FROM jobs')
    [ "$req_count" = "$SUBMITTED" ] || fail "$RUN_NAME: $req_count jobs stored, $SUBMITTED accepted"
}

SUBMITTED=0
fault_loop write one_job
fault_loop sync one_job

# DELETE of a job whose result waits for the store takes effect once the
# store can write again: the kept result becomes the cancellation.
# Where the result's writes fall: the last of the life's writes (counted
# by a run without a fault).
RUN_NAME=count
fault_start write 100000
submit '{"kind":"test","params":{"mode":"sleep","seconds":1,"echo":"counted"}}'
wait_job_state "$JOB_ID" succeeded 20
fault_finish
writes=$(grep -o 'msg=fault_injection_summary.*' "$WORK/daemon.$STARTS.log" | grep -o 'writes=[0-9]*' | cut -d= -f2)
RUN_NAME=delete
fault_start write "$writes"
submit '{"kind":"test","params":{"mode":"sleep","seconds":1,"echo":"kept"}}'
id=$JOB_ID
fault_wait_met false
[ "$MET" = 1 ] || fail "the result's write (write $writes) did not fail"
req GET "/api/v1/jobs/$id"
assert_json .state running
sleep 3 # the retries back off (100 ms doubling up to 5 s)
req DELETE "/api/v1/jobs/$id"
assert_problem 503 unavailable # nothing can be recorded while the disk is full
rm -f "$FULL"
req DELETE "/api/v1/jobs/$id"
if [ "$STATUS" = 202 ]; then
    wait_job_state "$id" cancelled 20
else # the retry stored the result first: then the job is done
    req GET "/api/v1/jobs/$id"
    assert_json .state succeeded
fi
assert_true '.state != "running"'
wait_ready
fault_finish
