#!/usr/bin/env bash
# Proves a full disk under the daemon's own files is survived: the Nth whole write of each process (the daemon's spooled upload, the sort worker's output) fails with ENOSPC, and every later one until space returns, for every N along a synchronous sort; the client gets the sorted trace or a 507 problem that says why, the daemon stays up, the same sort succeeds once space returns, and nothing is left in upload_dir.
. "$(dirname "$0")/lib.sh"

FULL=$WORK/disk-full
UPLOADS=$WORK/uploads
SAMPLE=$REPO/tests/fixtures/traces/sample.csv
write_config cpu_workers=1 upload_dir="$UPLOADS"
mkdir -p "$UPLOADS"

sort_sample() {
    REQ_CONTENT_TYPE=text/csv REQ_BODY_FILE=$SAMPLE req POST "/api/v1/traces/sort?sms=2"
}

start_daemon --config "$CONFIG"
wait_ready
sort_sample
assert_status 200
cp "$WORK/.req.out" "$WORK/expected.csv"
stop_daemon

n=1
n507=0
while :; do
    touch "$FULL"
    GPUPROBE_FAULT_FILE="write:$n:$FULL" start_daemon --config "$CONFIG"
    wait_ready
    sort_sample
    first=$STATUS
    if [ "$first" != 200 ]; then
        # the upload's spool or the sort's output met the full disk: 507, saying so
        assert_problem 507 insufficient-storage
        assert_true '.detail | test("No space left on device")'
        n507=$((n507 + 1))
        req GET /healthz
        assert_status 200
    else
        cmp -s "$WORK/.req.out" "$WORK/expected.csv" || fail "write:$n: a 200 with a different trace"
    fi
    rm -f "$FULL" # space returns
    sort_sample
    assert_status 200
    cmp -s "$WORK/.req.out" "$WORK/expected.csv" || fail "write:$n: the sort after space returned differs"
    stop_daemon
    uploads_hold ""
    [ "$(sqlite3 "$DB" "SELECT count(*) FROM jobs WHERE state IN ('running', 'queued')")" = 0 ] ||
        fail "write:$n left a job queued or running"
    [ "$first" = 200 ] && break
    n=$((n + 1))
    [ "$n" -le 100 ] || fail "still failing at write $n"
done
[ "$n" -ge 2 ] || fail "the first write never failed: no fault was injected"
[ "$n507" -eq $((n - 1)) ] || fail "$((n - 1)) writes failed but $n507 answers were 507"
echo "file writes: $n runs, $n507 answered 507"
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
