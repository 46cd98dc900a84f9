/*
 * Test support: the store's tests. STORE_OK asserts that a call returning
 * 0 (the store's convention) did, printing the reason it wrote into the
 * test's `err` buffer otherwise; the fixture is a store opened on a real
 * database file in a fresh folder under /tmp; remove_tree removes such a
 * folder with whatever SQLite left in it (WAL, shared memory) and, one
 * level down, its subfolders' files.
 * Linked into every unit test (see the Makefile).
 */
#ifndef GPUPROBE_TESTS_STORETEST_H
#define GPUPROBE_TESTS_STORETEST_H

/* Needs a `char err[]` in scope and cmocka included. */
#define STORE_OK(call)                                                            \
    do {                                                                          \
        err[0] = '\0';                                                            \
        int rc_ = (call);                                                         \
        if (rc_ != 0)                                                             \
            fail_msg("%s returned %d: %s", #call, rc_, err);                      \
    } while (0)

#include "db/store.h"

struct store_fixture {
    char dir[64];
    char path[128];    /* DIR/gpuprobe.db */
    store *s;
};
/* cmocka setup and teardown: *state becomes a struct store_fixture whose
 * store is open on a new database in /tmp/gpuprobe-test-TAG-XXXXXX; the
 * teardown closes it and removes the folder. TAG must be short. */
int store_fixture_setup(void **state, const char *tag);
int store_fixture_teardown(void **state);

/* Removes dir's files, its subfolders' files, the subfolders and dir. */
void remove_tree(const char *dir);

#endif
