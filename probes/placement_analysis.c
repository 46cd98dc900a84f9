/*
 * The block placement probe's analysis (placement.h): the order of the
 * first launch, whether it can be trusted, and how well the dealing rule
 * predicts the check launch.
 */
#include "probes/placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/deal.h"

int pl_one_wave(const uint64_t *rec, uint32_t blocks, uint64_t *deal_ns)
{
    uint64_t first_start = UINT64_MAX, last_start = 0, first_end = UINT64_MAX;
    for (uint32_t b = 0; b < blocks; b++) {
        uint64_t s = rec[b * PL_REC + 1], e = rec[b * PL_REC + 2];
        first_start = s < first_start ? s : first_start;
        last_start = s > last_start ? s : last_start;
        first_end = e < first_end ? e : first_end;
    }
    *deal_ns = blocks ? last_start - first_start : 0;
    return blocks && last_start < first_end;
}

/* Why the first launch's order is not the device's, or "" when it is:
 * an SM out of range, an SM with no block or with more than its share. */
static void order_fault(const struct pl_input *in, int wave, char *why, size_t len)
{
    why[0] = '\0';
    if (!wave) {
        snprintf(why, len, "the launch was not one wave: a block ended before the last began, so "
                           "later blocks may have taken freed slots");
        return;
    }
    uint32_t *held = calloc(in->sms, sizeof *held);
    if (!held) {
        snprintf(why, len, "out of memory");
        return;
    }
    uint32_t share = in->blocks / in->sms;
    for (uint32_t b = 0; b < in->blocks && !why[0]; b++) {
        uint64_t sm = in->rec[b * PL_REC];
        if (sm >= in->sms)
            snprintf(why, len, "block %u ran on SM %llu, and the device has %u SMs", b,
                     (unsigned long long)sm, in->sms);
        else
            held[sm]++;
    }
    for (uint32_t s = 0; s < in->sms && !why[0]; s++)
        if (held[s] != share)
            snprintf(why, len, "SM %u ran %u blocks of the launch, not %u as every SM could: the "
                               "launch was not spread over all SMs alike", s, held[s], share);
    free(held);
}

static json_t *sm_list(const uint64_t *rec, uint32_t blocks)
{
    json_t *a = json_array();
    for (uint32_t b = 0; a && b < blocks; b++)
        json_array_append_new(a, json_integer((json_int_t)rec[b * PL_REC]));
    return a;
}

/* The check launch against the order's prediction (trace_deal_wave). */
static json_t *check_json(const struct pl_input *in, const struct trace_deal *d)
{
    uint64_t deal_ns;
    int wave = pl_one_wave(in->check, in->check_blocks, &deal_ns);
    json_t *c = json_pack("{s:i,s:i,s:i,s:b,s:o}", "threads_per_block", (int)in->check_threads,
                          "blocks", (int)in->check_blocks, "blocks_per_sm", (int)in->check_per_sm,
                          "one_wave", wave, "order", sm_list(in->check, in->check_blocks));
    uint32_t *pred = malloc((size_t)in->check_blocks * sizeof *pred);
    char why[256];
    if (c && pred && in->check_blocks == in->sms * in->check_per_sm &&
        trace_deal_wave(d, in->sms, in->check_per_sm, pred, why, sizeof why) == 0) {
        uint32_t same = 0;
        for (uint32_t b = 0; b < in->check_blocks; b++)
            same += pred[b] == in->check[b * PL_REC];
        json_object_set_new(c, "predicted", json_integer(same));
    } else if (c) {
        json_object_set_new(c, "predicted", json_null());
    }
    free(pred);
    return c;
}

json_t *pl_analyze(const struct pl_input *in)
{
    uint64_t deal_ns = 0;
    int wave = in->blocks && in->sms && in->rec && pl_one_wave(in->rec, in->blocks, &deal_ns);
    char why[256] = "no launch ran";
    if (in->blocks && in->sms && in->rec)
        order_fault(in, wave, why, sizeof why);
    uint32_t same = 0;
    for (uint32_t l = 0; in->rec && l < in->launches; l++) {
        const uint64_t *r = in->rec + (size_t)l * in->blocks * PL_REC;
        uint32_t b = 0;
        while (b < in->blocks && r[b * PL_REC] == in->rec[b * PL_REC])
            b++;
        same += b == in->blocks;
    }
    json_t *doc = json_pack("{s:s,s:i,s:i,s:i,s:i,s:I,s:i,s:i,s:b,s:I}", "status",
                            why[0] ? "not determined" : "determined", "threads_per_block",
                            (int)in->threads, "blocks", (int)in->blocks, "blocks_per_sm",
                            (int)(in->sms ? in->blocks / in->sms : 0), "sms", (int)in->sms,
                            "spin_ns", (json_int_t)in->spin_ns, "launches", (int)in->launches,
                            "same_as_first", (int)same, "one_wave", wave, "deal_ns",
                            (json_int_t)deal_ns);
    if (!doc)
        return NULL;
    if (why[0]) {
        json_object_set_new(doc, "reason", json_string(why));
        return doc;
    }
    json_t *order = sm_list(in->rec, in->blocks);
    struct trace_deal d;
    char why_deal[256];
    json_object_set_new(doc, "order", order);
    if (in->check && trace_deal_from_json(order, &d, why_deal, sizeof why_deal) == 0) {
        json_object_set_new(doc, "check", check_json(in, &d));
        trace_deal_free(&d);
    }
    return doc;
}
