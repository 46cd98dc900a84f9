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
 * Lookups run on a pooled read-only connection; a device row is read into
 * struct device_row through one table of its columns (device_fields), which
 * also frees it.
 */
#include <assert.h>
#include <stddef.h>
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

static int take_id(const struct db_row *r)
{
    *(int64_t *)r->ctx = sqlite3_column_int64(r->st, 0);
    return 0;
}

int store_host_upsert_tx(struct store_tx *tx, const char *hostname, const char *machine_id,
                          int64_t *host_id, char *err, size_t errlen)
{
    int ret = conn_row(tx->c, host_upsert_sql,
                       DB_ARGS(DB_TEXT(hostname), DB_TEXT(machine_id ? machine_id : ""),
                               DB_INT(store_now_ms())),
                       take_id, host_id, "recording the host", err, errlen);
    return ret == 1 ? errf(err, errlen, "recording the host: no id returned") : ret;
}

int store_host_upsert(store *s, const char *hostname, const char *machine_id,
                      int64_t *host_id, char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s && host_id);
    if (!hostname || !*hostname)
        return errf(err, errlen, "recording the host: empty hostname");
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    return store_tx_end(&tx, store_host_upsert_tx(&tx, hostname, machine_id, host_id, err, errlen),
                        err, errlen);
}

/* ---- devices ------------------------------------------------------------ */

static const char device_upsert_sql[] =
    "INSERT INTO devices (uuid, host_id, name, compute_capability, info_json, present,"
    " first_seen_ms, last_seen_ms) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6)"
    " ON CONFLICT (uuid) DO UPDATE SET host_id = excluded.host_id, name = excluded.name,"
    " compute_capability = excluded.compute_capability, info_json = excluded.info_json,"
    " present = 1, last_seen_ms = excluded.last_seen_ms";

int store_device_upsert(store *s, int64_t host_id, const char *uuid, const char *name,
                        const char *compute_capability, const char *info_json,
                        char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s && host_id > 0);
    if (!uuid || !*uuid)
        return errf(err, errlen, "recording a device: empty UUID");
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = conn_exec(tx.c, device_upsert_sql,
                        DB_ARGS(DB_TEXT(uuid), DB_INT(host_id), DB_TEXT(name ? name : ""),
                                DB_TEXT(compute_capability ? compute_capability : ""),
                                DB_TEXT(info_json ? info_json : "{}"), DB_INT(store_now_ms())),
                        "recording device", err, errlen);
    return store_tx_end(&tx, ret, err, errlen);
}

/* ---- marking absent ----------------------------------------------------- */

static int listed(const char *uuid, const char *const *uuids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (uuids[i] && strcmp(uuids[i], uuid) == 0)
            return 1;
    return 0;
}

/* The host's present devices that are not listed: copies of their UUIDs,
 * appended to a malloc'd array. */
struct gone {
    const char *const *listed;
    size_t nlisted;
    struct db_array uuids;
};

static int take_gone(const struct db_row *r)
{
    struct gone *g = r->ctx;
    const char *u = (const char *)sqlite3_column_text(r->st, 0);
    if (!u || listed(u, g->listed, g->nlisted))
        return 0;
    char **slot = db_array_slot(&g->uuids);
    if (!slot || !(*slot = strdup(u)))
        return errf(r->err, r->errlen, "listing present devices: out of memory");
    g->uuids.n++;
    return 0;
}

static int mark_absent_tx(struct store_tx *tx, int64_t host_id, const char *const *uuids,
                          size_t n, char *err, size_t errlen)
{
    struct gone g = {uuids, n, {NULL, 0, 0, sizeof(char *)}};
    char **gone;
    int ret = conn_rows(tx->c, "SELECT uuid FROM devices WHERE host_id = ?1 AND present = 1",
                        DB_ARGS(DB_INT(host_id)), take_gone, &g, "listing present devices", err,
                        errlen);
    gone = g.uuids.items;
    for (size_t i = 0; ret == 0 && i < g.uuids.n; i++)
        ret = conn_exec(tx->c, "UPDATE devices SET present = 0 WHERE uuid = ?1",
                        DB_ARGS(DB_TEXT(gone[i])), "marking a device absent", err, errlen);
    for (size_t i = 0; i < g.uuids.n; i++)
        free(gone[i]);
    free(gone);
    return ret;
}

