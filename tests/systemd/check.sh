#!/usr/bin/env bash
# Checks the systemd unit and its installer (make test runs it):
#   tests/systemd/check.sh BINARY
#   - `systemd-analyze verify` finds nothing to say of systemd/gpuprobe.service
#     (its ExecStart pointed at BINARY, which must exist for verify);
#   - `systemd-analyze security --offline=yes` rates its exposure 2.0 or less;
#   - systemd/install.sh into a DESTDIR makes the binary, the configuration,
#     the tokens (mode 0600) and the unit; a second run changes nothing, not
#     even the token; a configuration listening beyond loopback gets the
#     network drop-in, and one back on loopback loses it;
#   - the daemon, under a NOTIFY_SOCKET bound here, sends READY=1 once it
#     answers and STOPPING=1 on SIGTERM.
set -euo pipefail

die() { echo "FAIL systemd: $*" >&2; exit 1; }
[ $# -eq 1 ] && [ -x "$1" ] || die "usage: $0 BINARY"
binary=$(realpath "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
command -v systemd-analyze >/dev/null || die "systemd-analyze not found: make test-deps (apt-get install systemd)"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuprobe-systemd.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- the unit -----------------------------------------------------------------
sed "s#^ExecStart=/usr/local/bin/gpuprobe #ExecStart=$binary #" "$repo/systemd/gpuprobe.service" \
    >"$work/gpuprobe.service"
grep -q "^ExecStart=$binary " "$work/gpuprobe.service" || die "no ExecStart=/usr/local/bin/gpuprobe line to point at $binary"
out=$(systemd-analyze verify "$work/gpuprobe.service" 2>&1) || die "systemd-analyze verify failed: $out"
[ -z "$out" ] || die "systemd-analyze verify warns: $out"
security=$(systemd-analyze security --offline=yes --no-pager "$work/gpuprobe.service" 2>&1) ||
    die "systemd-analyze security failed: $security"
level=$(printf '%s\n' "$security" | sed -n 's/.*Overall exposure level for gpuprobe.service: \([0-9.]*\).*/\1/p')
[ -n "$level" ] || die "no exposure level in: $(printf '%s\n' "$security" | tail -n 3)"
awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }' || die "exposure $level, over 2.0"
echo "systemd: verify clean, exposure $level"

# ---- the installer, twice -----------------------------------------------------------
dest=$work/root
snapshot() { (cd "$dest" && find . -printf '%p %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort); }
DESTDIR=$dest "$repo/systemd/install.sh" "$binary" >"$work/install1.out" || die "install.sh failed: $(cat "$work/install1.out")"
for f in usr/local/bin/gpuprobe:755 etc/gpuprobe/gpuprobe.conf:644 etc/gpuprobe/tokens:600 \
         etc/systemd/system/gpuprobe.service:644; do
    [ -f "$dest/${f%:*}" ] || die "install.sh made no ${f%:*}"
    [ "$(stat -c %a "$dest/${f%:*}")" = "${f#*:}" ] || die "${f%:*} has mode $(stat -c %a "$dest/${f%:*}"), not ${f#*:}"
done
[ "$(wc -c <"$dest/etc/gpuprobe/tokens")" -ge 33 ] || die "the token file holds no token"
[ ! -e "$dest/etc/systemd/system/gpuprobe.service.d/network.conf" ] || die "a loopback configuration got the network drop-in"
snapshot >"$work/first"
DESTDIR=$dest "$repo/systemd/install.sh" "$binary" >"$work/install2.out" || die "install.sh failed the second time: $(cat "$work/install2.out")"
snapshot >"$work/second"
diff -u "$work/first" "$work/second" >"$work/diff" || die "a second install.sh changed: $(cat "$work/diff")"

# a central: listening beyond loopback gets the drop-in; back on loopback it goes
sed -i 's/^listen = .*/listen = 0.0.0.0:8080/' "$dest/etc/gpuprobe/gpuprobe.conf"
DESTDIR=$dest "$repo/systemd/install.sh" "$binary" >/dev/null
grep -qx 'IPAddressAllow=any' "$dest/etc/systemd/system/gpuprobe.service.d/network.conf" 2>/dev/null ||
    die "listen = 0.0.0.0:8080 got no network drop-in"
sed -i 's/^listen = .*/listen = 127.0.0.1:8080/' "$dest/etc/gpuprobe/gpuprobe.conf"
DESTDIR=$dest "$repo/systemd/install.sh" "$binary" >/dev/null
[ ! -e "$dest/etc/systemd/system/gpuprobe.service.d/network.conf" ] || die "the drop-in stayed after listen went back to loopback"
echo "systemd: install.sh twice into DESTDIR, nothing changed the second time; network drop-in follows listen"

# ---- the daemon's notifications ---------------------------------------------------------
# Under a NOTIFY_SOCKET bound here, the daemon says READY=1 once it accepts
# connections and STOPPING=1 on SIGTERM (util/sdnotify.h).
sock=$work/notify.sock
python3 - "$sock" >"$work/notes" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
try:
    while True:
        m = s.recv(4096).decode()
        print(m, flush=True)
        if "STOPPING=1" in m:
            break
except socket.timeout:
    pass
PY
listener=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
NOTIFY_SOCKET=$sock "$binary" serve --listen 127.0.0.1:0 --no-reference --db "$work/notify.db" \
    2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 200); do grep -q READY=1 "$work/notes" && break; sleep 0.05; done
grep -q READY=1 "$work/notes" || { kill "$daemon"; die "no READY=1 from the daemon within 10 s: $(tail -n 3 "$work/daemon.log")"; }
addr=$(grep -o 'addr=[0-9.]*:[0-9]*' "$work/daemon.log" | head -n 1 | cut -d= -f2)
curl -sf "http://$addr/healthz" >/dev/null || { kill "$daemon"; die "READY=1 came, but /healthz is not answered"; }
kill -TERM "$daemon"
wait "$daemon" || die "the daemon exited with status $? on SIGTERM"
wait "$listener" || true
grep -q STOPPING=1 "$work/notes" || die "no STOPPING=1 on SIGTERM; got: $(tr '\n' ' ' <"$work/notes")"
echo "systemd: the daemon sent $(grep -c . "$work/notes") notifications: $(tr '\n' ' ' <"$work/notes")"
echo "PASS systemd"
