/*
 * The cache model's result as JSON (model.h, cache_result_to_json): one
 * document shape for the CLI's --json and any later API route.
 *
 * DESIGN
 * Counts of the exact engine are integers; the reuse engine's are expected
 * values after the associativity correction, reals. Each level of each
 * engine: {"requests", "hits", "hit_rate", "sectors", "sector_hits",
 * "sector_hit_rate", "lookup_hit_rate" (hits and latency misses, which
 * merge into a fetch on its way: what ncu's tag lookups count as hits),
 * "misses": {class: n}, "to_next_level": {"requests",
 * "sectors"}, "mshr_full", "invalidations", "loads": PART, "stores": PART,
 * "sms": [...the same per SM, with "sm"]}, PART = {"requests", "hits",
 * "hit_rate", "sectors", "sector_hits", "sector_hit_rate",
 * "lookup_hit_rate", "sector_lookup_hit_rate"}: the loads' and the stores'
 * share of the level's requests, each with its own rates (the loads' L1
 * sector lookup hit rate is what ncu's l1tex__t_sectors_pipe_lsu_mem_
 * global_op_ld_lookup_hit / ..._op_ld measures). The level's own members
 * count both, as they did before stores were told apart. The
 * difference is reuse minus exact, in hit-rate points.
 */
#include <math.h>

#include "cache/model.h"
#include "cache/setindex.h"

static json_t *num(int exact, double v)
{
    return exact ? json_integer((json_int_t)llround(v)) : json_real(v);
}

/* One kind's share of a level: n requests, h hits, s sectors, sh sector
 * hits, lat latency misses (merged into a fetch on its way), ps sectors
 * found on their way. A tag lookup hits a sector present or on its way. */
static json_t *part_json(double n, double h, double s, double sh, double lat, double ps, int exact)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "requests", num(exact, n));
    json_object_set_new(o, "hits", num(exact, h));
    json_object_set_new(o, "hit_rate", json_real(cache_rate(h, n)));
    json_object_set_new(o, "sectors", num(exact, s));
    json_object_set_new(o, "sector_hits", num(exact, sh));
    json_object_set_new(o, "sector_hit_rate", json_real(cache_rate(sh, s)));
    json_object_set_new(o, "lookup_hit_rate", json_real(cache_rate(h + lat, n)));
    json_object_set_new(o, "sector_lookup_hit_rate", json_real(cache_rate(sh + ps, s)));
    return o;
}

static json_t *stats_json(const struct cache_estimate *e, int exact)
{
    json_t *o = json_object(), *m = json_object(), *below = json_object();
    if (!o || !m || !below) {
        json_decref(o);
        json_decref(m);
        json_decref(below);
        return NULL;
    }
    json_object_set_new(o, "requests", num(exact, e->requests));
    json_object_set_new(o, "hits", num(exact, e->hits));
    json_object_set_new(o, "hit_rate", json_real(cache_rate(e->hits, e->requests)));
    json_object_set_new(o, "sectors", num(exact, e->sectors));
    json_object_set_new(o, "sector_hits", num(exact, e->sector_hits));
    json_object_set_new(o, "sector_hit_rate", json_real(cache_rate(e->sector_hits, e->sectors)));
    /* what a hardware tag lookup counts as a hit: present, or on its way */
    json_object_set_new(o, "lookup_hit_rate",
                        json_real(cache_rate(e->hits + e->miss[CACHE_MISS_LATENCY], e->requests)));
    for (int i = 0; i < CACHE_MISS_CLASSES; i++)
        json_object_set_new(m, cache_miss_name((enum cache_miss)i), num(exact, e->miss[i]));
    json_object_set_new(o, "misses", m);
    json_object_set_new(below, "requests", num(exact, e->below));
    json_object_set_new(below, "sectors", num(exact, e->below_sectors));
    json_object_set_new(o, "to_next_level", below);
    json_object_set_new(o, "mshr_full", num(exact, e->mshr_full));
    json_object_set_new(o, "invalidations", num(exact, e->invalidations));
    const double lat = e->miss[CACHE_MISS_LATENCY];
    json_object_set_new(o, "loads",
                        part_json(e->requests - e->stores.requests, e->hits - e->stores.hits,
                                  e->sectors - e->stores.sectors, e->sector_hits - e->stores.sector_hits,
                                  lat - e->stores.latency, e->pending_sectors - e->stores.pending_sectors, exact));
    json_object_set_new(o, "stores",
                        part_json(e->stores.requests, e->stores.hits, e->stores.sectors, e->stores.sector_hits,
                                  e->stores.latency, e->stores.pending_sectors, exact));
    return o;
}

static json_t *level_json(const struct cache_level_result *l, uint32_t sms, int exact)
{
    json_t *o = stats_json(&l->est, exact), *arr = json_array();
    if (!o || !arr) {
        json_decref(o);
        json_decref(arr);
        return NULL;
    }
    for (uint32_t s = 0; s < sms; s++) {
        if (!l->sm[s].requests)
            continue;
        json_t *x = stats_json(&l->est_sm[s], exact);
        if (!x)
            break;
        json_object_set_new(x, "sm", json_integer(s));
        json_array_append_new(arr, x);
    }
    json_object_set_new(o, "sms", arr);
    return o;
}

