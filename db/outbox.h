/*
 * The outbox: results of this node waiting for the upstream gpuprobe (the
 * central daemon) to acknowledge them, and what the store remembers of the
 * pushes (server/push/ does the pushing).
 *
 * DESIGN
 * A row per result (job) to send, added in the very transaction that saves
 * the result, so a result is never stored without its row nor a row left
 * without its result (the row goes with its job: ON DELETE CASCADE). Rows
 * are added only while the store names an upstream (store_meta "upstream",
 * set by whoever pushes: the daemon with `upstream =`, `gpuprobe probe
 * --push`): every writer of the database (the daemon's jobs, `gpuprobe
 * probe --db` beside it) then queues its results alike, and a database that
 * pushes nowhere collects no rows. A row leaves when the upstream
 * acknowledged it; a refused one stays, marked, with the upstream's reason,
 * and is never tried again; any other failure counts an attempt and sets
 * the next one. The outcome of the newest push (success time, error and its
 * time) is kept in store_meta, so it survives a restart.
 *
 * Functions return 0 or -1 with the reason in err, as the store's do.
 */
#ifndef GPUPROBE_DB_OUTBOX_H
#define GPUPROBE_DB_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

/* Names (url) the upstream results of this store go to from now on; NULL
 * or "" stops queueing new results (the rows held stay). */
int outbox_set_upstream(store *s, const char *url, char *err, size_t errlen);

/* Queues job_id's result inside tx (the transaction saving it) when the
 * store names an upstream; a row already there is kept. Contract: tx is
 * live and job_id > 0. */
int outbox_add_tx(struct store_tx *tx, int64_t job_id, char *err, size_t errlen);

struct outbox_row {
    int64_t job_id;
    char *kind;
    char *device;
    int64_t created_ms;
    int attempts;
    int64_t next_attempt_ms;
    char *last_error;           /* NULL before the first failure */
    int refused;
};
void outbox_rows_free(struct outbox_row *rows, size_t n);

/* Rows due at now (not refused, next attempt at or before now), soonest
 * first, at most limit (>= 1). *rows malloc'd (free with outbox_rows_free). */
int outbox_due(store *s, int64_t now, int limit, struct outbox_row **rows, size_t *n,
               char *err, size_t errlen);
/* Makes every row not refused due at now (the CLI's drain waits by its
 * own rounds, not by the daemon's backoff). */
int outbox_due_all(store *s, int64_t now, char *err, size_t errlen);
/* Makes every refused row waiting again, due at now, its attempts and
 * reason kept: the upstream refused them for a cause that can go away (a
 * kind or figure it did not know before an upgrade, a bundle over its
 * import_limit, a node's clock ahead). The rows made waiting, or -1. */
int outbox_requeue_refused(store *s, int64_t now, char *err, size_t errlen);
/* 1 when job_id's row is held (waiting or refused), 0 when there is none
 * (acknowledged, or never queued), -1 on a failure. */
int outbox_held(store *s, int64_t job_id, char *err, size_t errlen);
/* Every row, the waiting ones before the refused ones, oldest first within
 * each, at most limit (>= 1). */
int outbox_list(store *s, int limit, struct outbox_row **rows, size_t *n, char *err,
                size_t errlen);

/* The upstream acknowledged job_id at now: its row goes, and now is the
 * newest success. Returns 1 when there was no such row (acknowledged twice,
 * which changes nothing else). */
int outbox_ack(store *s, int64_t job_id, int64_t now, char *err, size_t errlen);
/* An attempt failed at now and will be made again at next_ms: attempts + 1,
 * the reason kept on the row and as the newest error. 1 when no such row. */
int outbox_retry(store *s, int64_t job_id, int64_t now, int64_t next_ms, const char *reason,
                 char *err, size_t errlen);
/* The upstream refused job_id at now: attempts + 1, marked refused with the
 * reason, never tried again. 1 when no such row. */
int outbox_refuse(store *s, int64_t job_id, int64_t now, const char *reason, char *err,
                  size_t errlen);

struct outbox_summary {
    char *upstream;              /* the store's upstream; NULL when none */
    int64_t pending, refused;    /* rows waiting, rows refused */
    int64_t attempts;            /* attempts made for the rows held */
    int64_t next_attempt_ms;     /* the soonest due row's time; 0 when none */
    int64_t last_success_ms;     /* the newest acknowledgement; 0 when none */
    char *last_error;            /* the newest failure's reason; NULL when none */
    int64_t last_error_ms;
};
void outbox_summary_free(struct outbox_summary *m);
int outbox_summary_get(store *s, struct outbox_summary *out, char *err, size_t errlen);

#endif
