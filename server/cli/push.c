/*
 * `gpuprobe push`: drains a database's outbox to a central gpuprobe, and
 * the push step of `gpuprobe probe --push` (cli_push_results), for nodes
 * that run no daemon.
 *
 * DESIGN
 * Both go through server/push/: the same one-job bundles, the same verdicts
 * (acknowledged, refused, retried) recorded on the same outbox rows as the
 * daemon's pusher. The command line does not wait ten minutes between
 * tries: it makes at most --tries rounds over the outbox, waiting between
 * them by the same backoff (1 s, 2 s, 4 s ... with jitter), then stops and
 * says what is left; what was not acknowledged stays in the database's
 * outbox for a later `gpuprobe push`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/outbox.h"
#include "server/cli/cli.h"
#include "server/cli/push.h"
#include "server/push/client.h"
#include "server/push/push.h"
#include "util/text.h"

#define PUSH_TRIES_DEFAULT 5

static const char usage[] =
    "usage: gpuprobe push --db PATH --upstream URL --token-file F [--tries N]\n"
    "                     [--content full|figures] [--ca F] [--requeue-refused]\n"
    "Sends the results waiting in the database's outbox (stored by gpuprobe probe\n"
    "--push, or by a daemon with `upstream =`) to the central gpuprobe at URL, each as\n"
    "a bundle POSTed to URL/api/v1/import with the central's write token (F's first\n"
    "token, read as the central reads its token file). A result the central\n"
    "acknowledges leaves the outbox; one it refuses (400, 413, 415, 422) stays,\n"
    "marked, with its reason, and is not sent again; others are tried again.\n"
    "  --tries N   rounds over the outbox, 1 to 100 (default 5), 1 s, 2 s, 4 s ... apart\n"
    "  --requeue-refused  send the refused results again too, once what refused them is\n"
    "              gone (the central upgraded, its import_limit raised, a clock mended)\n"
    "  --content full|figures  what each push carries: the whole result (default) or\n"
    "              its fleet figures alone (about 15 kB for a suite; docs/fleet.md)\n"
    "  --ca F      an https upstream's certificate must chain to a CA certificate in\n"
    "              the PEM file F (a private CA, or the central's self-signed\n"
    "              certificate) instead of the system's CAs\n"
    "Prints {\"upstream\",\"acknowledged\",\"refused\",\"left\",\"refused_held\"} as JSON.\n"
    "Exit status: 0 when nothing is left waiting and nothing was refused; 1 otherwise\n"
    "(the reason on stderr; the results stay in the outbox); 2 bad usage.\n";

/* --content full|figures: what each push carries. */
static int parse_content(const char *cmd, const char *text, int *figures_only)
{
    *figures_only = text && strcmp(text, "figures") == 0;
    if (text && !*figures_only && strcmp(text, "full") != 0)
        return cli_fail(cmd, 2, "--content: expected full or figures, got '%s'", text);
    return 0;
}

int cli_push_setup(const char *cmd, const struct cli_push_args *args, struct push_target *t,
                   int *tries)
{
    long long v = PUSH_TRIES_DEFAULT;
    const char *url = args->url;
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return cli_fail(cmd, 2, "expected an http:// or https:// URL for the upstream, got '%s'",
                        url);
    if (!args->token_file)
        return cli_fail(cmd, 2, "--token-file F is required: the central's write token");
    if (args->tries && parse_ll(args->tries, 1, 100, &v) < 0)
        return cli_fail(cmd, 2, "--tries: expected an integer from 1 to 100, got '%s'",
                        args->tries);
    *tries = (int)v;
    *t = (struct push_target){url, args->token_file, PUSH_BACKOFF_CAP_MS, 0, NULL, args->ca};
    return parse_content(cmd, args->content, &t->figures_only);
}

int cli_push_drain(const char *cmd, store *s, const struct push_target *t, int tries,
                   struct push_tally *tally)
{
    char err[600];
    if (push_client_init(err, sizeof err) != 0)
        return cli_fail(cmd, 1, "%s", err);
    if (push_drain(s, t, tries, tally, err, sizeof err) != 0)
        return cli_fail(cmd, 1, "%s", err);
    return 0;
}

/* The newest error the outbox keeps, for the one-line reason. */
static void newest_error(store *s, char *buf, size_t len)
{
    struct outbox_summary m;
    char err[256];
    snprintf(buf, len, "no reason recorded");
    if (outbox_summary_get(s, &m, err, sizeof err) == 0 && m.last_error)
        snprintf(buf, len, "%s", m.last_error);
    outbox_summary_free(&m);
}

int cmd_push(int argc, char **argv)
{
    const char *db = NULL;
    struct cli_push_args args = {0};
    struct push_target target;
    int status, tries, requeue = 0;
    const struct cli_option opts[] = {{"db", .text = &db}, {"upstream", .text = &args.url},
                                      {"token-file", .text = &args.token_file},
                                      {"tries", .text = &args.tries},
                                      {"content", .text = &args.content},
                                      {"ca", .text = &args.ca},
                                      {"requeue-refused", .flag = &requeue}, {0}};
    if (cli_parse("push", usage, opts, NULL, argc, argv, &status) < 0)
        return status;
    if (!db || !args.url)
        return cli_fail("push", 2, "--db PATH and --upstream URL are required (see --help)");
    if ((status = cli_push_setup("push", &args, &target, &tries)) != 0)
        return status;
    store *s = cli_open_store("push", db);
    if (!s)
        return 1;
    struct push_tally t;
    char why[700];
    if (requeue && outbox_requeue_refused(s, store_now_ms(), why, sizeof why) < 0) {
        store_close(s);
        return cli_fail("push", 1, "%s", why);
    }
    status = cli_push_drain("push", s, &target, tries, &t);
    if (status == 0) {
        json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I}", "upstream", args.url, "acknowledged",
                              (json_int_t)t.acknowledged, "refused", (json_int_t)t.refused,
                              "left", (json_int_t)t.left, "refused_held",
                              (json_int_t)t.refused_held);
        if (cli_print_json(j, 0) != 0)
            status = cli_fail("push", 1, "cannot write the answer");
        else if (t.left || t.refused) {
            newest_error(s, why, sizeof why);
            status = cli_fail("push", 1, "%zu result(s) refused, %zu still waiting: %s",
                              t.refused, t.left, why);
        } else if (t.refused_held) {
            fprintf(stderr, "gpuprobe push: %zu result(s) refused before are held, not sent; "
                            "--requeue-refused sends them again\n", t.refused_held);
        }
    }
    store_close(s);
    return status;
}

int cli_push_results(const char *cmd, store *s, const struct push_target *target, int tries,
                     const int64_t *ids, size_t n)
{
    struct push_tally t;
    char err[256], why[700];
    int status = cli_push_drain(cmd, s, target, tries, &t);
    size_t missing = 0;
    for (size_t i = 0; status == 0 && i < n; i++) {
        int rc = outbox_held(s, ids[i], err, sizeof err);
        if (rc < 0)
            return cli_fail(cmd, 1, "%s", err);
        missing += rc == 1;
    }
    if (status != 0)
        return status;
    if (missing) {
        newest_error(s, why, sizeof why);
        return cli_fail(cmd, 1, "%zu of %zu result(s) not acknowledged by %s: %s", missing, n,
                        target->upstream, why);
    }
    fprintf(stderr, "gpuprobe %s: %zu result(s) acknowledged by %s\n", cmd, n, target->upstream);
    return 0;
}
