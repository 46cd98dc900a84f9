/*
 * Configuration parsing (see config.h). Keys are described once, in a table
 * of name, type, bounds and field offset, used both by the file reader and by
 * command-line overrides.
 */
#include "server/config.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/log.h"
#include "util/text.h"

enum key_type { KEY_STR, KEY_INT, KEY_LL, KEY_LEVEL, KEY_SWITCH, KEY_WORD };

struct key_desc {
    const char *name;
    enum key_type type;
    size_t offset;
    size_t size;              /* KEY_STR: buffer size */
    long long min, max;
};

#define STR_KEY(n, f) {n, KEY_STR, offsetof(struct config, f), sizeof(((struct config *)0)->f), 0, 0}
#define INT_KEY(n, f, lo, hi) {n, KEY_INT, offsetof(struct config, f), 0, lo, hi}

static const struct key_desc keys[] = {
    STR_KEY("listen", listen),
    STR_KEY("db", db),
    STR_KEY("token_file", token_file),
    STR_KEY("cubin_dir", cubin_dir),
    STR_KEY("upload_dir", upload_dir),
    {"upload_limit", KEY_LL, offsetof(struct config, upload_limit), 0, 1024, 1LL << 50},
    {"trace_sync_limit", KEY_LL, offsetof(struct config, trace_sync_limit), 0, 0, 1LL << 40},
    INT_KEY("cpu_workers", cpu_workers, 1, 256),
    INT_KEY("http_threads", http_threads, 1, 256),
    INT_KEY("max_connections", max_connections, 1, 100000),
    INT_KEY("max_connections_per_ip", max_connections_per_ip, 0, 100000),
    INT_KEY("connection_timeout_s", connection_timeout_s, 1, 3600),
    {"body_limit", KEY_LL, offsetof(struct config, body_limit), 0, 1024, 1LL << 40},
    INT_KEY("job_timeout_s", job_timeout_s, 0, CONFIG_JOB_TIMEOUT_MAX_S),
    INT_KEY("max_attempts", max_attempts, 1, 100),
    INT_KEY("stop_grace_s", stop_grace_s, 0, 3600),
    INT_KEY("discovery_timeout_s", discovery_timeout_s, 1, 3600),
    {"log_level", KEY_LEVEL, offsetof(struct config, log_level), 0, 0, 0},
    {"reference", KEY_SWITCH, offsetof(struct config, reference), 0, 0, 1},

    /* GET /metrics */
    {"metrics_devices", KEY_WORD, offsetof(struct config, metrics_devices), 0, 0, 0},

    /* the fleet (docs/fleet.md) */
    STR_KEY("upstream", upstream),
    STR_KEY("upstream_token_file", upstream_token_file),
    INT_KEY("upstream_retry_max_s", upstream_retry_max_s, 1, 86400),
    {"import_limit", KEY_LL, offsetof(struct config, import_limit), 0, 1024, 1LL << 40},
    {"upstream_content", KEY_WORD, offsetof(struct config, upstream_content), 0, 0, 0},

    /* exposure: bounded clients and TLS (docs/operations.md) */
    INT_KEY("request_timeout_s", request_timeout_s, 1, 3600),
    {"body_min_rate", KEY_LL, offsetof(struct config, body_min_rate), 0, 0, 1LL << 40},
    STR_KEY("tls_cert", tls_cert),
    STR_KEY("tls_key", tls_key),
    STR_KEY("push_ca", push_ca),
    STR_KEY("listen_unix", listen_unix),
    STR_KEY("listen_unix_mode", listen_unix_mode),
};

/* The values of each KEY_WORD key (NULL-terminated), stored as an int: the
 * value's place in its list. */
static const struct {
    const char *key;
    const char *const *words;
} key_words[] = {
    {"metrics_devices", (const char *const[]){"local", "all", NULL}}, /* enum metrics_devices */
    {"upstream_content", (const char *const[]){"full", "figures", NULL}}, /* enum upstream_content */
};

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->listen, sizeof c->listen, "127.0.0.1:8080");
    snprintf(c->db, sizeof c->db, "gpuprobe.db");
    c->cpu_workers = 2;
    c->http_threads = 4;
    c->max_connections = 1024;
    c->max_connections_per_ip = 256;
    c->connection_timeout_s = 30;
    c->body_limit = 1 << 20;
    c->upload_limit = 64LL << 30;
    c->trace_sync_limit = 64LL << 20;
    c->job_timeout_s = 0;
    c->max_attempts = 3;
    c->stop_grace_s = 10;
    c->discovery_timeout_s = 60;
    c->log_level = LOG_INFO;
    c->reference = 1;
    c->metrics_devices = METRICS_DEVICES_LOCAL;
    c->upstream_retry_max_s = 600;
    c->import_limit = 64LL << 20;
    c->request_timeout_s = 20;
    c->body_min_rate = 4096;
    snprintf(c->listen_unix_mode, sizeof c->listen_unix_mode, "0660");
}

/* A KEY_WORD setting: value must be one of the key's words (key_words). */
static int set_word(const struct key_desc *k, int *field, const char *value, char *err,
                    size_t errlen)
{
    const char *const *words = NULL;
    for (size_t i = 0; i < sizeof key_words / sizeof key_words[0]; i++)
        if (strcmp(key_words[i].key, k->name) == 0)
            words = key_words[i].words;
    assert(words); /* every KEY_WORD key has its list */
    char known[128] = "";
    size_t used = 0;
    for (int i = 0; words[i]; i++) {
        if (strcmp(words[i], value) == 0) {
            *field = i;
            return 0;
        }
        used += (size_t)snprintf(known + used, used < sizeof known ? sizeof known - used : 0,
                                 "%s%s", i ? " or " : "", words[i]);
    }
    snprintf(err, errlen, "%s: expected %s, got '%s'", k->name, known, value);
    return -1;
}

