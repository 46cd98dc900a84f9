/*
 * Reading issue orders out of per-warp timestamps and scoring the
 * scheduling policies on them (see issue_order.h for the method).
 *
 * DESIGN
 * Plain C over a trace, no GPU: io_count sorts one sub-partition's
 * segments by start clock (relative to the first warp's first start, so a
 * 32-bit clock that wraps during the run still orders), walks neighbours,
 * and keeps per warp how many segments it has finished and when its last
 * one ended: that is all a decision needs (who owned the issue, who was
 * ready, who came next). Counts add up over traces, so one verdict can
 * rest on every launch of an experiment.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/issue_order.h"

static const char *const names[IO_POLICIES] = {"youngest", "oldest", "round-robin",
                                               "lowest-id"};

const char *io_policy_name(enum io_policy p)
{
    return p < IO_POLICIES ? names[p] : "?";
}

struct seg {
    unsigned w;                      /* warp position in the trace */
    int64_t start, end;              /* cycles after the trace's base */
};

static int by_start(const void *a, const void *b)
{
    const struct seg *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static int valid(const struct io_trace *t)
{
    return t->nwarps >= 1 && t->nwarps <= IO_MAX_WARPS && t->nseg >= 1 &&
           t->nseg <= IO_MAX_SEGS;
}

/* The trace's segments in issue order (s has room for all); how many. */
static size_t sorted(const struct io_trace *t, struct seg *s)
{
    uint32_t base = t->w[0].start[0];
    size_t n = 0;
    for (unsigned i = 0; i < t->nwarps; i++)
        for (size_t j = 0; j < t->nseg; j++)
            s[n++] = (struct seg){i, (int32_t)(t->w[i].start[j] - base),
                                  (int32_t)(t->w[i].end[j] - base)};
    qsort(s, n, sizeof *s, by_start);
    return n;
}

size_t io_order(const struct io_trace *t, unsigned *order, size_t room)
{
    struct seg s[IO_MAX_WARPS * IO_MAX_SEGS];   /* 12 KiB: no static, so reentrant */
    if (!valid(t))
        return 0;
    size_t n = sorted(t, s), k;
    for (k = 0; k < n && k < room; k++)
        order[k] = t->w[s[k].w].index;
    return k;
}

/* The candidate each policy names among cand[0..n) (n >= 1), the owner
 * being o. */
static unsigned predict(const struct io_trace *t, enum io_policy p, const unsigned *cand,
                        size_t n, unsigned o)
{
    unsigned best = cand[0];
    for (size_t k = 1; k < n; k++) {
        const struct io_warp *c = &t->w[cand[k]], *b = &t->w[best];
        int better = 0;
        switch (p) {
        case IO_YOUNGEST: better = c->index > b->index; break;
        case IO_OLDEST: better = c->index < b->index; break;
        case IO_LOWEST_ID: better = c->warpid < b->warpid; break;
        case IO_ROUND_ROBIN: /* the first slot after the owner's, cyclically */
            better = (c->warpid - t->w[o].warpid) % 256u < (b->warpid - t->w[o].warpid) % 256u;
            break;
        default: break;
        }
        best = better ? cand[k] : best;
    }
    return best;
}

/* 1 when ordering the warps by age orders them by id too. */
static int age_is_id(const struct io_trace *t, const unsigned *cand, size_t n)
{
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            const struct io_warp *x = &t->w[cand[a]], *y = &t->w[cand[b]];
            if (x->index < y->index && x->warpid > y->warpid)
                return 0;
        }
    return 1;
}

int io_count(const struct io_trace *t, struct io_counts *c)
{
    struct seg s[IO_MAX_WARPS * IO_MAX_SEGS];   /* 12 KiB: no static, so reentrant */
    size_t done[IO_MAX_WARPS] = {0};
    int64_t last_end[IO_MAX_WARPS];
    unsigned cand[IO_MAX_WARPS];
    if (!valid(t))
        return -1;
    size_t n = sorted(t, s);
    c->traces++;
    c->segments += n;
    for (size_t k = 1; k < n; k++) {
        const struct seg *prev = &s[k - 1], *cur = &s[k];
        unsigned o = prev->w;
        done[o]++;
        last_end[o] = prev->end;
        c->pairs++;
        if (cur->start < prev->end) {    /* interleaved inside a segment */
            c->overlapped++;
            c->quiet++;                  /* nothing inside a segment asks for a switch */
            c->breaks++;
            continue;
        }
        int owner_left = done[o] < t->nseg;
        size_t nc = 0;
        int next_is_cand = 0;
        for (unsigned i = 0; i < t->nwarps; i++)
            if (i != o && done[i] < t->nseg &&
                (done[i] == 0 || last_end[i] + (int64_t)t->blocked <= cur->start)) {
                next_is_cand |= i == cur->w;
                cand[nc++] = i;
            }
        int chance = t->event_at_end && owner_left && nc >= 1;   /* an end asked to switch */
        c->quiet += !t->event_at_end && owner_left;
        c->events += chance;
        if (cur->w == o) {
            c->continued++;
            c->held += chance;
            continue;
        }
        c->switches++;
        c->breaks += !t->event_at_end && owner_left;
        if (!next_is_cand)
            continue;                    /* not a choice the policies describe */
        if (nc == 1) {
            c->forced++;
            continue;
        }
        c->decisions++;
        c->age_is_id += age_is_id(t, cand, nc);
        for (int p = 0; p < IO_POLICIES; p++)
            c->hits[p] += predict(t, (enum io_policy)p, cand, nc, o) == cur->w;
    }
    return 0;
}

