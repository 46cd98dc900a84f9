# Helpers for the integration tests, sourced by every t_*.sh.
# run.sh sets GPUPROBE (absolute path of the binary), REPO (the source tree)
# and runs each test in a fresh directory, WORK, which is the current one.
set -euo pipefail

: "${GPUPROBE:?GPUPROBE must name the gpuprobe binary (use run.sh)}"
REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
WORK=${WORK:-$PWD}
DB=$WORK/gpuprobe.db
TOKEN=it-token-7f3a9c1e55d04b2e
TOKEN2=it-token-second-line
TOKEN_FILE=$WORK/tokens
CONFIG=$WORK/gpuprobe.conf
STARTS=0
DAEMON_PREFIX=()
DAEMON_PID=
BASE_URL=
LOG=

printf '%s\n%s\n' "$TOKEN" "$TOKEN2" >"$TOKEN_FILE"
chmod 600 "$TOKEN_FILE"

# ---- failing -------------------------------------------------------------

fail() {
    echo "FAIL: $*" >&2
    if [ -n "$LOG" ] && [ -s "$LOG" ]; then
        echo "--- last lines of the daemon log ($LOG):" >&2
        tail -n 15 "$LOG" >&2
    fi
    exit 1
}

# The last body for a failure message: long JSON strings shortened, at most 800 bytes.
brief_body() {
    local b
    b=$(printf '%s' "$BODY" | jq -c 'walk(if type == "string" and length > 100 then .[:60] + "...(\(length) chars)" else . end)' 2>/dev/null) || b=$BODY
    printf '%s' "${b:0:800}"
}

# The last request, for failure messages.
last_request() { printf '%s %s -> %s %s' "$REQ_METHOD" "$REQ_PATH" "$STATUS" "$(brief_body)"; }

