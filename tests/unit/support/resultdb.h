/*
 * Test support: probe results in a store. A store opened on a database file
 * in a fresh directory (as cmocka state), results saved the way the daemon
 * saves them (a job for the document's device, inserted and started, then
 * store_job_succeed runs the kind's saver in the job's transaction), read
 * back through store_probe_result, and compared with their source document
 * member by member. Every helper that must succeed fails the test with the
 * store's reason when it does not.
 * Linked into every unit test (see the Makefile).
 */
#ifndef GPUPROBE_TESTS_RESULTDB_H
#define GPUPROBE_TESTS_RESULTDB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"
#include "tests/unit/support/tmpfile.h"

struct rdb {
    struct tmp *t;               /* t->path: the database file */
    store *s;
};

/* cmocka setup and teardown: *state is a struct rdb. */
int rdb_setup(void **state);
int rdb_teardown(void **state);
/* rdb_setup with the store opened as the daemon opens it (gpuprobe_store_open:
 * each saved result's fleet figures stored with it). */
int rdb_setup_gpuprobe(void **state);
/* Imports a result bundle into s, failing the test with the reason and the
 * field when it is refused. */
void rdb_import(store *s, const json_t *bundle);

/* A JSON document from text, or from the file at path (from the repository
 * root), duplicate keys refused; rdb_load_or reads text when path is absent. */
json_t *rdb_parse(const char *text);
json_t *rdb_load(const char *path);
json_t *rdb_load_or(const char *path, const char *text);
/* device.uuid of a result document. */
const char *rdb_uuid(const json_t *doc);

/* Registers the device of doc (its "device" member as the device's info)
 * on host "testhost" as present, named name, compute capability cc: what a
 * daemon's discovery would have done, so bundles and device views see it. */
void rdb_add_device(store *s, const json_t *doc, const char *name, const char *cc);
/* A running job of kind on device (NULL: none). */
int64_t rdb_running_job(store *s, const char *kind, const char *device);
/* Saves doc as job id's result through save: store_job_succeed's answer,
 * its reason in err. */
int rdb_save(store *s, int64_t id, const json_t *doc, store_result_saver save, char *err,
             size_t errlen);
/* A new job of kind on doc's device that succeeded with doc. */
int64_t rdb_saved_job(store *s, const char *kind, const json_t *doc, store_result_saver save);
/* store_probe_result's answer (a new reference). */
json_t *rdb_read(store *s, const char *uuid, const char *probe, int64_t job);
/* Rows in all the probe-result tables of the database file together. */
int64_t rdb_result_rows(const char *path);

/* A damaged document is refused by check and by save (as a job of kind on
 * its device), both naming field in the reason, and the refusal writes no
 * result row. what names the damage in a failure. */
void rdb_refused(struct rdb *f, const char *kind, const json_t *doc,
                 int (*check)(const json_t *, char *, size_t), store_result_saver save,
                 const char *field, const char *what);

/* The memory results' members kept in tables of their own (l1_sets,
 * l2_partitions): the smallest memory document the memory walk accepts
 * (every figure an error) on device RDB_MEMORY_UUID, with member (JSON text;
 * other text as a bare string; NULL: none) set as key. */
#define RDB_MEMORY_UUID "GPU-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5"
json_t *rdb_memory_with(const char *key, const char *member);
/* Checks doc (taken), saves it as a memory job and reads back its member
 * key (a new reference, never NULL). */
json_t *rdb_memory_round_trip(struct rdb *f, json_t *doc, const char *key);

/* One damage to a memory document: what it does, and the field its
 * refusal must name. */
struct rdb_damage {
    const char *field;
    void (*mutate)(json_t *doc);
};
/* Each of damages[0..n), done to a fresh rdb_memory_with(key, member), is
 * refused by check and save naming its field (rdb_refused). */
void rdb_memory_damages_refused(struct rdb *f, const char *key, const char *member,
                                const struct rdb_damage *damages, size_t n);

/* ---- comparing (what names the member in a failure) ----------------------------- */

/* A number; want absent or null expects null. */
void rdb_check_number(const json_t *want, const json_t *got, const char *what);
/* A string; want absent or null expects null. */
void rdb_check_text(const json_t *want, const json_t *got, const char *what);
/* Equal JSON, absent as null. */
void rdb_check_same(const json_t *want, const json_t *got, const char *what);
/* The error of a figure: a bare string or {"error": ...}; NULL if none. */
const json_t *rdb_error_member(const json_t *fig);
/* A figure: absent -> null; an error -> {"error": same text}; else median,
 * min and max (want may wrap its figure as {"cycles": ...}). */
void rdb_check_figure(const json_t *want, const json_t *got, const char *what);
/* The reader's provenance against the document's, and the job. */
void rdb_check_provenance(const json_t *doc, const json_t *got, int64_t job);

#endif
