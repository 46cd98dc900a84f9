/*
 * The sorted stream as the cache model reads it (input.h): detection, the
 * CSV reader of sorted records, the SM index.
 */
#include "cache/input.h"

#include <stdlib.h>
#include <string.h>

#include "trace/csv.h"
#include "trace/readfile.h"
#include "trace/scan.h"

/* The SM and seq of record k: what the index pass reads (in place in a
 * binary file on a little-endian host). */
/* What the index pass looks at: seq, sm and the fields it checks (not the
 * thread and PC). */
static void get_place(const struct cache_input *in, uint64_t k, struct trace_out *o)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (in->binary) {
        const uint8_t *p = in->bin.data + k * TRACE_BIN_OUT_BYTES;
        uint16_t w;
        memcpy(&o->seq, p, 8);
        memcpy(&o->addr, p + 24, 8);
        memcpy(&o->sm, p + 32, 4);
        memcpy(&w, p + 36, 2);
        o->width = w;
        o->dep = p[38];
        o->store = p[39];
        return;
    }
#endif
    if (in->binary)
        trace_bin_get_out(&in->bin, k, o);
    else
        *o = in->recs[k];
}

static void get_any(const struct cache_input *in, uint64_t k, struct trace_out *o)
{
    if (in->binary)
        trace_bin_get_out(&in->bin, k, o);
    else
        *o = in->recs[k];
}

void cache_input_get(const struct cache_input *in, uint32_t sm, uint64_t i, struct trace_out *o)
{
    get_any(in, in->start[sm] + i, o);
}

void cache_input_release(const struct cache_input *in, uint32_t sm, uint64_t i)
{
    if (in->binary && i)
        trace_bin_release(&in->bin, in->start[sm], in->start[sm] + i);
}

void cache_input_close(struct cache_input *in)
{
    if (in->binary)
        trace_bin_close(&in->bin);
    free(in->recs);
    free(in->start);
    free(in->len);
    memset(in, 0, sizeof *in);
}

/* ---- CSV ----------------------------------------------------------------------- */

/* One record of n fields (7, or 8 with op). */
static int csv_line(struct trace_text *t, struct trace_cur *c, int n, struct trace_out *o)
{
    uint64_t v[8] = {0};
    for (int i = 0; i < n; i++) {
        const char *at = c->p;
        if (i == 7) {
            v[7] = trace_cur_lit(c, "st");
            if (!v[7] && !trace_cur_lit(c, "ld"))
                return trace_text_bad(t, at, "op must be ld or st");
        } else if (!trace_cur_u64(c, i == 3 || i == 4, &v[i])) {
            return trace_text_bad(t, at, "field %d: a number expected", i + 1);
        }
        if (i < n - 1 && !trace_cur_lit(c, ","))
            return trace_text_bad(t, c->p, "',' expected after field %d", i + 1);
        if (i == 0 && v[0] >= CACHE_INPUT_MAX_SMS)
            return trace_text_bad(t, at, "sm must be below %u", CACHE_INPUT_MAX_SMS);
        if (i == 5 && (v[5] == 0 || v[5] > 65536 || (v[5] & (v[5] - 1))))
            return trace_text_bad(t, at, "width must be a power of two up to 65536");
        if (i == 6 && v[6] > 1)
            return trace_text_bad(t, at, "dep must be 0 or 1");
    }
    if (c->p != c->e)
        return trace_text_bad(t, c->p, "unexpected text after the %d fields", n);
    if (!trace_span_fits(v[4], (uint32_t)v[5]))
        return trace_text_fail(t, TRACE_EINPUT, "address 0x%llx + width %llu passes 2^64",
                               (unsigned long long)v[4], (unsigned long long)v[5]);
    *o = (struct trace_out){(uint32_t)v[0], v[1], v[2], v[3], v[4], (uint32_t)v[5], (uint32_t)v[6], (uint32_t)v[7]};
    return 0;
}

/* The number of fields the header line announces (7 or 8), 0 if it is
 * not one of the sorted CSV headers. */
static int csv_fields(const struct trace_cur *c)
{
    size_t n = (size_t)(c->e - c->p);
    if (n == strlen(TRACE_CSV_OUT_HEADER) && memcmp(c->p, TRACE_CSV_OUT_HEADER, n) == 0)
        return 8;
    if (n == strlen(TRACE_CSV_OUT_HEADER_NO_OP) && memcmp(c->p, TRACE_CSV_OUT_HEADER_NO_OP, n) == 0)
        return 7;
    return 0;
}

/* What is wrong with the place of record o after prev (NULL: o is the
 * first), or NULL: the sorter's order is SM-major, seq counting 0, 1, 2 ...
 * within each SM. */
static const char *order_error(const struct trace_out *o, const struct trace_out *prev)
{
    if (o->sm >= CACHE_INPUT_MAX_SMS)
        return "SM id too large";
    if (prev && o->sm < prev->sm)
        return "records are not SM-major (the sorter's order)";
    if (o->seq != (prev && o->sm == prev->sm ? prev->seq + 1 : 0))
        return "seq must count 0, 1, 2 ... within each SM";
    return NULL;
}

