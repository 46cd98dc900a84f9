/*
 * Internals shared by the files of the store (the .c files of db/); nothing outside db/
 * includes this header but the store's own unit test of its contracts.
 *
 * DESIGN
 * A `struct conn` is one SQLite connection plus its cache of prepared
 * statements, keyed by SQL text: code asks for a statement by its SQL with
 * conn_stmt(), uses it and hands it back with stmt_done(), which resets it and
 * clears its bindings so it holds no read snapshot and no pointers. A
 * connection is used by one thread at a time: the writer under the store's
 * write mutex (taken by store_tx_begin, released by commit or rollback), a
 * reader between store_reader_get and store_reader_put. Every write is a
 * `struct store_tx` (BEGIN IMMEDIATE ... COMMIT); the commit bumps the
 * store's generation when the transaction changed any row.
 *
 * Every cached statement of db/ runs through one set of helpers, so
 * binding, stepping and reporting a failure are written once (only the
 * schema's migrations, which run before the store exists, use sqlite3_exec
 * on their own): conn_bound binds an array of struct db_arg (DB_ARGS lists
 * them in place); conn_row takes the one row a lookup expects (1 when there
 * is none), conn_rows hands every row to a row_fn, conn_exec runs a
 * statement that returns no row, and store_read runs one of them on a
 * borrowed reader. A row_fn turns a row into the caller's data; the common
 * case, columns copied into the members of a C struct, is a table of struct
 * col_field driven by fields_read (and fields_free for the copied texts),
 * and rows collected into an array grow it through db_array_slot.
 *
 * Contracts are assert()s, enabled in every build: they catch calls the
 * program itself gets wrong (a NULL store, a transaction used after its
 * commit, a statement bound with a parameter count its SQL does not take),
 * never input that reaches the store at run time, which keeps its error
 * return.
 */
#ifndef GPUPROBE_DB_STORE_INTERNAL_H
#define GPUPROBE_DB_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"
#include "db/fleet_store.h"

#include "db/sql_error.h"
#include "util/errf.h"

struct cached_stmt;

struct conn {
    sqlite3 *db;
    struct cached_stmt *stmts;
    size_t nstmts, capstmts;
};

/* store_tx.live while the transaction is open: set by store_tx_begin,
 * cleared by commit and rollback, so a use after either is caught. */
#define STORE_TX_LIVE 0x74786c76u

struct store_tx {
    store *s;
    struct conn *c;
    int64_t changes_at_begin;   /* sqlite3_total_changes64 when the tx began */
    unsigned live;              /* STORE_TX_LIVE between begin and commit/rollback */
    int64_t measured_ms;        /* when the results saved in it were measured; 0: now
                                   (an import keeps the original time) */
};

/* The columns of a job row, 0..11; a query may add error (12),
 * error_detail (13), result_json (14) and the provenance:
 * gpuprobe_version (15), origin_host (16), origin_job (17). */
#define STORE_JOB_COLS "id, kind, device, params_json, state, attempt, max_attempts, timeout_s," \
                       " cancel_requested, created_ms, started_ms, finished_ms"
/* A row of STORE_JOB_COLS (and the optional columns) into j. */
int store_job_from_row(sqlite3_stmt *st, struct job_row *j, char *err, size_t errlen);
/* Appends the job's event (a state it reached, with a message) in tx. */
int store_job_event_tx(struct store_tx *tx, int64_t id, int64_t now, enum job_state to,
                       const char *msg, char *err, size_t errlen);
/* Records the host by name in tx; its id in *host_id. */
int store_host_upsert_tx(struct store_tx *tx, const char *hostname, const char *machine_id,
                         int64_t *host_id, char *err, size_t errlen);

/* The time a result saved in tx was measured (tx->measured_ms, else now). */
int64_t store_tx_measured_ms(const struct store_tx *tx);
/* Saves a succeeded job's result rows through save (may be NULL), then tells
 * the store's result hook (db/fleet_store.h): the one way a result is saved.
 * result is result_json parsed when the caller has it; NULL: parsed here,
 * once, for both (text that is not JSON is refused). */
