/*
 * Hosts and GPU devices in the store: what device discovery found, when.
 *
 * DESIGN
 * Discovery calls store_host_upsert once, then store_device_upsert for each
 * GPU it sees and store_devices_mark_absent with the full list, so a GPU that
 * disappears keeps its row (jobs and results still name it) but is marked
 * absent. Upserts are single INSERT ... ON CONFLICT DO UPDATE statements, each
 * in its own write transaction; first_seen_ms is only set by the insert.
 * Marking absent reads the host's present devices and updates only those not
 * listed, so a discovery that finds the same GPUs changes no row for it.
 * Lookups run on a pooled read-only connection.
 */
#include <stdlib.h>
#include <string.h>

#include "db/store_internal.h"

/* ---- hosts -------------------------------------------------------------- */

static const char host_upsert_sql[] =
    "INSERT INTO hosts (hostname, machine_id, first_seen_ms, last_seen_ms)"
    " VALUES (?1, ?2, ?3, ?3)"
    " ON CONFLICT (hostname) DO UPDATE SET machine_id = excluded.machine_id,"
    " last_seen_ms = excluded.last_seen_ms"
    " RETURNING id";

static int host_upsert_tx(struct store_tx *tx, const char *hostname, const char *machine_id,
                          int64_t *host_id, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c, host_upsert_sql, err, errlen);
    if (!st)
        return -1;
    if (sqlite3_bind_text(st, 1, hostname, -1, SQLITE_STATIC)
        || sqlite3_bind_text(st, 2, machine_id ? machine_id : "", -1, SQLITE_STATIC)
        || sqlite3_bind_int64(st, 3, store_now_ms())) {
        db_sqlfail(err, errlen, tx->c->db, "recording the host");
        stmt_done(st);
        return -1;
    }
    if (sqlite3_step(st) != SQLITE_ROW) {
        db_sqlfail(err, errlen, tx->c->db, "recording the host");
        stmt_done(st);
        return -1;
    }
    *host_id = sqlite3_column_int64(st, 0);
    return stmt_finish(st, "recording the host", err, errlen);
}

int store_host_upsert(store *s, const char *hostname, const char *machine_id,
                      int64_t *host_id, char *err, size_t errlen)
{
    struct store_tx tx;
    if (!hostname || !*hostname)
        return db_fail(err, errlen, "recording the host: empty hostname");
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    if (host_upsert_tx(&tx, hostname, machine_id, host_id, err, errlen) != 0) {
        store_tx_rollback(&tx);
        return -1;
    }
    return store_tx_commit(&tx, err, errlen);
}

/* ---- devices ------------------------------------------------------------ */

static const char device_upsert_sql[] =
    "INSERT INTO devices (uuid, host_id, name, compute_capability, info_json, present,"
    " first_seen_ms, last_seen_ms) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6)"
    " ON CONFLICT (uuid) DO UPDATE SET host_id = excluded.host_id, name = excluded.name,"
    " compute_capability = excluded.compute_capability, info_json = excluded.info_json,"
    " present = 1, last_seen_ms = excluded.last_seen_ms";

struct device_in {
    int64_t host_id;
    const char *uuid, *name, *cc, *info_json;
};

static int device_upsert_tx(struct store_tx *tx, const struct device_in *d,
                            char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c, device_upsert_sql, err, errlen);
    if (!st)
        return -1;
    if (sqlite3_bind_text(st, 1, d->uuid, -1, SQLITE_STATIC)
        || sqlite3_bind_int64(st, 2, d->host_id)
        || sqlite3_bind_text(st, 3, d->name ? d->name : "", -1, SQLITE_STATIC)
        || sqlite3_bind_text(st, 4, d->cc ? d->cc : "", -1, SQLITE_STATIC)
        || sqlite3_bind_text(st, 5, d->info_json ? d->info_json : "{}", -1, SQLITE_STATIC)
        || sqlite3_bind_int64(st, 6, store_now_ms())) {
        db_sqlfail(err, errlen, tx->c->db, "recording a device");
        stmt_done(st);
        return -1;
    }
    return stmt_finish(st, "recording device", err, errlen);
}

int store_device_upsert(store *s, int64_t host_id, const char *uuid, const char *name,
                        const char *compute_capability, const char *info_json,
                        char *err, size_t errlen)
{
    struct device_in d = { host_id, uuid, name, compute_capability, info_json };
    struct store_tx tx;
    if (!uuid || !*uuid)
        return db_fail(err, errlen, "recording a device: empty UUID");
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    if (device_upsert_tx(&tx, &d, err, errlen) != 0) {
        store_tx_rollback(&tx);
        return -1;
    }
    return store_tx_commit(&tx, err, errlen);
}

