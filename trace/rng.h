/*
 * Seeded random numbers for the latency model: xoshiro256** seeded through
 * splitmix64, a uniform double, a standard normal, and the delay draw
 * T = M + round(sigma * |N(0, 1)|) (or T = M).
 *
 * DESIGN
 * Results must be the same on every platform for a given seed, so nothing
 * here calls libm: the normal sampler is a ziggurat (Marsaglia and Tsang)
 * whose tables, wedges and tail use a logarithm and an exponential computed
 * from IEEE-754 basic operations only (+ - * / and sqrt are correctly
 * rounded everywhere; transcendental functions of C libraries are not). One
 * 64-bit draw and one multiply suffice for about 99% of the samples. Each SM gets its own stream, derived from (seed, sm), so the
 * output of one SM does not depend on the order SMs are processed in.
 */
#ifndef GPUPROBE_TRACE_RNG_H
#define GPUPROBE_TRACE_RNG_H

#include <stdint.h>

struct trace_rng {
    uint64_t s[4];
};

/* splitmix64 step: advances *state and returns the next output. */
uint64_t trace_splitmix64(uint64_t *state);

/* Seeds from one 64-bit value (any value, 0 included). */
void trace_rng_seed(struct trace_rng *r, uint64_t seed);
/* Seeds the stream `stream` (an SM index) of `seed`. */
void trace_rng_seed_stream(struct trace_rng *r, uint64_t seed, uint64_t stream);

uint64_t trace_rng_next(struct trace_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double trace_rng_uniform(struct trace_rng *r);
/* |N(0, 1)|, by a 256-strip ziggurat; never above TRACE_HALF_NORMAL_MAX
 * (the tail's largest value, for a uniform draw of 2^-53). */
#define TRACE_HALF_NORMAL_MAX 13.75
double trace_rng_half_normal(struct trace_rng *r);
/* Standard normal, N(0, 1): a half-normal with a random sign. */
double trace_rng_normal(struct trace_rng *r);

/* Natural logarithm of x > 0 (finite) and exponential, from basic
 * operations only; within a few ulp of the exact values. */
double trace_log(double x);
double trace_exp(double x);

/* One latency: fixed_only ? M : M + round(sigma * |N(0,1)|), saturating at
 * UINT32_MAX. Draws nothing when fixed_only or sigma is 0. */
uint32_t trace_rng_delay(struct trace_rng *r, int fixed_only, uint32_t lat_min, double sigma);
/* n delays in a row, exactly those n calls of trace_rng_delay would give
 * (one call for a warp instruction's transactions). */
void trace_rng_delays(struct trace_rng *r, int fixed_only, uint32_t lat_min, double sigma, uint32_t *out,
                      uint32_t n);

#endif