int store_tx_save_result(struct store_tx *tx, int64_t job_id, const char *result_json,
                         const json_t *result, store_result_saver save, char *err,
                         size_t errlen);

/* Asserts that tx is an open transaction (between begin and commit/rollback). */
void store_tx_assert_live(const struct store_tx *tx);



/* ---- statements ----------------------------------------------------------- */

/* The connection's statement for sql, prepared once (persistent) and cached;
 * NULL with the reason in err. Refuses a statement that is still in use. */
sqlite3_stmt *conn_stmt(struct conn *c, const char *sql, char *err, size_t errlen);
/* Resets st and clears its bindings. NULL is ok. */
void stmt_done(sqlite3_stmt *st);
/* Steps st once more expecting no further row (SQLITE_DONE), then stmt_done.
 * what names the operation for the error message. */
int stmt_finish(sqlite3_stmt *st, const char *what, char *err, size_t errlen);
/* Runs a cached parameterless statement to completion. */
int conn_run(struct conn *c, const char *sql, char *err, size_t errlen);

/* A value for one statement parameter: an integer, a real, or a text bound
 * without a copy (it must outlive the statement's use; NULL binds SQL NULL). */
enum db_arg_type { DB_ARG_INT, DB_ARG_TEXT, DB_ARG_REAL };
struct db_arg {
    enum db_arg_type type;
    int64_t i;
    const char *t;
    double r;
};
#define DB_INT(v) ((struct db_arg){DB_ARG_INT, (int64_t)(v), NULL, 0})
#define DB_TEXT(v) ((struct db_arg){DB_ARG_TEXT, 0, (v), 0})
#define DB_REAL(v) ((struct db_arg){DB_ARG_REAL, 0, NULL, (v)})
/* The two arguments (args, n) that a list of DB_INT / DB_TEXT makes. */
#define DB_ARGS(...) (const struct db_arg[]){__VA_ARGS__}, \
                     sizeof((const struct db_arg[]){__VA_ARGS__}) / sizeof(struct db_arg)

/* Binds args[0..n) to ?1..?n of st. Contract: n is the statement's parameter
 * count (the SQL is the program's own). On a failure st is reset and the
 * reason is "<what>: <SQLite's reason>". */
int stmt_bind(sqlite3_stmt *st, const struct db_arg *args, size_t n, const char *what,
              char *err, size_t errlen);
/* conn_stmt then stmt_bind; NULL with the reason in err. */
sqlite3_stmt *conn_bound(struct conn *c, const char *sql, const struct db_arg *args, size_t n,
                         const char *what, char *err, size_t errlen);

/* One row handed to a row_fn: the statement standing on it, the caller's
 * context, and where a failure's reason goes. */
struct db_row {
    sqlite3_stmt *st;
    void *ctx;
    char *err;
    size_t errlen;
};
/* What to do with one row: 0 to go on, else the answer to stop with (-1
 * with the reason in r->err). */
typedef int (*row_fn)(const struct db_row *r);

/* Steps st to its end, each row to take: 0, take's first nonzero answer, or
 * -1 with "<what>: <SQLite's reason>" when a step fails. Resets st. */
int stmt_rows(sqlite3_stmt *st, row_fn take, void *ctx, const char *what, char *err,
              size_t errlen);
/* Steps st once: its row to take (take's answer returned), 1 when there is
 * none, -1 with "<what>: ..." when the step fails. Resets st. */
int stmt_row(sqlite3_stmt *st, row_fn take, void *ctx, const char *what, char *err,
             size_t errlen);

/* conn_bound, then stmt_rows / stmt_row / stmt_finish: a query read or a
 * write run in one call, what naming it in an error. */
int conn_rows(struct conn *c, const char *sql, const struct db_arg *args, size_t n, row_fn take,
              void *ctx, const char *what, char *err, size_t errlen);
int conn_row(struct conn *c, const char *sql, const struct db_arg *args, size_t n, row_fn take,
             void *ctx, const char *what, char *err, size_t errlen);
