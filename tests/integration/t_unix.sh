#!/usr/bin/env bash
# The Unix-domain socket listener (listen_unix, listen_unix_mode): the daemon
# serves the same API on it as on TCP (reads; writes still need a token);
# its file mode decides who may connect (user nobody is refused by 0600 and
# answered with 0666; root passes file modes, so the test connects as
# nobody); the file goes when the daemon stops; a stale socket file left by
# a dead daemon is replaced, while a regular file at the path, a relative
# path or a mode that is not octal stop the daemon with a reason.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
source "${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"

command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed to connect as another user"
# A folder others may enter (the test's own is 0700), removed on exit.
SOCKDIR=$(mktemp -d /tmp/gpuprobe-unix.XXXXXX)
chmod 755 "$SOCKDIR"
trap 'cleanup; rm -rf "$SOCKDIR"' EXIT
SOCK=$SOCKDIR/api.sock

# ask_unix [AS_NOBODY] PATH: the HTTP status of GET PATH over the socket ("000": no connection).
ask_unix() {
    local as=()
    [ "$1" = nobody ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    shift
    "${as[@]}" curl -s -o "$WORK/.unix.out" -w '%{http_code}' --max-time 5 --unix-socket "$SOCK" \
        "http://gpuprobe$1" 2>/dev/null || true
}

write_config "listen_unix=$SOCK" listen_unix_mode=0600
start_daemon --config "$CONFIG"
wait_ready
grep -q "msg=unix_socket path=$SOCK mode=0600" "$LOG" || fail "no unix_socket line in the log"
[ "$(stat -c %a "$SOCK")" = 600 ] || fail "the socket has mode $(stat -c %a "$SOCK"), not 600"
[ "$(ask_unix root /healthz)" = 200 ] || fail "GET /healthz over the socket failed"
jq -e '.status == "ok"' "$WORK/.unix.out" >/dev/null || fail "GET /healthz over the socket: $(cat "$WORK/.unix.out")"
[ "$(ask_unix root /api/v1/job-kinds)" = 200 ] || fail "GET /api/v1/job-kinds over the socket failed"
# writes need the token here too
st=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -H 'Content-Type: application/json' \
    -d '{"kind":"no-such-kind"}' http://gpuprobe/api/v1/jobs)
[ "$st" = 401 ] || fail "a write without a token over the socket answered $st, not 401"
st=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $TOKEN" -d '{"kind":"no-such-kind"}' http://gpuprobe/api/v1/jobs)
[ "$st" = 422 ] || fail "a write with the token over the socket answered $st, not 422 (unknown kind)"
# the mode keeps others out
[ "$(ask_unix nobody /healthz)" = 000 ] || fail "user nobody connected to a socket of mode 0600"
stop_daemon
[ ! -e "$SOCK" ] || fail "the socket file stayed after the daemon stopped"

# mode 0666: nobody may connect; a stale socket file at the path is replaced
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCK"
[ -S "$SOCK" ] || fail "could not leave a stale socket for the test"
write_config "listen_unix=$SOCK" listen_unix_mode=0666
start_daemon --config "$CONFIG"
wait_ready
[ "$(ask_unix nobody /healthz)" = 200 ] || fail "user nobody was not answered on a socket of mode 0666"
# a second daemon does not take a socket that answers
write_config "listen_unix=$SOCK"
if "$GPUPROBE" serve --listen 127.0.0.1:0 --no-reference --db "$WORK/other.db" --config "$CONFIG" 2>other.err; then
    fail "a second daemon started on a socket in use"
fi
grep -q 'in use' other.err || fail "the second daemon's refusal: $(cat other.err)"
[ "$(ask_unix root /healthz)" = 200 ] || fail "the first daemon lost its socket to the second"
stop_daemon

# refusals at start
refused() { # WHAT EXPECTED_WORDS KEY=VALUE...
    local what=$1 words=$2
    shift 2
    write_config "$@"
    if "$GPUPROBE" serve --listen 127.0.0.1:0 --no-reference --db "$WORK/r.db" --config "$CONFIG" 2>r.err; then
        fail "the daemon started with $what"
    fi
    grep -q "$words" r.err || fail "the refusal of $what does not say '$words': $(cat r.err)"
}
touch "$SOCK"
refused "a regular file at listen_unix" "not a socket" "listen_unix=$SOCK"
rm -f "$SOCK"
refused "a relative listen_unix" "absolute path" "listen_unix=api.sock"
refused "listen_unix_mode 0999" "octal" "listen_unix=$SOCK" listen_unix_mode=0999
# a socket path that cannot be made fails before the database is made
refused "listen_unix in a missing folder" "listen_unix: $SOCKDIR/none/api.sock" "listen_unix=$SOCKDIR/none/api.sock"
if ls "$WORK"/r.db* >/dev/null 2>&1; then fail "a refused listen_unix left $(ls "$WORK"/r.db*)"; fi
echo "PASS t_unix"
