#!/usr/bin/env bash
# Proves kill -9 loses nothing: workers die with the daemon, interrupted jobs are re-queued (then given up after 3 starts), the database stays intact, and the next start sweeps upload_dir of what no job will use (a crashed request's spool, outputs of jobs that are gone), keeping what jobs still need and files that are not the daemon's.
. "$(dirname "$0")/lib.sh"

# crash_while_running ID: waits for the job to run, kills the daemon with
# SIGKILL and checks that its worker processes died with it.
crash_while_running() {
    wait_job_state "$1" running 15
    local workers
    workers=$(descendants "$DAEMON_PID" | tr '\n' ' ')
    [ -n "$workers" ] || fail "job $1 runs but the daemon has no child process"
    kill9_daemon
    wait_pids_gone "$workers" 1
}

UPLOADS=$WORK/uploads
write_config cpu_workers=1 upload_dir="$UPLOADS"
start_daemon --config "$CONFIG"
wait_ready

ids=()
for _ in 1 2 3; do
    submit '{"kind":"test","params":{"mode":"sleep","seconds":2}}'
    ids+=("$JOB_ID")
done
submit '{"kind":"test","params":{"echo":"trace-Keep01.in"}}' # a queued job's parameter names it
ids+=("$JOB_ID")
first=${ids[0]}
crash_while_running "$first"

# what a crash leaves in upload_dir, and what must survive the sweep
mkdir -p "$UPLOADS"
head -c 42000 /dev/zero >"$UPLOADS/upload-Ab3dE9"      # a request's spooled body
echo partial >"$UPLOADS/trace-${ids[1]}.out.part"      # a worker's partial output
echo gone >"$UPLOADS/trace-9999.out"                   # the output of no job
echo orphan >"$UPLOADS/trace-q7Zk2a.in"                # an input no job names
echo mine >"$UPLOADS/notes.txt"                        # not the daemon's: kept
echo input >"$UPLOADS/trace-Keep01.in"                 # named by a queued job: kept

start_daemon --config "$CONFIG"
grep -q 'msg=uploads_swept.*removed=4' "$LOG" || fail "no uploads_swept line with removed=4: $(grep -m1 uploads_swept "$LOG" || echo none)"
uploads_hold "notes.txt trace-Keep01.in"
for id in "${ids[@]}"; do wait_job_state "$id" succeeded 30; done
req GET "/api/v1/jobs/$first"
assert_json .attempt 2
assert_json '[.events[].state]' '["queued","running","queued","running","succeeded"]'
assert_true '.events[2].message | length > 0'
assert_true '.events[2].message | test("queue|interrupt|restart|lost|crash|killed"; "i")'
for id in "${ids[@]:1}"; do
    req GET "/api/v1/jobs/$id"
    assert_json .attempt 1
done
req GET /api/v1/jobs
assert_json '.jobs | length' 4

# A job interrupted at each of its 3 starts fails, saying why.
submit '{"kind":"test","params":{"mode":"sleep","seconds":30}}'
doomed=$JOB_ID
for _ in 1 2 3; do
    crash_while_running "$doomed"
    start_daemon --config "$CONFIG"
done
wait_job_state "$doomed" failed 10
assert_json .attempt 3
assert_true '(.error | type) == "string" and (.error | test("attempt|gave up"; "i"))'
assert_json '[.events[].state]' '["queued","running","queued","running","queued","running","failed"]'
req GET /api/v1/jobs
assert_json '.jobs | length' 5
stop_daemon

check=$(sqlite3 "$DB" 'PRAGMA integrity_check')
[ "$check" = ok ] || fail "integrity_check: $check"
