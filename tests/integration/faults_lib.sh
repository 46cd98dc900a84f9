# Helpers of the fault-injection loops (t_faults_job.sh, t_faults_sort.sh),
# sourced after lib.sh. One run = the real daemon started with the store
# behind the fault-injecting VFS (GPUPROBE_FAULT_VFS, test builds only:
# db/fault_vfs.h), armed when the daemon is ready, so that the Nth write (or
# sync) of the work that follows fails, and every later one while $FULL
# exists: the disk is full until the test removes $FULL ("space returns").
# A loop runs N = 1, 1 + STRIDE, ... until a run whose fault was never met
# (the work did fewer writes than N): so every write of the work's life is
# made to fail in turn, and the loop's length follows the code, not a guess.
# After each run: the daemon stayed alive, /readyz said not ready while the
# store could not write and ready once it could, the work reached its
# defined end, the daemon stopped with status 0, integrity_check is ok and
# upload_dir holds nothing.

FULL=$WORK/disk-full
UPLOADS=$WORK/uploads
# the sanitizer build is several times slower: every FAULT_STRIDE-th write there
if [ -z "${FAULT_STRIDE-}" ]; then
    case "$GPUPROBE" in */asan/*) FAULT_STRIDE=5 ;; *) FAULT_STRIDE=1 ;; esac
fi
write_config cpu_workers=1 stop_grace_s=10 upload_dir="$UPLOADS"
mkdir -p "$UPLOADS"

# quick_get PATH: GET with a 2 s limit, setting STATUS and BODY like req. A
# synchronous sort blocks the HTTP thread that serves it until its job ends,
# and a connection that thread accepted just before waits with it: a short
# limit and a new connection (served by another thread) keep the polls
# going. (The wait is the transport's, a finding of the server's hardening.)
quick_get() {
    REQ_METHOD=GET REQ_PATH=$1
    HEADERS=$WORK/.quick.headers
    STATUS=$(curl -sS --max-time 2 -D "$HEADERS" -o "$WORK/.quick.out" -w '%{http_code}' \
        "$BASE_URL$1" 2>/dev/null) || STATUS=000
    BODY=$(cat "$WORK/.quick.out" 2>/dev/null || true)
}

# fault_start OP N: the daemon with OP's Nth call failing from the moment it is ready.
fault_start() {
    touch "$FULL"
    GPUPROBE_FAULT_VFS="$1:$2:$FULL" start_daemon --config "$CONFIG"
    local deadline=$((SECONDS + 20))
    until grep -q 'msg=fault_injection_armed' "$LOG"; do
        [ "$SECONDS" -ge "$deadline" ] && fail "the fault was not armed within 20 s"
        kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon exited before arming its fault"
        sleep 0.05
    done
}

# fault_wait_met DONE_CMD: polls until /readyz says the store cannot write
# (sets MET=1) or DONE_CMD succeeds (the work ended without meeting a
# failure it could see; MET=0), at most 10 s. While the store cannot write,
# /readyz must be a 503 problem that says so, and /healthz must answer.
fault_wait_met() {
    local deadline=$((SECONDS + 10))
    local done
    MET=0
    while [ "$SECONDS" -lt "$deadline" ]; do
        done=0
        $1 && done=1 # before /readyz: a failure met on the way to done is seen
        quick_get /readyz
        if [ "$STATUS" = 503 ]; then
            assert_problem 503 unavailable
            assert_json .store cannot-write
            assert_true '(.store_error | length) > 0'
            until quick_get /healthz && [ "$STATUS" != 000 ]; do
                [ "$SECONDS" -lt "$deadline" ] || fail "/healthz did not answer while the store could not write"
            done
            assert_status 200
            MET=1
            return 0
        fi
        [ "$done" = 1 ] && return 0
        sleep 0.05
    done
}

# fault_space_returns: removes $FULL; the store must write again and /readyz
# say ready (the scheduler probes or retries at most every 5 s).
fault_space_returns() {
    rm -f "$FULL"
    wait_ready
    assert_json .store ok
}

# fault_finish: stops the daemon (status 0) and checks what it left; sets
# INJECTED to the faults the run met, from the daemon's summary line.
fault_finish() {
    local log=$LOG
    stop_daemon
    INJECTED=$(grep -o 'msg=fault_injection_summary injected=[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    [ -n "$INJECTED" ] || fail "no fault_injection_summary line in $log"
    local check
    check=$(sqlite3 "$DB" 'PRAGMA integrity_check')
    [ "$check" = ok ] || fail "integrity_check after $RUN_NAME: $check"
    uploads_hold ""
    local running
    running=$(sqlite3 "$DB" "SELECT count(*) FROM jobs WHERE state = 'running'")
    [ "$running" = 0 ] || fail "$RUN_NAME left $running job(s) running after an orderly stop"
}

# fault_loop OP RUN_FN: RUN_FN N runs the work once with OP's Nth call
# failing; loops as described at the top. Sets RUNS to the runs made.
fault_loop() {
    local op=$1 fn=$2 n=1
    RUNS=0
    while :; do
        RUN_NAME="$op:$n"
        "$fn" "$op" "$n"
        RUNS=$((RUNS + 1))
        [ "$INJECTED" -gt 0 ] || break
        n=$((n + FAULT_STRIDE))
        [ "$n" -le 400 ] || fail "$op: still meeting faults at N=$n; the loop does not end"
    done
    [ "$RUNS" -ge 2 ] || fail "$op: the first run met no fault: the work wrote nothing?"
    echo "$op: $RUNS runs (N up to $n, stride $FAULT_STRIDE)"
}
