/*
 * The store: gpuprobe's SQLite database. All SQL of the project lives in db/.
 *
 * DESIGN
 * One database file in WAL mode. Writes go through a single writer connection
 * guarded by a mutex, so writers never contend inside SQLite; reads use a small
 * pool of read-only connections, so readers never wait on the writer (WAL gives
 * them a consistent snapshot). Every connection has a busy timeout and
 * foreign keys on; statements are prepared once per connection and reused.
 * The schema is versioned by PRAGMA user_version; each migration step runs in
 * one transaction together with the version bump, so a crash mid-migration
 * leaves the previous version intact.
 *
 * All functions are thread-safe. Unless stated otherwise they return 0 on
 * success and -1 on failure, writing a one-line reason into err (errlen bytes,
 * always NUL-terminated). Functions that look a row up return 1 when it does
 * not exist. Strings handed back in structs are owned by the struct and freed
 * by its *_free function.
 *
 * Contracts: every function asserts its preconditions (assert(), enabled in
 * every build), so a call the program itself gets wrong stops the daemon at
 * the mistake instead of corrupting a result or a job's state. Unless a
 * function says otherwise, store and out pointers must not be NULL; the
 * state machine's transitions (start, succeed, fail, interrupt, cancelled)
 * take ids the program read from the store, so an id below 1 is such a
 * mistake. What a client or a file can send (an unknown or negative job id,
 * an unknown state name, a malformed document) is never asserted: it gets
 * the error return described with the function.
 *
 * Times are milliseconds since the Unix epoch (UTC); 0 means "not yet".
 */
#ifndef GPUPROBE_DB_STORE_H
#define GPUPROBE_DB_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct store store;

/* Opens (creating if needed) the database at path and migrates it to the
 * newest schema; *out is the store, to be closed with store_close. A missing
 * path or ":memory:", and a database newer than this binary knows, are
 * refused (-1, *out NULL). */
int store_open(store **out, const char *path, char *err, size_t errlen);
/* Finishes outstanding statements, checkpoints the WAL and closes. NULL is ok. */
void store_close(store *s);

/* The schema version now in force (PRAGMA user_version); -1 when it cannot
 * be read. */
int store_schema_version(store *s);
/* The schema version this binary migrates to. */
int store_schema_latest(void);
/* Creates the database at path (or migrates an older one) only up to schema
 * version, without opening a store: how a test builds the database an older
 * gpuprobe left, to check the later migrations on it. */
int store_create_at_version(const char *path, int version, char *err, size_t errlen);

/* A counter bumped by every committed write; readers may cache derived data
 * (such as an encoded response) and reuse it while the counter is unchanged. */
uint64_t store_generation(store *s);

/* Runs PRAGMA integrity_check; 0 when the answer is "ok". */
int store_integrity_check(store *s, char *err, size_t errlen);

/* ---- durability and write health -------------------------------------------
 * Durability: every commit of the store is synced to disk before it returns
 * (WAL with synchronous=FULL), so whatever a write acknowledged (a job
 * accepted with 202, a result stored) survives a power loss. STORE_FAST
 * (synchronous=NORMAL: commits reach the disk at the next checkpoint, and
 * the last ones may be lost with the power, never corrupted) is for a
 * benchmark's comparison (bench/store/). */
enum store_durability { STORE_DURABLE, STORE_FAST };
/* 0, or -1 when SQLite refused the setting. */
int store_set_durability(store *s, enum store_durability d);

/* Write health: whether the last write transaction that reached the disk
 * failed for the disk's sake (full, I/O error, the file locked by another
 * process past the busy timeout) rather than for its content. It turns
 * healthy again at the next commit that writes something. 0 when healthy;
 * -1 with the reason (reason may be NULL) and since when (ms since the epoch,
 * since_ms may be NULL) when not. */
int store_write_health(store *s, char *reason, size_t len, int64_t *since_ms);
/* 1 when the calling thread's last write transaction (begin, any
 * statement, commit) failed for the disk's sake, so the same write may
 * succeed later; 0 when it succeeded or failed for its content. */
int store_write_failed_io(void);
/* A tiny write (a heartbeat row in store_meta) to find out whether the store
 * can write again; 0 or -1 with the reason. */
int store_write_probe(store *s, char *err, size_t errlen);

/* ---- hosts and devices -------------------------------------------------- */

/* Records this host (by hostname; machine_id may be empty or NULL) and
 * returns its id (> 0) in *host_id. An empty hostname is refused (-1). */
int store_host_upsert(store *s, const char *hostname, const char *machine_id,
                      int64_t *host_id, char *err, size_t errlen);

