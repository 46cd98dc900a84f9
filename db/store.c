/*
 * The store's connections: opening and closing the database, the writer and
 * the reader pool, the per-connection statement cache, write transactions,
 * the generation counter and the small utilities the other db/ files share.
 *
 * DESIGN
 * store_open opens one read-write connection (the writer), migrates the
 * schema on it (schema.c), switches the file to WAL and then opens a fixed pool
 * of read-only connections. Writes run in transactions on the writer while the
 * write mutex is held (store_tx_begin .. store_tx_commit/rollback), so two
 * threads never contend for the write lock inside SQLite and BEGIN IMMEDIATE
 * only waits (busy_timeout) for another process. Readers borrow a pool
 * connection, waiting on a condition variable when all are lent; thanks to WAL
 * they read the last committed snapshot without waiting for the writer.
 * Connections are opened with SQLITE_OPEN_NOMUTEX because these locks already
 * guarantee one thread per connection at a time. Each connection caches its
 * statements by SQL text (prepared with SQLITE_PREPARE_PERSISTENT), found by
 * a hash then a string compare; a statement is reset and unbound after every
 * use so it never pins a snapshot. A commit bumps the generation counter when
 * sqlite3_total_changes64 moved during the transaction, so transactions that
 * change nothing (a transition refused because the job moved on) leave
 * cached readers' data valid.
 * The statement helpers below (binding, stepping, rows into structs) are the
 * only code in db/ that calls sqlite3_bind_* and sqlite3_step on a cached
 * statement; the other files describe their queries and rows as data.
 */
#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/store_internal.h"

#define STORE_READERS 4
#define BUSY_TIMEOUT_MS 5000

struct cached_stmt {
    uint64_t hash;
    char *sql;
    sqlite3_stmt *st;
};

struct store {
    pthread_mutex_t wlock;           /* held for the whole of a write transaction */
    struct conn writer;
    pthread_mutex_t rlock;           /* guards rbusy */
    pthread_cond_t rfree;            /* signalled when a reader is handed back */
    struct conn readers[STORE_READERS];
    int rbusy[STORE_READERS];
    _Atomic uint64_t generation;
    store_result_hook_fn *result_hook;  /* db/fleet_store.h */
    void *result_hook_ctx;
    pthread_mutex_t hlock;           /* guards the write health below */
    int write_failed;                /* the last write failed for the disk's sake */
    char write_error[256];           /*   and why */
    int64_t write_failed_ms;         /*   since when (the first of the run of failures) */
    int durability;                  /* enum store_durability */
};

/* Whether the calling thread's last write transaction failed for the
 * disk's sake (store_write_failed_io); per thread, so a caller reads its
 * own outcome, never another thread's. */
static _Thread_local int tls_io_failure;

/* ---- errors ------------------------------------------------------------- */

/* ---- statement cache ---------------------------------------------------- */

static uint64_t sql_hash(const char *sql)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)sql; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

static struct cached_stmt *cache_find(struct conn *c, const char *sql, uint64_t h)
{
    for (size_t i = 0; i < c->nstmts; i++)
        if (c->stmts[i].hash == h && strcmp(c->stmts[i].sql, sql) == 0)
            return &c->stmts[i];
    return NULL;
}

static int cache_grow(struct conn *c)
{
    if (c->nstmts < c->capstmts)
        return 0;
    size_t cap = c->capstmts ? c->capstmts * 2 : 16;
    struct cached_stmt *n = realloc(c->stmts, cap * sizeof *n);
    if (!n)
        return -1;
    c->stmts = n;
    c->capstmts = cap;
    return 0;
}

static sqlite3_stmt *cache_add(struct conn *c, const char *sql, uint64_t h,
                               char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    char *copy = strdup(sql);
    if (!copy || cache_grow(c) != 0) {
        free(copy);
        errf(err, errlen, "caching a statement: out of memory");
        return NULL;
    }
    int rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (rc != SQLITE_OK || !st) {
        errf(err, errlen, "preparing \"%.60s\": %s", sql,
                rc != SQLITE_OK ? sqlite3_errmsg(c->db) : "no statement in the text");
        sqlite3_finalize(st);
        free(copy);
        return NULL;
    }
    c->stmts[c->nstmts++] = (struct cached_stmt){ h, copy, st };
    return st;
}

