/*
 * Integer formatting for the CSV writers: decimal and 0x-hex into a buffer,
 * the bytes snprintf's "%" PRIu64 and "0x%" PRIx64 would give.
 *
 * DESIGN
 * The sorter's CSV output is one line per request (301 MB for a trace with
 * no coalescing), so these run once per field of every line on the writer
 * thread. Hex converts a 32-bit half in one go (its nibbles spread to bytes,
 * eight digits made with a few 64-bit operations, one 8-byte store);
 * decimal writes two digits per division by 100 from a pair table after
 * counting digits with clz. Both may store up to TRACE_FMT_SLACK bytes past
 * the digits they return: callers keep that much room (a CSV line reserves
 * far more than its longest).
 */
#ifndef GPUPROBE_TRACE_FMTNUM_H
#define GPUPROBE_TRACE_FMTNUM_H

#include <stdint.h>
#include <string.h>

#define TRACE_FMT_SLACK 8 /* bytes past the returned end a put may overwrite */

/* Number of decimal digits of v (1 for 0). */
static inline int trace_dec_digits(uint64_t v)
{
    static const uint64_t pow10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                       10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                       100000000000ull, 1000000000000ull, 10000000000000ull,
                                       100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                       100000000000000000ull, 1000000000000000000ull,
                                       10000000000000000000ull};
    /* bits * log10(2) (1233 / 4096) is the digit count or one less */
    int bits = 64 - __builtin_clzll(v | 1);
    int d = (bits * 1233) >> 12;
    return d + 1 - ((v | 1) < pow10[d]); /* v | 1: 0 has a digit (the powers past 1 are even) */
}

/* Writes v in decimal at p; returns the byte after it. */
static inline char *trace_put_dec(char *p, uint64_t v)
{
    static const char pairs[201] = "00010203040506070809"
                                   "10111213141516171819"
                                   "20212223242526272829"
                                   "30313233343536373839"
                                   "40414243444546474849"
                                   "50515253545556575859"
                                   "60616263646566676869"
                                   "70717273747576777879"
                                   "80818283848586878889"
                                   "90919293949596979899";
    if (v < 10) { /* sm, width, dep: most fields of an output line are short */
        *p = (char)('0' + v);
        return p + 1;
    }
    char *e = p + trace_dec_digits(v), *q = e;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        q -= 2;
        memcpy(q, pairs + d, 2);
    }
    if (v >= 10)
        memcpy(q - 2, pairs + v * 2, 2);
    else
        q[-1] = (char)('0' + v);
    return e;
}

/* The eight hex digits of x (< 2^32), most significant first, as the bytes
 * of a little-endian 64-bit word. */
static inline uint64_t trace_hex8(uint64_t x)
{
    /* spread nibble i to byte i: 0x12345678 -> 0x0102030405060708 */
    x = (x | x << 16) & 0x0000ffff0000ffffull;
    x = (x | x << 8) & 0x00ff00ff00ff00ffull;
    x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
    /* each byte to its digit: '0' + n, and 'a' - '0' - 10 more when n > 9 */
    uint64_t over9 = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
    x += 0x3030303030303030ull + over9 * ('a' - '0' - 10);
    return __builtin_bswap64(x); /* the most significant digit at the lowest address */
}

/* Writes v as 0x-hex (lower case, no leading zeros) at p; returns the byte
 * after it. */
static inline char *trace_put_hex(char *p, uint64_t v)
{
    int n = (64 - __builtin_clzll(v | 1) + 3) / 4; /* digits */
    *p++ = '0';
    *p++ = 'x';
    uint64_t d;
    if (n > 8) { /* the high half first, its leading digit at the top */
        d = trace_hex8((v >> 32) << (4 * (16 - n)));
        memcpy(p, &d, 8);
        p += n - 8;
        v &= 0xffffffffull;
        n = 8;
    }
    d = trace_hex8(v << (4 * (8 - n)));
    memcpy(p, &d, 8);
    return p + n;
}

#endif