static json_t *hist_json(const struct cache_rdhist *h)
{
    json_t *o = json_object(), *bins = json_array();
    if (!o || !bins) {
        json_decref(o);
        json_decref(bins);
        return NULL;
    }
    int last = -1;
    for (int k = 0; k < CACHE_RD_BINS; k++)
        if (h->bin[k])
            last = k;
    for (int k = 0; k <= last; k++) {
        uint64_t lo = k ? (uint64_t)1 << (k - 1) : 0, hi = k ? ((uint64_t)1 << k) - 1 : 0;
        if (h->beyond_from && hi >= h->beyond_from) /* capped: the bin ends below the cap */
            hi = h->beyond_from - 1;
        json_t *b = json_pack("{s:I, s:I, s:I}", "from", (json_int_t)lo, "to",
                              (json_int_t)(k == CACHE_RD_BINS - 1 ? -1 : (json_int_t)hi), "count",
                              (json_int_t)h->bin[k]);
        json_array_append_new(bins, b);
    }
    json_object_set_new(o, "bins", bins);
    json_object_set_new(o, "compulsory", json_integer((json_int_t)h->cold));
    if (h->beyond_from) /* the capped L2: reuses deeper than the lines tracked */
        json_object_set_new(o, "beyond", json_pack("{s:I, s:I}", "from", (json_int_t)h->beyond_from, "count",
                                                   (json_int_t)h->beyond));
    return o;
}

static json_t *geom_json(const struct cache_geom *g, const struct cache_timing *t)
{
    char index[256];
    return json_pack("{s:I, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:i, s:i, s:i}", "size", (json_int_t)g->size,
                     "assoc", (int)g->assoc, "line", (int)g->line, "sector", (int)g->sector, "sets",
                     (int)g->sets, "lines", (int)g->lines, "set_index",
                     cache_set_index_text(g, index, sizeof index), "write", cache_write_name(g->write),
                     "latency", (int)t->latency, "mshr", (int)t->mshr, "max_merge", (int)t->max_merge);
}

/* Where the partitions came from: the SMs of each, the home bits. */
static json_t *parts_geom_json(const struct cache_parts *p)
{
    json_t *bits = json_array(), *sm = json_array();
    int n[2] = {0, 0};
    for (int b = 0; b < CACHE_PART_PAGE_BITS; b++)
        if (p->home_mask >> b & 1)
            json_array_append_new(bits, json_integer(b));
    for (uint32_t s = 0; s < p->sms; s++) {
        json_array_append_new(sm, p->sm_part[s] >= 0 ? json_integer(p->sm_part[s]) : json_null());
        if (p->sm_part[s] >= 0)
            n[p->sm_part[s]]++;
    }
    return json_pack("{s:i, s:o, s:[i,i], s:o}", "count", 2, "home_mask_bits", bits, "sms_per_partition",
                     n[0], n[1], "sm_partition", sm);
}

/* The two partitions' share: the lookups in a line's home after a miss in
 * the requesting SM's partition (the level's figures count both). */
static json_t *parts_json(const struct cache_level_result *l, int exact)
{
    return json_pack("{s:i, s:o}", "count", 2, "fabric", stats_json(&l->est_fabric, exact));
}

json_t *cache_result_to_json(const struct cache_result *res, const struct cache_config *cfg)
{
    static const char *const lvname[2] = {"l1", "l2"}, *const engname[2] = {"exact", "reuse"};
    json_t *doc = json_object(), *geo = json_object(), *eng = json_object(), *diff = json_object();
    if (!doc || !geo || !eng || !diff) {
        json_decref(doc);
        json_decref(geo);
        json_decref(eng);
        json_decref(diff);
        return NULL;
    }
    int levels = res->l2 ? 2 : 1;
    json_object_set_new(doc, "records", json_integer((json_int_t)res->records));
    json_object_set_new(doc, "sms", json_integer(res->sms));
    for (int lv = 0; lv < levels; lv++)
        json_object_set_new(geo, lvname[lv], geom_json(&cfg->geom[lv], &cfg->timing[lv]));
    if (levels == 2 && cfg->parts.count == 2)
        json_object_set_new(json_object_get(geo, "l2"), "partitions", parts_geom_json(&cfg->parts));
    json_object_set_new(doc, "geometry", geo);
    for (int e = 0; e < 2; e++) {
        if (!(res->engines & (1 << e)))
            continue;
        json_t *x = json_object();
        for (int lv = 0; lv < levels; lv++) {
            json_t *l = level_json(&res->r[e][lv], res->sms, e == CACHE_EXACT);
            if (l && e == CACHE_REUSE)
                json_object_set_new(l, "histogram", hist_json(&res->r[e][lv].hist));
            if (l && lv == CACHE_L2 && cfg->parts.count == 2)
                json_object_set_new(l, "partitions", parts_json(&res->r[e][lv], e == CACHE_EXACT));
            json_object_set_new(x, lvname[lv], l);
        }
        json_object_set_new(eng, engname[e], x);
    }
    json_object_set_new(doc, "engines", eng);
    if (res->engines == CACHE_ENGINE_BOTH) {
        for (int lv = 0; lv < levels; lv++) {
            const struct cache_estimate *a = &res->r[CACHE_EXACT][lv].est, *b = &res->r[CACHE_REUSE][lv].est;
            json_object_set_new(
                diff, lvname[lv],
                json_pack("{s:f, s:f}", "hit_rate",
                          cache_rate(b->hits, b->requests) - cache_rate(a->hits, a->requests),
                          "sector_hit_rate",
                          cache_rate(b->sector_hits, b->sectors) - cache_rate(a->sector_hits, a->sectors)));
        }
        json_object_set_new(doc, "difference", diff);
    } else {
        json_decref(diff);
    }
    return doc;
}
