#!/usr/bin/env bash
# The HTTP benchmark of gpuprobe: bench/http/run.sh BINARY   (`make bench`)
#
# Measures the two hot read endpoints of the daemon against nginx serving the
# same bytes as static files, on this machine, over loopback only:
#   1. Starts BINARY (the release build) on a free 127.0.0.1 port with a fresh
#      database in a temporary directory, so the schema is created; stops it.
#   2. Seeds the jobs table with $BENCH_JOBS (200) finished jobs straight into
#      SQLite. Why not through the API: the release binary has no test job
#      kinds, and with no GPU here none of its real kinds can run either, so
#      the only honest way to get a realistic /api/v1/jobs page is to write
#      rows the way the store does (columns of db/schema.c, kinds and default
#      parameters taken from the binary's own /api/v1/job-kinds, the events a
#      run leaves; a stand-in kind "seeded" if the binary has no kinds at all).
#      Jobs of kinds that need a GPU get a made-up device UUID.
#      All seeded jobs are terminal, so the scheduler has nothing to run.
#   3. Restarts the daemon on that database and saves the exact bytes of
#      GET /api/v1/devices and GET /api/v1/jobs (the default page, 50 jobs).
#   4. Starts nginx (Debian nginx-light) on another loopback port with a
#      minimal configuration in the temporary directory (no daemon mode, one
#      worker per core, no access log) serving those two files at the same
#      paths as application/json.
#   5. Runs `wrk -t2 -c64 -d${BENCH_DURATION}s --latency` against each of the
#      four endpoints and prints req/s, p99 latency, errors (non-2xx answers
#      plus socket errors) and the gpuprobe/nginx ratio, then PASS or MISS per
#      target: ratio >= 0.5, p99 < 10 ms, no errors.
#   6. Memory: restarts the daemon and drives it with a mix of read requests;
#      prints VmRSS after 10k requests and after 1M requests (or as many as
#      $BENCH_MEM_MAX_S seconds allow; the count is wrk's own) and whether
#      the growth stayed within 10%.
# A miss does not make the script fail: this is a benchmark, not a test. It
# exits non-zero only when it cannot run (a tool missing, a server that does
# not start). Everything it starts is stopped and its directory removed on exit
# (BENCH_KEEP=1 keeps the directory). wrk and the servers share the machine's
# cores, so the absolute figures depend on it; the ratio is the point.
#
# Tunables (environment): BENCH_DURATION (10 s per endpoint), BENCH_JOBS (200),
# BENCH_MEM_MAX_S (150 s cap for the 1M-request phase), BENCH_MEM_REQUESTS
# (1000000).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BINARY   (the release build, e.g. build/release/gpuprobe)" >&2
    exit 2
fi
[ -x "$1" ] || { echo "$0: $1 is not an executable file" >&2; exit 2; }
BIN=$(realpath "$1")
for tool in wrk nginx curl jq sqlite3; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is missing: run 'make deps bench-deps'" >&2; exit 2; }
done

DURATION=${BENCH_DURATION:-10}
NJOBS=${BENCH_JOBS:-200}
MEM_SMALL=10000
MEM_LARGE=${BENCH_MEM_REQUESTS:-1000000}
MEM_MAX_S=${BENCH_MEM_MAX_S:-150}
CORES=$(nproc)
THREADS=2
CONNS=64

TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuprobe-bench.XXXXXX")
DAEMON_PID=
NGINX_PID=
GP_URL=
NGINX_URL=
STARTS=0

say() { printf '%s\n' "$*"; }
die() {
    echo "bench: $*" >&2
    exit 1
}