sqlite3_stmt *conn_stmt(struct conn *c, const char *sql, char *err, size_t errlen)
{
    assert(c && c->db && sql);
    uint64_t h = sql_hash(sql);
    struct cached_stmt *cs = cache_find(c, sql, h);
    if (!cs)
        return cache_add(c, sql, h, err, errlen);
    if (sqlite3_stmt_busy(cs->st)) {
        errf(err, errlen, "statement \"%.60s\" is already in use", sql);
        return NULL;
    }
    return cs->st;
}

void stmt_done(sqlite3_stmt *st)
{
    if (!st)
        return;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

int stmt_finish(sqlite3_stmt *st, const char *what, char *err, size_t errlen)
{
    assert(st);
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW)
        ret = errf(err, errlen, "%s: unexpected row", what);
    else if (rc != SQLITE_DONE)
        ret = db_sqlfail(err, errlen, sqlite3_db_handle(st), what);
    stmt_done(st);
    return ret;
}

int conn_run(struct conn *c, const char *sql, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c, sql, err, errlen);
    if (!st)
        return -1;
    return stmt_finish(st, sql, err, errlen);
}

/* ---- binding and stepping ---------------------------------------------- */

static int arg_bind(sqlite3_stmt *st, int i, struct db_arg a)
{
    switch (a.type) {
    case DB_ARG_TEXT:
        return sqlite3_bind_text(st, i, a.t, -1, SQLITE_STATIC);
    case DB_ARG_REAL:
        return sqlite3_bind_double(st, i, a.r);
    default:
        return sqlite3_bind_int64(st, i, a.i);
    }
}

int stmt_bind(sqlite3_stmt *st, const struct db_arg *args, size_t n, const char *what,
              char *err, size_t errlen)
{
    assert(st && (args || n == 0));
    assert((size_t)sqlite3_bind_parameter_count(st) == n);
    for (size_t i = 0; i < n; i++) {
        if (arg_bind(st, (int)i + 1, args[i]) != SQLITE_OK) {
            db_sqlfail(err, errlen, sqlite3_db_handle(st), what);
            stmt_done(st);
            return -1;
        }
    }
    return 0;
}

sqlite3_stmt *conn_bound(struct conn *c, const char *sql, const struct db_arg *args, size_t n,
                         const char *what, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c, sql, err, errlen);
    if (st && stmt_bind(st, args, n, what, err, errlen) != 0)
        return NULL;
    return st;
}

/* The answer to a step that gave no row: 0 at the end, else the failure
 * (its reason read before the statement is reset). */
static int step_end(sqlite3_stmt *st, int rc, const char *what, char *err, size_t errlen)
{
    int ret = rc == SQLITE_DONE ? 0 : db_sqlfail(err, errlen, sqlite3_db_handle(st), what);
    stmt_done(st);
    return ret;
}

int stmt_rows(sqlite3_stmt *st, row_fn take, void *ctx, const char *what, char *err,
              size_t errlen)
{
    assert(st);
    const struct db_row row = {st, ctx, err, errlen};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int ret = take ? take(&row) : 0;
        if (ret != 0) {
            stmt_done(st);
            return ret;
        }
    }
    return step_end(st, rc, what, err, errlen);
}

int stmt_row(sqlite3_stmt *st, row_fn take, void *ctx, const char *what, char *err,
             size_t errlen)
{
    assert(st && take);
    const struct db_row row = {st, ctx, err, errlen};
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW)
        return step_end(st, rc, what, err, errlen) == 0 ? 1 : -1;
    int ret = take(&row);
    stmt_done(st);
    return ret;
}

int conn_rows(struct conn *c, const char *sql, const struct db_arg *args, size_t n, row_fn take,
              void *ctx, const char *what, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_bound(c, sql, args, n, what, err, errlen);
    return st ? stmt_rows(st, take, ctx, what, err, errlen) : -1;
}

int conn_row(struct conn *c, const char *sql, const struct db_arg *args, size_t n, row_fn take,
             void *ctx, const char *what, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_bound(c, sql, args, n, what, err, errlen);
    return st ? stmt_row(st, take, ctx, what, err, errlen) : -1;
}

int conn_exec(struct conn *c, const char *sql, const struct db_arg *args, size_t n,
              const char *what, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_bound(c, sql, args, n, what, err, errlen);
    return st ? stmt_finish(st, what, err, errlen) : -1;
}

/* ---- rows into structs -------------------------------------------------- */

