#!/usr/bin/env bash
# Proves a synchronous trace sort survives a store that cannot write at any point: the Nth write (then fsync) after the daemon is ready fails, and every later one until space returns, for every N along the sort's job; the waiting client then gets the full sorted trace (or a 503 when its job could not even be stored), the daemon stays up, /readyz is 503 meanwhile, and nothing is left in upload_dir.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

SAMPLE=$REPO/tests/fixtures/traces/sample.csv

# the sorted trace a store without faults answers, to compare with
start_daemon --config "$CONFIG"
wait_ready
REQ_CONTENT_TYPE=text/csv REQ_BODY_FILE=$SAMPLE req POST "/api/v1/traces/sort?sms=2"
assert_status 200
cp "$WORK/.req.out" "$WORK/expected.csv"
[ -s "$WORK/expected.csv" ] || fail "the sort without faults answered nothing"
stop_daemon

sort_done() { ! kill -0 "$CURL_PID" 2>/dev/null; }

# one_sort OP N: a synchronous sort with OP's Nth call failing.
one_sort() {
    fault_start "$1" "$2"
    curl -sS -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: text/csv' \
        --data-binary "@$SAMPLE" -o "$WORK/sorted.csv" -w '%{http_code}' --max-time 60 \
        "$BASE_URL/api/v1/traces/sort?sms=2" >"$WORK/sort.status" 2>"$WORK/sort.err" &
    CURL_PID=$!
    fault_wait_met sort_done
    fault_space_returns
    wait "$CURL_PID" || fail "$RUN_NAME: the sort request failed: $(cat "$WORK/sort.err")"
    local st
    st=$(cat "$WORK/sort.status")
    case "$st" in
    200) cmp -s "$WORK/sorted.csv" "$WORK/expected.csv" ||
             fail "$RUN_NAME: the sorted trace differs from the one without faults" ;;
    503) BODY=$(cat "$WORK/sorted.csv") # its job could not be stored: nothing ran
         [ "$MET" = 1 ] || fail "$RUN_NAME: 503 without a fault met: $BODY" ;;
    *) fail "$RUN_NAME: the sort answered $st: $(head -c 300 "$WORK/sorted.csv")" ;;
    esac
    fault_finish
}

fault_loop write one_sort
fault_loop sync one_sort
