/*
 * `gpuprobe serve`: the daemon's command line. Options become a config
 * (defaults, then --config FILE, then the options); server/serve.c runs it.
 */
#include <stdio.h>
#include <string.h>

#include "server/cli/cli.h"
#include "server/config.h"
#include "server/serve.h"

static const char usage[] =
    "usage: gpuprobe serve [--listen ADDR:PORT] [--db PATH] [--token-file PATH]\n"
    "                      [--config PATH] [--no-reference]\n"
    "Runs the daemon: the HTTP JSON API and dashboard, and the job scheduler.\n"
    "  --listen ADDR:PORT  where to listen (default 127.0.0.1:8080; port 0 = any free)\n"
    "  --db PATH           the SQLite database (default ./gpuprobe.db)\n"
    "  --token-file PATH   bearer tokens for writes, one per line (no file: writes refused)\n"
    "  --config PATH       a file of 'key = value' settings; every key, with its default:\n"
    "                      systemd/gpuprobe.conf.example (source tree and make dist bundle)\n"
    "  --no-reference      do not import the reference H100/H200 results linked into the\n"
    "                      binary, and take them out of a database an earlier start put\n"
    "                      them in (config: reference = off; docs/fleet.md)\n"
    "Command-line options override the config file.\n";

struct serve_args {
    const char *config, *listen, *db, *token_file;
    int no_reference;
};

static int parse_args(int argc, char **argv, struct serve_args *a, int *status)
{
    const struct cli_option opts[] = {
        {"listen", .text = &a->listen}, {"db", .text = &a->db},
        {"token-file", .text = &a->token_file}, {"config", .text = &a->config},
        {"no-reference", .flag = &a->no_reference}, {0}};
    memset(a, 0, sizeof *a);
    return cli_parse("serve", usage, opts, NULL, argc, argv, status);
}

static int load_config(const struct serve_args *a, struct config *cfg, char *err, size_t errlen)
{
    config_defaults(cfg);
    if (a->config && config_load_file(cfg, a->config, err, errlen) < 0)
        return -1;
    if ((a->listen && config_set(cfg, "listen", a->listen, err, errlen) < 0) ||
        (a->db && config_set(cfg, "db", a->db, err, errlen) < 0) ||
        (a->token_file && config_set(cfg, "token_file", a->token_file, err, errlen) < 0) ||
        (a->no_reference && config_set(cfg, "reference", "off", err, errlen) < 0))
        return -1;
    return config_finish(cfg, err, errlen);
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
    return serve_run(&cfg, err, sizeof err) < 0 ? cli_fail("serve", 1, "%s", err) : 0;
}