/* Records one device as seen now on host_id. info_json is the device's full
 * description (as `gpuprobe devices` prints it); name and cc are copied out of
 * it into columns for queries. Marks the device present. Contract: host_id
 * is one store_host_upsert returned. An empty uuid is refused and info_json
 * that is not JSON fails (-1); NULL name, cc or info_json store "", "" and
 * "{}". */
int store_device_upsert(store *s, int64_t host_id, const char *uuid, const char *name,
                        const char *compute_capability, const char *info_json,
                        char *err, size_t errlen);

/* Marks every device of host_id absent except those whose UUIDs are listed
 * (present_uuids[0..n); NULL entries are skipped). Contract: host_id is one
 * store_host_upsert returned; present_uuids may be NULL only when n is 0. */
int store_devices_mark_absent(store *s, int64_t host_id, const char *const *present_uuids,
                              size_t n, char *err, size_t errlen);

struct device_row {
    char *uuid;
    char *name;
    char *compute_capability;
    char *info_json;        /* as given to store_device_upsert */
    int present;
    int64_t first_seen_ms;
    int64_t last_seen_ms;
    char *hostname;         /* the host it was seen on (its results' origin) */
};
void device_row_free(struct device_row *d);
void device_rows_free(struct device_row *rows, size_t n);

/* Returns 0 and fills out (free it with device_row_free), 1 if the UUID is
 * unknown or NULL, -1 on error; out is zeroed first in every case. */
int store_device_get(store *s, const char *uuid, struct device_row *out,
                     char *err, size_t errlen);

/* Every device the store has seen, on any host, by host, then PCI bus id
 * (the info's pci_bus_id; none first), then first sighting (*rows malloc'd;
 * free with device_rows_free). */
int store_device_list(store *s, struct device_row **rows, size_t *n, char *err, size_t errlen);

/* ---- jobs ---------------------------------------------------------------- */

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_SUCCEEDED, JOB_FAILED, JOB_CANCELLED };
#define JOB_STATE_COUNT 5

/* "queued", "running", ...; job_state_parse returns -1 for an unknown (or
 * NULL) name. Contract: job_state_name and job_state_is_terminal take a
 * value of enum job_state (a name from a client goes through
 * job_state_parse first). */
const char *job_state_name(enum job_state st);
int job_state_parse(const char *name);
/* succeeded, failed and cancelled are terminal. */
int job_state_is_terminal(enum job_state st);

struct job_row {
    int64_t id;
    char *kind;
    char *device;           /* GPU UUID, or NULL for a job that needs no GPU */
    char *params_json;      /* validated parameters, as stored */
    enum job_state state;
    int attempt;            /* times the job has been started, less the starts an
                               operator's stop interrupted (store_job_stopped) */
    int max_attempts;
    int timeout_s;
    int cancel_requested;
    int64_t created_ms, started_ms, finished_ms;
    char *error;            /* NULL unless failed/cancelled/re-queued with a reason */
    char *error_detail;     /* NULL, or a failure's details as a JSON object
                               ("error_class", "error_line", "error_offset") */
    char *result_json;      /* NULL unless succeeded */
    char *gpuprobe_version; /* the gpuprobe that stored its result; NULL if unknown */
    char *origin_host;      /* an imported result: the host it was measured on, */
    int64_t origin_job;     /*   and its job id there; NULL/0 for a job run here */
};
void job_row_free(struct job_row *j);

struct job_event {
    int64_t at_ms;
    enum job_state state;
    char *message;
};
void job_events_free(struct job_event *ev, size_t n);

/* Inserts a queued job (attempt 0) and its first event ("submitted"); its
 * id into *id_out unless id_out is NULL. device may be NULL, params_json
 * NULL stores "{}". An empty kind, timeout_s or max_attempts below 1, and
 * params_json that is not JSON are refused (-1). */
int store_job_insert(store *s, const char *kind, const char *device, const char *params_json,
                     int timeout_s, int max_attempts, int64_t *id_out, char *err, size_t errlen);

/* Returns 0 and fills out (free it with job_row_free), 1 if there is no
 * such job (any id, as a client may ask for any), -1 on error; out is
 * zeroed first in every case. */
int store_job_get(store *s, int64_t id, struct job_row *out, char *err, size_t errlen);

/* The job's events, oldest first (*ev is malloc'd; free with
 * job_events_free). An unknown job has none (0, *n 0). On an error *ev is
 * NULL and *n 0. */
int store_job_events(store *s, int64_t id, struct job_event **ev, size_t *n,
                     char *err, size_t errlen);