static int set_key(struct config *c, const struct key_desc *k, const char *value,
                   char *err, size_t errlen)
{
    char *field = (char *)c + k->offset;
    long long v;
    switch (k->type) {
    case KEY_STR:
        if (strlen(value) >= k->size) {
            snprintf(err, errlen, "%s: value longer than %zu bytes", k->name, k->size - 1);
            return -1;
        }
        memcpy(field, value, strlen(value) + 1);
        return 0;
    case KEY_LEVEL:
        if (log_level_parse(value) < 0) {
            snprintf(err, errlen, "log_level: expected debug, info, warn or error, got '%s'", value);
            return -1;
        }
        *(int *)field = log_level_parse(value);
        return 0;
    case KEY_SWITCH:
        if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) {
            snprintf(err, errlen, "%s: expected on or off, got '%s'", k->name, value);
            return -1;
        }
        *(int *)field = strcmp(value, "on") == 0;
        return 0;
    case KEY_WORD:
        return set_word(k, (int *)field, value, err, errlen);
    case KEY_INT:
    case KEY_LL:
        if (parse_ll(value, k->min, k->max, &v) < 0) {
            snprintf(err, errlen, "%s: expected an integer from %lld to %lld, got '%s'",
                     k->name, k->min, k->max, value);
            return -1;
        }
        if (k->type == KEY_INT)
            *(int *)field = (int)v;
        else
            *(long long *)field = v;
        return 0;
    }
    return -1;
}

int config_set(struct config *c, const char *key, const char *value, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(keys[i].name, key) == 0)
            return set_key(c, &keys[i], value, err, errlen);
    snprintf(err, errlen, "unknown setting '%s'", key);
    return -1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

int config_load_file(struct config *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL, why[512];
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected 'key = value'", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        if (config_set(c, trim(s), trim(eq + 1), why, sizeof why) < 0) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
            rc = -1;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

int config_split_listen(const char *listen, char *host, size_t hostlen, int *port)
{
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen)
        return -1;
    const char *h = listen;
    size_t hl = (size_t)(colon - listen);
    if (h[0] == '[') {
        if (hl < 3 || h[hl - 1] != ']')
            return -1;
        h++;
        hl -= 2;
    }
    if (hl >= hostlen)
        return -1;
    long long p;
    if (parse_ll(colon + 1, 0, 65535, &p) < 0)
        return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)p;
    return 0;
}

/* DIR/name, DIR being the database's folder. */
static void beside_database(const struct config *cfg, const char *name, char *out, size_t len)
{
    const char *slash = strrchr(cfg->db, '/');
    int dirlen = slash ? (int)(slash - cfg->db) : 1;
    snprintf(out, len, "%.*s/%s", dirlen, slash ? cfg->db : ".", name);
}

/* An upstream is an http(s) URL and comes with its token. */
static int check_upstream(const struct config *cfg, char *err, size_t errlen)
{
    if (!cfg->upstream[0])
        return 0;
    if (strncmp(cfg->upstream, "http://", 7) != 0 && strncmp(cfg->upstream, "https://", 8) != 0) {
        snprintf(err, errlen, "upstream: expected an http:// or https:// URL, got '%.900s'",
                 cfg->upstream);
        return -1;
    }
    if (!cfg->upstream_token_file[0]) {
        snprintf(err, errlen, "upstream: needs upstream_token_file, the central's write token");
        return -1;
    }
    return 0;
}

int config_finish(struct config *cfg, char *err, size_t errlen)
{
    char host[128];
    int port;
    if (strcmp(cfg->cubin_dir, "off") == 0)
        cfg->cubin_dir[0] = '\0';
    else if (!cfg->cubin_dir[0])
        beside_database(cfg, "cubins", cfg->cubin_dir, sizeof cfg->cubin_dir);
    if (!cfg->upload_dir[0])
        beside_database(cfg, "uploads", cfg->upload_dir, sizeof cfg->upload_dir);
    if (config_split_listen(cfg->listen, host, sizeof host, &port) < 0) {
        snprintf(err, errlen, "listen address '%s' is not HOST:PORT", cfg->listen);
        return -1;
    }
    if (!cfg->tls_cert[0] != !cfg->tls_key[0]) {
        snprintf(err, errlen, "tls_cert and tls_key come together: %s is set, %s is not",
                 cfg->tls_cert[0] ? "tls_cert" : "tls_key", cfg->tls_cert[0] ? "tls_key" : "tls_cert");
        return -1;
    }
    if (config_unix_mode(cfg) < 0) {
        snprintf(err, errlen, "listen_unix_mode: expected an octal file mode from 0 to 0777, got '%s'",
                 cfg->listen_unix_mode);
        return -1;
    }
    if (cfg->listen_unix[0] && cfg->listen_unix[0] != '/') {
        snprintf(err, errlen, "listen_unix: expected an absolute path, got '%s'", cfg->listen_unix);
        return -1;
    }
    return check_upstream(cfg, err, errlen);
}

int config_unix_mode(const struct config *cfg)
{
    const char *m = cfg->listen_unix_mode;
    char *end;
    if (!*m || strspn(m, "01234567") != strlen(m))
        return -1;
    long v = strtol(m, &end, 8);
    return v <= 0777 ? (int)v : -1;
}
