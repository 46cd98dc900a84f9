/*
 * `gpuprobe serve`: the daemon.
 *
 * DESIGN
 * Start-up order matters: the store first (recovering jobs a crash left
 * running, before anything could start them), then HTTP (so /healthz answers
 * and /readyz says "not yet" while discovery runs), then discovery, then the
 * scheduler. Signals are blocked in every thread and taken synchronously by
 * the main thread with sigwait, so no code runs in signal context. SIGTERM
 * and SIGINT shut down in reverse: stop accepting, finish in-flight requests,
 * stop the scheduler (its running jobs go back to the queue), close the store.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/app.h"
#include "server/auth.h"
#include "server/cli.h"
#include "server/config.h"
#include "server/discovery.h"
#include "server/http.h"
#include "server/log.h"
#include "server/resp_cache.h"
#include "server/scheduler.h"

static const char usage[] =
    "usage: gpuprobe serve [--listen ADDR:PORT] [--db PATH] [--token-file PATH]\n"
    "                      [--config PATH]\n"
    "Runs the daemon: the HTTP JSON API and dashboard, and the job scheduler.\n"
    "  --listen ADDR:PORT  where to listen (default 127.0.0.1:8080; port 0 = any free)\n"
    "  --db PATH           the SQLite database (default ./gpuprobe.db)\n"
    "  --token-file PATH   bearer tokens for writes, one per line (no file: writes refused)\n"
    "  --config PATH       a file of 'key = value' settings (see systemd/gpuprobe.conf.example)\n"
    "Command-line options override the config file.\n";

struct serve_args {
    const char *config, *listen, *db, *token_file;
};

static int parse_args(int argc, char **argv, struct serve_args *a, int *status)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'}, {"db", required_argument, NULL, 'd'},
        {"token-file", required_argument, NULL, 't'}, {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int c;
    memset(a, 0, sizeof *a);
    opterr = 0; /* our own one-line message instead of getopt's */
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': a->listen = optarg; break;
        case 'd': a->db = optarg; break;
        case 't': a->token_file = optarg; break;
        case 'c': a->config = optarg; break;
        case 'h': fputs(usage, stdout); *status = 0; return -1;
        default: *status = cli_unknown_option("serve", argc, argv); return -1;
        }
    }
    if (optind < argc) {
        *status = cli_fail("serve", 2, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

/* DIR/name, DIR being the database's folder. */
static void beside_database(const struct config *cfg, const char *name, char *out, size_t len)
{
    const char *slash = strrchr(cfg->db, '/');
    int dirlen = slash ? (int)(slash - cfg->db) : 1;
    snprintf(out, len, "%.*s/%s", dirlen, slash ? cfg->db : ".", name);
}

static int load_config(const struct serve_args *a, struct config *cfg, char *err, size_t errlen)
{
    config_defaults(cfg);
    if (a->config && config_load_file(cfg, a->config, err, errlen) < 0)
        return -1;
    if ((a->listen && config_set(cfg, "listen", a->listen, err, errlen) < 0) ||
        (a->db && config_set(cfg, "db", a->db, err, errlen) < 0) ||
        (a->token_file && config_set(cfg, "token_file", a->token_file, err, errlen) < 0))
        return -1;
    if (strcmp(cfg->cubin_dir, "off") == 0)
        cfg->cubin_dir[0] = '\0';
    else if (!cfg->cubin_dir[0])
        beside_database(cfg, "cubins", cfg->cubin_dir, sizeof cfg->cubin_dir);
    if (!cfg->upload_dir[0])
        beside_database(cfg, "uploads", cfg->upload_dir, sizeof cfg->upload_dir);
    char host[128];
    int port;
    if (config_split_listen(cfg->listen, host, sizeof host, &port) < 0) {
        snprintf(err, errlen, "listen address '%s' is not HOST:PORT", cfg->listen);
        return -1;
    }
    return 0;
}

/* One daemon per database: a second one would re-run the first one's jobs
 * as "interrupted". The lock lives beside the database (never on the file
 * itself, whose POSIX locks belong to SQLite) and dies with the process. */
static int lock_database(const char *db, char *err, size_t errlen)
{
    char path[1100], holder[32] = "";
    snprintf(path, sizeof path, "%s.lock", db);
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
    if (lock_database(app->cfg.db, err, errlen) < 0)
        return -1;
    if (store_open(&app->db, app->cfg.db, why, sizeof why) < 0) {
        snprintf(err, errlen, "cannot open database %.400s: %.500s", app->cfg.db, why);
        return -1;
    }
    int n = 0;
    if (store_jobs_recover(app->db, "the daemon stopped without finishing the job (crash or kill)",
                           &n, why, sizeof why) < 0) {
        snprintf(err, errlen, "cannot recover interrupted jobs: %s", why);
        return -1;
    }
    if (n)
        log_kv(LOG_WARN, "jobs_recovered", "count=%d", n);
    return 0;
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

static void app_init(struct app *app, const struct config *cfg)
{
    memset(app, 0, sizeof *app);
    app->cfg = *cfg;
    pthread_mutex_init(&app->inv_lock, NULL);
    /* Workers are this very binary, even if the file on disk is replaced. */
    snprintf(app->self_exe, sizeof app->self_exe, "/proc/self/exe");
    app->job_cache = resp_cache_new(32);
    if (gethostname(app->hostname, sizeof app->hostname - 1) < 0)
        snprintf(app->hostname, sizeof app->hostname, "unknown");
}

static void app_release(struct app *app)
{
    store_close(app->db);
    auth_free(app->auth);
    gpu_inventory_free(&app->inv);
    free(app->devices_body);
    resp_cache_free(app->job_cache);
    pthread_mutex_destroy(&app->inv_lock);
}

static int serve(struct app *app, const sigset_t *sigs)
{
    char err[1024];
    int port = 0;
    if (auth_load(&app->auth, app->cfg.token_file, err, sizeof err) < 0)
        return cli_fail("serve", 1, "token file: %s", err);
    warn_if_readable(app->cfg.token_file);
    if (open_store(app, err, sizeof err) < 0)
        return cli_fail("serve", 1, "%s", err);
    struct http_server *http = http_start(app, &port, err, sizeof err);
    if (!http)
        return cli_fail("serve", 1, "%s", err);
    char host[128];
    config_split_listen(app->cfg.listen, host, sizeof host, &(int){0});
    log_kv(LOG_INFO, "listening", "addr=%s:%d db=%s writes=%s version=%s", host, port,
           app->cfg.db, app->cfg.token_file[0] ? "token" : "disabled", GPUPROBE_VERSION);
    discovery_run(app);
    app->sched = scheduler_start(app, err, sizeof err);
    int status = 0;
    if (!app->sched) {
        status = cli_fail("serve", 1, "%s", err);
    } else {
        log_kv(LOG_INFO, "ready", "devices=%zu cpu_workers=%d", app->inv.count,
               app->cfg.cpu_workers);
        wait_for_stop(sigs);
    }
    http_quiesce(http);
    http_stop(http);
    scheduler_stop(app->sched);
    log_kv(LOG_INFO, "stopped", "status=%d", status);
    return status;
}

int cmd_serve(int argc, char **argv)
{
    struct serve_args a;
    struct config cfg;
    int status = 0;
    char err[1024];
    if (parse_args(argc, argv, &a, &status) < 0)
        return status;
    if (load_config(&a, &cfg, err, sizeof err) < 0)
        return cli_fail("serve", 2, "%s", err);
    log_set_level((enum log_level)cfg.log_level);
    umask(027); /* the database and its WAL are for the service and its group */
    sigset_t sigs;
    block_signals(&sigs);
    static struct app app;
    app_init(&app, &cfg);
    status = serve(&app, &sigs);
    app_release(&app);
    return status;
}
