/*
 * The occupancy calculation's JSON: the request the API and the command
 * line accept, and the answer with every intermediate value.
 *
 * DESIGN
 * One parser for both front ends, strict: unknown members are refused, each
 * member is type- and range-checked, and an error names the member (the
 * API turns it into problem+json "field"). The compute capability is
 * either given ("compute_capability": "9.0") or, when the request names a
 * device, filled in by the caller from that device; the parser only
 * reports which of the two the request asked for.
 * Request members: compute_capability | device, block (threads, required),
 * regs (per thread, required), smem (dynamic shared bytes, default 0),
 * static_smem (0), max_dynamic_smem (the kernel's maximum; default: the
 * per-block limit less static), carveout (percent, default: the driver's),
 * barriers (named barriers used, default 1), curves (true: the answer adds
 * the occupancy curves of occupancy_curves.h; default false).
 */
#ifndef GPUPROBE_MODEL_OCCUPANCY_JSON_H
#define GPUPROBE_MODEL_OCCUPANCY_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "model/occupancy.h"

struct occ_request {
    struct occ_input in;
    int cc_major, cc_minor;      /* -1 when the request names a device instead */
    const json_t *device;        /* the request's "device" (borrowed), or NULL */
    int curves;                  /* "curves": true asks for occupancy_curves.h too */
};

/* Parses "X.Y" (one or two digits each, X at least 1, nothing else); -1
 * when it is not that form. */
int occ_parse_cc(const char *s, int *major, int *minor);

/* Parses a request; -1 with the reason in err and the member in field. */
int occ_request_parse(const json_t *req, struct occ_request *out, char *err, size_t errlen,
                      char *field, size_t fieldlen);

/* The rules row as JSON (every number the calculation used). */
json_t *occ_rules_json(const struct occ_rules *r);
/* The compute capabilities there are rules for, as "7.0, 7.5, ..." in buf. */
void occ_known_ccs(char *buf, size_t len);

/* The answer: {"compute_capability","blocks_per_sm","limiter","limiters",
 * "refused","limits":{resource: blocks|null},"warps":{..},"registers":{..},
 * "shared_memory":{..},"active_warps","occupancy","input":{..},"rules":{..}}.
 * A limit with no bound is null. */
json_t *occ_result_json(const struct occ_rules *r, const struct occ_input *in,
                        const struct occ_result *o);

#endif
