/*
 * When to try a push again, and what the upstream's answer means.
 *
 * DESIGN
 * A failed push waits 1 s, then twice as long after every further failure,
 * up to a cap (`upstream_retry_max_s`, 10 minutes unless configured), and
 * each wait is drawn between half and all of that (jitter), so nodes that
 * lost the same central at once do not all come back in the same second.
 * The answer decides the row's fate: 200 is an acknowledgement; an answer
 * saying that the bundle itself is wrong (400, 413, 415, 422) is a refusal,
 * which no repetition would change; everything else (401 and 403 until the
 * token is mended, 5xx, 429, no answer at all) is tried again.
 * Pure functions: no clock, no randomness of their own.
 */
#ifndef GPUPROBE_SERVER_PUSH_BACKOFF_H
#define GPUPROBE_SERVER_PUSH_BACKOFF_H

#include <stdint.h>

#define PUSH_BACKOFF_FIRST_MS 1000
#define PUSH_BACKOFF_CAP_MS (600 * 1000)

/* The wait before the next try after `attempts` (>= 1) failed ones, at most
 * cap_ms (>= 1): base = min(cap_ms, 1 s * 2^(attempts-1)), then base/2 plus
 * rnd's share of the other half (rnd uniformly drawn from 0..UINT32_MAX). */
int64_t push_backoff_ms(int attempts, int64_t cap_ms, uint32_t rnd);

enum push_verdict { PUSH_ACKNOWLEDGED, PUSH_REFUSED, PUSH_RETRY };
/* The verdict of an HTTP status (0: no answer) and whether its body was an
 * import's answer: a 200 that is not (a proxy's page, a web server on the
 * wrong port) delivered nothing, and is tried again. */
enum push_verdict push_verdict_of(int status, int imported);

#endif
