/*
 * Deterministic random numbers for the latency model (see rng.h).
 *
 * DESIGN
 * xoshiro256** (Blackman and Vigna) for the stream, splitmix64 to expand a
 * 64-bit seed into its state, both written from their published definitions.
 * The logarithm reduces x to m * 2^e with m in [sqrt(1/2), sqrt(2)) and sums
 * the series of log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, to
 * 12 terms; the exponential reduces x to k ln 2 + r, |r| <= ln(2)/2, and sums
 * the Taylor series of e^r to 14 terms. Every step is a basic operation in
 * a fixed order, one operation per statement, so no compiler may fuse a
 * multiply and an add (GCC in -std=c11 mode does not contract; clang is told
 * not to below). The ziggurat's tables are computed once from these at first
 * use, so they are the same bits on every platform.
 */
#include "trace/rng.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

uint64_t trace_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void trace_rng_seed(struct trace_rng *r, uint64_t seed)
{
    uint64_t st = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = trace_splitmix64(&st);
}

void trace_rng_seed_stream(struct trace_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t st = seed;
    uint64_t a = trace_splitmix64(&st);
    st = stream ^ 0x5851f42d4c957f2dull;
    uint64_t b = trace_splitmix64(&st);
    trace_rng_seed(r, a ^ (b * 0x2545f4914f6cdd1dull));
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** step, inlined into the delay loop below. */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

uint64_t trace_rng_next(struct trace_rng *r)
{
    return rng_next(r->s);
}

double trace_rng_uniform(struct trace_rng *r)
{
    return (double)(trace_rng_next(r) >> 11) * 0x1.0p-53;
}

/* x = m * 2^e, m in [1, 2), by the bits (x normal, positive). */
static double split_pow2(double x, int *e)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int ex = (int)((b >> 52) & 0x7ff);
    int extra = 0;
    if (ex == 0) { /* subnormal: scale up first */
        x = x * 0x1.0p64;
        memcpy(&b, &x, sizeof b);
        ex = (int)((b >> 52) & 0x7ff);
        extra = -64;
    }
    *e = ex - 1023 + extra;
    b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double m;
    memcpy(&m, &b, sizeof m);
    return m;
}

double trace_log(double x)
{
    static const double ln2_hi = 0x1.62e42fee00000p-1; /* ln 2 = hi + lo, hi with 32 low zero bits */
    static const double ln2_lo = 0x1.a39ef35793c76p-33;
    int e;
    double m = split_pow2(x, &e);
    if (m > 0x1.6a09e667f3bcdp+0) { /* > sqrt(2): use m / 2 and e + 1 */
        m = m * 0.5;
        e = e + 1;
    }
    double num = m - 1.0;
    double den = m + 1.0;
    double s = num / den;
    double s2 = s * s;
    /* 2 * (s + s^3/3 + ... + s^23/23), Horner from the smallest term */
    double acc = 1.0 / 23.0;
    static const double inv[] = {1.0 / 21.0, 1.0 / 19.0, 1.0 / 17.0, 1.0 / 15.0, 1.0 / 13.0, 1.0 / 11.0,
                                 1.0 / 9.0,  1.0 / 7.0,  1.0 / 5.0,  1.0 / 3.0,  1.0};
    for (int i = 0; i < 11; i++) {
        double t = acc * s2;
        acc = t + inv[i];
    }
    double lm = acc * s;
    lm = lm * 2.0;
    double de = (double)e;
    double hi = de * ln2_hi; /* exact: de has at most 11 significant bits */
    double lo = de * ln2_lo;
    double r = lm + lo;
    return r + hi;
}

static double sqrt_basic(double x)
{
    /* compiles to the correctly rounded square-root instruction */
    return __builtin_sqrt(x);
}

double trace_exp(double x)
{
    static const double ln2_hi = 0x1.62e42fee00000p-1;
    static const double ln2_lo = 0x1.a39ef35793c76p-33;
    if (x < -745.0)
        return 0.0;
    if (x > 709.0)
        return __builtin_inf();
    double kd = x * 0x1.71547652b82fep0; /* x / ln 2 */
    kd = kd < 0 ? kd - 0.5 : kd + 0.5;
    int k = (int)kd;                     /* rounded to nearest */
    double a = (double)k * ln2_hi;       /* exact */
    double r = x - a;
    double b = (double)k * ln2_lo;
    r = r - b;                           /* |r| <= 0.35 */
    double acc = 1.0 / 6227020800.0;     /* 1/13!, Horner down to 1 */
    static const double inv_fact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                                      1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,     1.0 / 120.0,
                                      1.0 / 24.0,        1.0 / 6.0,        0.5,             1.0,
                                      1.0};
    for (int i = 0; i < 13; i++) {
        double t = acc * r;
        acc = t + inv_fact[i];
    }
    /* scale by 2^k in two steps so that neither factor overflows */
    int k1 = k / 2, k2 = k - k1;
    uint64_t b1 = (uint64_t)(k1 + 1023) << 52, b2 = (uint64_t)(k2 + 1023) << 52;
    double s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    acc = acc * s1;
    return acc * s2;
}

/* ---- the half-normal ziggurat ----------------------------------------- */

/* 256 strips of equal area V under f(x) = exp(-x^2/2), x >= 0; the base
 * strip is the rectangle under f(R) out to R plus the tail beyond R
 * (Marsaglia and Tsang's construction; R and V are their 256-strip values). */
#define ZIG_N 256
#define ZIG_R 3.6541528853610088
#define ZIG_V 4.92867323399e-3

struct zig {
    double x[ZIG_N + 1]; /* strip i spans [0, x[i]); x[0] = V / f(R), x[1] = R, x[N] = 0 */
    double xu[ZIG_N];    /* x[i] * 2^-53: a 53-bit integer times it is the first try's point in
                            one rounding, the same as (integer * 2^-53) * x[i] (both products are
                            the same real number, 2^-53 scaling exact) */
    double f[ZIG_N + 1]; /* f(x[i]) */
};

