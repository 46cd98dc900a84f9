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

/* --tries TEXT into *tries (default when text is NULL). */
int cli_push_tries(const char *cmd, const char *text, int *tries);
/* The upstream must be an http(s) URL and come with a token file. */
int cli_push_check_upstream(const char *cmd, const char *url, const char *token_file);
/* push_drain with the command line's settings; the counts into *t. */
int cli_push_drain(const char *cmd, store *s, const char *url, const char *token_file, int tries,
                   struct push_tally *t);
/* Drains the outbox, then 0 when every job of ids[0..n) was acknowledged;
 * else 1 with one line naming how many were not and the newest error. */
int cli_push_results(const char *cmd, store *s, const char *url, const char *token_file,
                     int tries, const int64_t *ids, size_t n);

#endif
