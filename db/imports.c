/*
 * Results that travel between stores: how an import writes them (see
 * store.h, "Results between stores"; an export reads them with
 * store_device_results, in jobs.c).
 *
 * DESIGN
 * An import is one write transaction for the whole bundle, so a bundle is
 * taken whole or not at all. Each device gets its host (by name) and a
 * device row if the store has none for its UUID; a device the store already
 * knows keeps its row, so an import never rewrites what discovery found
 * here. Each result becomes a succeeded job carrying its origin (host, job
 * id there) and its original times, and is saved through the job kind's
 * saver exactly as a result run here would be, with the transaction's
 * measured time set to the original finish, so the result tables' "newest"
 * means newest measured, wherever it was measured. A result the store
 * already holds is skipped: one it imported before (same origin host, job,
 * device and finish time: the unique index), or one measured here and
 * exported from this store (origin host = the device's host here, origin
 * job = a job of this store with the same device and finish time).
 * store_remove_imported takes an import back (the reference data on a
 * store whose daemon now runs with reference = off): the jobs carry their
 * origin, and every result row hangs off its job (ON DELETE CASCADE).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/store_internal.h"

/* ---- import ------------------------------------------------------------- */

static int take_flag(const struct db_row *r)
{
    *(int *)r->ctx = 1;
    return 0;
}

/* 1 if the store holds this result already, 0 if not, -1 on error. A
 * whole result is held only by one of its kind: a node's job sent first as
 * its fleet figures alone and later whole gets its whole result stored; a
 * summary is held by the measurement in any form. */
static int already_held(struct store_tx *tx, const char *uuid,
                        const struct store_import_result *r, char *err, size_t errlen)
{
    int held = 0;
    int ret = conn_rows(
        tx->c,
        "SELECT 1 FROM jobs j WHERE j.device = ?3 AND j.finished_ms = ?4 AND (j.kind = ?5 OR ?6) AND"
        " ((j.origin_host = ?1 AND j.origin_job = ?2) OR"
        "  (j.origin_host IS NULL AND j.id = ?2 AND EXISTS (SELECT 1 FROM devices d"
        "   JOIN hosts h ON h.id = d.host_id WHERE d.uuid = ?3 AND h.hostname = ?1)))",
        DB_ARGS(DB_TEXT(r->origin_host), DB_INT(r->origin_job), DB_TEXT(uuid),
                DB_INT(r->finished_ms), DB_TEXT(r->kind), DB_INT(r->summary != 0)),
        take_flag, &held, "looking for an imported result", err, errlen);
    return ret < 0 ? -1 : held;
}

/* Inserts the device unless its UUID is known; *added says which. */
static int device_row(struct store_tx *tx, const struct store_import_device *d, int *added,
                      int64_t *host_id_out, char *err, size_t errlen)
{
    int64_t host_id = 0, now = store_now_ms();
    if (store_host_upsert_tx(tx, d->host, "", &host_id, err, errlen) != 0)
        return -1;
    int64_t before = sqlite3_total_changes64(tx->c->db);
    if (conn_exec(tx->c,
                  "INSERT INTO devices (uuid, host_id, name, compute_capability, info_json,"
                  " present, first_seen_ms, last_seen_ms) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?6)"
                  " ON CONFLICT (uuid) DO NOTHING",
                  DB_ARGS(DB_TEXT(d->uuid), DB_INT(host_id), DB_TEXT(d->name),
                          DB_TEXT(d->compute_capability), DB_TEXT(d->info_json), DB_INT(now)),
                  "recording an imported device", err, errlen) != 0)
        return -1;
    *added = sqlite3_total_changes64(tx->c->db) > before;
    *host_id_out = host_id;
    return 0;
}

/* One result as a succeeded job of this store, saved by its kind. */
static int result_job(struct store_tx *tx, const char *uuid, const struct store_import_result *r,
                      char *err, size_t errlen)
{
    char event[300];
    if (conn_exec(tx->c,
                  "INSERT INTO jobs (kind, device, params_json, state, attempt, max_attempts,"
                  " timeout_s, cancel_requested, created_ms, started_ms, finished_ms,"
                  " result_json, gpuprobe_version, origin_host, origin_job)"
                  " VALUES (?1, ?2, ?3, 'succeeded', 1, 1, ?4, 0, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                  DB_ARGS(DB_TEXT(r->kind), DB_TEXT(uuid), DB_TEXT(r->params_json),
                          DB_INT(r->timeout_s), DB_INT(r->created_ms), DB_INT(r->started_ms),
                          DB_INT(r->finished_ms), DB_TEXT(r->result_json),
                          DB_TEXT(r->gpuprobe_version), DB_TEXT(r->origin_host),
                          DB_INT(r->origin_job)),
                  "recording an imported result", err, errlen) != 0)
        return -1;
    int64_t id = sqlite3_last_insert_rowid(tx->c->db);
    snprintf(event, sizeof event, "imported: job %lld of %.200s", (long long)r->origin_job,
             r->origin_host);
    if (store_job_event_tx(tx, id, store_now_ms(), JOB_SUCCEEDED, event, err, errlen) != 0)
        return -1;
    /* measured when it says, but never after it arrived: a node whose clock
     * runs ahead (the import allows a day) would otherwise stay "newest"
     * over the device's later, correctly stamped measurements */
    int64_t now = store_now_ms();
    tx->measured_ms = r->finished_ms < now ? r->finished_ms : now;
    int ret = store_tx_save_result(tx, id, r->result_json, r->result, r->save, err, errlen);
    tx->measured_ms = 0;
    return ret;
}

