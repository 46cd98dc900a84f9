/*
 * `gpuprobe export` and `gpuprobe import`: result bundles on the command
 * line (server/bundles/bundle.h, docs/bundles.md), for nodes that run no
 * daemon and for refreshing the shipped reference data.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/bundles/bundle.h"
#include "server/cli/cli.h"
#include "util/jsonfile.h"
#include "util/text.h"

static const char export_usage[] =
    "usage: gpuprobe export --db PATH [--device UUID|N]... [--host NAME] -o FILE\n"
    "Writes a result bundle: the devices named (default: every device with a result),\n"
    "each with every stored result and its provenance, and the bundle's sha256.\n"
    "  --device UUID|N  a device of the database, by UUID or by the index discovery\n"
    "                   gave it on this host (repeatable)\n"
    "  --host NAME      the host name this database's results go out under (default:\n"
    "                   the host each was measured on; imported results keep theirs)\n"
    "  -o FILE          where to write the bundle ('-': standard output)\n";

static const char import_usage[] =
    "usage: gpuprobe import FILE... --db PATH\n"
    "Imports result bundles into the database: each is checked whole (format,\n"
    "version, sha256, every result by its kind) and written whole or not at all;\n"
    "results the database already holds are skipped, so importing twice changes\n"
    "nothing. Prints what each bundle added, as JSON. No database is made before a\n"
    "file passes the checks: files that are all refused leave none.\n";

/* The UUID of a device named by its index on this host, or the name itself. */
static const char *device_uuid(store *s, const char *name, char *buf, size_t len)
{
    long long index;
    struct device_row *rows = NULL;
    size_t n = 0;
    char err[256], host[256] = "";
    if (parse_ll(name, 0, 1023, &index) < 0 || store_device_list(s, &rows, &n, err, sizeof err) < 0)
        return name;
    gethostname(host, sizeof host - 1);
    snprintf(buf, len, "%s", name);
    for (size_t i = 0; i < n; i++) {
        json_t *info = json_loads(rows[i].info_json ? rows[i].info_json : "", 0, NULL);
        json_t *ix = json_object_get(info, "index");
        if (json_is_integer(ix) && json_integer_value(ix) == index && rows[i].hostname &&
            strcmp(rows[i].hostname, host) == 0)
            snprintf(buf, len, "%s", rows[i].uuid);
        json_decref(info);
    }
    device_rows_free(rows, n);
    return buf;
}

static int write_bundle(json_t *b, const char *path)
{
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f)
        return -1;
    int rc = json_dumpf(b, f, JSON_INDENT(1)) == 0 && fputc('\n', f) != EOF ? 0 : -1;
    if ((to_stdout ? fflush(f) : fclose(f)) != 0)
        rc = -1;
    return rc;
}

/* Whether path is the database db or one of SQLite's files beside it
 * (writing the bundle there would destroy the results it comes from). */
static int names_the_database(const char *path, const char *db)
{
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    struct stat o, d;
    if (strcmp(path, "-") == 0 || stat(path, &o) != 0)
        return 0; /* a new file is none of them */
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        char name[PATH_MAX];
        if ((size_t)snprintf(name, sizeof name, "%s%s", db, sides[i]) < sizeof name && stat(name, &d) == 0 &&
            d.st_dev == o.st_dev && d.st_ino == o.st_ino)
            return 1;
    }
    return 0;
}

