/*
 * Pushing this node's results to the upstream gpuprobe (the central
 * daemon), as the daemon's pusher thread and the CLI (`gpuprobe push`,
 * `gpuprobe probe --push`) both do it.
 *
 * DESIGN
 * A result to push is a row of the outbox (db/outbox.h), queued by
 * push_enqueue in the transaction that saves the result. push_row sends
 * one: the bundle of that job alone (server/bundles/, published under the
 * device's host; reduced to its fleet figures when the node sends figures
 * alone), POSTed by client.h, and the answer's verdict (backoff.h)
 * recorded on the row: acknowledged rows go, refused ones stay marked with
 * the upstream's reason, the others wait their backoff. Every push is
 * logged (event push, push_retry or push_refused). The token is read from
 * its file at each push, so a token mended on disk is used at the next
 * try without a restart.
 */
#ifndef GPUPROBE_SERVER_PUSH_PUSH_H
#define GPUPROBE_SERVER_PUSH_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "db/outbox.h"
#include "db/store.h"
#include "server/push/backoff.h"

/* The result hook's part (server/store_open.c): queues job_id's result
 * when it is a GPU result of this node that bundles carry (not imported)
 * and the store names an upstream. 0, or -1 with the reason. */
int push_enqueue(struct store_tx *tx, int64_t job_id, char *err, size_t errlen);

struct push_target {
    const char *upstream;        /* the central's base URL */
    const char *token_file;      /* its first line is the bearer token */
    int64_t retry_max_ms;        /* the cap of the backoff */
    int figures_only;            /* upstream_content = figures: the result's fleet figures
                                    alone (bundle_to_figures), not the result */
    const volatile int *stop;    /* nonzero aborts a push under way; may be NULL */
    const char *ca_file;         /* PEM CAs the upstream's certificate must chain to, alone;
                                    NULL or "": the system's (client.h) */
};

struct push_outcome {
    enum push_verdict verdict;
    int status;                  /* the HTTP status; 0 when none came */
    char detail[700];            /* the answer or the failure, one line */
};

/* Pushes the result of row and records the outcome on it at now. 0 with
 * *o filled; -1 when the store could not record it (reason in err). */
int push_row(store *s, const struct push_target *t, const struct outbox_row *row, int64_t now,
             struct push_outcome *o, char *err, size_t errlen);

/* What a drain did: rows acknowledged and refused by it, and over the
 * whole outbox once it ended, rows still waiting and rows refused. */
struct push_tally {
    size_t acknowledged, refused;
    size_t left, refused_held;
};

/* The CLI's drain: pushes every row not refused, in rounds, waiting
 * between rounds as the backoff says (capped by t->retry_max_ms), until
 * none is left to try or `tries` rounds were made. -1 when the store
 * failed. */
int push_drain(store *s, const struct push_target *t, int tries, struct push_tally *tally,
               char *err, size_t errlen);

/* A random 32-bit number for the backoff's jitter. */
uint32_t push_jitter(void);

#endif
