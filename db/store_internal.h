/*
 * Internals shared by the files of the store (the .c files of db/); nothing outside db/
 * includes this header.
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
 */
#ifndef GPUPROBE_DB_STORE_INTERNAL_H
#define GPUPROBE_DB_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

struct cached_stmt;

struct conn {
    sqlite3 *db;
    struct cached_stmt *stmts;
    size_t nstmts, capstmts;
};

struct store_tx {
    store *s;
    struct conn *c;
    int64_t changes_at_begin;   /* sqlite3_total_changes64 when the tx began */
};

/* Writes the formatted one-line reason into err; returns -1. */
int db_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "<what>: <sqlite3_errmsg(db)>"; returns -1. */
int db_sqlfail(char *err, size_t errlen, sqlite3 *db, const char *what);

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
/* Copies a text column (NULL stays NULL); -1 when out of memory. */
int col_strdup(sqlite3_stmt *st, int col, char **out);

/* Write transactions: begin takes the write mutex and runs BEGIN IMMEDIATE;
 * commit or rollback ends the transaction and releases the mutex, whatever
 * happens. A failed commit rolls back. */
int store_tx_begin(store *s, struct store_tx *tx, char *err, size_t errlen);
int store_tx_commit(struct store_tx *tx, char *err, size_t errlen);
void store_tx_rollback(struct store_tx *tx);

/* Borrows a read-only connection, waiting while all are in use. */
struct conn *store_reader_get(store *s);
void store_reader_put(store *s, struct conn *c);

/* schema.c: migrates the writer connection's database to the latest version,
 * each step in its own transaction with its version bump. */
int schema_migrate(sqlite3 *db, char *err, size_t errlen);
/* The same up to version target (no further; a database already there or
 * beyond is left as it is, unless it is newer than this binary knows). */
int schema_migrate_to(sqlite3 *db, int target, char *err, size_t errlen);

#endif