/* The counts by name, in the order the JSON lists them (hits apart): one
 * table for adding, writing and reading them. */
static const struct {
    const char *name;
    size_t off;
} members[] = {
    {"traces", offsetof(struct io_counts, traces)},
    {"segments", offsetof(struct io_counts, segments)},
    {"pairs", offsetof(struct io_counts, pairs)},
    {"overlapped", offsetof(struct io_counts, overlapped)},
    {"continued", offsetof(struct io_counts, continued)},
    {"events", offsetof(struct io_counts, events)},
    {"held", offsetof(struct io_counts, held)},
    {"quiet", offsetof(struct io_counts, quiet)},
    {"switches", offsetof(struct io_counts, switches)},
    {"breaks", offsetof(struct io_counts, breaks)},
    {"forced", offsetof(struct io_counts, forced)},
    {"decisions", offsetof(struct io_counts, decisions)},
    {"age_is_id", offsetof(struct io_counts, age_is_id)},
};
#define NMEMBERS (sizeof members / sizeof members[0])

static size_t *member(struct io_counts *c, size_t i)
{
    return (size_t *)(void *)((char *)c + members[i].off);
}

void io_counts_add(struct io_counts *to, const struct io_counts *c)
{
    struct io_counts from = *c;
    for (size_t i = 0; i < NMEMBERS; i++)
        *member(to, i) += *member(&from, i);
    for (int p = 0; p < IO_POLICIES; p++)
        to->hits[p] += c->hits[p];
}

unsigned io_verdict(const struct io_counts *c)
{
    unsigned mask = 0;
    if (c->decisions < IO_MIN_DECISIONS || c->pairs == 0 ||
        (double)c->overlapped > IO_MAX_OVERLAP * (double)c->pairs)
        return 0;
    for (int p = 0; p < IO_POLICIES; p++)
        if ((double)c->hits[p] >= IO_MATCH * (double)c->decisions)
            mask |= 1u << p;
    return mask;
}

/* "the next warp was the youngest (n) ... ready one in N decisions" into
 * buf; its length. */
static size_t mask_text(const struct io_counts *c, unsigned mask, char *buf, size_t len)
{
    size_t n = 0;
    n += (size_t)snprintf(buf, len, "the next warp was the ");
    for (int p = 0, first = 1; p < IO_POLICIES && n < len; p++)
        if (mask & 1u << p) {
            n += (size_t)snprintf(buf + n, len - n, "%s%s (%zu)", first ? "" : " or ", names[p],
                                  c->hits[p]);
            first = 0;
        }
    if (n < len)
        n += (size_t)snprintf(buf + n, len - n, " ready one in %zu decisions%s", c->decisions,
                              c->age_is_id == c->decisions && c->decisions
                                  ? "; age and warp id ordered the warps alike"
                                  : "");
    return n < len ? n : len;
}

/* "not determined: why" or mask_text's sentence into buf, and how often an
 * edited end did not pass the issue on. */
static void verdict_text(const struct io_counts *c, unsigned mask, char *buf, size_t len)
{
    size_t n;
    if (!mask) {
        const char *why = c->pairs && (double)c->overlapped > IO_MAX_OVERLAP * (double)c->pairs
                              ? "the warps' segments overlapped (issue interleaved inside them)"
                          : c->decisions < IO_MIN_DECISIONS ? "too few decisions"
                              : "no policy named the next warp often enough";
        n = (size_t)snprintf(buf, len, "not determined: %s (%zu decisions, %zu of %zu "
                             "neighbours overlapping)", why, c->decisions, c->overlapped,
                             c->pairs);
        n = n < len ? n : len;
    } else {
        n = mask_text(c, mask, buf, len);
    }
    if (c->held && n < len)       /* a rule may rest on warps finishing, not on the edits */
        snprintf(buf + n, len - n, "; at %zu of %zu edited ends with a ready warp waiting the "
                 "warp kept the issue", c->held, c->events);
}

