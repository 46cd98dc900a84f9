/*
 * Pushing from the command line (server/cli/push.c): shared by `gpuprobe
 * push` and `gpuprobe probe --push`. Each returns an exit status (0, 1
 * after the message, 2 bad usage after the message).
 */
#ifndef GPUPROBE_SERVER_CLI_PUSH_H
#define GPUPROBE_SERVER_CLI_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "db/store.h"
#include "server/push/push.h"

/* The push options of a command line, as given (NULL: not given). */
struct cli_push_args {
    const char *url, *token_file, *tries, *content;
    const char *ca;              /* --ca F: the upstream's certificate must chain to F's CAs */
};

/* Checks args and fills the target and the rounds: the upstream must be an
 * http(s) URL with a token file, --tries 1 to 100 (default 5), --content
 * full or figures (default full). */
int cli_push_setup(const char *cmd, const struct cli_push_args *args, struct push_target *t,
                   int *tries);
/* push_drain with the command line's settings; the counts into *tally. */
int cli_push_drain(const char *cmd, store *s, const struct push_target *t, int tries,
                   struct push_tally *tally);
/* Drains the outbox, then 0 when every job of ids[0..n) was acknowledged;
 * else 1 with one line naming how many were not and the newest error. */
int cli_push_results(const char *cmd, store *s, const struct push_target *t, int tries,
                     const int64_t *ids, size_t n);

#endif
