#!/usr/bin/env bash
# TLS (tls_cert, tls_key, push_ca): a daemon serving HTTPS with a
# self-signed certificate made here for 127.0.0.1 (openssl). curl trusting
# that certificate is answered; curl trusting the system's CAs, or another
# self-signed certificate, is refused the connection, and plain HTTP to the
# port is not answered; a certificate file without its key stops the daemon
# with a reason. Then a node (two stand-in GPUs, host node-tls) pushes a
# result to that central: with push_ca naming the wrong certificate the push
# fails verification, is retried and delivers nothing; with the right one it
# is delivered. Last, `gpuprobe push --ca` does the same from the command line.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
source "${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"

command -v openssl >/dev/null || fail "openssl is needed to make the test's certificates (apt-get install openssl)"

# cert NAME: NAME.pem and NAME.key, self-signed for 127.0.0.1, one day.
cert() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
        -keyout "$WORK/$1.key" -out "$WORK/$1.pem" 2>"$WORK/openssl.err" ||
        fail "openssl could not make a certificate: $(cat "$WORK/openssl.err")"
    chmod 600 "$WORK/$1.key"
}
cert central
cert stranger

# ---- a half configuration is refused ------------------------------------------
write_config "tls_cert=$WORK/central.pem"
if "$GPUPROBE" serve --listen 127.0.0.1:0 --no-reference --db "$WORK/half.db" --config "$CONFIG" 2>half.err; then
    fail "the daemon started with tls_cert and no tls_key"
fi
grep -q 'tls_key' half.err || fail "the refusal does not name tls_key: $(cat half.err)"

# a certificate with another's key is refused before the database is made
write_config "tls_cert=$WORK/central.pem" "tls_key=$WORK/stranger.key"
if "$GPUPROBE" serve --listen 127.0.0.1:0 --no-reference --db "$WORK/pair.db" --config "$CONFIG" 2>pair.err; then
    fail "the daemon started with a certificate and another certificate's key"
fi
grep -q 'are not a certificate and its key' pair.err || fail "the refusal of a mismatched pair: $(cat pair.err)"
if ls "$WORK"/pair.db* >/dev/null 2>&1; then fail "a mismatched TLS pair left $(ls "$WORK"/pair.db*)"; fi

# ---- the central serves HTTPS ------------------------------------------------------
write_config "tls_cert=$WORK/central.pem" "tls_key=$WORK/central.key"
start_daemon --config "$CONFIG"
CENTRAL_PID=$DAEMON_PID CENTRAL_LOG=$LOG
PORT=${BASE_URL##*:}
CENTRAL=https://127.0.0.1:$PORT
out=$(curl -sS --cacert "$WORK/central.pem" -o /dev/null -w '%{http_code}' "$CENTRAL/healthz") ||
    fail "curl trusting the central's certificate failed"
[ "$out" = 200 ] || fail "GET /healthz over TLS answered $out"
rc=0; curl -sS -o /dev/null "$CENTRAL/healthz" 2>curl.err || rc=$?
[ "$rc" = 60 ] || fail "curl trusting the system's CAs: status $rc (want 60, certificate refused): $(cat curl.err)"
rc=0; curl -sS --cacert "$WORK/stranger.pem" -o /dev/null "$CENTRAL/healthz" 2>curl.err || rc=$?
[ "$rc" = 60 ] || fail "curl trusting another certificate: status $rc (want 60): $(cat curl.err)"
out=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz" 2>/dev/null) || true
[ "$out" != 200 ] || fail "plain HTTP to the TLS port was answered 200"
# the dashboard's headers come over TLS too
curl -sS --cacert "$WORK/central.pem" -D head.txt -o /dev/null "$CENTRAL/" || fail "GET / over TLS failed"
grep -qi "^x-frame-options: DENY" head.txt || fail "no X-Frame-Options over TLS: $(cat head.txt)"

# ---- a node pushing to it verifies its certificate ---------------------------------
printf '%s\n' "$TOKEN" >"$WORK/upstream-token"
NODE_DB=$WORK/node.db
# start_node KEY=VALUE...: the node, host node-tls, two stand-in GPUs, with
# these settings.
start_node() {
    write_config "upstream_token_file=$WORK/upstream-token" "$@"
    DAEMON_PREFIX=(env GPUPROBE_STANDIN_GPUS=2 unshare --uts sh -c 'hostname node-tls && exec "$@"' sh)
    start_daemon_args --db "$NODE_DB" --token-file "$TOKEN_FILE" --config "$CONFIG"
    DAEMON_PREFIX=()
    wait_ready
}
# wait_upstream JQ WHAT: polls the node's GET /api/v1/upstream until JQ holds.
wait_upstream() {
    local deadline=$((SECONDS + 20))
    while :; do
        req GET /api/v1/upstream
        [ "$(json "$1")" = true ] && return 0
        [ "$SECONDS" -ge "$deadline" ] && fail "$2: $(last_request)"
        sleep 0.2
    done
}
# central_holds N: the central's devices of host node-tls number N.
central_holds() {
    local got
    got=$(curl -sS --cacert "$WORK/central.pem" "$CENTRAL/api/v1/devices" |
        jq '[.devices[] | select(.host == "node-tls")] | length') || fail "cannot ask the central"
    [ "$got" = "$1" ] || fail "the central holds $got devices of node-tls, expected $1"
}

start_node "upstream=$CENTRAL" upstream_retry_max_s=1 "push_ca=$WORK/stranger.pem"
submit '{"kind":"suite-standin","device":0}'
wait_job_state "$JOB_ID" succeeded 30
wait_upstream '.pending == 1 and .attempts >= 2' \
    "the push to a central with a certificate push_ca does not trust was not retried"
assert_match "$(json .last_error)" '[Cc]ertificate|SSL' "the failed push's reason"
echo "refused: $(json .last_error)"
central_holds 0
stop_daemon

start_node "upstream=$CENTRAL" upstream_retry_max_s=1 "push_ca=$WORK/central.pem"
wait_upstream '.pending == 0 and .last_success_at != null' \
    "the push with the central's certificate as push_ca was not delivered"
central_holds 1
stop_daemon

# ---- the command line: gpuprobe push --ca ---------------------------------------------
# a second result, queued by a node daemon that cannot reach the central, then
# pushed by the command line with --ca
start_node "upstream=https://127.0.0.1:1" upstream_retry_max_s=600
submit '{"kind":"suite-standin","device":1}'
wait_job_state "$JOB_ID" succeeded 30
stop_daemon
rc=0
"$GPUPROBE" push --db "$NODE_DB" --upstream "$CENTRAL" --token-file "$WORK/upstream-token" \
    --tries 1 --ca "$WORK/stranger.pem" >push.out 2>push.err || rc=$?
[ "$rc" = 1 ] || fail "gpuprobe push --ca (the wrong certificate): status $rc, want 1: $(cat push.err)"
central_holds 1
"$GPUPROBE" push --db "$NODE_DB" --upstream "$CENTRAL" --token-file "$WORK/upstream-token" \
    --tries 1 --ca "$WORK/central.pem" >push.out 2>push.err || fail "gpuprobe push --ca failed: $(cat push.err)"
[ "$(jq .acknowledged push.out)" = 1 ] || fail "gpuprobe push --ca: $(cat push.out)"
central_holds 2

DAEMON_PID=$CENTRAL_PID LOG=$CENTRAL_LOG
stop_daemon
echo "PASS t_tls"