# Stops a process we started (by its pid): TERM, then KILL after $2 seconds.
stop_pid() {
    local pid=$1 grace=$2 i
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < grace * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    stop_pid "$DAEMON_PID" 15
    stop_pid "$NGINX_PID" 5
    if [ -n "${BENCH_KEEP-}" ]; then
        echo "bench: files kept in $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# ---- the daemon ----------------------------------------------------------

# Starts the daemon on 127.0.0.1:0 and waits for its msg=listening line.
start_daemon() {
    STARTS=$((STARTS + 1))
    local log=$TMP/daemon.$STARTS.log addr='' deadline=$((SECONDS + 60))
    "$BIN" serve --listen 127.0.0.1:0 --db "$TMP/gpuprobe.db" --config "$TMP/gpuprobe.conf" \
        2>"$log" >/dev/null &
    DAEMON_PID=$!
    while [ -z "$addr" ]; do
        addr=$(grep -m1 'msg=listening' "$log" | grep -o 'addr=[0-9.]*:[0-9]*' | cut -d= -f2 || true)
        [ -n "$addr" ] && break
        kill -0 "$DAEMON_PID" 2>/dev/null || { DAEMON_PID=; die "the daemon exited at start: $(tail -n 5 "$log")"; }
        [ "$SECONDS" -lt "$deadline" ] || die "the daemon did not log msg=listening within 60 s"
        sleep 0.05
    done
    GP_URL=http://$addr
    # Ready means discovery has finished: the device list is then final.
    until [ "$(curl -s -o /dev/null -w '%{http_code}' "$GP_URL/readyz")" = 200 ]; do
        [ "$SECONDS" -lt "$deadline" ] || die "the daemon was not ready within 60 s"
        sleep 0.1
    done
}

stop_daemon() {
    stop_pid "$DAEMON_PID" 15
    DAEMON_PID=
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }

# ---- seeding -------------------------------------------------------------

sql_str() { printf "'%s'" "${1//\'/\'\'}"; }

# Writes the SQL that inserts $NJOBS finished jobs and their events, oldest
# first, one minute apart, ending now.
seed_sql() {
    local kinds_json=$1 nkinds now i k device state created started finished dur err result
    local -a kind needs params
    nkinds=$(jq '.kinds | length' <<<"$kinds_json")
    for ((k = 0; k < nkinds; k++)); do
        kind[k]=$(jq -r ".kinds[$k].name" <<<"$kinds_json")
        needs[k]=$(jq -r ".kinds[$k].needs_gpu" <<<"$kinds_json")
        params[k]=$(jq -c ".kinds[$k].params // {} | with_entries(select(.value.default != null) | .value = .value.default)" <<<"$kinds_json")
    done
    now=$(($(date +%s) * 1000))
    echo "BEGIN;"
    for ((i = 0; i < NJOBS; i++)); do
        k=$((i % nkinds))
        device=NULL
        [ "${needs[k]}" = true ] && device=$(sql_str "$(printf 'GPU-5eed0000-0000-4000-8000-%012d' $((i % 4)))")
        created=$((now - (NJOBS - i) * 60000))
        started=$((created + 150))
        dur=$((200 + (i * 7919) % 5000))
        finished=$((started + dur))
        err=NULL
        result=NULL
        case $((i % 10)) in
            8) state=failed; err=$(sql_str "exit status 1: seeded failure number $i") ;;
            9) state=cancelled; err=$(sql_str "cancelled") ;;
            *) state=succeeded; result=$(sql_str "{\"seeded\":true,\"n\":$i,\"value\":$((i * 37 % 1000)).5}") ;;
        esac
        printf 'INSERT INTO jobs (kind, device, params_json, state, attempt, max_attempts, timeout_s, cancel_requested, created_ms, started_ms, finished_ms, error, result_json) VALUES (%s, %s, %s, %s, 1, 3, 600, 0, %d, %d, %d, %s, %s);\n' \
            "$(sql_str "${kind[k]}")" "$device" "$(sql_str "${params[k]}")" "'$state'" \
            "$created" "$started" "$finished" "$err" "$result"
        printf "INSERT INTO job_events (job_id, at_ms, state, message) SELECT max(id), %d, 'queued', 'submitted' FROM jobs;\n" "$created"
        printf "INSERT INTO job_events (job_id, at_ms, state, message) SELECT max(id), %d, 'running', 'started (attempt 1)' FROM jobs;\n" "$started"
        printf "INSERT INTO job_events (job_id, at_ms, state, message) SELECT max(id), %d, '%s', %s FROM jobs;\n" \
            "$finished" "$state" "$(sql_str "$state")"
    done
    echo "COMMIT;"
}

# ---- nginx ---------------------------------------------------------------

# A port nothing listens on now (nginx then fails loudly if it was taken since).
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 30000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
}

start_nginx() {
    local port tries
    mkdir -p "$TMP/www/api/v1" "$TMP/nginx-temp"
    cp "$TMP/devices.json" "$TMP/www/api/v1/devices"
    cp "$TMP/jobs.json" "$TMP/www/api/v1/jobs"
    # nginx's workers may run as another user when this runs as root.
    chmod 755 "$TMP" "$TMP/www" "$TMP/www/api" "$TMP/www/api/v1"
    chmod 644 "$TMP/www/api/v1/devices" "$TMP/www/api/v1/jobs"
    for tries in 1 2 3 4 5; do
        port=$(free_port)
        cat >"$TMP/nginx.conf" <<EOF
# minimal nginx for the gpuprobe benchmark: two static JSON files
daemon off;
worker_processes $CORES;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    default_type application/json;
    client_body_temp_path $TMP/nginx-temp/body;
    proxy_temp_path $TMP/nginx-temp/proxy;
    fastcgi_temp_path $TMP/nginx-temp/fastcgi;
    uwsgi_temp_path $TMP/nginx-temp/uwsgi;
    scgi_temp_path $TMP/nginx-temp/scgi;
    server {
        listen 127.0.0.1:$port;
        root $TMP/www;
        location = /api/v1/devices { }
        location = /api/v1/jobs { }
    }
}
EOF
        nginx -e "$TMP/nginx-error.log" -p "$TMP" -c "$TMP/nginx.conf" &
        NGINX_PID=$!
        local i
        for ((i = 0; i < 50; i++)); do
            if curl -sf -o /dev/null "http://127.0.0.1:$port/api/v1/devices"; then
                NGINX_URL=http://127.0.0.1:$port
                return 0
            fi
            kill -0 "$NGINX_PID" 2>/dev/null || break
            sleep 0.1
        done
        stop_pid "$NGINX_PID" 5
        NGINX_PID=
        echo "bench: nginx did not start on port $port (try $tries): $(tail -n 2 "$TMP/nginx-error.log" 2>/dev/null)" >&2
    done
    die "nginx would not start"
}