/* An imported device is where its newest measurement was made: a GPU moved
 * to another node is found there (its host, its slot in info), not at the
 * host it was first imported from, once a bundle brings a result newer than
 * every other of the device's. A device attached here stays this host's. */
static int follow_host(struct store_tx *tx, const struct store_import_device *d, int64_t host_id,
                       int64_t newest_ms, char *err, size_t errlen)
{
    return conn_exec(tx->c,
                     "UPDATE devices SET host_id = ?2, info_json = ?3, last_seen_ms = ?4"
                     " WHERE uuid = ?1 AND present = 0 AND NOT EXISTS"
                     " (SELECT 1 FROM jobs WHERE device = ?1 AND finished_ms > ?5)",
                     DB_ARGS(DB_TEXT(d->uuid), DB_INT(host_id), DB_TEXT(d->info_json),
                             DB_INT(store_now_ms()), DB_INT(newest_ms)),
                     "moving an imported device to its newest host", err, errlen);
}

static int import_tx(struct store_tx *tx, const struct store_import_device *dev, size_t ndev,
                     struct store_import_counts *c, char *err, size_t errlen)
{
    for (size_t i = 0; i < ndev; i++) {
        const struct store_import_device *d = &dev[i];
        int added = 0;
        int64_t host_id = 0, newest_ms = -1; /* newest_ms: of the results added */
        if (device_row(tx, d, &added, &host_id, err, errlen) != 0)
            return -1;
        c->devices_added += (size_t)added;
        for (size_t k = 0; k < d->nresults; k++) {
            int held = already_held(tx, d->uuid, &d->results[k], err, errlen);
            if (held < 0)
                return -1;
            if (held) {
                c->results_held++;
                continue;
            }
            if (result_job(tx, d->uuid, &d->results[k], err, errlen) != 0)
                return -1;
            c->results_added++;
            if (d->results[k].finished_ms > newest_ms)
                newest_ms = d->results[k].finished_ms;
        }
        if (!added && newest_ms >= 0 && follow_host(tx, d, host_id, newest_ms, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int store_import(store *s, const struct store_import_device *dev, size_t ndev,
                 struct store_import_counts *counts, char *err, size_t errlen)
{
    struct store_tx tx;
    struct store_import_counts c = {0};
    assert(s && (dev || ndev == 0) && counts);
    for (size_t i = 0; i < ndev; i++) {
        assert(dev[i].host && dev[i].uuid && dev[i].name && dev[i].compute_capability &&
               dev[i].info_json && (dev[i].results || dev[i].nresults == 0));
        for (size_t k = 0; k < dev[i].nresults; k++)
            assert(dev[i].results[k].kind && dev[i].results[k].params_json &&
                   dev[i].results[k].result_json && dev[i].results[k].origin_host &&
                   dev[i].results[k].timeout_s >= 1);
    }
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = store_tx_end(&tx, import_tx(&tx, dev, ndev, &c, err, errlen), err, errlen);
    *counts = ret == 0 ? c : (struct store_import_counts){0};
    return ret;
}

/* ---- taking an import back ----------------------------------------------------- */

static int remove_tx(struct store_tx *tx, const char *host, const char *uuid, size_t *devices,
                     size_t *results, char *err, size_t errlen)
{
    if (conn_exec(tx->c, "DELETE FROM jobs WHERE device = ?1 AND origin_host = ?2",
                  DB_ARGS(DB_TEXT(uuid), DB_TEXT(host)), "removing imported results", err,
                  errlen) != 0)
        return -1;
    *results += (size_t)sqlite3_changes(tx->c->db);
    if (conn_exec(tx->c,
                  "DELETE FROM devices WHERE uuid = ?1"
                  " AND host_id = (SELECT id FROM hosts WHERE hostname = ?2)"
                  " AND NOT EXISTS (SELECT 1 FROM jobs WHERE device = ?1)",
                  DB_ARGS(DB_TEXT(uuid), DB_TEXT(host)), "removing an imported device", err,
                  errlen) != 0)
        return -1;
    *devices += (size_t)sqlite3_changes(tx->c->db);
    /* one still holding results imported from elsewhere is where the newest
     * of them was measured, as an import places it (follow_host) */
    if (conn_exec(tx->c,
                  "UPDATE devices SET host_id = (SELECT h.id FROM jobs j JOIN hosts h"
                  "   ON h.hostname = j.origin_host WHERE j.device = ?1"
                  "   ORDER BY j.finished_ms DESC, j.id DESC LIMIT 1)"
                  " WHERE uuid = ?1 AND present = 0"
                  " AND host_id = (SELECT id FROM hosts WHERE hostname = ?2)"
                  " AND EXISTS (SELECT 1 FROM jobs j JOIN hosts h ON h.hostname = j.origin_host"
                  "   WHERE j.device = ?1)",
                  DB_ARGS(DB_TEXT(uuid), DB_TEXT(host)), "moving a device to its newest host", err,
                  errlen) != 0)
        return -1;
    return conn_exec(tx->c,
                     "DELETE FROM hosts WHERE hostname = ?1"
                     " AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.host_id = hosts.id)",
                     DB_ARGS(DB_TEXT(host)), "removing an imported host", err, errlen);
}

int store_remove_imported(store *s, const char *host, const char *uuid, size_t *devices,
                          size_t *results, char *err, size_t errlen)
{
    struct store_tx tx;
    size_t d = 0, r = 0;
    assert(s && host && uuid && devices && results);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = store_tx_end(&tx, remove_tx(&tx, host, uuid, &d, &r, err, errlen), err, errlen);
    if (ret == 0)
        *devices += d, *results += r;
    return ret;
}
