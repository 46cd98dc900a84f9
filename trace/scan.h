/*
 * Scanning text traces: what every text reader of trace/ (CSV, NVBit
 * mem_trace, Accel-Sim, the per-PC flag table) reads its input with: the
 * walk over the buffer's lines, a cursor over one line, number scanners, and
 * errors that name where the input went wrong.
 *
 * DESIGN
 * A reader keeps one struct trace_text: its buffer, the number and start of
 * the current line and where errors go. trace_text_line hands out the lines
 * one by one, each without its LF or CRLF, as a cursor [p, e) that the
 * reader's parser advances over what it recognises. Every error a reader
 * reports is built here from the current line: trace_text_bad names the
 * column of the offending byte (a malformed field), trace_text_fail names the
 * line alone (out of memory, a full table), so all formats give "line, byte
 * offset of the line's start, reason" the same way (docs/trace-formats.md).
 * The scanners read a number from a byte range [p, end) without needing a
 * NUL, with overflow checks, and never read at or past end; the cursor's
 * number readers are built on them. Nothing here allocates.
 * This is the lowest layer of trace/'s text formats; it knows no format.
 */
#ifndef GPUPROBE_TRACE_SCAN_H
#define GPUPROBE_TRACE_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "trace/record.h"

/* ---- number scanners ---------------------------------------------------- */

enum trace_scan {
    TRACE_SCAN_OK = 0,
    TRACE_SCAN_NONE,     /* no digit at p */
    TRACE_SCAN_OVERFLOW, /* more than 64 bits */
    TRACE_SCAN_NOHEX,    /* "0x" with no hex digit after it */
};

/* Scans an unsigned number at p: decimal digits, or, when allow_hex, "0x" or
 * "0X" and 1..16 significant hex digits. Stops at the first byte that cannot
 * continue it. Returns TRACE_SCAN_*; *next is where it stopped (p on NONE). */
int trace_scan_u64(const char *p, const char *end, int allow_hex, uint64_t *v, const char **next);
/* Hex digits without a prefix (an optional "0x" is accepted too). */
int trace_scan_hex(const char *p, const char *end, uint64_t *v, const char **next);
/* An optionally '-'-signed decimal that fits int64_t. */
int trace_scan_i64(const char *p, const char *end, int64_t *v, const char **next);

/* 1 + the value of a hex digit byte, 0 for any other byte. */
extern const unsigned char trace_hex1[256];

/* The common case of trace_scan_u64, inline for a reader's fast path: a
 * decimal of 1 to 19 digits, or (allow_hex) "0x"/"0X" and 1 to 16 hex
 * digits — numbers that cannot overflow. Returns 1 with *v and *p moved
 * past it, giving exactly what trace_scan_u64 gives; 0 (nothing moved)
 * for anything else, which the reader then scans with trace_scan_u64 to
 * learn what is wrong, or to read a longer number. */
static inline int trace_scan_u64_short(const char **p, const char *end, int allow_hex, uint64_t *v)
{
    const char *s = *p, *q;
    uint64_t x = 0;
    if (allow_hex && end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        unsigned d;
        for (q = s + 2; q < end && (d = trace_hex1[(unsigned char)*q]) != 0; q++)
            x = x << 4 | (d - 1);
        if (q == s + 2 || q - (s + 2) > 16)
            return 0;
    } else {
        for (q = s; q < end && (unsigned char)(*q - '0') < 10; q++)
            x = x * 10 + (uint64_t)(*q - '0');
        if (q == s || q - s > 19)
            return 0;
    }
    *v = x;
    *p = q;
    return 1;
}

/* ---- the lines of a buffer ---------------------------------------------- */

/* A reader's position. Fields are read-only outside scan.c. */
struct trace_text {
    const char *buf, *end; /* the input */
    const char *next;      /* where the line after the current one starts */
    const char *ls;        /* where the current line starts */
    uint64_t line;         /* its number, from 1; 0 before the first line */
    uint64_t base;         /* byte offset of buf[0] in the whole input */
    struct trace_err *err; /* where errors go; may be NULL */
};

/* A cursor over part of a line: the parser moves p towards e. */
struct trace_cur {
    const char *p, *e;
};

/* A token: n bytes at s. */
struct trace_tok {
    const char *s;
    size_t n;
};

/* Positions t before the first line of buf[0..len). */
void trace_text_init(struct trace_text *t, const char *buf, size_t len, struct trace_err *err);
/* Goes on with the next piece of the same input: buf[0..len) holds the
 * bytes from offset base on, starting at a line start (a reader that reads
 * a file in chunks); line numbers go on from the previous piece. */
void trace_text_next_chunk(struct trace_text *t, const char *buf, size_t len, uint64_t base);
/* Moves to the next line: 1 with *c its content (without LF or CRLF), or 0
 * at the end of the buffer (a final LF starts no line). */
int trace_text_line(struct trace_text *t, struct trace_cur *c);

/* Reports a malformed current line: err gets the line, the byte offset of
 * its start and the reason followed by "(column C)", C the 1-based column of
 * at. Returns TRACE_EINPUT. */
int trace_text_bad(const struct trace_text *t, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports what went wrong on the current line as a whole (no column).
 * Returns rc. */
int trace_text_fail(const struct trace_text *t, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A record the current line made, checked as a binary file's records are
 * (trace_bin_req_check: width, flags, an address that does not pass 2^64),
 * so that no reader writes a record another refuses: 0, or TRACE_EINPUT
 * reported at `at`. */
int trace_text_rec_check(const struct trace_text *t, const char *at, const struct trace_rec *r);
/* For r, a bounded table's answer to an insert on the current line: 0 gives
 * 0; TRACE_ENOMEM reports "out of memory" and gives TRACE_ENOMEM; any other
 * value (the table is full) reports "more than the allowed number of
 * <what>" and gives TRACE_EINPUT. */
int trace_text_put_result(const struct trace_text *t, int r, const char *what);

/* ---- the cursor ---------------------------------------------------------- */

/* Each returns 1 and moves past what it recognised, or 0 and leaves c->p
 * where it was (trace_cur_triple: where the first element that failed
 * starts, or where a ',' was missing). Blanks are ' ' and '\t'. */

/* The literal text s. */
int trace_cur_lit(struct trace_cur *c, const char *s);
/* A number as trace_scan_u64 reads it (hex: allow_hex). */
int trace_cur_u64(struct trace_cur *c, int hex, uint64_t *v);
/* A decimal number that fits 32 bits. */
int trace_cur_u32(struct trace_cur *c, uint32_t *v);
/* "x,y,z", three trace_cur_u32 (v is filled as far as they were read). */
int trace_cur_triple(struct trace_cur *c, uint32_t v[3]);

/* Skips blanks. */
void trace_cur_skip_blanks(struct trace_cur *c);
/* Takes the run of non-blank bytes at c->p (n == 0 at a blank or the end). */
struct trace_tok trace_cur_word(struct trace_cur *c);

#endif
