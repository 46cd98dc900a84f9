/*
 * Occupancy curves (see occupancy_curves.h).
 */
#include "model/occupancy_curves.h"

#include <assert.h>
#include <stddef.h>

/* Active warps at each value of one int member of the input, from..to by step. */
static json_t *curve(const struct occ_rules *r, const struct occ_input *base, size_t member,
                     int from, int to, int step)
{
    assert(step > 0);
    json_t *xs = json_array(), *warps = json_array();
    struct occ_input in = *base;
    struct occ_result o;
    char err[160];
    for (int x = from; x <= to; x += step) {
        *(int *)((char *)&in + member) = x;
        int w = occ_compute(r, &in, &o, err, sizeof err) == 0 ? o.active_warps : 0;
        json_array_append_new(xs, json_integer(x));
        json_array_append_new(warps, json_integer(w));
    }
    return json_pack("{s:o, s:o}", "x", xs, "active_warps", warps);
}

json_t *occ_curves_json(const struct occ_rules *r, const struct occ_input *in)
{
    struct occ_result at;
    char err[160];
    if (occ_compute(r, in, &at, err, sizeof err) < 0)
        return NULL;
    return json_pack(
        "{s:o, s:o, s:o}", "block",
        curve(r, in, offsetof(struct occ_input, block_threads), r->warp_size,
              r->max_threads_per_block, r->warp_size),
        "regs",
        curve(r, in, offsetof(struct occ_input, regs_per_thread), 1, r->max_regs_per_thread, 1),
        "smem",
        curve(r, in, offsetof(struct occ_input, dynamic_smem), 0,
              /* past the opt-in limit every block is refused */
              at.max_dynamic_smem < r->smem_per_block_optin ? at.max_dynamic_smem
                                                             : r->smem_per_block_optin,
              r->smem_alloc_unit));
}
