/*
 * Machine-code checks of the latency probe's kernels (see latency_check.h).
 *
 * The latency kernel's regions are found as pairs of clock reads, in order;
 * ptxas may unroll the two-pass loop, so the five regions may appear more
 * than once, and every copy must hold the expected count. Instructions other
 * than the timed one are allowed in a region (address arithmetic, a
 * range-reducing multiply) but reported per step: the chain figure includes
 * them, and the result says so.
 */
#include "probes/latency_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/cubin.h"
#include "probes/gpu/sass.h"

#define MAX_REGIONS 40

/* 1 if mnemonic m is one of the '|'-separated alternatives. */
int lat_is_timed(const char *m, const char *alts)
{
    size_t n = strlen(m);
    for (const char *p = alts; p; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
        if (strncmp(p, m, n) == 0 && (p[n] == '|' || p[n] == '\0'))
            return 1;
    return 0;
}

/* How many instructions of the region are one of the alternatives. */
static size_t count_timed(const struct cubin_kernel *k, const struct sass_region *r,
                          const char *alts)
{
    size_t n = 0;
    char buf[SASS_MNEMONIC_MAX];
    for (size_t i = r->first; i < r->end; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        n += (size_t)lat_is_timed(sass_mnemonic(&in, buf), alts);
    }
    return n;
}

static json_t *fail(const char *why)
{
    return json_pack("{s:b, s:s}", "verified", 0, "error", why);
}

static const struct cubin_kernel *kernel_of(struct cubin *c, const void *data, size_t size,
                                            const char *name, char *err, size_t errlen)
{
    if (cubin_parse(c, data, size, err, errlen) < 0)
        return NULL;
    const struct cubin_kernel *k = cubin_kernel_find(c, name);
    if (!k)
        snprintf(err, errlen, "the cubin has no kernel '%s'", name);
    return k;
}

size_t lat_find_regions(const uint8_t *text, size_t size, struct sass_region *r, size_t max)
{
    size_t n = 0, from = 0;
    while (n < max && sass_clock_region(text, size, from, &r[n]) == 0) {
        from = r[n].end + 1;
        n++;
    }
    return n;
}

/* Adds, per mnemonic, how many instructions other than the timed one the
 * long chain has beyond the short one, per step. */
static json_t *extras_per_step(const struct lat_entry *e, const struct cubin_kernel *k,
                               const struct sass_region *r3, const struct sass_region *r4,
                               const char *timed)
{
    json_t *out = json_object();
    struct sass_insn in;
    char buf[SASS_MNEMONIC_MAX];
    const struct sass_region *rs[2] = {r3, r4};
    for (int w = 0; w < 2; w++)
        for (size_t i = rs[w]->first; i < rs[w]->end; i++) {
            in = sass_decode(k->text, i * SASS_INSN_BYTES);
            const char *m = sass_mnemonic(&in, buf);
            if (lat_is_timed(m, timed))
                continue;
            json_int_t v = json_integer_value(json_object_get(out, m));
            json_object_set_new(out, m, json_integer(v + (w ? 1 : -1)));
        }
    const char *key;
    json_t *val, *clean = json_object();
    json_object_foreach(out, key, val)
    {
        json_int_t d = json_integer_value(val);
        if (d != 0)
            json_object_set_new(clean, key, json_real((double)d / lat_chain_span(e)));
    }
    json_decref(out);
    return clean;
}

/* Scoreboard and stall of the timed instructions in the long chain. A
 * wgmma (HGMMA, IGMMA, QGMMA) sets no scoreboard: its result is waited for
 * by WARPGROUP.DEPBAR on the warpgroup's barrier, so its chain is variable
 * latency whatever the control bits say, and the stall is no latency. */
static void latency_class(const struct lat_entry *e, const struct cubin_kernel *k,
                          const struct sass_region *r4, const char *timed, json_t *o)
{
    int with = 0, without = 0, stall_seen[16] = {0};
    char buf[SASS_MNEMONIC_MAX];
    /* the chain's last instruction feeds the clock read, not the chain: its
     * stall says nothing about the chain, so it is left out */
    size_t last = r4->end;
    for (size_t i = r4->first; i < r4->end; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        if (lat_is_timed(sass_mnemonic(&in, buf), timed))
            last = i;
    }
    for (size_t i = r4->first; i < last; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        if (!lat_is_timed(sass_mnemonic(&in, buf), timed))
            continue;
        if (sass_field(&in, SASS_WBAR) == SASS_SCOREBOARD_NONE)
            without++;
        else
            with++;
        stall_seen[sass_field(&in, SASS_STALL) & 15]++;
    }
    int distinct = 0, only = 0;
    json_t *counts = json_object();
    for (int s = 0; s < 16; s++)
        if (stall_seen[s]) {
            char key[12];
            snprintf(key, sizeof key, "%d", s);
            json_object_set_new(counts, key, json_integer(stall_seen[s]));
            distinct++;
            only = s;
        }
    json_object_set_new(o, "fixed_latency", with && without ? json_null() : json_boolean(!with));
    /* one figure only when the compiler wrote one stall on every timed
     * instruction; otherwise the counts say what it wrote */
    json_object_set_new(o, "compiler_stall",
                        without && !with && distinct == 1 ? json_integer(only) : json_null());
    json_object_set_new(o, "compiler_stall_counts", counts);
    if (lat_is_warpgroup(e)) {
        json_object_set_new(o, "fixed_latency", json_false());
        json_object_set_new(o, "compiler_stall", json_null());
        json_object_set_new(o, "waited_by", json_string("WARPGROUP.DEPBAR (wgmma.wait_group 0)"));
    }
}

/* Runs check on kernel `name` of the cubin: its verdict, or a refusal
 * naming what made the cubin unreadable. */
static json_t *check_kernel(const struct lat_entry *e, const void *cubin, size_t size,
                            const char *name,
                            json_t *(*check)(const struct lat_entry *e,
                                             const struct cubin_kernel *k))
{
    struct cubin c;
    char err[256];
    const struct cubin_kernel *k = kernel_of(&c, cubin, size, name, err, sizeof err);
    json_t *o = k ? check(e, k) : fail(err);
    cubin_free(&c);
    return o;
}

static json_t *check_latency(const struct lat_entry *e, const struct cubin_kernel *k)
{
    struct sass_region r[MAX_REGIONS];
    size_t n = lat_find_regions(k->text, k->text_size, r, MAX_REGIONS);
    json_t *regions = json_array();
    int ok = n > 0 && n % LAT_REGIONS == 0;
    for (size_t i = 0; i < n; i++) {
        size_t found = count_timed(k, &r[i], e->sass);
        size_t expect = (size_t)lat_region_expect(e, (int)(i % LAT_REGIONS));
        ok = ok && found == expect;
        json_array_append_new(regions, json_pack("{s:i, s:I, s:I, s:I}", "region",
                                                 (int)(i % LAT_REGIONS), "expected",
                                                 (json_int_t)expect, "found", (json_int_t)found,
                                                 "size", (json_int_t)(r[i].end - r[i].first)));
    }
    json_t *o = json_pack("{s:b, s:o}", "verified", ok, "regions", regions);
    if (n >= LAT_REGIONS) {
        json_object_set_new(o, "extra_per_step", extras_per_step(e, k, &r[3], &r[4], e->sass));
        latency_class(e, k, &r[4], e->sass, o);
    }
    if (!ok) {
        char *listing = sass_listing(k->text, k->text_size, NULL);
        json_object_set_new(o, "listing", json_string(listing ? listing : ""));
        free(listing);
    }
    return o;
}

static json_t *check_throughput(const struct lat_entry *e, const struct cubin_kernel *k)
{
    struct sass_region r;
    size_t unit = (size_t)lat_tput_steps(e) * (size_t)e->per_step, found = 0;
    int have = sass_clock_region(k->text, k->text_size, 0, &r) == 0;
    if (have)
        found = count_timed(k, &r, e->sass);
    /* the loop's own counter may use the timed opcode too (IMAD): allow a
     * couple of instructions beyond whole copies of the body */
    int ok = have && found >= unit && found % unit <= 2;
    json_t *o = json_pack("{s:b, s:I, s:I}", "verified", ok, "per_loop_expected",
                          (json_int_t)unit, "found", (json_int_t)found);
    if (!have)
        json_object_set_new(o, "error", json_string("no pair of clock reads around the loop"));
    return o;
}

json_t *lat_check_latency(const struct lat_entry *e, const void *cubin, size_t size)
{
    return check_kernel(e, cubin, size, "lat", check_latency);
}

json_t *lat_check_throughput(const struct lat_entry *e, const void *cubin, size_t size)
{
    return check_kernel(e, cubin, size, "tput", check_throughput);
}
