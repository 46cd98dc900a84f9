/*
 * The daemon's life (see serve.h).
 *
 * DESIGN
 * Start-up order matters: the store first (recovering jobs a crash left
 * running, before anything could start them; then the reference data it
 * lacks, or with reference = off the reference data a start with it on
 * put there, taken out again), then HTTP (so /healthz answers
 * and /readyz says "not yet" while discovery runs), then discovery, then the
 * scheduler. Signals are blocked in every thread and taken synchronously by
 * the main thread with sigwait, so no code runs in signal context. SIGTERM
 * and SIGINT shut down in reverse, gracefully: stop accepting connections,
 * then, for up to stop_grace_s, let running jobs finish and in-flight
 * requests be answered (a synchronous sort's queued job is still started,
 * since its client waits: scheduler_drain), then stop HTTP, stop the
 * scheduler (what still runs goes back to the queue without counting the
 * attempt), close the store. Before HTTP starts, upload_dir is swept of
 * what no job will use (upload_sweep.h). The listening address is bound
 * before the database is opened (http_bind), so a typo or a port in use
 * fails before a database or its lock file is made; nothing a daemon made
 * is ever removed again, since another process may have opened it since.
 * In test builds only, GPUPROBE_FAULT_VFS="write:N[:FILE]" or
 * "sync:N[:FILE]" puts the store behind the fault-injecting VFS
 * (db/fault_vfs.h), armed when the daemon is ready, so the Nth write or
 * sync after that fails (and every later one while FILE exists).
 */
#include "server/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleet/index.h"
#include "server/api/routes.h"
#include "server/app.h"
#include "server/bundles/reference.h"
#include "server/discovery.h"
#include "server/http/auth.h"
#include "server/http/http.h"
#include "server/http/req_stats.h"
#include "server/jobs/scheduler.h"
#include "server/jobs/upload_sweep.h"
#include "server/log.h"
#include "server/push/client.h"
#include "server/push/pusher.h"
#include "server/store_open.h"
#include "util/clock.h"
#ifdef GPUPROBE_TEST_BUILD
#include "db/fault_vfs.h"
#endif

/* One daemon per database: a second one would re-run the first one's jobs
 * as "interrupted". The lock lives beside the database (never on the file
 * itself, whose POSIX locks belong to SQLite) and dies with the process. */
static void lock_path(const char *db, char *path, size_t len)
{
    snprintf(path, len, "%s.lock", db);
}