int col_strdup(sqlite3_stmt *st, int col, char **out)
{
    assert(st && out);
    const unsigned char *t = sqlite3_column_text(st, col);
    *out = NULL;
    if (!t)
        return sqlite3_errcode(sqlite3_db_handle(st)) == SQLITE_NOMEM ? -1 : 0;
    *out = strdup((const char *)t);
    return *out ? 0 : -1;
}

static void *field_at(void *row, const struct col_field *f)
{
    return (char *)row + f->off;
}

int fields_read(sqlite3_stmt *st, void *row, const struct col_field *f, size_t n)
{
    int ncol = sqlite3_column_count(st);
    for (size_t i = 0; i < n; i++) {
        if (f[i].col >= ncol)
            continue;
        if (f[i].type == 't' && col_strdup(st, f[i].col, field_at(row, &f[i])) != 0)
            return -1;
        if (f[i].type == 'i')
            *(int *)field_at(row, &f[i]) = sqlite3_column_int(st, f[i].col);
        if (f[i].type == 'I')
            *(int64_t *)field_at(row, &f[i]) = sqlite3_column_int64(st, f[i].col);
    }
    return 0;
}

void fields_free(void *row, size_t size, const struct col_field *f, size_t n)
{
    if (!row)
        return;
    for (size_t i = 0; i < n; i++)
        if (f[i].type == 't')
            free(*(char **)field_at(row, &f[i]));
    memset(row, 0, size);
}

void fields_free_rows(void *rows, size_t nrows, size_t size, const struct col_field *f,
                      size_t n)
{
    for (size_t i = 0; rows && i < nrows; i++)
        fields_free((char *)rows + i * size, size, f, n);
    free(rows);
}

void *db_array_slot(struct db_array *a)
{
    assert(a && a->size > 0 && a->n <= a->cap);
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        void *more = realloc(a->items, cap * a->size);
        if (!more)
            return NULL;
        a->items = more;
        a->cap = cap;
    }
    return (char *)a->items + a->n * a->size;
}

void *db_row_slot(const struct db_row *r, const char *what)
{
    void *item = db_array_slot(r->ctx);
    struct db_array *a = r->ctx;
    if (!item)
        errf(r->err, r->errlen, "%s: out of memory", what);
    else
        memset(item, 0, a->size);
    return item;
}

int store_list(store *s, const char *sql, const struct db_arg *args, size_t nargs, row_fn take,
               size_t size, void (*release)(void *items, size_t n), void **items, size_t *n,
               const char *what, char *err, size_t errlen)
{
    struct db_array a = {NULL, 0, 0, size};
    assert(s && take && release && items && n);
    int ret = store_read(s, conn_rows, sql, args, nargs, take, &a, what, err, errlen);
    if (ret != 0) {
        release(a.items, a.n);
        a.items = NULL, a.n = 0;
    }
    *items = a.items;
    *n = a.n;
    return ret;
}

/* ---- connections -------------------------------------------------------- */

static void conn_close(struct conn *c)
{
    for (size_t i = 0; i < c->nstmts; i++) {
        sqlite3_finalize(c->stmts[i].st);
        free(c->stmts[i].sql);
    }
    free(c->stmts);
    c->stmts = NULL;
    c->nstmts = c->capstmts = 0;
    sqlite3_close_v2(c->db);   /* NULL is a no-op */
    c->db = NULL;
}