/* Listing with keyset pagination, newest first: rows with id < before_id
 * (0 = from the newest), at most limit rows. state < 0 means any state;
 * device NULL means any device; kind NULL means any kind. result_json is not
 * loaded (left NULL). *rows is malloc'd (free with job_rows_free); NULL and
 * *n 0 on an error. A limit below 1 or a state above the last is refused
 * (-1): the filter comes from a client. */
struct job_filter {
    int state;
    const char *device;
    const char *kind;
    int64_t before_id;
    int limit;
};
int store_job_list(store *s, const struct job_filter *f, struct job_row **rows, size_t *n,
                   char *err, size_t errlen);
void job_rows_free(struct job_row *rows, size_t n);

/* Queued jobs in FIFO order (oldest first), at most limit, for the scheduler.
 * result_json and error are not loaded. *rows as for store_job_list; a limit
 * below 1 is refused (-1). */
int store_jobs_queued(store *s, int limit, struct job_row **rows, size_t *n,
                      char *err, size_t errlen);

/* queued -> running: attempt += 1, started_ms = now, event "started".
 * Returns 1 (and changes nothing) if the job is no longer queued (or does
 * not exist). Contract: id > 0. */
int store_job_start(store *s, int64_t id, char *err, size_t errlen);

/* Called after the job's result has been validated: running -> succeeded with
 * result_json, finished_ms = now, event "succeeded", and, in the same
 * transaction, the kind's result rows through save (may be NULL). If save
 * fails, nothing is written and -1 is returned with its reason.
 * Returns 1 (and changes nothing) if the job is not running. Contract:
 * id > 0 and result_json is not NULL (result_json that is not JSON fails,
 * -1).
 * A saver gets the job's live transaction (valid only until it returns:
 * the store commits or rolls it back), the job's id and the result as the
 * store parsed it once for the saver and the result hook; it writes through
 * store_tx_exec and returns 0, or -1 with its reason. */
struct store_tx;
typedef int store_result_saver_fn(struct store_tx *tx, int64_t job_id, const json_t *result,
                                  char *err, size_t errlen);
typedef store_result_saver_fn *store_result_saver;
int store_job_succeed(store *s, int64_t id, const char *result_json, store_result_saver save,
                      char *err, size_t errlen);

/* A job that ran outside the daemon (`gpuprobe probe --db`): inserted,
 * started and succeeded with result_json, and its rows saved through save,
 * all in one transaction, so a daemon on the same database never sees it
 * queued. max_attempts is 1. Nothing is written if save fails. The id into
 * *id_out unless id_out is NULL. An empty kind or a timeout_s below 1 is
 * refused (-1). Contract: result_json is not NULL. */
int store_job_record(store *s, const char *kind, const char *device, const char *params_json,
                     int timeout_s, const char *result_json, store_result_saver save,
                     int64_t *id_out, char *err, size_t errlen);

/* running -> failed with the reason (event "failed: <reason>") and, when
 * detail_json is not NULL, the failure's details (a JSON object), in one
 * transaction. Returns 1 if the job is not running. reason may be NULL or
 * empty ("unknown reason"). Contract: id > 0. */
int store_job_fail(store *s, int64_t id, const char *reason, const char *detail_json, char *err,
                   size_t errlen);

/* A started job that was interrupted (its process killed by a daemon stop or
 * lost in a crash): running -> queued with the reason if attempt < max_attempts,
 * else running -> failed with "gave up after N attempts: <reason>".
 * *requeued says which (requeued may be NULL). A job whose cancellation was
 * requested ends cancelled instead. Returns 1 if the job is not running.
 * reason may be NULL or empty ("interrupted"). Contract: id > 0. */
int store_job_interrupt(store *s, int64_t id, const char *reason, int *requeued,
                        char *err, size_t errlen);

/* A started job stopped by the operator (an orderly daemon stop whose grace
 * period ran out): running -> queued with the reason and attempt - 1, for an
 * operator's stop is not the job's failure and never uses up its attempts;
 * a job whose cancellation was requested ends cancelled instead. Returns 1
 * if the job is not running. reason may be NULL or empty ("interrupted").
 * Contract: id > 0. */
int store_job_stopped(store *s, int64_t id, const char *reason, char *err, size_t errlen);

/* Applies store_job_interrupt to every running job, in one transaction;
 * for start-up after a crash. *count (count may be NULL) receives how many
 * jobs it touched. */
int store_jobs_recover(store *s, const char *reason, int *count, char *err, size_t errlen);