int cmd_export(int argc, char **argv)
{
    const char *db = NULL, *out = NULL, *host = NULL;
    struct cli_list devices = {0};
    char bufs[CLI_LIST_MAX][64], err[512];
    const char *uuids[CLI_LIST_MAX];
    int status, unknown;
    const struct cli_option opts[] = {{"db", 0, .text = &db},
                                      {"device", 0, .list = &devices},
                                      {"host", 0, .text = &host},
                                      {"output", 'o', .text = &out},
                                      {0}};
    if (cli_parse("export", export_usage, opts, NULL, argc, argv, &status) < 0)
        return status;
    if (!db || !out || !*out)
        return cli_fail("export", 2, "--db PATH and -o FILE are required");
    if (host && !bundle_name_ok(host))
        return cli_fail("export", 2, "--host: give 1 to %d bytes without control characters", BUNDLE_NAME_MAX);
    if (names_the_database(out, db))
        return cli_fail("export", 2, "-o %s is the database itself (or its journal): name another file", out);
    store *s = cli_read_store("export", db);
    if (!s)
        return 1;
    for (int i = 0; i < devices.n; i++)
        uuids[i] = device_uuid(s, devices.item[i], bufs[i], sizeof bufs[i]);
    json_t *b = bundle_build(s, uuids, (size_t)devices.n, host, &unknown, err, sizeof err);
    store_close(s);
    if (!b)
        return cli_fail("export", unknown ? 2 : 1, "%s", err);
    status = write_bundle(b, out) == 0 ? 0 : cli_fail("export", 1, "cannot write %s", out);
    json_decref(b);
    return status;
}

/* A file's refusal: said on stderr, and its entry of the answer. */
static json_t *refusal(const char *path, const char *err, const char *field)
{
    cli_fail("import", 1, "%s: %s", path, err);
    return field ? json_pack("{s:s, s:s, s:s}", "file", path, "error", err, "field", field)
                 : json_pack("{s:s, s:s}", "file", path, "error", err);
}

/* One file's bundle, or NULL with its refusal in *res. */
static json_t *load_file(const char *path, json_t **res)
{
    json_error_t je;
    json_t *b = json_load_path(path, JSON_REJECT_DUPLICATES, &je);
    if (b)
        return b;
    if (je.line < 1) /* not read at all: the reason is the file's, not its text's */
        cli_fail("import", 1, "%s", je.text);
    else
        cli_fail("import", 1, "%s: not JSON: %s (line %d)", path, je.text, je.line);
    *res = json_pack("{s:s, s:s}", "file", path, "error", je.text);
    return NULL;
}

/* Imports one file into *s, opened at db when the first file passes
 * bundle_check: until then nothing is made, so files that are all refused
 * leave no database. Its counts (or its refusal) as JSON; *failed set on a
 * refusal, *dead when the database could not be opened. */
static json_t *import_file(store **s, const char *db, const char *path, int *failed, int *dead)
{
    struct bundle_counts c;
    char err[1024], field[200];
    json_t *res = NULL, *b = load_file(path, &res);
    if (!b) {
        *failed = 1;
        return res;
    }
    if (!*s && bundle_check(b, err, sizeof err, field, sizeof field) != 0) {
        res = refusal(path, err, field);
        *failed = 1;
    } else if (!*s && !(*s = cli_open_store("import", db))) {
        *dead = 1;
    } else if (bundle_import(*s, b, &c, err, sizeof err, field, sizeof field) != 0) {
        res = refusal(path, err, field);
        *failed = 1;
    } else {
        res = bundle_counts_json(&c);
        json_object_set_new(res, "file", json_string(path));
    }
    json_decref(b);
    return res;
}

int cmd_import(int argc, char **argv)
{
    const char *db = NULL;
    struct cli_list files = {0};
    int status, failed = 0, dead = 0;
    const struct cli_option opts[] = {{"db", 0, .text = &db}, {0}};
    if (cli_parse_operands("import", import_usage, opts, &files, argc, argv, &status) < 0)
        return status;
    if (!db || files.n == 0)
        return cli_fail("import", 2, "name the bundles to import and --db PATH");
    store *s = NULL;
    json_t *out = json_array();
    for (int i = 0; i < files.n && !dead; i++) {
        json_t *res = import_file(&s, db, files.item[i], &failed, &dead);
        if (res)
            json_array_append_new(out, res);
    }
    store_close(s);
    if (dead) { /* cli_open_store said why */
        json_decref(out);
        return 1;
    }
    status = cli_print_json(json_pack("{s:o}", "imported", out), 0) == 0 ? 0
             : cli_fail("import", 1, "cannot write output");
    return failed ? 1 : status;
}
