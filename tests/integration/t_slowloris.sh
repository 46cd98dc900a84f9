#!/usr/bin/env bash
# Bounded clients (server/http/conn_guard.h), against a daemon with small
# limits (48 connections, 8 from one address, 3 s for a request's headers,
# a body at 1000 B/s at least): tests/integration/slowloris.py checks that
# a client over the per-address or the total limit is answered 503
# problem+json with Retry-After and Connection: close; that a header or a
# body trickled in is closed at its deadline in total time; and that while
# slow clients from 127.0.0.2..9 hold more sockets than the limit, a fresh
# client from 127.0.0.1 or 127.0.0.10 is answered 200 within 1 s every time;
# then that /metrics counts the refused and expired connections.
# About 15 s.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
source "${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"

command -v python3 >/dev/null || fail "python3 is needed (the slow clients)"
MAX_CONN=48 MAX_PER_IP=8 REQUEST_TIMEOUT_S=3 BODY_MIN_RATE=1000
write_config max_connections=$MAX_CONN max_connections_per_ip=$MAX_PER_IP \
    request_timeout_s=$REQUEST_TIMEOUT_S body_min_rate=$BODY_MIN_RATE connection_timeout_s=60
start_daemon --config "$CONFIG"
wait_ready
port=${BASE_URL##*:}

python3 "$REPO/tests/integration/slowloris.py" "$port" "$TOKEN" $MAX_CONN $MAX_PER_IP \
    $REQUEST_TIMEOUT_S $BODY_MIN_RATE || fail "slow clients: see the lines above"

# What the guard did is on /metrics: clients over the limits were refused, the
# trickled headers and bodies expired, and the dashboard's clients are admitted.
req GET /metrics "" ""
assert_status 200
metric() { grep -E "^$1 " <<<"$BODY" | awk '{print $2}'; }
for m in refused expired; do
    v=$(metric gpuprobe_http_connections_${m}_total)
    [ -n "$v" ] && awk -v v="$v" 'BEGIN {exit !(v > 0)}' ||
        fail "gpuprobe_http_connections_${m}_total is '$v' after the slow clients"
done
[ -n "$(metric gpuprobe_http_connections_evicted_total)" ] || fail "no gpuprobe_http_connections_evicted_total"
v=$(metric 'gpuprobe_http_connections\{state="admitted"\}')
[ -n "$v" ] && awk -v v="$v" 'BEGIN {exit !(v >= 1)}' || fail "admitted connections: '$v' (this scrape's own is one)"

# The daemon is whole after it: served, and stops cleanly.
req GET /healthz
assert_status 200
stop_daemon
echo "PASS t_slowloris"