int store_devices_mark_absent(store *s, int64_t host_id, const char *const *present_uuids,
                              size_t n, char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s && host_id > 0 && (present_uuids || n == 0));
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    return store_tx_end(&tx, mark_absent_tx(&tx, host_id, present_uuids, n, err, errlen), err,
                        errlen);
}

/* ---- lookup ------------------------------------------------------------- */

/* The columns of a device row, in the order device_get selects them. */
static const struct col_field device_fields[] = {
    {0, 't', offsetof(struct device_row, uuid)},
    {1, 't', offsetof(struct device_row, name)},
    {2, 't', offsetof(struct device_row, compute_capability)},
    {3, 't', offsetof(struct device_row, info_json)},
    {4, 'i', offsetof(struct device_row, present)},
    {5, 'I', offsetof(struct device_row, first_seen_ms)},
    {6, 'I', offsetof(struct device_row, last_seen_ms)},
    {7, 't', offsetof(struct device_row, hostname)},
};
#define DEVICE_FIELDS (sizeof device_fields / sizeof device_fields[0])

void device_row_free(struct device_row *d)
{
    fields_free(d, sizeof *d, device_fields, DEVICE_FIELDS);
}

void device_rows_free(struct device_row *rows, size_t n)
{
    fields_free_rows(rows, n, sizeof *rows, device_fields, DEVICE_FIELDS);
}

/* The columns of device_fields, in their order. */
#define DEVICE_COLS                                                                            \
    "SELECT d.uuid, d.name, d.compute_capability, d.info_json, d.present, d.first_seen_ms,"   \
    " d.last_seen_ms, h.hostname FROM devices d JOIN hosts h ON h.id = d.host_id"

static int take_device(const struct db_row *r)
{
    if (fields_read(r->st, r->ctx, device_fields, DEVICE_FIELDS) == 0)
        return 0;
    device_row_free(r->ctx);
    return errf(r->err, r->errlen, "reading device %s: out of memory",
                   (const char *)sqlite3_column_text(r->st, 0));
}

int store_device_get(store *s, const char *uuid, struct device_row *out,
                     char *err, size_t errlen)
{
    assert(s && out);
    memset(out, 0, sizeof *out);
    if (!uuid)
        return 1;
    return store_read(s, conn_row, DEVICE_COLS " WHERE d.uuid = ?1", DB_ARGS(DB_TEXT(uuid)),
                      take_device, out, "reading a device", err, errlen);
}

static int take_listed_device(const struct db_row *r)
{
    struct device_row *d = db_row_slot(r, "listing devices");
    if (!d)
        return -1;
    if (fields_read(r->st, d, device_fields, DEVICE_FIELDS) != 0) {
        device_row_free(d);
        return errf(r->err, r->errlen, "listing devices: out of memory");
    }
    ((struct db_array *)r->ctx)->n++;
    return 0;
}

static void release_devices(void *rows, size_t n)
{
    device_rows_free(rows, n);
}

int store_device_list(store *s, struct device_row **rows, size_t *n, char *err, size_t errlen)
{
    void *items = NULL;
    assert(s && rows && n);
    /* a node's GPUs together and in slot order, whatever order they were
     * first seen (pushed) in: the dashboard lists them side by side */
    int ret = store_list(s,
                         DEVICE_COLS " ORDER BY h.hostname, json_extract(d.info_json, '$.pci_bus_id'),"
                                     " d.first_seen_ms, d.uuid",
                         NULL, 0,
                         take_listed_device, sizeof **rows, release_devices, &items, n,
                         "listing devices", err, errlen);
    *rows = items;
    return ret;
}
