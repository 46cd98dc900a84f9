/*
 * A table of interned strings: each distinct string gets a small id, in
 * the order first seen, and is found again by hashing. The fleet index
 * names tens of thousands of devices and hundreds of figures millions of
 * times; an id is four bytes and compares in one instruction.
 */
#ifndef GPUPROBE_FLEET_STRTAB_H
#define GPUPROBE_FLEET_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
    char **strs;          /* by id */
    uint32_t n, cap;
    uint32_t *slots;      /* open addressing: id + 1, 0 empty */
    size_t nslots;
};

void strtab_init(struct strtab *t);
void strtab_free(struct strtab *t);
/* The id of s, added if new; UINT32_MAX when memory ran out. */
uint32_t strtab_intern(struct strtab *t, const char *s);
/* The id of s, or UINT32_MAX when it is not in the table. */
uint32_t strtab_find(const struct strtab *t, const char *s);
/* The string of an id. Contract: id < t->n. */
const char *strtab_str(const struct strtab *t, uint32_t id);

#endif