static int read_csv(struct cache_input *in, const struct trace_mapped *m, struct trace_err *err)
{
    struct trace_text t;
    struct trace_cur c;
    uint64_t cap = 0;
    int fields = 0;
    trace_text_init(&t, m->data, m->len, err);
    if (!trace_text_line(&t, &c) || !(fields = csv_fields(&c))) {
        trace_err_set(err, 1, 0,
                      "not a sorted trace: expected a sorted binary file or the CSV header '%s' "
                      "(or '%s') (run gpuprobe trace sort first)",
                      TRACE_CSV_OUT_HEADER, TRACE_CSV_OUT_HEADER_NO_OP);
        return TRACE_EINPUT;
    }
    while (trace_text_line(&t, &c)) {
        if (c.p == c.e)
            return trace_text_bad(&t, c.p, "blank line");
        if (in->count == cap) {
            cap = cap ? cap * 2 : 4096;
            struct trace_out *r = realloc(in->recs, cap * sizeof *r);
            if (!r)
                return trace_text_fail(&t, TRACE_ENOMEM, "out of memory");
            in->recs = r;
        }
        const struct trace_out *o = &in->recs[in->count];
        int rc = csv_line(&t, &c, fields, &in->recs[in->count]);
        if (rc)
            return rc;
        const char *why = order_error(o, in->count ? o - 1 : NULL);
        if (why)
            return trace_text_fail(&t, TRACE_EINPUT, "sm %u, seq %llu: %s", o->sm, (unsigned long long)o->seq, why);
        in->count++;
    }
    return 0;
}

/* ---- the index ------------------------------------------------------------------- */

/* Checks binary record k (o, after prev) and its place: 0, or -1 with err
 * naming its byte offset. */
static int check_binary(const struct cache_input *in, uint64_t k, const struct trace_out *o,
                        const struct trace_out *prev, struct trace_err *err)
{
    if (o->sm < CACHE_INPUT_MAX_SMS && !trace_bin_out_valid(o, in->params.sms, in->bin.h.version))
        return trace_bin_out_check(&in->bin, k, o, err); /* the record itself first, as the reader says it */
    /* the sorter's merged request covers at most two of its lines (a
     * misaligned one: docs/trace-sort.md); a wider one is damage, which the
     * model would clip to a line and count as if it were right */
    const char *why = (uint64_t)o->width > 2 * (uint64_t)in->params.line_bytes
                          ? "a width over twice the line of the sort that wrote the file"
                          : order_error(o, prev);
    if (!why)
        return 0;
    trace_err_set(err, 0, TRACE_BIN_HEADER_BYTES + k * TRACE_BIN_OUT_BYTES, "record %llu (sm %u, seq %llu): %s",
                  (unsigned long long)k, o->sm, (unsigned long long)o->seq, why);
    return -1;
}

/* Makes room for SM sm in the index. 0 or -1. */
static int index_room(struct cache_input *in, uint32_t sm, uint32_t *cap)
{
    if (sm < *cap)
        return 0;
    uint32_t n = *cap ? *cap : 64;
    while (n <= sm)
        n *= 2;
    uint64_t *st = realloc(in->start, n * sizeof *st);
    if (st)
        in->start = st;
    uint64_t *len = realloc(in->len, n * sizeof *len);
    if (len)
        in->len = len;
    if (!st || !len)
        return -1;
    memset(in->start + *cap, 0, (n - *cap) * sizeof *st);
    memset(in->len + *cap, 0, (n - *cap) * sizeof *len);
    *cap = n;
    return 0;
}

/* One sequential pass: checks the order and notes each SM's run. (No
 * searching: a fault maps a whole large folio, so probing a big file at
 * scattered places would map most of it.) */
static int build_index(struct cache_input *in, struct trace_err *err)
{
    struct trace_out o, prev = {0};
    uint32_t cap = 0;
    if (index_room(in, 0, &cap))
        goto nomem;
    for (uint64_t k = 0; k < in->count; k++) {
        get_place(in, k, &o);
        /* CSV lines were checked as read, where their line and offset are known */
        if (in->binary && check_binary(in, k, &o, k ? &prev : NULL, err))
            return TRACE_EINPUT;
        int same = k > 0 && o.sm == prev.sm;
        if (!same) {
            if (index_room(in, o.sm, &cap))
                goto nomem;
            in->start[o.sm] = k;
            in->sms = o.sm + 1;
        }
        in->len[o.sm]++;
        prev = o;
        if (in->binary && (k & 0xffff) == 0xffff)
            trace_bin_release(&in->bin, k - 0xffff, k);
    }
    if (in->binary)
        trace_bin_release(&in->bin, 0, in->count);
    return 0;
nomem:
    trace_err_set(err, 0, 0, "out of memory");
    return TRACE_ENOMEM;
}

int cache_input_open(struct cache_input *in, const char *path, struct trace_err *err)
{
    memset(in, 0, sizeof *in);
    struct trace_mapped m;
    if (trace_map_file(path, &m, err))
        return TRACE_ENOMEM;
    int is_bin = m.len >= 8 && memcmp(m.data, TRACE_BIN_MAGIC, 8) == 0;
    int rc = 0;
    if (!is_bin)
        rc = read_csv(in, &m, err);
    trace_unmap_file(&m);
    if (rc) {
        cache_input_close(in);
        return rc;
    }
    if (is_bin) {
        if (trace_bin_open(path, &in->bin, err)) {
            memset(in, 0, sizeof *in);
            return TRACE_EINPUT;
        }
        in->binary = 1;
        if (in->bin.h.kind != TRACE_BIN_SORTED) {
            cache_input_close(in);
            trace_err_set(err, 0, 0, "a requests file, not a sorted one: run gpuprobe trace sort first");
            return TRACE_EINPUT;
        }
        in->count = in->bin.count;
        in->has_params = 1;
        in->params = in->bin.h.params;
    }
    rc = build_index(in, err);
    if (rc)
        cache_input_close(in);
    return rc;
}
