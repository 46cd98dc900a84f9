/*
 * The rules against a capture of the driver (see occupancy_check.h).
 *
 * DESIGN
 * The capture is read strictly: a missing or mistyped member fails the whole
 * comparison with its path, since a check that silently skipped rows could
 * pass on nothing. Rows are [kernel, block, dynamic_smem, max_dynamic_smem,
 * carveout (-1 = default), blocks|null, error|null].
 */
#include "model/occupancy_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/occupancy.h"
#include "model/occupancy_json.h"

#define MAX_MISMATCHES 20
#define ROW_COLS 7

struct kernel_info {
    int regs, static_smem, barriers;
};

static int get_int(const json_t *o, const char *key, int *v, const char *where, char *err,
                   size_t errlen)
{
    const json_t *j = json_object_get(o, key);
    if (!json_is_integer(j)) {
        snprintf(err, errlen, "%s.%s: must be an integer", where, key);
        return -1;
    }
    *v = (int)json_integer_value(j);
    return 0;
}

static int read_kernels(const json_t *cap, struct kernel_info **out, size_t *n, char *err,
                        size_t errlen)
{
    const json_t *list = json_object_get(cap, "kernels"), *k;
    size_t i;
    char where[32];
    if (!json_is_array(list) || json_array_size(list) == 0) {
        snprintf(err, errlen, "kernels: must be a non-empty array");
        return -1;
    }
    *n = json_array_size(list);
    *out = calloc(*n, sizeof **out);
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_array_foreach(list, i, k) {
        snprintf(where, sizeof where, "kernels[%zu]", i);
        if (get_int(k, "num_regs", &(*out)[i].regs, where, err, errlen) < 0 ||
            get_int(k, "static_smem", &(*out)[i].static_smem, where, err, errlen) < 0 ||
            get_int(k, "barriers", &(*out)[i].barriers, where, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* The device's attributes that the rules row states too. */
static void check_attributes(const json_t *dev, const struct occ_rules *r, struct occ_check *c)
{
    static const struct {
        const char *attr;
        size_t off;
    } pairs[] = {
        {"max_warps_per_sm", offsetof(struct occ_rules, max_warps_per_sm)},
        {"max_blocks_per_sm", offsetof(struct occ_rules, max_blocks_per_sm)},
        {"registers_per_sm", offsetof(struct occ_rules, regs_per_sm)},
        {"registers_per_block", offsetof(struct occ_rules, regs_per_block)},
        {"shared_memory_per_sm", offsetof(struct occ_rules, smem_per_sm)},
        {"shared_memory_per_block", offsetof(struct occ_rules, smem_per_block)},
        {"shared_memory_per_block_optin", offsetof(struct occ_rules, smem_per_block_optin)},
        {"reserved_shared_memory_per_block", offsetof(struct occ_rules, smem_reserved_per_block)},
        {"max_threads_per_block", offsetof(struct occ_rules, max_threads_per_block)},
        {"warp_size", offsetof(struct occ_rules, warp_size)},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const json_t *v = json_object_get(dev, pairs[i].attr);
        int want = *(const int *)((const char *)r + pairs[i].off);
        c->attributes_checked++;
        if (json_is_integer(v) && json_integer_value(v) == want) {
            c->attributes_agree++;
            continue;
        }
        if (json_array_size(c->mismatches) < MAX_MISMATCHES)
            json_array_append_new(c->mismatches, json_pack("{s:s, s:O, s:i}", "attribute",
                                                           pairs[i].attr, "device",
                                                           v ? v : json_null(), "rules", want));
    }
}

static int row_input(const json_t *row, const struct kernel_info *ks, size_t nk,
                     struct occ_input *in, int *driver, int *is_error, size_t idx, char *err,
                     size_t errlen)
{
    int v[5];
    if (!json_is_array(row) || json_array_size(row) != ROW_COLS) {
        snprintf(err, errlen, "rows[%zu]: must be an array of %d", idx, ROW_COLS);
        return -1;
    }
    for (size_t i = 0; i < 5; i++) {
        if (!json_is_integer(json_array_get(row, i))) {
            snprintf(err, errlen, "rows[%zu][%zu]: must be an integer", idx, i);
            return -1;
        }
        v[i] = (int)json_integer_value(json_array_get(row, i));
    }
    const json_t *blocks = json_array_get(row, 5);
    if (v[0] < 0 || (size_t)v[0] >= nk || (!json_is_integer(blocks) && !json_is_null(blocks))) {
        snprintf(err, errlen, "rows[%zu]: unknown kernel or malformed answer", idx);
        return -1;
    }
    *is_error = json_is_null(blocks);
    *driver = *is_error ? 0 : (int)json_integer_value(blocks);
    occ_input_init(in, v[1], ks[v[0]].regs);
    in->static_smem = ks[v[0]].static_smem;
    in->barriers = ks[v[0]].barriers;
    in->dynamic_smem = v[2];
    in->max_dynamic_smem = v[3];
    in->carveout_pct = v[4] < 0 ? OCC_CARVEOUT_DEFAULT : v[4];
    return 0;
}

static void note_mismatch(struct occ_check *c, size_t idx, const struct occ_rules *r,
                          const struct occ_input *in, const struct occ_result *o, int driver)
{
    if (json_array_size(c->mismatches) >= MAX_MISMATCHES)
        return;
    json_t *res = occ_result_json(r, in, o);
    json_object_del(res, "rules");
    json_array_append_new(c->mismatches, json_pack("{s:i, s:i, s:i, s:o}", "row", (int)idx,
                                                   "driver", driver, "model", o->blocks_per_sm,
                                                   "detail", res));
}

static int compare_rows(const json_t *cap, const struct occ_rules *r,
                        const struct kernel_info *ks, size_t nk, struct occ_check *c, char *err,
                        size_t errlen)
{
    const json_t *rows = json_object_get(cap, "rows"), *row;
    size_t i;
    if (!json_is_array(rows)) {
        snprintf(err, errlen, "rows: must be an array");
        return -1;
    }
    json_array_foreach(rows, i, row) {
        struct occ_input in;
        struct occ_result o;
        int driver, is_error;
        if (row_input(row, ks, nk, &in, &driver, &is_error, i, err, errlen) < 0 ||
            occ_compute(r, &in, &o, err, errlen) < 0)
            return -1;
        c->rows++;
        c->driver_errors += is_error;
        if ((unsigned)o.limiter < 8)
            c->limiter_count[o.limiter]++;
        if (o.blocks_per_sm == driver)
            c->agree++;
        else
            note_mismatch(c, i, r, &in, &o, driver);
    }
    return 0;
}

int occ_check_capture(const json_t *capture, struct occ_check *out, char *err, size_t errlen)
{
    const json_t *dev = json_object_get(capture, "device");
    int major, minor;
    struct kernel_info *ks = NULL;
    size_t nk = 0;
    memset(out, 0, sizeof *out);
    if (occ_parse_cc(json_string_value(json_object_get(dev, "compute_capability")), &major,
                     &minor) < 0) {
        snprintf(err, errlen, "device.compute_capability: must be \"MAJOR.MINOR\"");
        return -1;
    }
    const struct occ_rules *r = occ_rules_for(major, minor);
    if (!r) {
        snprintf(err, errlen, "no occupancy rules for compute capability %d.%d", major, minor);
        return -1;
    }
    out->mismatches = json_array();
    int rc = read_kernels(capture, &ks, &nk, err, errlen);
    if (rc == 0) {
        check_attributes(dev, r, out);
        rc = compare_rows(capture, r, ks, nk, out, err, errlen);
    }
    free(ks);
    if (rc < 0) {
        json_decref(out->mismatches);
        out->mismatches = NULL;
    }
    return rc;
}

json_t *occ_check_json(struct occ_check *c, const char *cc)
{
    json_t *lim = json_object();
    for (int l = 0; l < OCC_LIMIT_COUNT; l++)
        json_object_set_new(lim, occ_limit_name((enum occ_limit)l),
                            json_integer(c->limiter_count[l]));
    json_t *mm = c->mismatches ? c->mismatches : json_array();
    c->mismatches = NULL;
    return json_pack("{s:s, s:i, s:i, s:i, s:{s:i, s:i}, s:o, s:o}", "compute_capability",
                     cc ? cc : "", "rows", c->rows, "agree", c->agree, "driver_errors",
                     c->driver_errors, "attributes", "checked", c->attributes_checked, "agree",
                     c->attributes_agree, "limiters", lim, "mismatches", mm);
}
