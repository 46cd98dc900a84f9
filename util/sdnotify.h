/*
 * systemd's service notification protocol, without libsystemd: the daemon
 * tells the service manager it is ready, that it is stopping, and that it is
 * alive (the watchdog).
 *
 * DESIGN
 * The protocol is one datagram of "KEY=VALUE" lines sent to the AF_UNIX
 * socket named by $NOTIFY_SOCKET (a path, or '@' for the abstract
 * namespace). Without that variable (not started by systemd, or a unit of
 * Type=simple) every call does nothing and succeeds, so callers never ask
 * whether they run under systemd. The watchdog's interval is $WATCHDOG_USEC
 * when $WATCHDOG_PID is absent or names this process; sdnotify_watchdog_pet
 * sends "WATCHDOG=1" at most once per half interval, so a loop may call it
 * on every turn. The variables are left set: the job processes the daemon
 * starts inherit them, but systemd takes notifications from the main
 * process alone (NotifyAccess=main, the default of Type=notify).
 */
#ifndef GPUPROBE_UTIL_SDNOTIFY_H
#define GPUPROBE_UTIL_SDNOTIFY_H

#include <stdint.h>

/* Sends state ("READY=1", "STOPPING=1", several lines joined by '\n') to
 * $NOTIFY_SOCKET. 0 when sent or when there is no $NOTIFY_SOCKET; -1 with
 * errno when the variable is malformed or the send failed. */
int sdnotify_send(const char *state);

/* The watchdog interval in microseconds that systemd asks this process for
 * ($WATCHDOG_USEC, when $WATCHDOG_PID is unset or is getpid()); 0 when none. */
uint64_t sdnotify_watchdog_usec(void);

/* Sends "WATCHDOG=1" when the watchdog is on and half its interval has
 * passed since the last pet sent (now_ms on the monotonic clock,
 * util/clock.h). Safe from any thread; 1 when it sent, else 0. */
int sdnotify_watchdog_pet(int64_t now_ms);

#endif