int conn_exec(struct conn *c, const char *sql, const struct db_arg *args, size_t n,
              const char *what, char *err, size_t errlen);

/* ---- rows into C structs ----------------------------------------------------- */

/* Copies a text column (NULL stays NULL); -1 when out of memory. */
int col_strdup(sqlite3_stmt *st, int col, char **out);

/* One column read into a member of a C struct. */
struct col_field {
    int col;            /* result column; one the query does not have is skipped */
    char type;          /* 't' char * (a malloc'd copy, NULL for NULL), 'i' int, 'I' int64_t */
    size_t off;         /* offsetof the member */
};

/* Reads the fields f[0..n) of the current row into row; -1 when out of
 * memory (the texts copied so far stay in row, for fields_free). */
int fields_read(sqlite3_stmt *st, void *row, const struct col_field *f, size_t n);
/* Frees the 't' members of row and zeroes its size bytes. NULL row is ok. */
void fields_free(void *row, size_t size, const struct col_field *f, size_t n);
/* fields_free on each of the nrows size-byte rows, then the array itself. */
void fields_free_rows(void *rows, size_t nrows, size_t size, const struct col_field *f,
                      size_t n);

/* Rows collected into a malloc'd array of size-byte items: db_array_slot
 * hands back the free slot after the n items (growing the array, which
 * then belongs to the caller), NULL when out of memory; the caller fills
 * it and counts it (n++). */
struct db_array {
    void *items;
    size_t n, cap, size;
};
void *db_array_slot(struct db_array *a);
/* For a row_fn collecting into the db_array r->ctx: the next item, zeroed;
 * NULL after writing "<what>: out of memory" into r's err. The caller fills
 * it and counts it (n++). */
void *db_row_slot(const struct db_row *r, const char *what);

/* ---- transactions and connections ------------------------------------------------- */

/* Write transactions: begin takes the write mutex and runs BEGIN IMMEDIATE;
 * commit or rollback ends the transaction and releases the mutex, whatever
 * happens. A failed commit rolls back. Contract: s and tx are not NULL;
 * commit and rollback take a live transaction (one begun and not yet ended). */
int store_tx_begin(store *s, struct store_tx *tx, char *err, size_t errlen);
int store_tx_commit(struct store_tx *tx, char *err, size_t errlen);
void store_tx_rollback(struct store_tx *tx);
/* Ends tx by the answer of the work done in it: commits on 0 (and returns
 * the commit's answer), rolls back and returns ret otherwise (1 or -1). */
int store_tx_end(struct store_tx *tx, int ret, char *err, size_t errlen);

/* Borrows a read-only connection, waiting while all are in use; put hands it
 * back (contract: c was borrowed from s and not yet handed back). */
struct conn *store_reader_get(store *s);
void store_reader_put(store *s, struct conn *c);
/* A query on a connection: conn_rows or conn_row. */
typedef int (*conn_query)(struct conn *c, const char *sql, const struct db_arg *args, size_t n,
                          row_fn take, void *ctx, const char *what, char *err, size_t errlen);
/* query on a reader borrowed for it alone. */
int store_read(store *s, conn_query query, const char *sql, const struct db_arg *args, size_t n,
               row_fn take, void *ctx, const char *what, char *err, size_t errlen);

/* A listing: sql on a reader, each row collected by take (through
 * db_row_slot) into *items, an array of size-byte items (*n of them). On
 * failure the rows taken so far are released with release(items, n) and
 * none are handed back. */
int store_list(store *s, const char *sql, const struct db_arg *args, size_t nargs, row_fn take,
               size_t size, void (*release)(void *items, size_t n), void **items, size_t *n,
               const char *what, char *err, size_t errlen);

/* schema.c: migrates the writer connection's database to the latest version,
 * each step in its own transaction with its version bump. */
int schema_migrate(sqlite3 *db, char *err, size_t errlen);
/* The same up to version target (no further; a database already there or
 * beyond is left as it is, unless it is newer than this binary knows). */
int schema_migrate_to(sqlite3 *db, int target, char *err, size_t errlen);

#endif
