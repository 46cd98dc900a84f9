/*
 * The SASS-based kernel description as JSON, in the shape of the PTX's
 * (pd_desc_json), and the one call that makes it from a kernel's PTX,
 * launch and SASS object (see sass_counts.h).
 *
 * DESIGN
 * "per_warp" is what the model charges: an instruction takes its issue
 * slot whether its guard is true or not, so the compute classes and
 * shared memory are run + predicated off; global accesses and barriers
 * are what runs. The global accesses are split as the PTX's analysis split
 * them (the SASS has no address analysis); when the SASS runs another
 * number of them (vector loads, spills) the PTX's shares are scaled to it
 * and a note says so.
 */
#include <stdio.h>

#include "model/sass_counts.h"
#include "util/errf.h"

#define SPILL_TRANSACTIONS 32    /* as ptx_desc counts an access it cannot place: a lane each */

static json_t *classes_json(const double n[SC_NCLASS], int all)
{
    json_t *o = json_object();
    for (int k = 0; k < SC_NCLASS && o; k++)
        if (all || n[k] != 0)
            json_object_set_new(o, sc_class_name(k), json_real(n[k]));
    return o;
}

static json_t *loops_json(const struct sc_desc *d, const struct pd_loop *pl)
{
    json_t *a = json_array();
    for (int i = 0; i < d->nloops && a; i++) {
        const struct sc_loop *l = &d->loops[i];
        json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:i, s:f, s:s}", "head",
                                           (json_int_t)l->head, "ptx_loop", pl[l->ptx].label,
                                           "role", l->remainder ? "remainder" : "main",
                                           "unroll", l->unroll, "trips", l->trips, "marker",
                                           sc_class_name(l->marker)));
    }
    return a;
}

/* Coalesced and uncoalesced accesses a warp: the PTX's split of the SASS's count. */
static void split_global(const struct sc_desc *d, const struct pd_desc *pd, double *coal,
                         double *uncoal, double *per_access, json_t *notes)
{
    double g = d->run[MC_GLOBAL], p = pd->coal + pd->uncoal;
    char why[SC_NOTE_LEN];
    *per_access = pd->uncoal_per_access;
    if (p > 0) {
        *coal = pd->coal * g / p;
        *uncoal = pd->uncoal * g / p;
    } else {
        *coal = 0;
        *uncoal = g;
        *per_access = SPILL_TRANSACTIONS;
    }
    if (g == p)
        return;
    if (p > 0)
        snprintf(why, sizeof why, "%g global accesses a warp in the SASS, %g in the PTX: the "
                 "PTX's coalesced share scaled to the SASS's count", g, p);
    else
        snprintf(why, sizeof why, "%g global accesses a warp in the SASS, none in the PTX "
                 "(spills?): counted uncoalesced, %d transactions each", g, SPILL_TRANSACTIONS);
    json_array_append_new(notes, json_string(why));
}

/* Memory periods a warp: the SASS's waits on loads plus the stores (the
 * PTX's count scaled, for an object without waits). Loads that nothing
 * waits on still hold the warp once before it exits, as the PTX rule has it. */
static double mem_periods(const struct sc_desc *d, const struct pd_desc *pd, double gs,
                          json_t *notes)
{
    if (!d->has_waits)
        return pd->mem_periods * gs;
    double stores = pd->stores * gs, loads = (pd->coal + pd->uncoal - pd->stores) * gs;
    double periods = d->waits + stores + (d->waits == 0 && loads > 0 ? 1 : 0);
    char why[200];
    snprintf(why, sizeof why, "memory periods from the SASS: %g waits on global loads a warp "
             "and %g stores (the PTX's first uses gave %g periods)", d->waits, stores,
             pd->mem_periods * gs);
    json_array_append_new(notes, json_string(why));
    return periods;
}

json_t *sc_desc_json(const struct sc_desc *d, const struct pd_desc *pd,
                     const struct pd_loop *pl)
{
    json_t *pw = json_object(), *notes = json_array();
    double coal, uncoal, per_access;
    for (int k = 0; k < MC_COUNT; k++)
        if (k != MC_GLOBAL)
            json_object_set_new(pw, sc_class_name(k), json_real(d->run[k] + d->off[k]));
    for (int i = 0; i < d->nnotes; i++)
        json_array_append_new(notes, json_string(d->notes[i]));
    /* every issued instruction takes an issue slot: the uniform datapath's and the
     * rest (NOP, EXIT ...) are charged at the integer rate, the model having no
     * class of their own */
    double extra = d->run[SC_UNIFORM] + d->off[SC_UNIFORM] + d->run[SC_TENSOR] + d->off[SC_TENSOR] +
                   d->run[SC_OTHER] + d->off[SC_OTHER];
    json_object_set_new(pw, "int", json_real(d->run[MC_INT] + d->off[MC_INT] + extra));
    if (extra > 0) {
        char why[160];
        snprintf(why, sizeof why, "%g uniform-datapath and other instructions a warp charged "
                 "at the integer issue rate", extra);
        json_array_append_new(notes, json_string(why));
    }
    split_global(d, pd, &coal, &uncoal, &per_access, notes);
    json_object_set_new(pw, "coalesced", json_real(coal));
    json_object_set_new(pw, "uncoalesced", json_real(uncoal));
    json_object_set_new(pw, "sync", json_real(d->run[SC_SYNC]));
    /* the memory structure is the PTX's (loads, stores, what waits), scaled to the
     * SASS's counts where they differ */
    double g = pd->coal + pd->uncoal, gs = g > 0 ? (coal + uncoal) / g : 0;
    double ss = pd->sync > 0 ? d->run[SC_SYNC] / pd->sync : 0;
    json_object_set_new(pw, "stores", json_real(pd->stores * gs));
    json_object_set_new(pw, "mem_periods", json_real(mem_periods(d, pd, gs, notes)));
    json_object_set_new(pw, "sync_mem", json_real(pd->sync_mem * ss));
    return json_pack("{s:s, s:o, s:f, s:f, s:i, s:o, s:o, s:o, s:i, s:i, s:o}", "source", "sass",
                     "per_warp", pw, "uncoal_per_access", per_access, "coal_bytes",
                     pd->coal_bytes, "loops", d->nloops, "run", classes_json(d->run, 1),
                     "predicated_off", classes_json(d->off, 0), "sass_loops", loops_json(d, pl),
                     "copies", d->copies, "copies_run", d->copies_run, "notes", notes);
}

json_t *sc_describe(const json_t *sass, const char *ptx, const char *entry,
                    const struct pd_launch *launch, char *err, size_t errlen)
{
    struct pd_desc pd;
    struct pd_loop pl[SC_MAX_LOOPS];
    struct sc_desc d;
    int n;
    json_t *out;
    if (pd_describe(ptx, entry, launch, &pd, err, errlen) < 0 ||
        pd_loops(ptx, entry, launch, pl, SC_MAX_LOOPS, &n, err, errlen) < 0 ||
        sc_count(sass, pl, n, &d, err, errlen) < 0)
        return NULL;
    if (!(out = sc_desc_json(&d, &pd, pl)))
        errf(err, errlen, "out of memory");
    return out;
}
