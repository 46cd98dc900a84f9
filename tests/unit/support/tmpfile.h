/*
 * Test support: files. One file in a fresh temporary directory, as cmocka
 * state; reading and writing whole files.
 * Linked into every unit test (see the Makefile).
 */
#ifndef GPUPROBE_TESTS_TMPFILE_H
#define GPUPROBE_TESTS_TMPFILE_H

#include <stddef.h>
#include <stdint.h>

struct tmp {
    char dir[64];
    char path[128];
};

/* Makes /tmp/gpuprobe-test-TAG-XXXXXX and names NAME inside it; for use in a
 * cmocka setup function. 0 on success. */
int tmp_setup(void **state, const char *tag, const char *name);
/* Removes the file and the directory; for a cmocka teardown function. */
int tmp_teardown(void **state);
/* NAME inside t's folder, in one of four rotating buffers (so a call may
 * use up to four at once). */
const char *tmp_path(const struct tmp *t, const char *name);
/* 1 if path names an existing file. */
int file_exists(const char *path);

/* A four-request CSV trace (threads 0, 1 and 32; thread 0 twice), and one
 * whose line 3 (byte offset 40) has width 3. */
extern const char sample_csv[];
extern const char bad_width_csv[];

/* Writes text to path, failing the test on any error. */
void write_file(const char *path, const char *text);

/* The whole file, NUL-terminated (its size in *len when len is not NULL);
 * NULL when it cannot be read. The caller frees it. */
char *read_file(const char *path, size_t *len);
/* The same, failing the test when the file cannot be read (tests run from
 * the repository root, where the fixtures are). */
char *must_read_file(const char *path, size_t *len);

/* The byte offset where line `line` (1-based) of s starts; fails the test
 * when s has fewer lines. */
uint64_t line_offset(const char *s, uint64_t line);

/* A database file read and written around the store, through a separate
 * plain SQLite connection: the first column of the first row of sql (-1
 * when there is no row), and running sql (failing the test on an error). */
int64_t query_int(const char *path, const char *sql);
void exec_plain(const char *path, const char *sql);

/* Where the tests look for ptxas (CUDA 13.0 on the development machine). */
#define TEST_PTXAS "/usr/local/cuda/bin/ptxas"
/* ptx compiled by TEST_PTXAS for arch ("sm_90") in a temporary folder,
 * removed again: the cubin's bytes (caller frees) and *size, or NULL when
 * ptxas is not installed (the caller skips). A failed compile fails the
 * test. */
char *ptxas_cubin(const char *ptx, const char *arch, size_t *size);

#endif
