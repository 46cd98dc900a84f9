/*
 * The daemon's pusher: a thread that sends the outbox to the upstream
 * gpuprobe (`upstream =` in the configuration).
 *
 * DESIGN
 * The thread wakes every second (or when told to stop), takes the rows that
 * are due, soonest first, and pushes them one by one (push.h); a row that
 * failed waits its backoff in the store, so a restart of the daemon resumes
 * where it stopped and a central that was down gets every result once it is
 * back. Rows written by another process on the same database (`gpuprobe
 * probe --db` beside the daemon) are found at the next wake. Stopping
 * aborts a push under way; its row is tried again after the restart.
 */
#ifndef GPUPROBE_SERVER_PUSH_PUSHER_H
#define GPUPROBE_SERVER_PUSH_PUSHER_H

#include <stddef.h>

#include "db/store.h"
#include "server/config.h"

struct pusher;

/* Starts the thread when cfg names an upstream (NULL otherwise, with err
 * ""); records the upstream in the store (or clears it), so results are
 * queued from now on. NULL with the reason in err on a failure. */
struct pusher *pusher_start(store *s, const struct config *cfg, char *err, size_t errlen);
/* Stops and joins the thread. NULL is ok. */
void pusher_stop(struct pusher *p);

#endif