json_t *io_counts_json(const struct io_counts *c)
{
    char text[512];
    struct io_counts copy = *c;
    unsigned mask = io_verdict(c);
    json_t *o = json_object(), *hits = json_object(), *rule = mask ? json_array() : json_null();
    for (size_t i = 0; i < NMEMBERS; i++)
        json_object_set_new(o, members[i].name, json_integer((json_int_t)*member(&copy, i)));
    for (int p = 0; p < IO_POLICIES; p++) {
        json_object_set_new(hits, names[p], json_integer((json_int_t)c->hits[p]));
        if (mask & 1u << p)
            json_array_append_new(rule, json_string(names[p]));
    }
    /* ends with no event: a switch away from a warp with work left breaks greediness */
    json_t *greedy = c->quiet ? json_boolean((double)c->breaks <= IO_MAX_OVERLAP * (double)c->quiet)
                              : json_null();
    verdict_text(c, mask, text, sizeof text);
    json_object_set_new(o, "hits", hits);
    json_object_set_new(o, "rule", rule);
    json_object_set_new(o, "greedy", greedy);
    json_object_set_new(o, "text", json_string(text));
    return o;
}

/* ---- the meaning ----------------------------------------------------------------- */

static size_t count_member(const json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 ? (size_t)v : 0;
}

void io_counts_from_json(const json_t *o, struct io_counts *c)
{
    const json_t *hits = json_object_get(o, "hits");
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NMEMBERS; i++)
        *member(c, i) = count_member(o, members[i].name);
    for (int p = 0; p < IO_POLICIES; p++)
        c->hits[p] = count_member(hits, names[p]);
}

/* The experiment's counts re-read and judged again: io_counts_json's object. */
static json_t *judged(const json_t *by, const char *name)
{
    struct io_counts c;
    const json_t *o = json_object_get(by, name);
    if (!o)
        return NULL;
    io_counts_from_json(o, &c);
    return io_counts_json(&c);
}

/* "youngest or lowest-id" for a verdict's rule array; NULL for null. */
static void rule_names(const json_t *rule, char *buf, size_t len)
{
    size_t n = 0, i;
    const json_t *r;
    buf[0] = '\0';
    json_array_foreach(rule, i, r)
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", i ? " or " : "",
                              json_string_value(r));
}

json_t *io_meaning(const json_t *sched)
{
    static const char *const events[] = {"stall_ends", "yield0_ends", "yield1_ends"};
    static const char *const said[] = {"after a stall (end reads stall 11)",
                                       "after yield field 0 on the end reads",
                                       "after yield field 1 on the end reads"};
    char text[2048], names_buf[128];
    const json_t *by = json_object_get(sched, "by_experiment");
    if (!json_is_object(sched))
        return NULL;
    if (json_object_get(sched, "error") || !json_is_object(by))
        return json_pack("{s:s, s:n}", "text", "not determined: the issue-order experiment did "
                         "not run", "rule");
    json_t *after = json_object(), *quiet = judged(by, "quiet");
    size_t n = (size_t)snprintf(text, sizeof text, "Issue order of warps grouped by %%warpid "
                                "mod 4:");
    const json_t *stall_rule = json_null();
    int stall_obeyed = 0;        /* the stalled warp gave the issue up at its edited ends */
    for (size_t e = 0; e < sizeof events / sizeof events[0]; e++) {
        json_t *j = judged(by, events[e]);
        if (!j)
            continue;
        if (n < sizeof text)
            n += (size_t)snprintf(text + n, sizeof text - n, " %s: %s;", said[e],
                                  json_string_value(json_object_get(j, "text")));
        if (e == 0) {
            stall_rule = json_object_get(j, "rule");
            stall_obeyed = (double)count_member(j, "held") <=
                           IO_MAX_OVERLAP * (double)count_member(j, "events");
        }
        json_object_set_new(after, events[e], j);
    }
    const json_t *greedy = quiet ? json_object_get(quiet, "greedy") : NULL;
    if (n < sizeof text && quiet)
        n += (size_t)snprintf(text + n, sizeof text - n, " with no event (quiet): the issue left "
                              "a warp that had work at %zu of %zu places (segment ends and "
                              "overlaps), %s.",
                              count_member(quiet, "breaks"), count_member(quiet, "quiet"),
                              json_is_true(greedy) ? "greedy" : json_is_false(greedy)
                                  ? "not greedy" : "greediness not judged");
    json_t *rule;
    const char *why = "";
    if (json_is_true(greedy) && json_is_array(stall_rule) && stall_obeyed) {
        rule_names(stall_rule, names_buf, sizeof names_buf);
        char r[192];
        snprintf(r, sizeof r, "greedy, then %s", names_buf);
        rule = json_string(r);
    } else {
        rule = json_string("not determined");
        why = !json_is_true(greedy)  ? " (greediness not shown)"
              : !stall_obeyed        ? " (the stalled warps kept the issue)"
                                     : " (no rule after a stall)";
    }
    if (n < sizeof text)
        snprintf(text + n, sizeof text - n, " Rule: %s%s.", json_string_value(rule), why);
    json_t *m = json_pack("{s:s, s:o, s:o, s:O, s:O}", "text", text, "rule", rule, "after",
                          after, "greedy", greedy ? greedy : json_null(), "data", sched);
    json_decref(quiet);
    return m;
}
