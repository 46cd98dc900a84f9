/*
 * Test support: the SASS oracle, the disassembly text the SASS reader is
 * checked against: cuobjdump -sass (NAME.sass) and nvdisasm -hex
 * (NAME.nvdisasm) print each instruction as the same two lines, offset and
 * text with the first 64-bit word, then the second word. Read per function
 * ("Function : NAME" in cuobjdump's listing, ".text.NAME:" in nvdisasm's).
 * Linked into every unit test (see the Makefile).
 */
#ifndef GPUPROBE_TESTS_SASS_ORACLE_H
#define GPUPROBE_TESTS_SASS_ORACLE_H

#include <stddef.h>
#include <stdint.h>

struct oinsn {
    unsigned offset;
    char text[192];
    uint64_t lo, hi;
};

struct ofunc {
    char name[128];
    struct oinsn *insns;
    size_t n, cap;
};

struct oracle {
    struct ofunc *funcs;
    size_t n, cap;
};

/* Reads the listing at path (failing the test when it cannot). */
void sass_oracle_load(const char *path, struct oracle *o);
void sass_oracle_free(struct oracle *o);
/* The function of that name, or NULL. */
const struct ofunc *sass_oracle_func(const struct oracle *o, const char *name);

#endif
