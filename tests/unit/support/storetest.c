/*
 * Test support: the store's tests (see storetest.h).
 */
#include "tests/unit/support/storetest.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void remove_level(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    while (d && (e = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (depth > 0 && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_level(p, depth - 1);
        else
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

void remove_tree(const char *dir) { remove_level(dir, 1); }

int store_fixture_setup(void **state, const char *tag)
{
    char err[512];
    struct store_fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    snprintf(fx->dir, sizeof fx->dir, "/tmp/gpuprobe-test-%.16s-XXXXXX", tag);
    if (!mkdtemp(fx->dir)) {
        free(fx);
        return -1;
    }
    snprintf(fx->path, sizeof fx->path, "%s/gpuprobe.db", fx->dir);
    if (store_open(&fx->s, fx->path, err, sizeof err) != 0) {
        fprintf(stderr, "setup: %s\n", err);
        remove_tree(fx->dir);
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

int store_fixture_teardown(void **state)
{
    struct store_fixture *fx = *state;
    store_close(fx->s);
    remove_tree(fx->dir);
    free(fx);
    return 0;
}
