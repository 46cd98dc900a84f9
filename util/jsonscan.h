/*
 * What parsing a JSON text will cost, known before it is parsed.
 *
 * DESIGN. jansson builds a tree of small allocations: a number that takes 2
 * bytes of text ("0,") takes 40 bytes of memory, an empty object ("{},")
 * 232. A body that the byte limit of its route lets in can thus take 20 to
 * 80 times its size once parsed, before any check of its content has run.
 * The scanner reads the text once, linearly, in pieces of any size (a
 * spooled body is fed through a small buffer, never mapped whole), and
 * counts what jansson allocates: each value by its kind, each object
 * member, the bytes of every string and key, the largest container, the
 * longest token, the nesting. From the counts it bounds the bytes jansson
 * will hold at most (json_scan_cost, JSON_SCAN_COST_*: jansson 2.14's
 * structures in the 16-byte chunks of glibc's malloc on a 64-bit machine,
 * and what the parse holds while it runs; tests/unit/test_jsonscan.c holds
 * the bound above what jansson really asks for, shape by shape, at the
 * sizes where its tables grow. glibc maps a block of 128 KiB or more in
 * whole pages, up to 3 % more on such a block, which is not counted). It
 * stops at the first bracket past a depth limit.
 *
 * It is a counter, not a validator: it knows strings (so brackets, quotes
 * and backslashes inside them count for nothing) and the structural
 * characters, and takes any other run of characters for one scalar. Text
 * that is not JSON is counted somehow and then refused by jansson; the
 * estimate is only ever used to refuse text before jansson sees it.
 */
#ifndef GPUPROBE_UTIL_JSONSCAN_H
#define GPUPROBE_UTIL_JSONSCAN_H

#include <stddef.h>

/* Bytes of jansson's tree per thing counted (see DESIGN). A value's slot
 * in its array's table is 16 bytes at most (8, in a table at most twice
 * the array), a member's bucket 32 (16, in at most twice as many). */
/* a number (32; true, false and null are shared) and its slot */
#define JSON_SCAN_COST_SCALAR 48
/* a string (48, its text's block 26) and its slot, plus its bytes */
#define JSON_SCAN_COST_STRING 96
/* an array (48, a first table of 8 slots 80) and its slot */
#define JSON_SCAN_COST_ARRAY 144
/* an object (80, a first hash table of 8 buckets 144) and its slot */
#define JSON_SCAN_COST_OBJECT 240
/* an object member (its key's pair 80, its bucket), plus the key's bytes */
#define JSON_SCAN_COST_MEMBER 112

/* And what the parse holds while it runs: */
/* once: the lexer's first buffer, and what else the parse holds beside the tree */
#define JSON_SCAN_COST_PARSE 1024
/* times the largest array's values, and the largest object's members: the
 * old table, held while the new one is filled */
#define JSON_SCAN_COST_GROWTH_ARRAY 8
#define JSON_SCAN_COST_GROWTH_OBJECT 16
/* per level of nesting: a key held while its value is parsed (plus the
 * key's bytes, counted a second time) */
#define JSON_SCAN_COST_LEVEL 32
/* times the longest token: the lexer's buffer, doubling */
#define JSON_SCAN_COST_TOKEN 3

/* The deepest nesting the scanner can follow. */
#define JSON_SCAN_DEPTH_MAX 256

struct json_scan {
    /* what was counted so far */
    unsigned long long values;   /* every value: the sum of the four below */
    unsigned long long scalars, strings, arrays, objects;
    unsigned long long members;  /* object members (their keys) */
    unsigned long long text;     /* bytes of strings and keys, between their quotes */
    unsigned long long key_text; /* those of keys */
    unsigned long long longest;  /* the longest token ended: a string or key with its
                                    quotes, a scalar's characters */
    unsigned long long largest[2]; /* the most values of an array closed ([0]), the
                                      most members of an object closed ([1]) */
    size_t offset;               /* bytes fed */
    int max_depth;               /* the deepest nesting seen (a top-level array: 1) */
    size_t deep_at;              /* json_scan_feed -1: the offset of the bracket too deep */

    /* the scanner's state between pieces */
    int depth_limit;
    int depth;
    unsigned long long token;    /* the length of the token being read */
    unsigned char in_string, in_key, escaped, in_scalar, key_next, too_deep;
    unsigned char object[JSON_SCAN_DEPTH_MAX + 1]; /* per depth: 1 inside an object */
    unsigned long long count[JSON_SCAN_DEPTH_MAX + 1]; /* per depth: the container's
                                                          values or members so far */
};

/* Starts a scan that stops at nesting deeper than depth_limit (1 ..
 * JSON_SCAN_DEPTH_MAX; values out of range are clamped into it). */
void json_scan_init(struct json_scan *s, int depth_limit);
/* Counts the next n bytes of the text. 0, or -1 once a bracket opens
 * nesting deeper than the limit (deep_at says where; the scan is over). */
int json_scan_feed(struct json_scan *s, const void *p, size_t n);
/* The most bytes jansson holds while parsing what was counted (a bound,
 * not a guess: see DESIGN); saturates rather than wrapping. */
unsigned long long json_scan_cost(const struct json_scan *s);

#endif
