/*
 * Test support: one file in a fresh temporary directory, as cmocka state.
 * Linked into every unit test (see the Makefile).
 */
#ifndef GPUPROBE_TESTS_TMPFILE_H
#define GPUPROBE_TESTS_TMPFILE_H

struct tmp {
    char dir[64];
    char path[128];
};

/* Makes /tmp/gpuprobe-test-TAG-XXXXXX and names NAME inside it; for use in a
 * cmocka setup function. 0 on success. */
int tmp_setup(void **state, const char *tag, const char *name);
/* Removes the file and the directory; for a cmocka teardown function. */
int tmp_teardown(void **state);
/* Writes text to path, failing the test on any error. */
void write_file(const char *path, const char *text);

#endif
