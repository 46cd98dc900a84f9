/*
 * Bearer tokens for writes. The token file holds one token per line (blank
 * lines and lines starting with '#' are ignored). Checking a presented token
 * takes the same time whichever token it is compared with and wherever it
 * differs, so timing reveals nothing about the tokens.
 */
#ifndef GPUPROBE_SERVER_HTTP_AUTH_H
#define GPUPROBE_SERVER_HTTP_AUTH_H

#include <stddef.h>

#define AUTH_TOKEN_MAX 256

struct auth;

enum auth_result { AUTH_OK, AUTH_MISSING, AUTH_WRONG, AUTH_DISABLED };

/* path NULL or "" gives an auth that refuses every write (AUTH_DISABLED).
 * -1 with the reason if the file cannot be read, holds no token, or a token
 * is too long or contains white space. */
int auth_load(struct auth **out, const char *path, char *err, size_t errlen);
void auth_free(struct auth *a);

/* The first token of a token file, read as auth_load reads one (blank and
 * '#' lines skipped, the line's end and trailing spaces dropped): what a
 * node presents to its upstream, so a file the upstream reads is one the
 * node reads the same. -1 with the reason. */
int auth_first_token(const char *path, char *tok, size_t len, char *err, size_t errlen);

/* Checks an Authorization header value (may be NULL). */
enum auth_result auth_check(const struct auth *a, const char *authorization);

/* Constant-time equality of two byte strings of any lengths up to AUTH_TOKEN_MAX. */
int auth_token_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif
