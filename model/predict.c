/*
 * Kernel JSON -> occupancy -> MWP/CWP -> answer JSON (see predict.h).
 *
 * DESIGN
 * Parsing is strict and names the member at fault; the description is
 * either read (per_warp ...) or derived (ptx ...), never both. The answer
 * lists the model's intermediates under the paper's names.
 */
#include "model/predict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/occupancy_json.h"
#include "model/params.h"
#include "model/ptx_desc.h"

#define MAX_DIM 2147483647LL

struct pctx {
    char *err;
    size_t errlen;
    char *field;
    size_t fieldlen;
};

static int bad(struct pctx *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(struct pctx *c, const char *field, const char *fmt, ...)
{
    va_list ap;
    char why[512];
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s%s%s", field, *field ? ": " : "", why);
    snprintf(c->field, c->fieldlen, "%s", field);
    return -1;
}

static const char *const kernel_members[] = {
    "grid", "block", "regs", "smem", "static_smem", "per_warp", "uncoal_per_access",
    "coal_bytes", "launches", "transfer_bytes", "ptx", "entry", "params", "cache", NULL,
};

static const char *const count_members[] = {"coalesced", "uncoalesced", "sync", "sync_mem",
                                            "stores", "mem_periods", NULL};
static const char *const cache_members[] = {"l1_hit", "l2_hit", "l2_hit_store", NULL};

/* An integer or [x, y, z] of positive integers into d (missing dimensions 1). */
static int dims(struct pctx *c, const json_t *k, const char *name, unsigned d[3])
{
    const json_t *v = json_object_get(k, name), *e;
    size_t i;
    d[0] = d[1] = d[2] = 1;
    if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= MAX_DIM) {
        d[0] = (unsigned)json_integer_value(v);
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > 3)
        return bad(c, name, "%s", v ? "must be a positive integer or [x, y, z]" : "is required");
    json_array_foreach(v, i, e) {
        if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > MAX_DIM)
            return bad(c, name, "every dimension must be a positive integer");
        d[i] = (unsigned)json_integer_value(e);
    }
    return 0;
}

/* A number member >= min into *out; absent keeps *out. */
static int number(struct pctx *c, const json_t *o, const char *name, const char *path,
                  double min, double *out)
{
    const json_t *v = json_object_get(o, name);
    if (!v)
        return 0;
    if (!json_is_number(v) || json_number_value(v) < min)
        return bad(c, path, "must be a number of at least %g", min);
    *out = json_number_value(v);
    return 0;
}

static int integer(struct pctx *c, const json_t *o, const char *name, long long min,
                   long long max, int required, long long *out)
{
    const json_t *v = json_object_get(o, name);
    if (!v && !required)
        return 0;
    if (!v)
        return bad(c, name, "is required");
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return bad(c, name, "must be an integer from %lld to %lld", min, max);
    *out = json_integer_value(v);
    return 0;
}

static int known(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (!strcmp(*list, key))
            return 1;
    return 0;
}

static int per_warp(struct pctx *c, const json_t *pw, struct mwp_kernel *k)
{
    const char *key;
    const json_t *v;
    char path[64];
    if (!json_is_object(pw))
        return bad(c, "per_warp", "must be an object of instruction counts");
    json_object_foreach((json_t *)pw, key, v) {
        int cls = mwp_class_parse(key);
        snprintf(path, sizeof path, "per_warp.%s", key);
        if ((cls < 0 || cls == MC_GLOBAL) && !known(count_members, key))
            return bad(c, path, "is not an instruction class (fp32, fp64, int, sfu, conv, "
                                "shared, coalesced, uncoalesced, sync, sync_mem, stores, "
                                "mem_periods)");
        if (!json_is_number(v) || json_number_value(v) < 0)
            return bad(c, path, "must be a number of at least 0");
    }
    for (int i = 0; i < MC_COUNT; i++)
        if (i != MC_GLOBAL)
            k->insts[i] = json_number_value(json_object_get(pw, mwp_class_name((enum mwp_class)i)));
    k->coal = json_number_value(json_object_get(pw, "coalesced"));
    k->uncoal = json_number_value(json_object_get(pw, "uncoalesced"));
    k->sync = json_number_value(json_object_get(pw, "sync"));
    k->stores = json_number_value(json_object_get(pw, "stores"));
    k->mem_periods = json_number_value(json_object_get(pw, "mem_periods")); /* 0: the paper's */
    /* a description without it (older runs, a hand-written one): every barrier waits */
    k->sync_mem = json_object_get(pw, "sync_mem") ? json_number_value(json_object_get(pw, "sync_mem"))
                                                  : -1;
    if (k->sync_mem > k->sync)
        return bad(c, "per_warp.sync_mem", "must not exceed sync");
    if (k->stores > k->coal + k->uncoal)
        return bad(c, "per_warp.stores", "must not exceed coalesced + uncoalesced");
    return 0;
}

/* "cache": {"l1_hit", "l2_hit"[, "l2_hit_store"]}: hit rates as fractions, what
 * `gpuprobe trace cache` reports for the kernel's trace (l2_hit_store defaults
 * to l2_hit). Absent: every access is charged to device memory. */
static int cache_hits(struct pctx *c, const json_t *kj, struct mwp_kernel *k)
{
    const json_t *o = json_object_get(kj, "cache"), *v;
    const char *key;
    char path[64];
    if (!o)
        return 0;
    if (!json_is_object(o))
        return bad(c, "cache", "must be an object {\"l1_hit\": f, \"l2_hit\": f}");
    json_object_foreach((json_t *)o, key, v) {
        snprintf(path, sizeof path, "cache.%s", key);
        if (!known(cache_members, key))
            return bad(c, path, "is not a hit rate (l1_hit, l2_hit, l2_hit_store)");
        if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1)
            return bad(c, path, "must be a fraction from 0 to 1");
    }
    if (!json_object_get(o, "l1_hit") || !json_object_get(o, "l2_hit"))
        return bad(c, json_object_get(o, "l1_hit") ? "cache.l2_hit" : "cache.l1_hit",
                   "is required");
    k->has_hits = 1;
    k->l1_hit = json_number_value(json_object_get(o, "l1_hit"));
    k->l2_hit = json_number_value(json_object_get(o, "l2_hit"));
    v = json_object_get(o, "l2_hit_store");
    k->l2_hit_store = v ? json_number_value(v) : 0; /* the paper: a store costs a memory latency */
    return 0;
}

int model_counts_from_json(const json_t *desc, int warp_size, struct mwp_kernel *k, char *err,
                           size_t errlen, char *field, size_t fieldlen)
{
    struct pctx c = {err, errlen, field, fieldlen};
    k->uncoal_per_access = warp_size;
    k->coal_bytes = 128;
    k->sector_bytes = 32;
    if (per_warp(&c, json_object_get(desc, "per_warp"), k) < 0 ||
        number(&c, desc, "uncoal_per_access", "uncoal_per_access", 1, &k->uncoal_per_access) < 0 ||
        number(&c, desc, "coal_bytes", "coal_bytes", 1, &k->coal_bytes) < 0)
        return -1;
    return 0;
}

/* The description from PTX; adds it to the kernel's echo as "description". */
static int derive(struct pctx *c, const json_t *kj, const unsigned grid[3],
                  const unsigned block[3], int warp_size, struct mwp_kernel *k, json_t *echo)
{
    struct pd_launch l;
    struct pd_desc d;
    const json_t *params = json_object_get(kj, "params"), *v;
    const json_t *entry = json_object_get(kj, "entry");
    const char *key;
    memset(&l, 0, sizeof l);
    memcpy(l.grid, grid, sizeof l.grid);
    memcpy(l.block, block, sizeof l.block);
    if (params && !json_is_object(params))
        return bad(c, "params", "must be an object of integer kernel parameters");
    if (entry && !json_is_string(entry))
        return bad(c, "entry", "must be the name of a .entry");
    json_object_foreach((json_t *)params, key, v) {
        if (!json_is_integer(v) || l.nparams >= PD_MAX_PARAMS || strlen(key) >= PD_PARAM_LEN)
            return bad(c, "params", "at most %d integer parameters with names under %d bytes",
                       PD_MAX_PARAMS, PD_PARAM_LEN);
        snprintf(l.params[l.nparams].name, sizeof l.params[0].name, "%s", key);
        l.params[l.nparams++].value = json_integer_value(v);
    }
    char why[400], path[PD_PARAM_LEN + 8];
    if (pd_describe(json_string_value(json_object_get(kj, "ptx")), json_string_value(entry), &l,
                    &d, why, sizeof why) < 0) {
        if (!d.param[0])
            return bad(c, "ptx", "%s", why);
        /* a parameter at fault: the member to give (or not to give) */
        snprintf(path, sizeof path, "params.%s", d.param);
        return bad(c, path, "%s%s", why,
                   d.nmissing ? d.nmissing > 1 ? ": give their integer values in params"
                                               : ": give its integer value in params"
                              : "");
    }
    json_t *dj = pd_desc_json(&d);
    json_object_set_new(echo, "description", dj);
    return model_counts_from_json(dj, warp_size, k, c->err, c->errlen, c->field, c->fieldlen);
}

/* The static shared memory of a kernel given as PTX: static_smem when the
 * kernel gives it, else what the PTX's .shared declarations hold (the
 * description's static_smem), said in the description's notes either way
 * when the PTX declares some. */
static int static_smem_of_ptx(struct pctx *c, const json_t *kj, json_t *echo, long long *ssmem)
{
    json_t *desc = json_object_get(echo, "description");
    json_t *notes = json_object_get(desc, "notes");
    long long declared = json_integer_value(json_object_get(desc, "static_smem"));
    char note[256];
    if (declared > 1 << 30)
        return bad(c, "ptx", "its .shared declarations hold %lld bytes, more than any GPU has",
                   declared);
    if (!json_object_get(kj, "static_smem")) {
        *ssmem = declared;
        if (declared) {
            snprintf(note, sizeof note,
                     "static_smem %lld bytes a block: derived from the PTX's .shared "
                     "declarations (give static_smem to set it)", declared);
            json_array_append_new(notes, json_string(note));
        }
    } else if (declared != *ssmem) {
        snprintf(note, sizeof note,
                 "static_smem %lld bytes a block as given, where the PTX's .shared declarations "
                 "hold %lld", *ssmem, declared);
        json_array_append_new(notes, json_string(note));
    }
    return 0;
}

static int read_kernel(struct pctx *c, const json_t *kj, const struct occ_rules *r,
                       const struct mwp_hw *hw, struct mwp_kernel *k, struct occ_input *oi,
                       unsigned grid[3], unsigned block[3], json_t *echo)
{
    const char *key;
    const json_t *v;
    long long regs = 0, smem = 0, ssmem = 0;
    if (!json_is_object(kj))
        return bad(c, "kernel", "must be an object");
    json_object_foreach((json_t *)kj, key, v)
        if (!known(kernel_members, key))
            return bad(c, key, "is not a member of a kernel description");
    if (dims(c, kj, "grid", grid) < 0 || dims(c, kj, "block", block) < 0 ||
        integer(c, kj, "regs", 0, 255, 1, &regs) < 0 ||
        integer(c, kj, "smem", 0, 1 << 30, 0, &smem) < 0 ||
        integer(c, kj, "static_smem", 0, 1 << 30, 0, &ssmem) < 0)
        return -1;
    memset(k, 0, sizeof *k);
    k->launches = 1;
    if (number(c, kj, "launches", "launches", 1, &k->launches) < 0 ||
        number(c, kj, "transfer_bytes", "transfer_bytes", 0, &k->transfer_bytes) < 0)
        return -1;
    long long threads = (long long)block[0] * block[1] * block[2];
    if (threads > r->max_threads_per_block)
        return bad(c, "block", "%lld threads is more than the %d a block may have", threads,
                   r->max_threads_per_block);
    k->blocks = (long long)grid[0] * grid[1] * grid[2];
    k->block_threads = (int)threads;
    occ_input_init(oi, (int)threads, (int)regs);
    int has_ptx = json_object_get(kj, "ptx") != NULL;
    if (has_ptx && (json_object_get(kj, "per_warp") || json_object_get(kj, "uncoal_per_access") ||
                    json_object_get(kj, "coal_bytes")))
        return bad(c, "ptx", "give either ptx or per_warp (with uncoal_per_access, coal_bytes), "
                             "not both");
    if (has_ptx && !json_is_string(json_object_get(kj, "ptx")))
        return bad(c, "ptx", "must be the PTX module's text");
    if (!has_ptx && !json_object_get(kj, "per_warp"))
        return bad(c, "per_warp", "is required (or give ptx to derive it)");
    if (!has_ptx && (json_object_get(kj, "params") || json_object_get(kj, "entry")))
        return bad(c, json_object_get(kj, "params") ? "params" : "entry", "goes with ptx");
    int rc = has_ptx ? derive(c, kj, grid, block, hw->warp_size, k, echo)
                     : model_counts_from_json(kj, hw->warp_size, k, c->err, c->errlen, c->field,
                                              c->fieldlen);
    if (rc < 0)
        return rc;
    if (has_ptx && static_smem_of_ptx(c, kj, echo, &ssmem) < 0)
        return -1;
    oi->dynamic_smem = (int)smem;
    oi->static_smem = (int)ssmem;
    if (smem + ssmem > r->smem_per_block)
        oi->max_dynamic_smem = r->smem_per_block_optin - (int)ssmem;
    return cache_hits(c, kj, k);
}

static const char *case_text(enum mwp_case w)
{
    switch (w) {
    case MWP_CASE_1: return "1: MWP = N and CWP = N (too few warps to hide memory latency)";
    case MWP_CASE_2: return "2: CWP >= MWP or computation exceeds memory";
    case MWP_CASE_3: return "3: computation-bound (MWP > CWP)";
    default: return "no global memory instruction: computation only";
    }
}

static json_t *prediction_json(const struct mwp_result *p)
{
    json_t *o = json_pack(
        "{s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "warps_per_block",
        p->warps_per_block, "blocks_per_sm", p->blocks_per_sm, "active_sms", p->active_sms,
        "active_blocks_per_sm", p->active_blocks_per_sm, "n_active_warps", p->n, "rep", p->rep,
        "mem_l_coal", p->mem_l_coal, "mem_l_uncoal", p->mem_l_uncoal, "w_coal", p->w_coal,
        "w_uncoal", p->w_uncoal, "mem_l", p->mem_l, "departure_delay", p->departure_delay);
    json_t *more = json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:s, s:s, s:f, s:f, s:f, s:f,"
        " s:f, s:f, s:f, s:f, s:f}",
        "mwp_without_bw", p->mwp_without_bw, "load_bytes_per_warp", p->load_bytes_per_warp,
        "bw_per_warp", p->bw_per_warp, "mwp_peak_bw", p->mwp_peak_bw, "mwp", p->mwp,
        "comp_cycles", p->comp_cycles, "mem_cycles", p->mem_cycles, "mem_insts", p->mem_insts,
        "cwp_full", p->cwp_full, "cwp", p->cwp, "case", (int)p->which, "case_meaning",
        case_text(p->which), "bound", p->bound, "exec_cycles_per_rep", p->exec_cycles_per_rep,
        "exec_cycles", p->exec_cycles, "sync_mwp", p->sync_mwp, "sync_cycles", p->sync_cycles, "cycles", p->cycles,
        "kernel_s", p->kernel_s, "kernels_s", p->kernels_s, "transfer_s", p->transfer_s,
        "total_s", p->total_s);
    json_object_update(o, more);
    json_decref(more);
    more = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "lat_load", p->lat_load,
                     "lat_store", p->lat_store, "l2_fraction", p->l2_fraction, "dram_fraction",
                     p->dram_fraction, "dram_bytes_per_warp", p->dram_bytes_per_warp,
                     "l2_bytes_per_warp", p->l2_bytes_per_warp, "mwp_peak_dram",
                     p->mwp_peak_dram, "mwp_peak_l2", p->mwp_peak_l2, "sync_barriers",
                     p->sync_barriers);
    json_object_set_new(o, "periods", json_real(p->periods));
    json_object_set_new(o, "loads_per_period", json_real(p->loads_per_period));
    json_object_set_new(o, "lat_period", json_real(p->lat_period));
    json_object_set_new(o, "comp_serial", json_real(p->comp_serial));
    json_object_set_new(o, "comp_dispatch", json_real(p->comp_dispatch));
    json_object_set_new(o, "comp_pipe", json_real(p->comp_pipe));
    json_object_set_new(o, "case_cycles_per_rep", json_real(p->case_cycles_per_rep));
    json_object_set_new(o, "floor_departure", json_real(p->floor_departure));
    json_object_set_new(o, "floor_dram", json_real(p->floor_dram));
    json_object_set_new(o, "floor_l2", json_real(p->floor_l2));
    json_object_update(o, more);
    json_decref(more);
    return o;
}

static json_t *kernel_echo(const json_t *kj)
{
    json_t *echo = json_deep_copy(kj);
    json_object_del(echo, "ptx"); /* the text is the caller's; the description stands for it */
    return echo;
}

int model_predict_json(const json_t *kernel, const struct occ_rules *r,
                       const struct mwp_hw *hw, json_t **out, char *err, size_t errlen,
                       char *field, size_t fieldlen)
{
    struct pctx c = {err, errlen, field, fieldlen};
    struct mwp_kernel k;
    struct occ_input oi;
    struct occ_result occ;
    struct mwp_result res;
    unsigned grid[3], block[3];
    *out = NULL;
    field[0] = '\0';
    json_t *echo = json_is_object(kernel) ? kernel_echo(kernel) : json_object();
    if (read_kernel(&c, kernel, r, hw, &k, &oi, grid, block, echo) < 0 ||
        occ_compute(r, &oi, &occ, err, errlen) < 0) {
        json_decref(echo);
        return -1;
    }
    k.blocks_per_sm = occ.blocks_per_sm;
    if (occ.blocks_per_sm < 1) {
        json_decref(echo);
        return bad(&c, "block", "no block fits on an SM: %s", occ.refused);
    }
    if (mwp_predict(&k, hw, &res, err, errlen) < 0) {
        json_decref(echo);
        return -1;
    }
    json_t *oj = occ_result_json(r, &oi, &occ);
    json_object_del(oj, "rules");
    *out = json_pack("{s:o, s:o, s:o, s:o}", "kernel", echo, "occupancy", oj, "parameters",
                     model_hw_json(hw), "prediction", prediction_json(&res));
    return 0;
}
