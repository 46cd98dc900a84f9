/*
 * Token file loading and constant-time comparison (see auth.h).
 * Every presented token is compared with every configured token over the
 * full fixed width, and the results are OR-ed, so neither which token
 * matched nor where a mismatch starts changes the work done.
 */
#include "server/http/auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct auth {
    int enabled;
    size_t count;
    char (*tokens)[AUTH_TOKEN_MAX];
    size_t *lens;
};

int auth_token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned diff = (alen != blen) | (alen > AUTH_TOKEN_MAX) | (blen > AUTH_TOKEN_MAX);
    for (size_t i = 0; i < AUTH_TOKEN_MAX; i++) {
        unsigned char x = i < alen && i < AUTH_TOKEN_MAX ? (unsigned char)a[i] : 0;
        unsigned char y = i < blen && i < AUTH_TOKEN_MAX ? (unsigned char)b[i] : 0;
        diff |= (unsigned)(x ^ y);
    }
    return diff == 0;
}

static int add_token(struct auth *a, const char *tok, size_t len, char *err, size_t errlen,
                     const char *path, int lineno)
{
    if (len >= AUTH_TOKEN_MAX) {
        snprintf(err, errlen, "%s:%d: token longer than %d bytes", path, lineno, AUTH_TOKEN_MAX - 1);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if (tok[i] == ' ' || tok[i] == '\t') {
            snprintf(err, errlen, "%s:%d: token contains white space", path, lineno);
            return -1;
        }
    char(*t)[AUTH_TOKEN_MAX] = realloc(a->tokens, (a->count + 1) * sizeof *t);
    if (!t)
        return -1;
    a->tokens = t;
    size_t *l = realloc(a->lens, (a->count + 1) * sizeof *l);
    if (!l)
        return -1;
    a->lens = l;
    memset(a->tokens[a->count], 0, AUTH_TOKEN_MAX);
    memcpy(a->tokens[a->count], tok, len);
    a->lens[a->count++] = len;
    return 0;
}

/* A line of a token file without its end and trailing spaces: its length,
 * 0 for a line that holds no token (blank, or a '#' comment). */
static size_t token_line(char *line)
{
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
        line[--n] = '\0';
    return line[0] == '#' ? 0 : n;
}

static int read_tokens(struct auth *a, FILE *f, const char *path, char *err, size_t errlen)
{
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = token_line(line);
        if (n == 0)
            continue;
        if (add_token(a, line, n, err, errlen, path, lineno) < 0)
            return -1;
    }
    if (a->count == 0) {
        snprintf(err, errlen, "%s: holds no token", path);
        return -1;
    }
    return 0;
}

int auth_load(struct auth **out, const char *path, char *err, size_t errlen)
{
    struct auth *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *out = a;
    if (!path || !*path)
        return 0;
    a->enabled = 1;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto fail;
    }
    int rc = read_tokens(a, f, path, err, errlen);
    fclose(f);
    if (rc == 0)
        return 0;
fail:
    auth_free(a);
    *out = NULL;
    return -1;
}

int auth_first_token(const char *path, char *tok, size_t len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    size_t n = 0;
    while (n == 0 && fgets(line, sizeof line, f))
        n = token_line(line);
    fclose(f);
    if (n == 0 || n >= len) {
        snprintf(err, errlen, "%s: %s", path, n ? "the token is too long" : "holds no token");
        return -1;
    }
    memcpy(tok, line, n + 1);
    return 0;
}

void auth_free(struct auth *a)
{
    if (!a)
        return;
    if (a->tokens)
        memset(a->tokens, 0, a->count * AUTH_TOKEN_MAX);
    free(a->tokens);
    free(a->lens);
    free(a);
}

enum auth_result auth_check(const struct auth *a, const char *authorization)
{
    if (!a->enabled)
        return AUTH_DISABLED;
    if (!authorization)
        return AUTH_MISSING;
    if (strncasecmp(authorization, "Bearer ", 7) != 0)
        return AUTH_WRONG;
    const char *tok = authorization + 7;
    while (*tok == ' ')
        tok++;
    size_t len = strnlen(tok, AUTH_TOKEN_MAX + 1);
    if (len == 0)
        return AUTH_MISSING;
    int ok = 0;
    for (size_t i = 0; i < a->count; i++)
        ok |= auth_token_equal(tok, len, a->tokens[i], a->lens[i]);
    return ok ? AUTH_OK : AUTH_WRONG;
}
