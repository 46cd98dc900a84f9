/*
 * Compares the occupancy rules with a capture of the driver's answers
 * (probes/occupancy_sweep.h writes the capture; tests/fixtures/occupancy/
 * holds one from an H200).
 *
 * DESIGN
 * Every row of the capture becomes an occ_input: the kernel's registers,
 * static shared memory and barriers as the driver reported them, and the
 * row's block size, dynamic shared size, dynamic maximum and carve-out.
 * The rules of the capture's compute capability answer it; a driver error
 * counts as an answer of 0 blocks. The device's own attributes in the
 * capture are also compared with the rules row, so a rules table that
 * drifted from the hardware fails even where no row happens to show it.
 */
#ifndef GPUPROBE_MODEL_OCCUPANCY_CHECK_H
#define GPUPROBE_MODEL_OCCUPANCY_CHECK_H

#include <jansson.h>
#include <stddef.h>

struct occ_check {
    int rows;           /* configurations compared */
    int agree;
    int driver_errors;  /* rows the driver answered with an error (compared as 0) */
    int attributes_checked, attributes_agree;
    json_t *mismatches; /* [{"row":i,"input":{..},"driver":n,"model":n,"limiter":..}],
                           at most 20; attribute mismatches as {"attribute","device","rules"} */
    int limiter_count[8]; /* rows limited by each resource (enum occ_limit) */
};

/* Runs the comparison; -1 with the reason when the capture is malformed or
 * has no rules for its compute capability. The caller frees mismatches. */
int occ_check_capture(const json_t *capture, struct occ_check *out, char *err, size_t errlen);

/* {"compute_capability","rows","agree","driver_errors","attributes":{"checked","agree"},
 *  "limiters":{"warps":n,..},"mismatches":[..]} (takes mismatches). */
json_t *occ_check_json(struct occ_check *c, const char *cc);

#endif
