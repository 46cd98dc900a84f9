/*
 * The control-code probe ("control-codes"): what the scheduling fields of
 * sm_70+ instructions mean, found by rewriting them in compiled code and
 * timing the result (see control_codes_run.c for the method).
 *
 * DESIGN
 * Measuring (control_codes_run.c, needs a GPU) and inferring
 * (control_codes_infer.c, plain C) are apart: the run records, for every
 * instruction, a sweep of points {stall, yield, chain_cycles,
 * chain_correct, stream_cycles, stream_correct}; everything the probe
 * concludes is computed from those points by the functions below, so the
 * conclusions can be recomputed from a stored document and tested without
 * a GPU against sweeps captured on one.
 */
#ifndef GPUPROBE_PROBES_CONTROL_CODES_H
#define GPUPROBE_PROBES_CONTROL_CODES_H

#include <jansson.h>
#include <stddef.h>

/* Runs the probe on a device (UUID or index), each point measured repeats
 * times: the whole result document, or NULL with the reason. */
json_t *control_codes_probe_run(const char *device, int repeats, char *err, size_t errlen);

#define CC_STALLS 16                 /* the stall field is 4 bits */

/* Adds to one instruction's entry what its "sweep" implies:
 * "min_safe_stall" (the smallest stall from which every chain run, at
 * either yield, computed the unedited run's answer; null when none did)
 * and "fit": {"chain", "stream"}, each a least-squares line of cycles per
 * instruction against stall {"slope","intercept","max_residual",
 * "from_stall","to_stall","yield"} or null (fewer than 3 usable points).
 * The chain is fitted from the smallest safe stall up, the stream from the
 * first stall at and above which it is bound by the stall (cycles >= stall
 * - 0.5); both at the compiler's yield. */
void cc_infer_instruction(json_t *entry);

/* The meanings the sweeps and the extra experiments support, each
 * {"text": ..., figures...}: "stall", "yield", "dual_issue", "wait_mask",
 * "reuse", and "scheduler" when experiments has one (io_meaning,
 * probes/issue_order.h: the issue order after a stall or yield).
 * experiments: {"wait_mask": [...], "reuse": {...}, "yield_two_warps":
 * [...], "scheduler": {...}} as the run records them (members may be
 * absent). */
json_t *cc_meanings(const json_t *instructions, const json_t *experiments);

#endif