static double zig_f(double x)
{
    double q = x * x;
    q = q * -0.5;
    return trace_exp(q);
}

static void zig_build(struct zig *z)
{
    z->x[1] = ZIG_R;
    z->f[1] = zig_f(ZIG_R);
    z->x[0] = ZIG_V / z->f[1];
    z->f[0] = z->f[1];
    for (int i = 1; i < ZIG_N - 1; i++) {
        double y = ZIG_V / z->x[i];
        y = y + z->f[i];                 /* f at the next strip's edge */
        double l = trace_log(y);
        l = -2.0 * l;
        z->x[i + 1] = sqrt_basic(l);
        z->f[i + 1] = y;
    }
    z->x[ZIG_N] = 0.0;
    z->f[ZIG_N] = 1.0;
    for (int i = 0; i < ZIG_N; i++)
        z->xu[i] = z->x[i] * 0x1.0p-53;
}

static struct zig zig_table;
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static int zig_ready; /* set (release) once zig_table is built */

static void zig_init(void)
{
    zig_build(&zig_table);
    __atomic_store_n(&zig_ready, 1, __ATOMIC_RELEASE);
}

/* Every delay draw asks for the tables: after the first, one acquire load
 * instead of a call to pthread_once. */
static inline const struct zig *zig_tables(void)
{
    if (!__atomic_load_n(&zig_ready, __ATOMIC_ACQUIRE))
        pthread_once(&zig_once, zig_init); /* several threads may sort at once */
    return &zig_table;
}

/* Beyond R: Marsaglia's tail method. */
static double zig_tail(struct trace_rng *r)
{
    for (;;) {
        double u1 = 1.0 - trace_rng_uniform(r); /* (0, 1] */
        double u2 = 1.0 - trace_rng_uniform(r);
        double x = -trace_log(u1);
        x = x / ZIG_R;
        double y = -trace_log(u2);
        double xx = x * x;
        if (y + y > xx)
            return ZIG_R + x;
    }
}

/* The rest of a ziggurat draw whose first try (u's strip i, x = its point)
 * did not fall inside strip i's rectangle: the wedge or tail test, then
 * new tries. Out of line: about 1% of the draws come here, and as a call
 * it keeps the inlined first try free of the register saves it needs. */
__attribute__((noinline)) static double half_normal_rest(struct trace_rng *r, const struct zig *z, unsigned i,
                                                         double x)
{
    for (;;) {
        if (i == 0)
            return zig_tail(r);
        double d = z->f[i + 1] - z->f[i];
        double y = trace_rng_uniform(r) * d;
        y = y + z->f[i];
        if (y < zig_f(x))
            return x;
        uint64_t u = trace_rng_next(r);
        i = (unsigned)(u & (ZIG_N - 1));
        x = (double)(u >> 11) * 0x1.0p-53;
        x = x * z->x[i];
        if (x < z->x[i + 1])
            return x;
    }
}

/* One draw: the first try inline, where 99% of the draws end, on st (r
 * itself, or a copy of it the caller keeps in registers over many draws);
 * the rare rest runs on r, st copied there and back. */
static inline double half_normal_on(struct trace_rng *st, struct trace_rng *r, const struct zig *z)
{
    uint64_t u = rng_next(st->s);
    unsigned i = (unsigned)(u & (ZIG_N - 1));
    double x = (double)(u >> 11) * z->xu[i]; /* = (u >> 11) * 2^-53 * x[i], one multiply */
    if (x < z->x[i + 1])
        return x;
    *r = *st;
    x = half_normal_rest(r, z, i, x);
    *st = *r;
    return x;
}

static inline double half_normal(struct trace_rng *r, const struct zig *z)
{
    return half_normal_on(r, r, z);
}

double trace_rng_half_normal(struct trace_rng *r)
{
    return half_normal(r, zig_tables());
}

double trace_rng_normal(struct trace_rng *r)
{
    double h = trace_rng_half_normal(r);
    return trace_rng_next(r) >> 63 ? -h : h;
}

/* sigma * |N(0,1)| rounded half up, added to lat_min, saturating. */
static inline double delay_room(uint32_t lat_min)
{
    return (double)(UINT32_MAX - lat_min);
}

static inline uint32_t delay_of(double a, uint32_t lat_min, double sigma, double room)
{
    double d = sigma * a;
    d = d + 0.5;
    if (d >= room) /* room: UINT32_MAX - lat_min (delay_room), the caller's once for many draws */
        return UINT32_MAX;
    return lat_min + (uint32_t)d;
}

uint32_t trace_rng_delay(struct trace_rng *r, int fixed_only, uint32_t lat_min, double sigma)
{
    if (fixed_only || sigma == 0.0)
        return lat_min;
    return delay_of(trace_rng_half_normal(r), lat_min, sigma, delay_room(lat_min));
}

void trace_rng_delays(struct trace_rng *r, int fixed_only, uint32_t lat_min, double sigma, uint32_t *out,
                      uint32_t n)
{
    if (fixed_only || sigma == 0.0) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = lat_min;
        return;
    }
    const struct zig *z = zig_tables(); /* once per instruction, not per draw */
    /* the state in a local copy, which the compiler keeps in registers
     * (r's own state must be stored after every draw: the stores to out
     * might alias it); it goes back to r around the rare rest of a draw */
    struct trace_rng st = *r;
    const double room = delay_room(lat_min);
    for (uint32_t i = 0; i < n; i++)
        out[i] = delay_of(half_normal_on(&st, r, z), lat_min, sigma, room);
    *r = st;
}