# ---- wrk -----------------------------------------------------------------

# wrk's latency with its unit (us, ms, s, m) -> milliseconds.
to_ms() {
    awk -v v="$1" 'BEGIN {
        n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
        f = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : (u == "m") ? 60000 : (u == "h") ? 3600000 : -1
        if (f < 0) { print "nan"; exit }
        printf "%.3f", n * f }'
}

# Sets RPS, P99_MS, ERRORS and COUNT from a wrk output file.
parse_wrk() {
    local out=$1 sock non2xx
    RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
    P99_MS=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
    COUNT=$(awk '/requests in/ { print $1 }' "$out")
    sock=$(awk -F'[ ,]+' '/Socket errors:/ { print $4 + $6 + $8 + $10 }' "$out")
    non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$out")
    ERRORS=$((${sock:-0} + ${non2xx:-0}))
    if [ -z "$RPS" ] || [ -z "$COUNT" ]; then die "could not read wrk's output: $(cat "$out")"; fi
}

# bench NAME URL: one wrk run; records its figures under NAME.
declare -A R_RPS R_P99 R_ERR R_RATIO
bench() {
    local name=$1 url=$2 out=$TMP/wrk.$1.txt
    wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency "$url" >"$out" 2>&1 ||
        die "wrk failed on $url: $(cat "$out")"
    parse_wrk "$out"
    R_RPS[$name]=$RPS
    R_P99[$name]=$P99_MS
    R_ERR[$name]=$ERRORS
    printf '  %-20s %10s req/s  p99 %8s ms  errors %s\n' "$name" "$RPS" "$P99_MS" "$ERRORS"
}