/* Cancellation. A queued job becomes cancelled at once (*state_out =
 * JOB_CANCELLED); a running job gets cancel_requested = 1 and stays running
 * until the scheduler has killed it (*state_out = JOB_RUNNING). A job already
 * terminal is left alone and its state returned (state_out may be NULL).
 * Returns 1 if no such job (any id, as a client may send any). */
int store_job_cancel(store *s, int64_t id, enum job_state *state_out, char *err, size_t errlen);

/* running -> cancelled, after the scheduler killed the process (event
 * "cancelled"). Returns 1 if the job is not running. Contract: id > 0. */
int store_job_cancelled(store *s, int64_t id, char *err, size_t errlen);

/* ---- results between stores ------------------------------------------------
 * A bundle (server/bundles/) carries a device's results to another store.
 * Exporting reads them; importing writes them as jobs that carry their
 * origin (the host and job that measured them) and original times, saved
 * through their kinds' savers. */

/* The succeeded jobs of the device, oldest first (by finish time, then id),
 * with result_json and provenance (*rows malloc'd; free with
 * job_rows_free). */
int store_device_results(store *s, const char *uuid, struct job_row **rows, size_t *n,
                         char *err, size_t errlen);

struct store_import_result {
    const char *kind;
    store_result_saver save;          /* the kind's saver; NULL: the job row alone */
    const char *params_json, *result_json;
    const json_t *result;             /* result_json parsed, when the caller has it (NULL:
                                         the store parses it) */
    int timeout_s;                    /* >= 1 */
    const char *origin_host;          /* where it was measured, */
    int64_t origin_job;               /*   as which job there */
    int64_t created_ms, started_ms, finished_ms;
    const char *gpuprobe_version;     /* NULL: unknown */
    int summary;                      /* a summary of a result (its fleet figures alone):
                                         held by the measurement in any form, where a
                                         whole result is held only by one of its kind */
};

struct store_import_device {
    const char *host, *uuid, *name, *compute_capability, *info_json;
    const struct store_import_result *results;   /* in the order to save them */
    size_t nresults;
};

struct store_import_counts {
    size_t devices_added;   /* devices the store did not know */
    size_t results_added;
    size_t results_held;    /* results it had already (imported, or measured here) */
};

/* Imports the devices and their results in one transaction: all of it, or
 * nothing with the reason (a saver refusing a result names it). A device
 * already known keeps its row; a result already held is skipped (counted in
 * results_held), so importing the same results twice changes nothing.
 * Contract: every string member is set (info_json may be "{}"). */
int store_import(store *s, const struct store_import_device *dev, size_t ndev,
                 struct store_import_counts *counts, char *err, size_t errlen);

/* Takes back what imports from host brought for the device uuid: the
 * results it imported from there (jobs whose origin host is host; every
 * row derived from them goes with them: result tables, fleet figures),
 * then the device itself when it is listed under host and holds no result
 * any more (one that still holds results imported from elsewhere is listed
 * where the newest of them was measured, as an import would list it), then
 * host once no device is listed under it. A result measured
 * anywhere else, and a device listed under another host, are never
 * touched. One transaction. *devices and *results (counts, added to; not
 * NULL) say what went. -1 with the reason. */
int store_remove_imported(store *s, const char *host, const char *uuid, size_t *devices,
                          size_t *results, char *err, size_t errlen);

/* Counts of jobs per state (indexed by enum job_state). */
int store_job_counts(store *s, int64_t counts[JOB_STATE_COUNT], char *err, size_t errlen);
/* Calls fn with the number of jobs of each kind in each state that has any,
 * ordered by kind then state; stops at fn's first nonzero answer and
 * returns it. */
int store_job_counts_by_kind(store *s,
                             int (*fn)(void *ctx, const char *kind, enum job_state st, int64_t n),
                             void *ctx, char *err, size_t errlen);

/* ---- result tables (used by store_result_saver implementations in db/) ---- */

/* Runs one SQL statement with text parameters inside the transaction of a
 * saver; the statement is prepared once and cached. NULL params bind NULL.
 * A statement that takes another number of parameters than n, bad SQL and
 * a failed constraint are reported (-1) and leave the transaction usable.
 * Contract: tx is the live transaction handed to the saver; params may be
 * NULL only when n is 0. */
int store_tx_exec(struct store_tx *tx, const char *sql, const char *const *params, size_t n,
                  char *err, size_t errlen);

/* The probes' result tables (savers, checks, the reader) are declared in
 * db/results.h. */

/* Current time in ms since the epoch (wall clock, UTC). */
int64_t store_now_ms(void);

#endif
