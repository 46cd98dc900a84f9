/*
 * Daemon configuration: built-in defaults, then the config file, then the
 * command line, each overriding the one before. The file holds `key = value`
 * lines; `#` starts a comment. Unknown keys and bad values are errors that
 * name the file and line, so a typo never silently falls back to a default.
 */
#ifndef GPUPROBE_SERVER_CONFIG_H
#define GPUPROBE_SERVER_CONFIG_H

#include <stddef.h>

/* The longest deadline a job may be given (a week). */
#define CONFIG_JOB_TIMEOUT_MAX_S (7 * 86400)

struct config {
    char listen[128];            /* "127.0.0.1:8080"; port 0 picks a free one */
    char db[1024];
    char token_file[1024];       /* "" = writes disabled */
    int cpu_workers;             /* concurrent jobs that need no GPU */
    int http_threads;
    int max_connections;
    int max_connections_per_ip;
    int connection_timeout_s;
    long long body_limit;        /* bytes accepted in a JSON request body */
    int job_timeout_s;           /* > 0 overrides every kind's default deadline
                                    (at most CONFIG_JOB_TIMEOUT_MAX_S) */
    int max_attempts;            /* starts before an interrupted job fails */
    int stop_grace_s;            /* an orderly stop (SIGTERM) waits this long for running
                                    requests and jobs before re-queueing what still runs */
    int discovery_timeout_s;
    int log_level;               /* enum log_level */
    char upload_dir[1024];       /* where large request bodies are spooled; "" = beside
                                    the database (DIR/uploads) */
    long long upload_limit;      /* bytes accepted in a spooled body (traces) */
    long long trace_sync_limit;  /* traces up to this size are sorted while the client
                                    waits; larger ones become a job */
    char cubin_dir[1024];        /* where jobs keep their PTX and cubins; "" = beside the
                                    database (DIR/cubins), "off" = not kept */
    int reference;               /* import the reference data linked into the binary at
                                    start (on, the default) or not (off) */

    /* GET /metrics (docs/metrics.md) */
    int metrics_devices;         /* enum metrics_devices: whose probe figures it serves */

    /* ---- the fleet: this node's results pushed to a central gpuprobe ---- */
    char upstream[1024];         /* the central's base URL; "" = results stay here */
    char upstream_token_file[1024]; /* its first line is the central's write token */
    int upstream_retry_max_s;    /* the cap of the backoff between failed pushes */
    long long import_limit;      /* bytes accepted in a bundle POSTed to /api/v1/import */
    int upstream_content;        /* enum upstream_content: what a push carries */

    /* ---- exposure: bounded clients and TLS (docs/operations.md) ---- */
    int request_timeout_s;       /* total time a request's headers may take; a body's grace */
    long long body_min_rate;     /* bytes a second a request body must average; 0 = no bound */
    char tls_cert[1024];         /* PEM certificate (chain) served over TLS; "" = plain HTTP */
    char tls_key[1024];          /* its PEM private key; required with tls_cert */
    char push_ca[1024];          /* PEM CA certificates the upstream's certificate is checked
                                    against; "" = the system's */
    char listen_unix[108];       /* a Unix-domain socket served too (plain HTTP); "" = none */
    char listen_unix_mode[8];    /* its file mode, octal ("0660"): who may connect */
};

enum metrics_devices {
    METRICS_DEVICES_LOCAL,       /* the devices of this host (the default) */
    METRICS_DEVICES_ALL,         /* every device the store holds (a central, the reference) */
};

enum upstream_content {
    UPSTREAM_CONTENT_FULL,       /* the whole result, as the node stored it (the default) */
    UPSTREAM_CONTENT_FIGURES,    /* its fleet figures alone (kind fleet-figures, docs/fleet.md) */
};

void config_defaults(struct config *c);
/* Applies one key/value; -1 with the reason in err. */
int config_set(struct config *c, const char *key, const char *value, char *err, size_t errlen);
/* Reads a config file; -1 with "PATH:LINE: reason" in err. */
int config_load_file(struct config *c, const char *path, char *err, size_t errlen);
/* Once every source is applied: fills what defaults to a place beside the
 * database (cubin_dir, upload_dir; cubin_dir "off" becomes "") and checks
 * the listen address. -1 with the reason in err. */
int config_finish(struct config *c, char *err, size_t errlen);
/* listen_unix_mode as a number (0..0777); -1 when it is not octal digits
 * or above 0777. */
int config_unix_mode(const struct config *cfg);
/* Splits "ADDR:PORT" ("[v6]:PORT" too); -1 if malformed. */
int config_split_listen(const char *listen, char *host, size_t hostlen, int *port);

#endif
