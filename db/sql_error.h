/*
 * SQLite's reason for a failed call, in the store's one-line form: what
 * the store was doing, then SQLite's message. Used by the schema's
 * migrations and by every statement the store runs.
 */
#ifndef GPUPROBE_DB_SQL_ERROR_H
#define GPUPROBE_DB_SQL_ERROR_H

#include <sqlite3.h>
#include <stddef.h>

#include "util/errf.h"

/* "<what>: <sqlite3_errmsg(db)>" into err (errf); returns -1. */
static inline int db_sqlfail(char *err, size_t errlen, sqlite3 *db, const char *what)
{
    return errf(err, errlen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
}

#endif