/* ---- marking absent ----------------------------------------------------- */

static int listed(const char *uuid, const char *const *uuids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (uuids[i] && strcmp(uuids[i], uuid) == 0)
            return 1;
    return 0;
}

static int mark_one_absent(struct store_tx *tx, const char *uuid, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c, "UPDATE devices SET present = 0 WHERE uuid = ?1",
                                 err, errlen);
    if (!st)
        return -1;
    if (sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC)) {
        stmt_done(st);
        return db_sqlfail(err, errlen, tx->c->db, "marking a device absent");
    }
    return stmt_finish(st, "marking a device absent", err, errlen);
}

/* The host's present devices that are not listed, as a malloc'd array. */
static int gone_devices(struct store_tx *tx, int64_t host_id, const char *const *uuids,
                        size_t n, char ***gone, size_t *ngone, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c,
        "SELECT uuid FROM devices WHERE host_id = ?1 AND present = 1", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, host_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *u = (const char *)sqlite3_column_text(st, 0);
        if (!u || listed(u, uuids, n))
            continue;
        char **g = realloc(*gone, (*ngone + 1) * sizeof *g);
        if (g)
            *gone = g;
        if (!g || !(g[*ngone] = strdup(u))) {
            stmt_done(st);
            return db_fail(err, errlen, "listing present devices: out of memory");
        }
        (*ngone)++;
    }
    if (rc != SQLITE_DONE)
        db_sqlfail(err, errlen, tx->c->db, "listing present devices");
    stmt_done(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int mark_absent_tx(struct store_tx *tx, int64_t host_id, const char *const *uuids,
                          size_t n, char *err, size_t errlen)
{
    char **gone = NULL;
    size_t ngone = 0;
    int ret = gone_devices(tx, host_id, uuids, n, &gone, &ngone, err, errlen);
    for (size_t i = 0; ret == 0 && i < ngone; i++)
        ret = mark_one_absent(tx, gone[i], err, errlen);
    for (size_t i = 0; i < ngone; i++)
        free(gone[i]);
    free(gone);
    return ret;
}

int store_devices_mark_absent(store *s, int64_t host_id, const char *const *present_uuids,
                              size_t n, char *err, size_t errlen)
{
    struct store_tx tx;
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    if (mark_absent_tx(&tx, host_id, present_uuids, n, err, errlen) != 0) {
        store_tx_rollback(&tx);
        return -1;
    }
    return store_tx_commit(&tx, err, errlen);
}

/* ---- lookup ------------------------------------------------------------- */

void device_row_free(struct device_row *d)
{
    if (!d)
        return;
    free(d->uuid);
    free(d->name);
    free(d->compute_capability);
    free(d->info_json);
    memset(d, 0, sizeof *d);
}

static int device_from_row(sqlite3_stmt *st, struct device_row *d)
{
    memset(d, 0, sizeof *d);
    if (col_strdup(st, 0, &d->uuid) || col_strdup(st, 1, &d->name)
        || col_strdup(st, 2, &d->compute_capability) || col_strdup(st, 3, &d->info_json)) {
        device_row_free(d);
        return -1;
    }
    d->present = sqlite3_column_int(st, 4);
    d->first_seen_ms = sqlite3_column_int64(st, 5);
    d->last_seen_ms = sqlite3_column_int64(st, 6);
    return 0;
}

static int device_get_on(struct conn *c, const char *uuid, struct device_row *out,
                         char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT uuid, name, compute_capability, info_json, present, first_seen_ms,"
        " last_seen_ms FROM devices WHERE uuid = ?1", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int ret;
    if (rc == SQLITE_ROW)
        ret = device_from_row(st, out) == 0
                  ? 0 : db_fail(err, errlen, "reading device %s: out of memory", uuid);
    else if (rc == SQLITE_DONE)
        ret = 1;
    else
        ret = db_sqlfail(err, errlen, c->db, "reading a device");
    stmt_done(st);
    return ret;
}

int store_device_get(store *s, const char *uuid, struct device_row *out,
                     char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!uuid)
        return 1;
    struct conn *c = store_reader_get(s);
    int ret = device_get_on(c, uuid, out, err, errlen);
    store_reader_put(s, c);
    return ret;
}