verdict() { if [ "$1" = 1 ]; then echo PASS; else echo MISS; fi; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# ---- 1-3: schema, seed, reference bytes -----------------------------------

cat >"$TMP/gpuprobe.conf" <<EOF
# gpuprobe for the benchmark: defaults, no token file (reads need none)
log_level = info
EOF

say "gpuprobe HTTP benchmark: $BIN"
say "machine: $CORES cores, $(awk '/^model name/ { sub(/^[^:]*: /, ""); print; exit }' /proc/cpuinfo)"
say "temporary directory: $TMP"

start_daemon
kinds=$(curl -sf "$GP_URL/api/v1/job-kinds") || die "GET /api/v1/job-kinds failed"
if [ "$(jq '.kinds | length' <<<"$kinds")" -eq 0 ]; then
    # A build with no job kinds yet: rows of a stand-in kind, same shape.
    say "note: the binary has no job kinds; seeding jobs of a stand-in kind 'seeded'"
    kinds='{"kinds":[{"name":"seeded","needs_gpu":true,"params":{"repeats":{"default":5},"size_bytes":{"default":1048576},"pattern":{"default":"sequential"}}}]}'
fi
stop_daemon

seed_sql "$kinds" >"$TMP/seed.sql"
sqlite3 -bail "$TMP/gpuprobe.db" <"$TMP/seed.sql" || die "seeding the database failed"
say "seeded $NJOBS jobs of kinds: $(jq -r '[.kinds[].name] | join(", ")' <<<"$kinds")"

start_daemon
for ep in devices jobs; do
    code=$(curl -sS -o "$TMP/$ep.json" -w '%{http_code}' "$GP_URL/api/v1/$ep")
    [ "$code" = 200 ] || die "GET /api/v1/$ep answered $code: $(head -c 300 "$TMP/$ep.json")"
done
njobs_page=$(jq '.jobs | length' "$TMP/jobs.json")
say "reference bodies: /api/v1/devices $(stat -c %s "$TMP/devices.json") bytes," \
    "/api/v1/jobs $(stat -c %s "$TMP/jobs.json") bytes ($njobs_page jobs)"

start_nginx
say "gpuprobe at $GP_URL, nginx at $NGINX_URL (worker_processes $CORES)"

# ---- 5: throughput and latency -------------------------------------------

say ""
say "wrk -t$THREADS -c$CONNS -d${DURATION}s --latency, one endpoint at a time:"
bench gpuprobe-devices "$GP_URL/api/v1/devices"
bench gpuprobe-jobs "$GP_URL/api/v1/jobs"
bench nginx-devices "$NGINX_URL/api/v1/devices"
bench nginx-jobs "$NGINX_URL/api/v1/jobs"
stop_pid "$NGINX_PID" 5
NGINX_PID=

say ""
printf '%-18s %12s %10s %8s %16s\n' endpoint req/s "p99 ms" errors gpuprobe/nginx
for ep in devices jobs; do
    ratio=$(awk -v a="${R_RPS[gpuprobe-$ep]}" -v b="${R_RPS[nginx-$ep]}" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
    R_RATIO[$ep]=$ratio
    printf '%-18s %12s %10s %8s %16s\n' "gpuprobe $ep" "${R_RPS[gpuprobe-$ep]}" "${R_P99[gpuprobe-$ep]}" "${R_ERR[gpuprobe-$ep]}" "$ratio"
    printf '%-18s %12s %10s %8s %16s\n' "nginx $ep" "${R_RPS[nginx-$ep]}" "${R_P99[nginx-$ep]}" "${R_ERR[nginx-$ep]}" ""
done

say ""
say "targets (gpuprobe):"
for ep in devices jobs; do
    ok=0; ge "${R_RATIO[$ep]}" 0.5 && ok=1
    printf '  %-8s %-28s %s\n' "$ep" "req/s >= 0.5 x nginx (${R_RATIO[$ep]})" "$(verdict $ok)"
    ok=0; lt "${R_P99[gpuprobe-$ep]}" 10 && ok=1
    printf '  %-8s %-28s %s\n' "$ep" "p99 < 10 ms (${R_P99[gpuprobe-$ep]})" "$(verdict $ok)"
    ok=0; [ "${R_ERR[gpuprobe-$ep]}" = 0 ] && ok=1
    printf '  %-8s %-28s %s\n' "$ep" "no errors (${R_ERR[gpuprobe-$ep]})" "$(verdict $ok)"
done

# ---- 6: memory -----------------------------------------------------------

# A mix of read requests, rotating over the routes a dashboard and clients
# use; each wrk thread stops after its share of the requested count.
some_id=$(jq '.jobs[0].id' "$TMP/jobs.json")
cat >"$TMP/mix.lua" <<EOF
-- request mix for the memory check; stops after the count given after --
local paths = {
    "/api/v1/jobs", "/api/v1/devices", "/api/v1/jobs/$some_id",
    "/api/v1/jobs?limit=10&state=succeeded", "/api/v1/job-kinds",
    "/healthz", "/readyz", "/api/v1/jobs?limit=5&before=$some_id",
}
local sent, answered, limit = 0, 0, 0
function init(args) limit = tonumber(args[1]) end
function request()
    sent = sent + 1
    return wrk.format("GET", paths[(sent % #paths) + 1])
end
function response(status, headers, body)
    answered = answered + 1
    if answered >= limit then wrk.thread:stop() end
end
EOF

# drive COUNT MAX_S: about COUNT requests of the mix; sets COUNT to wrk's own count.
drive() {
    local per_thread=$((($1 + THREADS - 1) / THREADS)) out=$TMP/wrk.mem.txt
    wrk -t"$THREADS" -c"$CONNS" -d"${2}s" -s "$TMP/mix.lua" "$GP_URL" -- "$per_thread" >"$out" 2>&1 ||
        die "wrk failed: $(cat "$out")"
    parse_wrk "$out"
    [ "$ERRORS" = 0 ] || say "  note: $ERRORS errors in this phase"
}

say ""
say "memory (fresh daemon, mixed GET requests):"
stop_daemon
start_daemon
rss_start=$(rss_kb)
drive "$MEM_SMALL" 60
done_small=$COUNT
rss_small=$(rss_kb)
drive "$((MEM_LARGE - done_small))" "$MEM_MAX_S"
done_large=$((done_small + COUNT))
rss_large=$(rss_kb)
growth=$(awk -v a="$rss_small" -v b="$rss_large" 'BEGIN { printf "%.1f", (b - a) * 100 / a }')
printf '  VmRSS at start            %8d kB\n' "$rss_start"
printf '  VmRSS after %9d req %8d kB\n' "$done_small" "$rss_small"
printf '  VmRSS after %9d req %8d kB  (%s%%)\n' "$done_large" "$rss_large" "$growth"
ok=0; awk -v g="$growth" 'BEGIN { exit !(g <= 10) }' && ok=1
note=""
[ "$done_large" -ge "$MEM_LARGE" ] || note=" (only $done_large of $MEM_LARGE requests in ${MEM_MAX_S} s)"
printf '  %-36s %s%s\n' "RSS growth within 10%" "$(verdict $ok)" "$note"
stop_daemon
