/*
 * Test support: temporary files (see tmpfile.h).
 */
#include "tests/unit/support/tmpfile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tmp_setup(void **state, const char *tag, const char *name)
{
    struct tmp *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    snprintf(t->dir, sizeof t->dir, "/tmp/gpuprobe-test-%s-XXXXXX", tag);
    if (!mkdtemp(t->dir)) {
        free(t);
        return -1;
    }
    snprintf(t->path, sizeof t->path, "%s/%s", t->dir, name);
    *state = t;
    return 0;
}

int tmp_teardown(void **state)
{
    struct tmp *t = *state;
    unlink(t->path);
    rmdir(t->dir);
    free(t);
    return 0;
}

void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n + 1)) &&
        fread(b, 1, (size_t)n, f) == (size_t)n) {
        b[n] = '\0';
        if (len)
            *len = (size_t)n;
    } else {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

char *must_read_file(const char *path, size_t *len)
{
    char *b = read_file(path, len);
    if (!b)
        fail_msg("cannot read %s (run the tests from the repository root)", path);
    return b;
}

uint64_t line_offset(const char *s, uint64_t line)
{
    const char *p = s;
    for (uint64_t i = 1; i < line; i++) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    return (uint64_t)(p - s);
}

int64_t query_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

void exec_plain(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *msg = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
    sqlite3_free(msg);
    sqlite3_close(db);
}

const char *tmp_path(const struct tmp *t, const char *name)
{
    static char buf[4][256];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", t->dir, name);
    return p;
}

int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* In the writers' own form (op column), so a conversion round trip gives it
 * back byte for byte; pc 0x50 a store. */
const char sample_csv[] = "tid,pc,addr,width,dep,op\n"
                          "0,0x40,0x1000,4,1,ld\n"
                          "1,0x40,0x1004,4,1,ld\n"
                          "32,0x40,0x1080,4,1,ld\n"
                          "0,0x50,0x2000,8,0,st\n";

const char bad_width_csv[] = "tid,pc,addr,width,dep\n"
                             "0,0x40,0x1000,4,1\n"
                             "1,0x40,0x1004,3,1\n";

char *ptxas_cubin(const char *ptx, const char *arch, size_t *size)
{
    if (access(TEST_PTXAS, X_OK) != 0)
        return NULL;
    char dir[] = "/tmp/gpuprobe-test-ptxas-XXXXXX", cmd[512], ptxp[128], cubp[128];
    assert_non_null(mkdtemp(dir));
    snprintf(ptxp, sizeof ptxp, "%s/k.ptx", dir);
    snprintf(cubp, sizeof cubp, "%s/k.cubin", dir);
    FILE *f = fopen(ptxp, "w");
    assert_non_null(f);
    fputs(ptx, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, TEST_PTXAS " -arch=%s -o %s %s", arch, cubp, ptxp);
    assert_int_equal(system(cmd), 0);
    char *cub = read_file(cubp, size);
    assert_non_null(cub);
    unlink(ptxp);
    unlink(cubp);
    rmdir(dir);
    return cub;
}