static int lock_database(const char *db, char *err, size_t errlen)
{
    char path[1100], holder[32] = "";
    lock_path(db, path, sizeof path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create lock file %.900s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
        holder[n > 0 ? n : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        snprintf(err, errlen, "database %.500s is in use by another gpuprobe serve (pid %s)", db,
                 holder[0] ? holder : "unknown");
        close(fd);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        log_kv(LOG_WARN, "lock_file", "path=%s error=cannot_write_pid", path);
    return fd; /* kept open, and so locked, until the process ends */
}

/* After a failed bind: when a live gpuprobe holds the database's lock (the
 * pid its lock file names), err says so too, since starting a daemon twice
 * fails on the port before it reaches the lock. The file is only read, not
 * locked: a lock taken to look could make a daemon starting now fail. */
static void name_holder(const char *db, char *err, size_t errlen)
{
    char path[1100], text[32] = "", comm[64] = "";
    lock_path(db, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    text[n > 0 ? n : 0] = '\0';
    long pid = strtol(text, NULL, 10);
    if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) != 0)
        return;
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    n = fd < 0 ? -1 : read(fd, comm, sizeof comm - 1);
    if (fd >= 0)
        close(fd);
    comm[n > 0 ? n : 0] = '\0';
    comm[strcspn(comm, "\n")] = '\0';
    size_t used = strlen(err);
    if (strcmp(comm, "gpuprobe") == 0 && used < errlen)
        snprintf(err + used, errlen - used, "; database %.400s is in use by another gpuprobe serve (pid %ld)", db,
                 pid);
}

static void warn_if_readable(const char *token_file)
{
    struct stat st;
    if (token_file[0] && stat(token_file, &st) == 0 && (st.st_mode & 077))
        log_kv(LOG_WARN, "token_file_permissions",
               "path=%s mode=%03o hint=tokens_should_be_readable_by_the_service_only", token_file,
               (unsigned)(st.st_mode & 0777));
}

static int open_store(struct app *app, char *err, size_t errlen)
{
    char why[512];
    if (!app->fleet || !app->resp_cache || !app->fleet_cache) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (lock_database(app->cfg.db, err, errlen) < 0)
        return -1;
    size_t rederived = 0;
    if (gpuprobe_store_open(&app->db, app->cfg.db, app->fleet, &rederived, why,
                            sizeof why) < 0) {
        snprintf(err, errlen, "cannot open database %.400s: %.500s", app->cfg.db, why);
        return -1;
    }
    if (rederived)
        log_kv(LOG_INFO, "fleet_figures_derived", "results=%zu", rederived);
    int n = 0;
    if (store_jobs_recover(app->db, "the daemon stopped without finishing the job (crash or kill)",
                           &n, why, sizeof why) < 0) {
        snprintf(err, errlen, "cannot recover interrupted jobs: %s", why);
        return -1;
    }
    if (n)
        log_kv(LOG_WARN, "jobs_recovered", "count=%d", n);
    size_t swept = 0;
    if (upload_sweep(app->db, app->cfg.upload_dir, &swept, why, sizeof why) < 0)
        log_kv(LOG_WARN, "upload_sweep_failed", "dir=%s error=%s", app->cfg.upload_dir, why);
    else if (swept)
        log_kv(LOG_INFO, "uploads_swept", "dir=%s removed=%zu", app->cfg.upload_dir, swept);
    return 0;
}

#ifdef GPUPROBE_TEST_BUILD
/* The fault-injecting VFS of GPUPROBE_FAULT_VFS: installed before the store
 * opens (phase 0), armed once the daemon is ready (phase 1), its counts
 * logged at the stop (phase 2: a test learns whether its fault was met). */
static int fault_injection(int phase, char *err, size_t errlen)
{
    const char *spec = getenv("GPUPROBE_FAULT_VFS");
    enum fault_op op;
    long n;
    char hold[1024];
    if (!spec || !*spec)
        return 0;
    if (fault_vfs_parse(spec, &op, &n, hold, sizeof hold, err, errlen) < 0)
        return -1;
    if (phase == 0)
        return fault_vfs_install(err, errlen);
    if (phase == 2) {
        log_kv(LOG_INFO, "fault_injection_summary", "injected=%ld writes=%ld syncs=%ld",
               fault_vfs_injected(), fault_vfs_count(FAULT_WRITE), fault_vfs_count(FAULT_SYNC));
        return 0;
    }
    fault_vfs_arm(op, n, hold[0] ? hold : NULL);
    log_kv(LOG_WARN, "fault_injection_armed", "spec=%s", spec);
    return 0;
}
#else
static int fault_injection(int phase, char *err, size_t errlen)
{
    (void)phase, (void)err, (void)errlen;
    return 0;
}
#endif

/* The orderly stop's grace: running jobs and in-flight requests get up to
 * stop_grace_s to finish, new connections are refused. */
#define ABANDONED_ANSWERS_MS 2000
static void drain(struct app *app, struct http_server *http)
{
    int64_t deadline = mono_ms() + (int64_t)app->cfg.stop_grace_s * 1000;
    http_quiesce(http);
    int jobs_left = scheduler_drain(app->sched, deadline);
    int requests_left = http_wait_idle(http, deadline);
    if (jobs_left || requests_left) {
        log_kv(LOG_WARN, "stop_grace_over", "grace_s=%d jobs_left=%d requests_left=%d",
               app->cfg.stop_grace_s, jobs_left, requests_left);
        /* the clients that waited on a job were just answered 202
         * (scheduler_drain): their answers get a moment to go out */
        http_wait_idle(http, mono_ms() + ABANDONED_ANSWERS_MS);
    }
}

/* The reference data into the store (what it holds already is skipped),
 * or with reference = off out of it: a central first started with the
 * default would otherwise keep comparing the reference GPUs with its
 * fleet's (docs/fleet.md). A failure is logged, not fatal: the daemon
 * serves without it, or with it. */
static void import_reference(struct app *app)
{
    struct bundle_counts c;
    char err[1200], q[1300];
    if (!app->cfg.reference) {
        size_t devices = 0, results = 0;
        if (reference_remove(app->db, &devices, &results, err, sizeof err) != 0)
            log_kv(LOG_ERROR, "reference_not_removed", "error=%s", log_quote(q, sizeof q, err));
        else if (devices || results)
            log_kv(LOG_INFO, "reference_removed", "devices=%zu results=%zu reason=reference_off",
                   devices, results);
        return;
    }
    if (reference_import(app->db, &c, err, sizeof err) == 0)
        log_kv(LOG_INFO, "reference_imported", "devices=%zu results=%zu added=%zu",
               c.devices, c.results, c.results_added);
    else
        log_kv(LOG_ERROR, "reference_refused", "error=%s", log_quote(q, sizeof q, err));
}

static void block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void wait_for_stop(const sigset_t *set)
{
    for (;;) {
        int sig = 0;
        if (sigwait(set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            log_kv(LOG_INFO, "signal_ignored", "signal=SIGHUP");
            continue;
        }
        log_kv(LOG_INFO, "stopping", "signal=%s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        return;
    }
}

/* Reads the fleet figures into memory now rather than on the first fleet
 * view (1.5 s at 10,000 GPUs): the daemon serves meanwhile, and a view
 * asked for during the load waits for it. */
static void load_fleet(struct app *app)
{
    char err[512], q[600];
    int64_t t0 = mono_ms();
    if (fleet_index_sync(app->fleet, app->db, NULL, err, sizeof err) == 0)
        log_kv(LOG_INFO, "fleet_loaded", "ms=%lld", (long long)(mono_ms() - t0));
    else
        log_kv(LOG_WARN, "fleet_load_failed", "error=%s", log_quote(q, sizeof q, err));
}

/* The address is bound before the database is opened: a port in use, an
 * address or TLS file that is wrong, fails before anything is made. */
static int run(struct app *app, const sigset_t *sigs, char *err, size_t errlen)
{
    int port = 0;
    char why[900];
    if (auth_load(&app->auth, app->cfg.token_file, why, sizeof why) < 0) {
        snprintf(err, errlen, "token file: %s", why);
        return -1;
    }
    warn_if_readable(app->cfg.token_file);
    struct http_server *http = http_bind(&app->cfg, &port, err, errlen);
    if (!http) {
        name_holder(app->cfg.db, err, errlen);
        return -1;
    }
    if (fault_injection(0, err, errlen) < 0 || open_store(app, err, errlen) < 0) {
        http_stop(http);
        return -1;
    }
    import_reference(app);
    app->req_stats = req_stats_new(route_count);
    if (!app->req_stats) {
        snprintf(err, errlen, "out of memory");
        http_stop(http);
        return -1;
    }
    struct pusher *pusher = pusher_start(app->db, &app->cfg, why, sizeof why);
    if (!pusher && why[0]) {
        snprintf(err, errlen, "upstream: %s", why);
        http_stop(http);
        return -1;
    }
    struct http_setup setup = {.cfg = &app->cfg, .auth = app->auth, .routes = routes,
                               .nroutes = route_count, .app = app, .stats = app->req_stats};
    if (http_start(http, &setup, err, errlen) < 0) {
        pusher_stop(pusher);
        return -1;
    }
    app->http = http;
    char host[128];
    config_split_listen(app->cfg.listen, host, sizeof host, &(int){0});
    log_kv(LOG_INFO, "listening", "addr=%s:%d db=%s writes=%s version=%s", host, port,
           app->cfg.db, app->cfg.token_file[0] ? "token" : "disabled", GPUPROBE_VERSION);
    discovery_run(app);
    app->sched = scheduler_start(app, err, errlen);
    int status = 0;
    if (!app->sched) {
        status = -1;
    } else {
        log_kv(LOG_INFO, "ready", "devices=%zu cpu_workers=%d", app->inv.count,
               app->cfg.cpu_workers);
        load_fleet(app);
        if (fault_injection(1, err, errlen) < 0) {
            status = -1;
        } else {
            wait_for_stop(sigs);
            drain(app, http);
        }
    }
    if (status != 0)
        http_quiesce(http); /* drain quiesced it otherwise */
    http_stop(http); /* every handler has returned: none reads app->http after */
    app->http = NULL;
    scheduler_stop(app->sched);
    pusher_stop(pusher);
    fault_injection(2, why, sizeof why);
    log_kv(LOG_INFO, "stopped", "status=%d", status ? 1 : 0);
    return status;
}

int serve_run(const struct config *cfg, char *err, size_t errlen)
{
    static struct app app; /* handlers reach it from every HTTP thread */
    sigset_t sigs;
    log_set_level((enum log_level)cfg->log_level);
    umask(027); /* the database and its WAL are for the service and its group */
    block_signals(&sigs);
    if (push_client_init(err, errlen) < 0)
        return -1; /* before any thread: libcurl's global set-up is not thread-safe */
    app_init(&app, cfg);
    int rc = run(&app, &sigs, err, errlen);
    app_release(&app);
    return rc;
}