static int conn_pragmas(struct conn *c, char *err, size_t errlen)
{
    char *msg = NULL;
    sqlite3_extended_result_codes(c->db, 1);
    if (sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS) != SQLITE_OK)
        return db_sqlfail(err, errlen, c->db, "setting the busy timeout");
    if (sqlite3_exec(c->db, "PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        errf(err, errlen, "setting connection pragmas: %s", msg ? msg : "unknown error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int conn_open(struct conn *c, const char *path, int readonly, char *err, size_t errlen)
{
    int flags = SQLITE_OPEN_NOMUTEX
              | (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (sqlite3_open_v2(path, &c->db, flags, NULL) != SQLITE_OK) {
        errf(err, errlen, "opening %s%s: %s", path, readonly ? " read-only" : "",
                c->db ? sqlite3_errmsg(c->db) : "out of memory");
        conn_close(c);
        return -1;
    }
    return conn_pragmas(c, err, errlen);
}

/* Switches the file to WAL; the mode is persistent, readers inherit it. */
static int writer_wal(struct conn *c, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK)
        return db_sqlfail(err, errlen, c->db, "switching to WAL");
    int rc = sqlite3_step(st);
    const char *mode = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int ok = mode && strcmp(mode, "wal") == 0;
    if (!ok) {
        if (rc == SQLITE_ROW)
            errf(err, errlen, "switching to WAL: journal mode stays '%s'", mode ? mode : "?");
        else
            db_sqlfail(err, errlen, c->db, "switching to WAL");
    }
    sqlite3_finalize(st);
    return ok ? 0 : -1;
}

static store *store_alloc(void)
{
    store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    pthread_mutex_init(&s->wlock, NULL);
    pthread_mutex_init(&s->rlock, NULL);
    pthread_mutex_init(&s->hlock, NULL);
    pthread_cond_init(&s->rfree, NULL);
    s->durability = STORE_DURABLE;
    atomic_init(&s->generation, 0);
    return s;
}

static int store_open_readers(store *s, const char *path, char *err, size_t errlen)
{
    for (int i = 0; i < STORE_READERS; i++)
        if (conn_open(&s->readers[i], path, 1, err, errlen) != 0)
            return -1;
    return 0;
}

int store_open(store **out, const char *path, char *err, size_t errlen)
{
    assert(out);
    *out = NULL;
    if (!path || !*path || strcmp(path, ":memory:") == 0)
        return errf(err, errlen, "opening the store: a database file path is needed");
    if (!sqlite3_threadsafe())
        return errf(err, errlen, "opening the store: SQLite was built without thread support");
    store *s = store_alloc();
    if (!s)
        return errf(err, errlen, "opening the store: out of memory");
    /* Migrating first leaves a refused (newer) database in its journal mode. */
    if (conn_open(&s->writer, path, 0, err, errlen) != 0
        || schema_migrate(s->writer.db, err, errlen) != 0
        || writer_wal(&s->writer, err, errlen) != 0
        || store_open_readers(s, path, err, errlen) != 0) {
        store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

int store_create_at_version(const char *path, int version, char *err, size_t errlen)
{
    struct conn c;
    memset(&c, 0, sizeof c);
    int rc = conn_open(&c, path, 0, err, errlen) == 0 &&
                     schema_migrate_to(c.db, version, err, errlen) == 0
                 ? 0
                 : -1;
    conn_close(&c);
    return rc;
}

void store_close(store *s)
{
    if (!s)
        return;
    for (int i = 0; i < STORE_READERS; i++)
        conn_close(&s->readers[i]);
    if (s->writer.db) {
        for (size_t i = 0; i < s->writer.nstmts; i++)
            sqlite3_reset(s->writer.stmts[i].st);
        sqlite3_exec(s->writer.db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    }
    conn_close(&s->writer);
    pthread_cond_destroy(&s->rfree);
    pthread_mutex_destroy(&s->rlock);
    pthread_mutex_destroy(&s->hlock);
    pthread_mutex_destroy(&s->wlock);
    free(s);
}

/* ---- readers ------------------------------------------------------------ */

struct conn *store_reader_get(store *s)
{
    assert(s);
    pthread_mutex_lock(&s->rlock);
    for (;;) {
        for (int i = 0; i < STORE_READERS; i++) {
            if (!s->rbusy[i]) {
                s->rbusy[i] = 1;
                pthread_mutex_unlock(&s->rlock);
                return &s->readers[i];
            }
        }
        pthread_cond_wait(&s->rfree, &s->rlock);
    }
}

void store_reader_put(store *s, struct conn *c)
{
    assert(s && c >= s->readers && c < s->readers + STORE_READERS);
    pthread_mutex_lock(&s->rlock);
    assert(s->rbusy[c - s->readers]);
    s->rbusy[c - s->readers] = 0;
    pthread_cond_signal(&s->rfree);
    pthread_mutex_unlock(&s->rlock);
}

int store_read(store *s, conn_query query, const char *sql, const struct db_arg *args, size_t n,
               row_fn take, void *ctx, const char *what, char *err, size_t errlen)
{
    struct conn *c = store_reader_get(s);
    int ret = query(c, sql, args, n, take, ctx, what, err, errlen);
    store_reader_put(s, c);
    return ret;
}

/* ---- write transactions ------------------------------------------------- */

void store_tx_assert_live(const struct store_tx *tx)
{
    assert(tx && tx->live == STORE_TX_LIVE);
}

int64_t store_tx_measured_ms(const struct store_tx *tx)
{
    return tx->measured_ms > 0 ? tx->measured_ms : store_now_ms();
}

/* Whether an SQLite result code is the disk's or the file's fault (full,
 * failing, unreadable, locked by another process past the busy timeout)
 * rather than the transaction's content: such a write may succeed later. */
static int io_class(int code)
{
    switch (code & 0xff) {
    case SQLITE_FULL: case SQLITE_IOERR: case SQLITE_CANTOPEN: case SQLITE_READONLY:
    case SQLITE_CORRUPT: case SQLITE_NOTADB: case SQLITE_NOMEM: case SQLITE_BUSY:
    case SQLITE_PROTOCOL:
        return 1;
    default:
        return 0;
    }
}

/* Records how the writer's last transaction ended: failed is 1 when it
 * failed for the disk's sake (then why says how), 0 when it committed. */
static void note_write(store *s, int failed, const char *why)
{
    tls_io_failure = failed;
    pthread_mutex_lock(&s->hlock);
    if (failed && !s->write_failed)
        s->write_failed_ms = store_now_ms();
    if (failed)
        snprintf(s->write_error, sizeof s->write_error, "%s", why ? why : "write failed");
    s->write_failed = failed;
    pthread_mutex_unlock(&s->hlock);
}

/* After a failed step of the writer: if SQLite's last error on it is an
 * I/O-class one, the store cannot write now. */
static void note_failure(store *s)
{
    int code = sqlite3_extended_errcode(s->writer.db);
    if (io_class(code))
        note_write(s, 1, sqlite3_errstr(code));
}

int store_write_failed_io(void) { return tls_io_failure; }

int store_write_health(store *s, char *reason, size_t len, int64_t *since_ms)
{
    assert(s);
    pthread_mutex_lock(&s->hlock);
    int failed = s->write_failed;
    if (failed && reason)
        snprintf(reason, len, "%s", s->write_error);
    if (since_ms)
        *since_ms = failed ? s->write_failed_ms : 0;
    pthread_mutex_unlock(&s->hlock);
    return failed ? -1 : 0;
}

int store_write_probe(store *s, char *err, size_t errlen)
{
    struct store_tx tx;
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = conn_exec(tx.c,
                        "INSERT INTO store_meta (name, value) VALUES ('write_probe_ms', ?1)"
                        " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                        DB_ARGS(DB_INT(store_now_ms())), "probing a write", err, errlen);
    return store_tx_end(&tx, ret, err, errlen);
}

int store_set_durability(store *s, enum store_durability d)
{
    assert(s && (d == STORE_DURABLE || d == STORE_FAST));
    pthread_mutex_lock(&s->wlock);
    int rc = sqlite3_exec(s->writer.db,
                          d == STORE_DURABLE ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                          NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    if (rc == 0)
        s->durability = (int)d;
    pthread_mutex_unlock(&s->wlock);
    return rc;
}

int store_tx_begin(store *s, struct store_tx *tx, char *err, size_t errlen)
{
    assert(s && tx);
    pthread_mutex_lock(&s->wlock);
    tls_io_failure = 0;
    tx->s = s;
    tx->c = &s->writer;
    tx->live = 0;
    tx->measured_ms = 0;
    if (conn_run(tx->c, "BEGIN IMMEDIATE", err, errlen) != 0) {
        note_failure(s);
        pthread_mutex_unlock(&s->wlock);
        return -1;
    }
    tx->changes_at_begin = sqlite3_total_changes64(s->writer.db);
    tx->live = STORE_TX_LIVE;
    return 0;
}

/* Marks tx ended and hands the write mutex back. */
static void tx_release(struct store_tx *tx)
{
    tx->live = 0;
    pthread_mutex_unlock(&tx->s->wlock);
}

void store_tx_rollback(struct store_tx *tx)
{
    store_tx_assert_live(tx);
    note_failure(tx->s); /* before ROLLBACK replaces the error */
    /* An I/O or memory error may already have rolled the transaction back. */
    if (!sqlite3_get_autocommit(tx->c->db))
        conn_run(tx->c, "ROLLBACK", NULL, 0);
    tx_release(tx);
}

int store_tx_commit(struct store_tx *tx, char *err, size_t errlen)
{
    store_tx_assert_live(tx);
    int changed = sqlite3_total_changes64(tx->c->db) != tx->changes_at_begin;
    if (conn_run(tx->c, "COMMIT", err, errlen) != 0) {
        store_tx_rollback(tx);
        return -1;
    }
    if (changed) /* a commit that wrote nothing proves nothing about the disk */
        note_write(tx->s, 0, NULL);
    if (changed)
        atomic_fetch_add_explicit(&tx->s->generation, 1, memory_order_release);
    tx_release(tx);
    return 0;
}

int store_tx_end(struct store_tx *tx, int ret, char *err, size_t errlen)
{
    if (ret != 0) {
        store_tx_rollback(tx);
        return ret;
    }
    return store_tx_commit(tx, err, errlen);
}

/* ---- store_tx_exec ------------------------------------------------------ */

/* The texts of a saver: their count is checked at run time (a saver's SQL
 * and parameters come from its own tables, and a mismatch is reported). */
static int bind_texts(sqlite3_stmt *st, const char *const *params, size_t n,
                      char *err, size_t errlen)
{
    int want = sqlite3_bind_parameter_count(st);
    if ((size_t)want != n)
        return errf(err, errlen, "statement \"%.60s\" takes %d parameters, %zu given",
                       sqlite3_sql(st), want, n);
    for (size_t i = 0; i < n; i++)
        if (arg_bind(st, (int)i + 1, DB_TEXT(params[i])) != SQLITE_OK)
            return db_sqlfail(err, errlen, sqlite3_db_handle(st), "binding a parameter");
    return 0;
}

int store_tx_exec(struct store_tx *tx, const char *sql, const char *const *params, size_t n,
                  char *err, size_t errlen)
{
    store_tx_assert_live(tx);
    assert(sql && (params || n == 0));
    char what[80];
    sqlite3_stmt *st = conn_stmt(tx->c, sql, err, errlen);
    if (!st)
        return -1;
    if (bind_texts(st, params, n, err, errlen) != 0) {
        stmt_done(st);
        return -1;
    }
    snprintf(what, sizeof what, "running \"%.60s\"", sql);
    return stmt_rows(st, NULL, NULL, what, err, errlen);
}

/* ---- results saved ------------------------------------------------------ */

uint64_t store_tx_generation(const struct store_tx *tx)
{
    store_tx_assert_live(tx);
    return store_generation(tx->s);
}

void store_set_result_hook(store *s, store_result_hook_fn *fn, void *ctx)
{
    assert(s);
    s->result_hook = fn;
    s->result_hook_ctx = ctx;
}

int store_tx_save_result(struct store_tx *tx, int64_t job_id, const char *result_json,
                         const json_t *result, store_result_saver save, char *err,
                         size_t errlen)
{
    store_tx_assert_live(tx);
    store *s = tx->s;
    if (!save && !s->result_hook)
        return 0;
    json_t *parsed = NULL;
    if (!result) {
        json_error_t je;
        parsed = json_loads(result_json ? result_json : "", JSON_REJECT_DUPLICATES, &je);
        if (!parsed)
            return errf(err, errlen, "the result is not JSON: %s", je.text);
        result = parsed;
    }
    int rc = save ? save(tx, job_id, result, err, errlen) : 0;
    if (rc == 0 && s->result_hook)
        rc = s->result_hook(s->result_hook_ctx, tx, job_id, result, err, errlen);
    json_decref(parsed);
    return rc;
}

/* ---- small queries ------------------------------------------------------ */

uint64_t store_generation(store *s)
{
    assert(s);
    return atomic_load_explicit(&s->generation, memory_order_acquire);
}

static int take_int(const struct db_row *r)
{
    *(int *)r->ctx = sqlite3_column_int(r->st, 0);
    return 0;
}

int store_schema_version(store *s)
{
    int v = -1;
    store_read(s, conn_row, "PRAGMA user_version", NULL, 0, take_int, &v,
               "reading the schema version", NULL, 0);
    return v;
}

/* The first line of the check's answer: "ok", or the first fault. */
static int take_integrity(const struct db_row *r)
{
    const char *first = (const char *)sqlite3_column_text(r->st, 0);
    if (first && strcmp(first, "ok") == 0)
        return 0;
    return errf(r->err, r->errlen, "integrity check: %s", first ? first : "no answer");
}

int store_integrity_check(store *s, char *err, size_t errlen)
{
    int ret = store_read(s, conn_row, "PRAGMA integrity_check", NULL, 0, take_integrity, NULL,
                         "integrity check", err, errlen);
    return ret == 1 ? errf(err, errlen, "integrity check: no answer") : ret;
}

int64_t store_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
