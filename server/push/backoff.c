/*
 * Retry waits and the verdict of an answer (see backoff.h).
 */
#include "server/push/backoff.h"

int64_t push_backoff_ms(int attempts, int64_t cap_ms, uint32_t rnd)
{
    int64_t base = PUSH_BACKOFF_FIRST_MS;
    for (int i = 1; i < attempts && base < cap_ms; i++)
        base *= 2;
    if (base > cap_ms)
        base = cap_ms;
    int64_t half = base / 2;
    return base - half + (int64_t)(((uint64_t)half * rnd) / UINT32_MAX);
}

enum push_verdict push_verdict_of(int status, int imported)
{
    switch (status) {
    case 200:
        return imported ? PUSH_ACKNOWLEDGED : PUSH_RETRY;
    case 400: /* not JSON, or a bundle the upstream's checks refuse */
    case 413: /* larger than the upstream takes: it will not shrink */
    case 415:
    case 422:
        return PUSH_REFUSED;
    default:
        return PUSH_RETRY;
    }
}