cleanup() {
    if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
        kill -KILL "$DAEMON_PID" 2>/dev/null || true
        wait "$DAEMON_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# ---- processes -----------------------------------------------------------

# True if PID names a live process (a zombie is not alive).
pid_alive() {
    local st
    st=$(sed 's/.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# The PIDs of every descendant of PID, one a line.
descendants() {
    local c
    for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        echo "$c"
        descendants "$c"
    done
}

# Waits up to $2 seconds for every PID in $1 (space separated) to be gone.
wait_pids_gone() {
    local pids=$1 deadline=$((SECONDS + $2)) p left
    while :; do
        left=
        for p in $pids; do pid_alive "$p" && left="$left $p"; done
        [ -z "$left" ] && return 0
        [ "$SECONDS" -ge "$deadline" ] && fail "processes still alive after $2 s:$left ($(ps -o pid=,stat=,args= -p "${left# }" | tr '\n' ';'))"
        sleep 0.1
    done
}

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# ---- the daemon ----------------------------------------------------------

# start_daemon_args ARGS...: runs `gpuprobe serve --listen 127.0.0.1:0 ARGS...`
# and waits for its `msg=listening` line; sets DAEMON_PID, BASE_URL and LOG.
start_daemon_args() {
    # the reference data only where a test asks for it (WITH_REFERENCE=1):
    # the others count the devices and results they made themselves
    local reference=(--no-reference)
    [ "${WITH_REFERENCE:-0}" = 1 ] && reference=()
    STARTS=$((STARTS + 1))
    LOG=$WORK/daemon.$STARTS.log
    # DAEMON_PREFIX (an array, may be empty): what runs the daemon, such as a
    # namespace of its own; it must exec the daemon, so that $! is the daemon
    "${DAEMON_PREFIX[@]}" "$GPUPROBE" serve --listen 127.0.0.1:0 "${reference[@]}" "$@" 2>"$LOG" >>"$WORK/daemon.stdout" &
    DAEMON_PID=$!
    echo "$DAEMON_PID" >>"$WORK/daemon.pids"
    local deadline=$((SECONDS + 30)) addr=
    while [ -z "$addr" ]; do
        addr=$(grep -m1 'msg=listening' "$LOG" | grep -o 'addr=[0-9.]*:[0-9]*' | cut -d= -f2 || true)
        [ -n "$addr" ] && break
        kill -0 "$DAEMON_PID" 2>/dev/null || { wait "$DAEMON_PID" || true; DAEMON_PID=; fail "daemon exited before listening (args: $*)"; }
        [ "$SECONDS" -ge "$deadline" ] && fail "no msg=listening line with addr=IP:PORT within 30 s"
        sleep 0.05
    done
    BASE_URL=http://$addr
    export BASE_URL DAEMON_PID
}

# start_daemon [ARGS...]: the daemon on this test's database and token file.
start_daemon() { start_daemon_args --db "$DB" --token-file "$TOKEN_FILE" "$@"; }

# write_config KEY=VALUE...: writes $CONFIG in the daemon's `key = value` form.
write_config() {
    local kv
    echo "# written by $(basename "$0")" >"$CONFIG"
    for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}" >>"$CONFIG"; done
}

# Fails if the current daemon's log holds a sanitizer report.
check_log_clean() {
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$LOG"; then
        fail "sanitizer report in $LOG: $(grep -m1 -E 'Sanitizer|runtime error:' "$LOG")"
    fi
}

# stop_daemon: SIGTERM, then the daemon must exit 0 within 15 s.
stop_daemon() {
    local pid=$DAEMON_PID rc=0
    kill -TERM "$pid"
    (sleep 15; kill -KILL "$pid" 2>/dev/null) &
    local watchdog=$!
    wait "$pid" || rc=$?
    kill "$watchdog" 2>/dev/null || true
    wait "$watchdog" 2>/dev/null || true
    DAEMON_PID=
    [ "$rc" -eq 0 ] || fail "daemon exited with status $rc after SIGTERM (137: killed after 15 s)"
    check_log_clean
}

# kill9_daemon: kills the daemon with SIGKILL and reaps it.
kill9_daemon() {
    kill -KILL "$DAEMON_PID"
    wait "$DAEMON_PID" 2>/dev/null || true
    DAEMON_PID=
}

# ---- requests ------------------------------------------------------------

# req METHOD PATH [BODY] [TOKEN]: sets STATUS, BODY and HEADERS (a file).
# TOKEN defaults to the valid one; pass "" to send no Authorization header.
# REQ_CONTENT_TYPE (default application/json) is sent with a body;
# REQ_BODY_FILE, if set, is sent instead of BODY; REQ_CHUNKED=1 sends it chunked.
req() {
    REQ_METHOD=$1 REQ_PATH=$2
    local body=${3-} token=${4-$TOKEN} bodyfile=$WORK/.req.body
    local -a args=(-sS -X "$1" -D "$WORK/.req.headers" -o "$WORK/.req.out" -w '%{http_code}'
                   --max-time 30)
    [ -n "$token" ] && args+=(-H "Authorization: Bearer $token")
    if [ -n "${REQ_BODY_FILE-}" ]; then
        bodyfile=$REQ_BODY_FILE
    elif [ -n "$body" ]; then
        printf '%s' "$body" >"$bodyfile"
    else
        bodyfile=
    fi
    if [ -n "$bodyfile" ]; then
        args+=(-H "Content-Type: ${REQ_CONTENT_TYPE:-application/json}" --data-binary "@$bodyfile")
        [ "${REQ_CHUNKED:-0}" = 1 ] && args+=(-H 'Transfer-Encoding: chunked')
    fi
    : >"$WORK/.req.headers"
    : >"$WORK/.req.out"
    STATUS=$(curl "${args[@]}" "$BASE_URL$2" 2>"$WORK/.req.err") || true
    BODY=$(cat "$WORK/.req.out")
    HEADERS=$WORK/.req.headers
    if [ -z "$STATUS" ] || [ "$STATUS" = 000 ]; then
        STATUS=000
        BODY="(no answer: $(cat "$WORK/.req.err"))"
    fi
}

# header NAME: the value of a header of the last answer ("" if absent).
header() {
    tr -d '\r' <"$HEADERS" | awk -v n="$1" '
        { i = index($0, ":"); if (i && tolower(substr($0, 1, i - 1)) == tolower(n)) { v = substr($0, i + 1); sub(/^[ \t]+/, "", v) } }
        END { print v }'
}

# json EXPR: jq EXPR applied to the last body; strings raw, other values as JSON.
json() {
    printf '%s' "$BODY" | jq -r "($1)"' | if type == "string" then . else tojson end' 2>/dev/null ||
        fail "jq '$1' failed on: $(last_request)"
}

# ---- assertions ----------------------------------------------------------

assert_status() {
    [ "$STATUS" = "$1" ] || fail "expected HTTP $1, got $(last_request)"
}

# assert_json 'EXPR' EXPECTED: jq EXPR on the last body prints EXPECTED.
assert_json() {
    local got
    got=$(json "$1")
    [ "$got" = "$2" ] || fail "expected ($1) = $2, got $got; from $(last_request)"
}

# assert_true 'EXPR': jq EXPR on the last body is true.
assert_true() { assert_json "$1" true; }

# assert_problem STATUS [SLUG]: an RFC 9457 problem with that status (and type).
assert_problem() {
    assert_status "$1"
    local ct
    ct=$(header content-type)
    [[ "$ct" == application/problem+json* ]] || fail "expected Content-Type application/problem+json, got '$ct' for $(last_request)"
    assert_true '(.type|type) == "string" and (.title|type) == "string" and (.title|length) > 0'
    assert_json .status "$1"
    assert_true '(.detail|type) == "string" and (.detail|length) > 0'
    [ -z "${2-}" ] || assert_json .type "/problems/$2"
}

# assert_field NAME: the problem names NAME in "field" (or, failing that, in "detail").
assert_field() {
    printf '%s' "$BODY" | jq -e --arg f "$1" '.field == $f or (.field == null and (.detail | contains($f)))' >/dev/null ||
        fail "expected the problem to name field '$1', got $(last_request)"
}

# assert_match TEXT REGEX WHAT: TEXT matches the extended REGEX.
assert_match() {
    [[ "$1" =~ $2 ]] || fail "expected $3 to match /$2/, got: ${1:0:600}"
}

# ---- jobs ----------------------------------------------------------------

# uploads_hold NAMES: the daemon's upload_dir, $UPLOADS (set by the test),
# holds exactly these files (space separated) within 3 s (a request's own
# spool file goes when its answer has been sent).
uploads_hold() {
    local deadline=$(($(now_ms) + 3000)) got
    while :; do
        got=$(ls "$UPLOADS" 2>/dev/null | sort | paste -sd' ' || true)
        [ "$got" = "$1" ] && return 0
        [ "$(now_ms)" -ge "$deadline" ] && fail "upload_dir holds '$got', expected '$1'"
        sleep 0.05
    done
}

# submit BODY: POST /api/v1/jobs with the valid token, expects 202; sets JOB_ID.
submit() {
    req POST /api/v1/jobs "$1"
    assert_status 202
    JOB_ID=$(json .id)
    [[ "$JOB_ID" =~ ^[0-9]+$ ]] || fail "job id is not an integer: $(last_request)"
}

# wait_job_state ID STATE TIMEOUT_S: polls the job until it is in STATE (the
# body is then the job); fails on timeout or on another terminal state.
wait_job_state() {
    local id=$1 want=$2 deadline=$(($(now_ms) + $3 * 1000)) st
    while :; do
        req GET "/api/v1/jobs/$id"
        assert_status 200
        st=$(json .state)
        [ "$st" = "$want" ] && return 0
        case "$st" in succeeded | failed | cancelled)
            fail "job $id ended $st, expected $want: $(brief_body)" ;;
        esac
        [ "$(now_ms)" -ge "$deadline" ] && fail "job $id still $st after $3 s, expected $want: $(brief_body)"
        sleep 0.1
    done
}

# wait_ready: polls /readyz until 200 (discovery may still run just after start).
wait_ready() {
    local deadline=$((SECONDS + 20))
    while :; do
        req GET /readyz
        [ "$STATUS" = 200 ] && return 0
        [ "$SECONDS" -ge "$deadline" ] && fail "not ready after 20 s: $(last_request)"
        sleep 0.1
    done
}

# ---- fleets --------------------------------------------------------------

# synth_fleet DIR [GPUS [ARGS...]]: the synthetic fleet of t_fleet and t_web,
# as bundles in DIR (bench/fleet/synth.c): GPUS (default 31) GPUs of 3 models
# on 8 hosts, the reference H100 and H200 measurements with seeded noise (the
# H200's a second time as "Synthetic GPU (H200 data)"), 4 planted faults
# listed in DIR/planted.tsv; ARGS go to fleet-synth (--figures: figures alone).
synth_fleet() {
    local synth ref=$REPO/data/reference dir=$1 gpus=${2:-31}
    shift $(($# < 2 ? $# : 2))
    synth=$(dirname "$GPUPROBE")/bench/fleet-synth
    [ -x "$synth" ] || fail "$synth is missing: make builds it with the tests"
    mkdir -p "$dir"
    "$synth" --out "$dir" --gpus "$gpus" --hosts 8 --seed 11 --outliers 4 "$@" \
        "$ref/h100.json" "$ref/h200.json" "$ref/h200.json=Synthetic GPU (H200 data)" ||
        fail "fleet-synth $dir failed"
}

# ---- a full disk -----------------------------------------------------------

# on_small_fs KB SCRIPT: runs the bash SCRIPT with a fresh folder of its own
# as the current one: a tmpfs of KB kilobytes mounted in a mount namespace of
# SCRIPT's alone (nothing to unmount: it goes when SCRIPT ends), so writes
# there meet a full disk (write what must survive to $WORK). GPUPROBE, WORK
# and FIX are exported to it. Its status is
# SCRIPT's; 97 when no such file system can be mounted here (no user or mount
# namespaces), which small_fs_usable tells first.
on_small_fs() {
    local dir
    dir=$(mktemp -d "$WORK/small.XXXXXX")
    GPUPROBE=$GPUPROBE WORK=$WORK FIX=${FIX:-} unshare -rm bash -c \
        'mount -t tmpfs -o size="$1"k tmpfs "$2" 2>/dev/null || exit 97; cd "$2" && eval "$3"' \
        on_small_fs "$1" "$dir" "$2"
}

# small_fs_usable: whether on_small_fs can mount its file system here; says
# so on stderr when not (the test then does what it can with /dev/full).
small_fs_usable() {
    local rc=0
    on_small_fs 64 'true' 2>/dev/null || rc=$?
    [ "$rc" -eq 0 ] && return 0
    echo "note: no tmpfs in a namespace of its own here (status $rc): full-disk checks use /dev/full only" >&2
    return 1
}
