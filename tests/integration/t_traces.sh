#!/usr/bin/env bash
# Proves trace sorting end to end: an output that cannot be written (/dev/full, a full tmpfs) named with the reason by convert as by sort; an unknown trace command refused with every command named; `gpuprobe trace convert` and `trace sort` on the committed fixtures (round trips, the summary, a bad CSV line, an OUT named *.bin written binary unless --out-format says otherwise), POST /api/v1/traces/sort answered at once (CSV and binary, equal to the CLI's output, the summary header), bad records and arguments (400 with line/offset or the argument, nothing left in upload_dir), every sort a job (the failed one with error_class/line/offset), a waiting sort queued behind a busy CPU slot like any CPU job, the job path with a small trace_sync_limit (202, the job, its output equal to the synchronous answer, the input removed, a failed job keeping nothing), 401, 413, and that the internal trace-sort kind cannot be submitted to /api/v1/jobs.
. "$(dirname "$0")/lib.sh"

FIX=$REPO/tests/fixtures/traces
UPLOADS=$WORK/uploads

# cli ARGS...: gpuprobe trace ARGS; sets RC (stdout in cli.out, stderr in cli.err).
cli() {
    RC=0
    timeout 30 "$GPUPROBE" trace "$@" >cli.out 2>cli.err || RC=$?
}
cli_ok() {
    cli "$@"
    [ "$RC" -eq 0 ] || fail "gpuprobe trace $* exited $RC: $(head -c 400 cli.err)"
}
same() { cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"; }

# sort_http QUERY FILE [TOKEN]: POSTs FILE to /api/v1/traces/sort?QUERY; sets
# STATUS, HEADERS, BODY (text, NULs dropped) and leaves the body in http.out.
sort_http() {
    local token=${3-$TOKEN}
    local -a args=(-sS -o "$WORK/http.out" -D "$WORK/http.headers" -w '%{http_code}' --max-time 60
                   -H 'Content-Type: text/csv' --data-binary "@$2")
    [ -n "$token" ] && args+=(-H "Authorization: Bearer $token")
    REQ_METHOD=POST REQ_PATH="/api/v1/traces/sort?$1"
    STATUS=$(curl "${args[@]}" "$BASE_URL$REQ_PATH" 2>"$WORK/http.err") || STATUS=000
    HEADERS=$WORK/http.headers
    BODY=$(head -c 8000 "$WORK/http.out" | tr -d '\000')
}


# ---- the CLI: convert round trips --------------------------------------------------------
cli_ok --help
assert_match "$(cat cli.out)" "--summary-json FILE" "trace --help"
assert_match "$(cat cli.out)" "--threads-per-block N" "trace --help"
# an unknown command, or none, is refused with every trace command named, and
# every command named is one (its --help answers)
cli foo
[ "$RC" -eq 2 ] || fail "trace foo exited $RC, expected 2"
named=$(sed -n "s/.*unknown command 'foo' (one of \([a-z, ]*\)).*/\1/p" cli.err)
[ "$named" = "sort, convert, synth, cache, capture" ] || fail "trace foo: $(cat cli.err)"
cli
[ "$RC" -eq 2 ] && grep -q "name a command: one of $named " cli.err || fail "trace with no command: exit $RC: $(cat cli.err)"
for c in ${named//,/}; do
    cli "$c" --help
    [ "$RC" -eq 0 ] || fail "trace $c --help, a command trace foo names, exited $RC: $(head -c 300 cli.err)"
done
cli --quiet synth
[ "$RC" -eq 2 ] && grep -q "trace synth takes its options after its name" cli.err || fail "trace --quiet synth: exit $RC: $(cat cli.err)"
cli_ok convert "$FIX/sample.csv" -o s.csv
[ "$(head -n1 s.csv)" = tid,pc,addr,width,dep,op ] || fail "convert to CSV: header $(head -n1 s.csv)"
[ "$(wc -l <s.csv)" -eq 15 ] || fail "convert to CSV: $(wc -l <s.csv) lines, expected 15"
cli_ok convert "$FIX/sample.csv" -o s.bin --out-format bin
[ "$(head -c 7 s.bin)" = GPTRACE ] || fail "convert to bin: no magic"
cli_ok convert s.bin -o s2.csv
same s.csv s2.csv "CSV -> binary -> CSV"
cli_ok convert "$FIX/nvbit_memtrace.txt" -o n.csv
cli_ok convert "$FIX/nvbit_memtrace.txt" -o n.bin --out-format bin
cli_ok convert n.bin -o n2.csv --in-format bin
same n.csv n2.csv "NVBit -> CSV against NVBit -> binary -> CSV"
[ "$(wc -l <n.csv)" -eq 321 ] || fail "NVBit: $(wc -l <n.csv) lines, expected 320 records + header"
# the fixture's STG.E (4 warps x 16 lanes) are the stores, through the binary form too
[ "$(grep -c ',st$' n.csv)" -eq 64 ] || fail "NVBit: $(grep -c ',st$' n.csv) stores, expected 64"
[ "$(grep -c ',st$' n2.csv)" -eq 64 ] || fail "NVBit -> binary -> CSV: the stores lost"
cli_ok convert "$FIX/kernel-1.trace" -o k.csv
cli_ok convert "$FIX/kernel-1.traceg" -o kg.csv
sort k.csv >k.sorted
sort kg.csv >kg.sorted
same k.sorted kg.sorted "the records of the two Accel-Sim layouts of one kernel (in any order)"
cli_ok convert "$FIX/sample.csv" -o - --out-format csv
same cli.out s.csv "convert to stdout"
# with no --out-format an OUT named *.bin is binary (it was CSV text in a .bin file); any other, CSV
cli_ok convert "$FIX/sample.csv" -o auto.bin
same auto.bin s.bin "convert -o X.bin without --out-format"
cli_ok convert "$FIX/sample.csv" -o auto.bin --out-format csv
same auto.bin s.csv "convert -o X.bin --out-format csv"
cli_ok sort "$FIX/sample.csv" -o sorted-auto.bin --quiet
[ "$(head -c 7 sorted-auto.bin)" = GPTRACE ] || fail "sort -o X.bin without --out-format: not binary"
cli_ok sort "$FIX/sample.csv" -o sorted-auto.out --quiet
[ "$(head -n1 sorted-auto.out)" = sm,seq,tid,pc,addr,width,dep,op ] || fail "sort -o X.out: not CSV"

# ---- the CLI: sort --------------------------------------------------------------------------
cli_ok sort "$FIX/sample.csv" -o sorted.csv --sms 4 --summary-json sum.json
[ "$(head -n1 sorted.csv)" = sm,seq,tid,pc,addr,width,dep,op ] || fail "sort: header $(head -n1 sorted.csv)"
assert_match "$(cat cli.err)" "requests in 14, out [0-9]+" "the summary on stderr"
out_lines=$(($(wc -l <sorted.csv) - 1))
BODY=$(cat sum.json)
assert_json .records_in 14
assert_json .requests_out "$out_lines"
assert_json .params.sms 4
assert_json '.sms | length' 4
assert_json .input_format csv
assert_json .output_bytes "$(stat -c %s sorted.csv)"
assert_true '.coalescing_ratio == .records_in / .requests_out'
assert_true '.stalls | keys == ["all_blocked_ticks","dependency_waits","max_in_flight","mshr_full_ticks"]'
assert_true '([.sms[].records_in] | add) == .records_in and ([.sms[].requests_out] | add) == .requests_out'
cli_ok sort s.bin -o sorted2.csv --sms 4 --quiet
same sorted.csv sorted2.csv "sorting the CSV and its binary form"
[ ! -s cli.err ] || fail "--quiet still printed: $(cat cli.err)"
# a CSV from a pipe (--in-format: nothing to detect from) is streamed; a folder is no trace
cli_ok sort <(cat "$FIX/sample.csv") --in-format csv -o sorted3.csv --sms 4 --quiet
same sorted.csv sorted3.csv "sorting the CSV from a pipe"
cli sort . -o dir.csv --quiet
[ "$RC" -eq 1 ] && grep -q "is a folder" cli.err || fail "a folder as the input: exit $RC: $(cat cli.err)"
# a summary that cannot be written fails the command before OUT is written;
# one that fails after the sort takes OUT with it; never both in one file
cli sort s.bin -o nosum.csv --quiet --summary-json no/such/dir/sum.json
[ "$RC" -eq 1 ] && [ ! -e nosum.csv ] && [ ! -e nosum.csv.part ] ||
    fail "a summary into a missing folder: exit $RC, OUT left: $(ls nosum.csv* 2>/dev/null)"
cli sort s.bin -o nosum.csv --quiet --summary-json /dev/full
[ "$RC" -eq 1 ] && [ ! -e nosum.csv ] || fail "a summary to /dev/full: exit $RC, OUT left: $(ls nosum.csv* 2>/dev/null)"
cli sort s.bin -o same.csv --quiet --summary-json same.csv
[ "$RC" -eq 2 ] && [ ! -e same.csv ] || fail "the summary and OUT in one file: exit $RC"
# an output that cannot be written is named with the system's reason, for
# convert as for sort: a full device (small inputs fail when the output is
# closed, larger ones while records are written), and a full file system,
# which keeps nothing of the output
"$GPUPROBE" trace synth --pattern stream --size 100000 -o big.bin --quiet || fail "trace synth big.bin"
cli_ok sort big.bin -o big.sorted --out-format bin --quiet
for args in "convert $FIX/sample.csv" "convert $FIX/sample.csv --out-format bin" "convert big.bin" \
    "convert big.bin --out-format bin" "convert big.sorted" "sort big.bin --quiet"; do
    # shellcheck disable=SC2086
    cli $args -o /dev/full
    [ "$RC" -eq 1 ] || fail "trace $args -o /dev/full exited $RC: $(cat cli.err)"
    assert_match "$(cat cli.err)" "^gpuprobe trace: writing /dev/full: .*No space left on device\$" "trace $args -o /dev/full"
done
if small_fs_usable; then
    for f in csv bin; do
        F=$f on_small_fs 64 '"$GPUPROBE" trace convert "$WORK/big.bin" -o "out.$F" 2>"$WORK/small.err"
            echo "status $?"; ls -A' >small.out || fail "on_small_fs: $(cat small.out)"
        [ "$(cat small.out)" = "status 1" ] || fail "convert to a full tmpfs ($f): not status 1 with nothing left: $(cat small.out)"
        assert_match "$(cat small.err)" "^gpuprobe trace: writing out\.$f\.part: .*No space left on device\$" "convert to a full tmpfs ($f)"
    done
fi
# an empty name is a usage error, for OUT as for the summary
cli sort s.bin -o '' --quiet
[ "$RC" -eq 2 ] || fail "-o '': exit $RC"
cli sort s.bin -o empty.csv --quiet --summary-json ''
[ "$RC" -eq 2 ] && [ ! -e empty.csv ] || fail "--summary-json '': exit $RC"
# Stopped while the output is written (SIGTERM here: a script's background
# job ignores SIGINT; Ctrl-C is handled alike): the process ends as killed
# and leaves no OUT.part (nor OUT)
"$GPUPROBE" trace synth --pattern stream --size 10000000 -o int.bin --quiet 2>/dev/null &
int_pid=$!
deadline=$((SECONDS + 20))
until [ -e int.bin.part ] || [ -e int.bin ] || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.01; done
[ -e int.bin.part ] || fail "trace synth made no int.bin.part in time"
kill -TERM "$int_pid"
int_rc=0
wait "$int_pid" || int_rc=$?
[ "$int_rc" -eq 143 ] || fail "a stopped synth exited $int_rc, not 143 (killed by SIGTERM)"
[ ! -e int.bin.part ] && [ ! -e int.bin ] || fail "a stopped synth left: $(ls int.bin* 2>/dev/null)"
cli_ok sort s.bin -o sorted.bin --sms 4 --out-format bin --quiet
cli_ok convert sorted.bin -o sorted3.csv
same sorted.csv sorted3.csv "the binary sorted output converted to CSV"
cli_ok sort "$FIX/kernel-1.trace" -o ks.csv --quiet
cli_ok sort "$FIX/kernel-1.traceg" -o kgs.csv --quiet
same ks.csv kgs.csv "sorting the two Accel-Sim layouts"
cli_ok sort "$FIX/kernel-1.trace" -o kf.csv --quiet --pc-flags "$FIX/pcflags.csv"
! cmp -s ks.csv kf.csv || fail "--pc-flags (0x40 dependent) changed nothing"
cli_ok sort "$FIX/sample.csv" -o - --quiet --arch volta --seed 9
[ "$(head -n1 cli.out)" = sm,seq,tid,pc,addr,width,dep,op ] || fail "sort -o -: $(head -n1 cli.out)"
ls ./*.part >/dev/null 2>&1 && fail "a .part file was left: $(ls ./*.part)"

# A bad line: status 1, its line and offset, and no output at all.
printf 'tid,pc,addr,width,dep\n0,0x40,0x100,4,1\n1,0x40,0x104,3,1\n' >bad.csv
cli sort bad.csv -o bad.out
[ "$RC" -eq 1 ] || fail "a bad CSV exited $RC, expected 1"
assert_match "$(cat cli.err)" "^gpuprobe trace: bad\.csv: line 3 \(byte offset 39\): width" "the bad CSV's reason"
[ ! -e bad.out ] && [ ! -e bad.out.part ] || fail "output left after a bad input"
cli convert bad.csv -o bad.out
[ "$RC" -eq 1 ] && [ ! -e bad.out ] || fail "convert of a bad CSV: status $RC, output kept?"
assert_match "$(cat cli.err)" "line 3" "convert's reason"
cli sort "$FIX/sample.csv" -o x.csv --line 100
[ "$RC" -eq 2 ] || fail "--line 100 exited $RC, expected 2"
assert_match "$(cat cli.err)" "--line: must be a power of two" "the reason for --line 100"
cli convert "$FIX/sample.csv" -o x.csv --sms 2
[ "$RC" -eq 2 ] || fail "convert --sms exited $RC, expected 2"

# ---- the daemon: sorting while the client waits --------------------------------------------
# (once discovery is done: a sort posted before is queued, 202, by design; t_health)
start_daemon
wait_ready
sort_http "sms=4" "$FIX/sample.csv"
assert_status 200
[[ "$(header content-type)" == text/csv* ]] || fail "Content-Type: $(header content-type)"
same http.out sorted.csv "the HTTP answer and the CLI's output"
BODY=$(header gpuprobe-summary)
assert_json .records_in 14
assert_json .requests_out "$out_lines"
assert_json .params.sms 4
assert_true 'has("sms") | not'
# The answer names its job, whose result holds the per-SM part too.
sync_job=$(header gpuprobe-job)
[[ "$sync_job" =~ ^[0-9]+$ ]] || fail "Gpuprobe-Job: '$sync_job'"
req GET "/api/v1/jobs/$sync_job"
assert_json .kind trace-sort
assert_json .state succeeded
assert_json .result.records_in 14
assert_json '.result.sms | length' 4
# Its output went once the answer was sent (the daemon removes it when the
# answer is complete, which may be a moment after curl has the last byte),
# and the job says there is none to fetch.
for _ in $(seq 50); do
    req GET "/api/v1/jobs/$sync_job"
    [ "$(json .output)" = null ] && break
    sleep 0.1
done
assert_json .output null
sort_http "sms=4&out-format=bin" "$FIX/sample.csv"
assert_status 200
[ "$(header content-type)" = application/octet-stream ] || fail "binary Content-Type: $(header content-type)"
same http.out sorted.bin "the binary HTTP answer and the CLI's binary output"
cli_ok sort "$FIX/nvbit_memtrace.txt" -o nv.csv --quiet --sms 2 --schedule gto --seed 7
sort_http "sms=2&schedule=gto&seed=7&in-format=nvbit" "$FIX/nvbit_memtrace.txt"
assert_status 200
same http.out nv.csv "NVBit sorted over HTTP and by the CLI"
cp http.out nv-sync.csv
uploads_hold ""

# A bad record: 400 with its line and offset; nothing kept.
sort_http "" bad.csv
assert_problem 400 invalid-trace
assert_json .line 3
assert_json .offset 39
assert_true '.detail | test("line 3 .byte offset 39.: width")'
uploads_hold ""
# ... and it was a job like any other, which keeps where the trace was wrong.
req GET '/api/v1/jobs?kind=trace-sort&state=failed&limit=1'
assert_status 200
assert_json '.jobs[0] | [.error_class, .error_line, .error_offset]' '["input",3,39]'
# A bad binary record: record 1 (at 128 + 32) gets width 3; only the offset applies.
cp s.bin badbin.bin
printf '\003' | dd of=badbin.bin bs=1 seek=184 conv=notrunc status=none
sort_http "" badbin.bin
assert_problem 400 invalid-trace
assert_json .offset 160
assert_true 'has("line") | not'
uploads_hold ""

# Bad arguments: 400 naming the argument, before anything runs.
for bad in "line=100:line" "bogus=1:bogus" "input=/etc/passwd:input" "output=x:output" \
           "threads-per-block=0:threads-per-block" "sms=many:sms" "out-format=xml:out-format" \
           "in-format=json:in-format" "seed=-1:seed" "sms=4&sms=8:sms" \
           "out-format=bin&out_format=csv:out_format" "sms=4%00junk:sms" "seed=1&x%00y=2:x%00y"; do
    sort_http "${bad%%:*}" "$FIX/sample.csv"
    assert_problem 400 invalid-request
    assert_field "${bad##*:}"
done
uploads_hold ""
: >empty.csv
sort_http "" empty.csv
assert_problem 400 invalid-request
sort_http "" "$FIX/sample.csv" ""
assert_problem 401 unauthorized
sort_http "" "$FIX/sample.csv" wrong-token
assert_problem 403 forbidden
uploads_hold ""

# The kind is internal: listed as such, never submitted directly.
req GET /api/v1/job-kinds
assert_status 200
assert_json '.kinds[] | select(.name == "trace-sort") | [.internal, .needs_gpu]' '[true,false]'
assert_true '[.kinds[] | select(.name == "test") | .internal] == [false]'
req POST /api/v1/jobs '{"kind":"trace-sort","params":{"input":"x","output":"/etc/passwd"}}'
assert_problem 422 unknown-kind
assert_true '.detail | test("POST /api/v1/traces/sort")'
req POST /api/v1/jobs '{"kind":"nope"}'
assert_problem 422 unknown-kind
assert_true '.detail | test("trace-sort") | not'

# Only trace-sort jobs have an output.
submit '{"kind":"test"}'
wait_job_state "$JOB_ID" succeeded 15
assert_json .output null
req GET "/api/v1/jobs/$JOB_ID/output"
assert_problem 404 not-found
req GET /api/v1/jobs/999999/output
assert_problem 404 not-found
req GET /api/v1/jobs/x/output
assert_problem 400 invalid-request
stop_daemon

# ---- the daemon: the job path ----------------------------------------------------------------
write_config trace_sync_limit=1024 upload_limit=16384
start_daemon --config "$CONFIG"
wait_ready
[ "$(stat -c %s "$FIX/nvbit_memtrace.txt")" -gt 1024 ] || fail "the NVBit fixture is too small for the job path"
sort_http "sms=2&schedule=gto&seed=7&in-format=nvbit" "$FIX/nvbit_memtrace.txt"
assert_status 202
assert_json .kind trace-sort
assert_json .params.sms 2
assert_true '.params.input | test("^trace-[A-Za-z0-9]{6}\\.in$")'
id=$(json .id)
[ "$(header location)" = "/api/v1/jobs/$id" ] || fail "Location: $(header location)"
wait_job_state "$id" succeeded 30
assert_json .result.records_in 320
assert_json .result.input_format nvbit
assert_json .output "/api/v1/jobs/$id/output"
req GET "/api/v1/jobs/$id/output"
assert_status 200
same "$WORK/.req.out" nv-sync.csv "the job's output and the synchronous answer"
[ "$(header gpuprobe-job)" = "$id" ] || fail "output's Gpuprobe-Job: $(header gpuprobe-job)"
BODY=$(header gpuprobe-summary)
assert_json .records_in 320
uploads_hold "trace-$id.out"
# A small body is still answered at once.
sort_http "sms=4" "$FIX/sample.csv"
assert_status 200
same http.out sorted.csv "a small trace under a small trace_sync_limit"

# A bad large trace: the job fails with the line; nothing is kept.
{
    echo tid,pc,addr,width,dep
    for i in $(seq 0 99); do echo "$i,0x40,$((4096 + 4 * i)),4,1"; done
    echo 100,0x40,0x1000,3,1
} >bigbad.csv
sort_http "" bigbad.csv
assert_status 202
bad_id=$(json .id)
wait_job_state "$bad_id" failed 30
assert_true '.error | test("line 102 \\(byte offset [0-9]+\\): width")'
assert_json '[.error_class, .error_line]' '["input",102]'
req GET "/api/v1/jobs/$bad_id/output"
assert_problem 404 not-found
uploads_hold "trace-$id.out"

# Over upload_limit: 413, nothing stored.
head -c 20000 /dev/zero | tr '\0' 'x' >huge.csv
sort_http "" huge.csv
assert_problem 413 payload-too-large
uploads_hold "trace-$id.out"
stop_daemon

# ---- the daemon: a waiting sort takes a CPU slot like every CPU job -----------------------------
write_config cpu_workers=1
start_daemon --config "$CONFIG"
wait_ready
submit '{"kind":"test","params":{"mode":"sleep","seconds":2}}'
sleeper=$JOB_ID
wait_job_state "$sleeper" running 10
t0=$(now_ms)
sort_http "sms=4" "$FIX/sample.csv"
waited=$(($(now_ms) - t0))
assert_status 200
same http.out sorted.csv "a sort that waited for the CPU slot"
[ "$waited" -ge 1000 ] || fail "the sort answered in $waited ms while the only CPU slot was busy"
req GET "/api/v1/jobs/$sleeper"
assert_json .state succeeded
req GET '/api/v1/jobs?kind=trace-sort&limit=1'
assert_json '.jobs[0].state' succeeded
assert_true "(.jobs[0].id > $sleeper)"
uploads_hold "trace-$id.out"
stop_daemon

# A client that goes away while its synchronous sort's answer is still
# being sent has not received the sorted trace: the output is kept and
# served by GET /api/v1/jobs/{id}/output (it is removed only once a whole
# answer reached its client).
start_daemon
wait_ready
"$GPUPROBE" trace synth --pattern strided --size 200000 --stride 33 -o "$WORK/big.bin" --quiet
python3 - "$BASE_URL" "$TOKEN" "$WORK/big.bin" >"$WORK/gone.id" <<'PY'
import socket, sys, urllib.parse
url, token, path = sys.argv[1], sys.argv[2], sys.argv[3]
u = urllib.parse.urlparse(url)
body = open(path, "rb").read()
s = socket.create_connection((u.hostname, u.port))
s.sendall(("POST /api/v1/traces/sort?sms=4 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
           "Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % (token, len(body))).encode())
s.sendall(body)
head = b""
while b"\r\n\r\n" not in head:  # the status line and headers, then go away
    chunk = s.recv(4096)
    if not chunk:
        break
    head += chunk
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
s.close()  # a reset: the rest of the answer cannot be sent
lines = head.split(b"\r\n")
assert lines[0].split()[1] == b"200", lines[0]
print([l.split(b":", 1)[1].strip().decode() for l in lines if l.lower().startswith(b"gpuprobe-job:")][0])
PY
gone=$(cat "$WORK/gone.id")
[ -n "$gone" ] || fail "no Gpuprobe-Job header in the answer the client left"
sleep 1
req GET "/api/v1/jobs/$gone/output"
assert_status 200
[ "$(wc -c <"$WORK/.req.out")" -gt 1000000 ] || fail "the kept output is only $(wc -c <"$WORK/.req.out") bytes"
req GET "/api/v1/jobs/$gone/output" # a whole answer now reached a client: still kept (asked for by id)
assert_status 200
stop_daemon
