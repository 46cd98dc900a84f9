#!/usr/bin/env bash
# Proves the daemon speaks systemd's notify protocol as the unit expects
# (systemd/gpuprobe.service: Type=notify, WatchdogSec): with $NOTIFY_SOCKET
# and $WATCHDOG_USEC set, it sends READY=1 once it serves, WATCHDOG=1 from
# its job loop at least every half interval while it runs, and STOPPING=1
# on SIGTERM — read from a datagram socket of the test's own, as systemd
# would read them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SOCK=$WORK/notify.sock
LOG_N=$WORK/notify.log
python3 - "$SOCK" "$LOG_N" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
with open(sys.argv[2], "w", buffering=1) as out:
    t0 = time.monotonic()
    try:
        while True:
            msg = s.recv(4096).decode()
            out.write("%.3f %s\n" % (time.monotonic() - t0, msg.replace("\n", " ")))
            if "STOPPING=1" in msg:
                break
    except socket.timeout:
        pass
PY
listener=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the test's notify socket did not appear"

# a 3 s watchdog: the daemon pets once half of it has passed, from a job
# loop that wakes at least once a second (so any WatchdogSec of 2 s or more
# is met; the unit asks for 120)
export NOTIFY_SOCKET=$SOCK WATCHDOG_USEC=3000000
unset WATCHDOG_PID
start_daemon
unset NOTIFY_SOCKET WATCHDOG_USEC
wait_ready
sleep 6
stop_daemon
wait "$listener" || true

grep -q " READY=1" "$LOG_N" || fail "no READY=1: $(cat "$LOG_N")"
grep -q " STOPPING=1" "$LOG_N" || fail "no STOPPING=1 on SIGTERM: $(cat "$LOG_N")"
pets=$(grep -c " WATCHDOG=1" "$LOG_N" || true)
[ "$pets" -ge 3 ] || fail "$pets WATCHDOG=1 in ~6 s of a 3 s watchdog, expected one every 1.5-2 s: $(cat "$LOG_N")"
# no gap between pets longer than the watchdog's interval
python3 - "$LOG_N" <<'PY' || fail "a gap between pets as long as the 3 s interval: $(cat "$LOG_N")"
import sys
t = [float(l.split()[0]) for l in open(sys.argv[1]) if "WATCHDOG=1" in l]
sys.exit(0 if len(t) > 1 and max(b - a for a, b in zip(t, t[1:])) < 2.5 else 1)
PY
# READY comes before the first pet or with it, STOPPING last
first=$(head -n1 "$LOG_N")
case "$first" in *READY=1*|*WATCHDOG=1*) ;; *) fail "the first message is '$first'" ;; esac
tail -n1 "$LOG_N" | grep -q "STOPPING=1" || fail "STOPPING=1 is not the last message: $(cat "$LOG_N")"
echo "PASS t_sdnotify"
