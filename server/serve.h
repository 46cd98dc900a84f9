/*
 * `gpuprobe serve`'s work: the daemon from start-up to an orderly stop.
 * The command line (server/cli/serve.c) only turns options into a config.
 */
#ifndef GPUPROBE_SERVER_SERVE_H
#define GPUPROBE_SERVER_SERVE_H

#include <stddef.h>

#include "server/config.h"

/* Runs the daemon until SIGTERM or SIGINT. 0 after an orderly stop; -1 with
 * the reason in err when it could not start (token file, database, listen
 * address, scheduler). */
int serve_run(const struct config *cfg, char *err, size_t errlen);

#endif
