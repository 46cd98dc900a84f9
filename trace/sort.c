/*
 * The trace sorter's driver: checking pass and block index, the per-SM
 * block source (in place or through per-thread buffers), the spool
 * fallback, and the summary (see sort.h).
 *
 * DESIGN
 * The block index lists, in thread order, each block present in the input
 * with its first record (built by one checking pass, or by two threads each
 * checking one half, their halves joined); a second array lists the index entries SM by SM
 * (stable, so each SM's blocks stay in increasing id order, the order the
 * placement deals them). The block source hands the loop one block at a
 * time and splits its records into threads, lanes and warps: a small block
 * by scanning it in place (its pages are dropped when it finishes); a large
 * one without touching the mapping, finding thread boundaries in windows
 * read with pread (a long thread's end by galloping search over
 * single-record reads) and giving each thread a buffer that the warp
 * refills as it goes (coalesce.h's refill hook). With two threads the
 * records of an SM that is not next are held in batches of the output's
 * item (a trace_out, or an encoded record: the loop's room is then the
 * batch itself), handed on in SM order.
 */
#include "trace/sort.h"

#include <assert.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fdio.h"
#include "trace/deal.h"
#include "trace/order_ref.h"
#include "trace/schedule.h"
#include "trace/spool.h"
#include "trace/tmpfile.h"

#define SCAN_RELEASE_EVERY ((size_t)1 << 18)   /* records between releases in the checking pass */
#define SCAN_CHUNK ((size_t)64)                /* records checked before their block starts are looked at */
#define STREAM_CHUNK ((size_t)128)             /* records per thread buffer (4 KiB) */
#define STREAM_CHUNK_BIG ((size_t)512)         /* 16 KiB, while an SM's big buffers fit in: */
#define STREAM_BIG_BYTES ((size_t)8 << 20)     /* (a fourth of the pread calls: -10% on long threads) */
#define STREAM_PAD ((size_t)2)                 /* records between two threads' buffers (see slot_buffers) */
#define SPLIT_WINDOW ((size_t)2048)            /* records read at once to split a streamed block (64 KiB) */

/* ---- the input as the sorter sees it ----------------------------------- */

struct view {
    const struct trace_rec *recs;
    size_t n;
    uint64_t base;                  /* byte offset of record 0 */
    const struct trace_bin *bin;    /* for releasing pages; NULL for arrays */
    uint32_t version;               /* of the file's layout (TRACE_BIN_VERSION for arrays) */
    uint32_t flags_ok;              /* the bits bytes 28-31 may have in it (record_bad) */
};

/* A view of recs[0..n) laid out as a file of this version. */
static struct view view_of(const struct trace_rec *recs, size_t n, uint64_t base, const struct trace_bin *bin,
                           uint32_t version)
{
    /* dep may be 1; store too from version 2 on; the reserved bytes 0 */
    uint32_t flags_ok = 0x01u | (uint32_t)trace_bin_store_max(version) << 8;
    return (struct view){.recs = recs, .n = n, .base = base, .bin = bin, .version = version, .flags_ok = flags_ok};
}

static void view_release(const struct view *v, size_t first, size_t end)
{
    if (v->bin)
        trace_bin_release(v->bin, first, end);
}

/* ---- checking pass and block index -------------------------------------- */

struct bindex {
    struct trace_blocks l; /* the blocks in file order */
    size_t *by_sm;         /* index entries, SM by SM */
    size_t *sm_first;      /* by_sm[sm_first[s] .. sm_first[s+1]) are SM s's */
};

static void bindex_free(struct bindex *x)
{
    trace_blocks_free(&x->l);
    free(x->by_sm);
    free(x->sm_first);
    memset(x, 0, sizeof *x);
}

/* Room for `need` entries and the end marker. */
static int blocks_reserve(struct trace_blocks *x, size_t need)
{
    if (need + 1 <= x->cap)
        return 0;
    size_t nc = x->cap ? x->cap * 2 : 1024;
    while (nc < need + 1)
        nc *= 2;
    uint64_t *ni = realloc(x->id, nc * sizeof *ni);
    if (ni)
        x->id = ni;
    size_t *ns = realloc(x->start, nc * sizeof *ns);
    if (ns)
        x->start = ns;
    if (!ni || !ns)
        return -1;
    x->cap = nc;
    return 0;
}

/* Notes thread tid of record i when it starts a block (tid at or past
 * *block_end, the end of the block of the thread before: 0 at first):
 * adds the block and moves *block_end. 0, or -1 out of memory. */
static inline int block_note(struct trace_blocks *x, uint32_t tpb, uint64_t tid, size_t i, uint64_t *block_end)
{
    uint64_t b = tid / tpb;
    uint64_t next = (b + 1) * (uint64_t)tpb;
    *block_end = next > tid ? next : UINT64_MAX;
    if (x->n && x->id[x->n - 1] == b) /* only at the very top of the id range */
        return 0;
    if (blocks_reserve(x, x->n + 1))
        return -1;
    x->id[x->n] = b;
    x->start[x->n] = i;
    x->n++;
    return 0;
}

void trace_blocks_init(struct trace_blocks *x, uint32_t threads_per_block)
{
    memset(x, 0, sizeof *x);
    x->threads_per_block = threads_per_block;
    x->failed = threads_per_block == 0;
}

void trace_blocks_note(struct trace_blocks *x, const struct trace_rec *r, size_t n)
{
    if (x->failed)
        return;
    uint64_t end = x->block_end, last = x->last_tid;
    int down = 0; /* not thread-major: the file is spooled, and its order is another */
    for (size_t i = 0; i < n; i++) {
        uint64_t tid = r[i].tid;
        down |= tid < last;
        last = tid;
        if (tid >= end && block_note(x, x->threads_per_block, tid, (size_t)(x->records + i), &end))
            down = 1;
    }
    x->failed = down;
    x->block_end = end;
    x->last_tid = last;
    x->records += n;
}

void trace_blocks_free(struct trace_blocks *x)
{
    free(x->id);
    free(x->start);
    memset(x, 0, sizeof *x);
}

static int record_error(const struct view *v, size_t i, struct trace_err *err)
{
    char m[200];
    if (trace_bin_req_check(&v->recs[i], v->version, m, sizeof m) == 0)
        return 0;
    trace_err_set(err, 0, v->base + i * (uint64_t)TRACE_BIN_REQ_BYTES, "record %zu: %s", i, m);
    return -1;
}

/* Non-zero when record r breaks a rule of trace_bin_req_check (which then
 * says which): a width of 1, 2, 4, 8 or 16, dependency and store flags 0 or
 * 1 (flags_ok: the store flag 0 in a version-1 file), reserved bytes 0, no
 * byte past 2^64. Branch-free, and its terms are ORed as they are (not made
 * 0 or 1 first): the checking pass runs it once per record of the trace. */
static inline uint64_t record_bad(const struct trace_rec *r, uint32_t flags_ok)
{
    uint32_t w = r->width, flags; /* flags: dep, store and the two reserved bytes */
    memcpy(&flags, (const char *)r + offsetof(struct trace_rec, dep), sizeof flags);
    _Static_assert(offsetof(struct trace_rec, reserved) == offsetof(struct trace_rec, dep) + 2 &&
                       sizeof r->reserved == 2,
                   "dep, store, reserved: four bytes in a row");
    /* (w - 1) & ~15: w is 0 or above 16; w & (w - 1): not a power of two */
    return ((w - 1) & ~(uint32_t)15) | (w & (w - 1)) | (flags & ~flags_ok) |
           (uint64_t)(r->addr + (w - 1) < r->addr);
}

/* Reports record i, which record_bad or the thread order refused. */
static int scan_error(const struct view *v, size_t i, uint64_t prev, struct trace_err *err)
{
    if (record_error(v, i, err))
        return TRACE_SORT_EINPUT;
    trace_err_set(err, 0, v->base + i * (uint64_t)TRACE_BIN_REQ_BYTES,
                  "record %zu: thread %" PRIu64 " after thread %" PRIu64 ": the input is not thread-major", i,
                  v->recs[i].tid, prev);
    return TRACE_SORT_EINPUT;
}

/* Checks records [lo, hi) and adds their blocks to x, in windows of
 * SCAN_RELEASE_EVERY records whose pages are dropped behind it. prev: the
 * thread of record lo - 1 (0 when lo is 0). A block that starts before lo
 * is added again at lo: scan_join drops that entry. */
static int scan_range(const struct view *v, const struct trace_params *p, size_t lo, size_t hi, uint64_t prev,
                      struct trace_blocks *x, struct trace_err *err)
{
    uint64_t block_end = 0; /* 0: the first record starts a block */
    const uint32_t flags_ok = v->flags_ok;
    size_t released = lo;
    for (size_t from = lo; from < hi; from += SCAN_RELEASE_EVERY) {
        size_t to = hi - from > SCAN_RELEASE_EVERY ? from + SCAN_RELEASE_EVERY : hi;
        for (size_t i = from; i < to;) {
            /* a chunk's checks first, ORed without a branch; then its block
             * starts, skipped when its last thread is still in the current
             * block (thread ids never go down in a chunk that passed) */
            size_t stop = to - i > SCAN_CHUNK ? i + SCAN_CHUNK : to;
            uint64_t last = prev, bad = 0;
            for (size_t k = i; k < stop; k++) {
                const struct trace_rec *r = &v->recs[k];
                bad |= record_bad(r, flags_ok) | (r->tid < last);
                last = r->tid;
            }
            if (bad) /* the rare case: find the chunk's first bad record */
                for (size_t k = i;; k++) {
                    if (record_bad(&v->recs[k], flags_ok) | (v->recs[k].tid < prev))
                        return scan_error(v, k, prev, err);
                    prev = v->recs[k].tid;
                }
            prev = last;
            for (; last >= block_end && i < stop; i++) {
                uint64_t tid = v->recs[i].tid;
                if (tid < block_end)
                    continue;
                if (block_note(x, p->threads_per_block, tid, i, &block_end)) {
                    trace_err_set(err, 0, 0, "out of memory for the block index");
                    return TRACE_SORT_ESYS;
                }
            }
            i = stop;
        }
        if (to < hi) {
            view_release(v, released, to);
            released = to;
        }
    }
    view_release(v, released, hi);
    return 0;
}

/* Appends the index of a later range to x; its first entry is dropped when
 * it continues x's last block (scan_range's note). 0 or -1. */
static int scan_join(struct trace_blocks *x, const struct trace_blocks *y)
{
    size_t skip = x->n && y->n && x->id[x->n - 1] == y->id[0];
    if (blocks_reserve(x, x->n + y->n - skip))
        return -1;
    if (y->n > skip) {
        memcpy(x->id + x->n, y->id + skip, (y->n - skip) * sizeof *x->id);
        memcpy(x->start + x->n, y->start + skip, (y->n - skip) * sizeof *x->start);
    }
    x->n += y->n - skip;
    return 0;
}

struct scan_half {            /* the second half of a two-thread checking pass */
    const struct view *v;
    const struct trace_params *p;
    size_t lo, hi;
    struct trace_blocks x;
    struct trace_err err;
    int rc;
};

static void *scan_half_run(void *arg)
{
    struct scan_half *h = arg;
    h->rc = scan_range(h->v, h->p, h->lo, h->hi, h->v->recs[h->lo - 1].tid, &h->x, &h->err);
    return NULL;
}

/* Checks every record and builds the block index. With two sorting
 * threads (o->threads >= 2) the second half of a trace of more than
 * o->split_above records is checked by a second thread at the same time
 * (records are checked independently; the first error in file order is the
 * one reported, as with one thread). */
/* Ends x with its end marker (start[n] = records). 0, or -1 out of memory. */
static int blocks_end(struct trace_blocks *x, size_t records, struct trace_err *err)
{
    if (blocks_reserve(x, x->n)) {
        trace_err_set(err, 0, 0, "out of memory for the block index");
        return TRACE_SORT_ESYS;
    }
    x->start[x->n] = records;
    return 0;
}

static int scan(const struct view *v, const struct trace_params *p, const struct trace_sort_opts *o,
                struct trace_blocks *x, struct trace_err *err)
{
    pthread_t th;
    size_t above = o && o->split_above ? o->split_above : TRACE_SORT_SPLIT_ABOVE;
    struct scan_half h = {.v = v, .p = p, .lo = v->n / 2, .hi = v->n};
    int split = o && o->threads >= 2 && !o->reference && v->n > above && v->n >= 2 &&
                pthread_create(&th, NULL, scan_half_run, &h) == 0;
    int rc = scan_range(v, p, 0, split ? h.lo : v->n, 0, x, err);
    if (split) {
        pthread_join(th, NULL);
        if (rc == 0 && h.rc) { /* the first half's error, if any, comes first in the file */
            rc = h.rc;
            *err = h.err;
        }
        if (rc == 0 && scan_join(x, &h.x)) {
            trace_err_set(err, 0, 0, "out of memory for the block index");
            rc = TRACE_SORT_ESYS;
        }
        trace_blocks_free(&h.x);
    }
    return rc ? rc : blocks_end(x, v->n, err);
}

/* The blocks of v: those its writer noted (o->blocks, when they are of
 * every record and of these threads per block: records a reader already
 * checked, not checked again), else found by the checking pass. */
static int blocks_of(const struct view *v, const struct trace_params *p, const struct trace_sort_opts *o,
                     struct trace_blocks *x, struct trace_err *err)
{
    const struct trace_blocks *b = o ? o->blocks : NULL;
    if (!b || b->failed || b->records != v->n || b->threads_per_block != p->threads_per_block)
        return scan(v, p, o, x, err);
    trace_blocks_init(x, b->threads_per_block);
    if (blocks_reserve(x, b->n)) {
        trace_err_set(err, 0, 0, "out of memory for the block index");
        return TRACE_SORT_ESYS;
    }
    memcpy(x->id, b->id, b->n * sizeof *x->id);
    memcpy(x->start, b->start, b->n * sizeof *x->start);
    x->n = b->n;
    return blocks_end(x, v->n, err);
}

/* Lists the index entries SM by SM, each SM's in increasing block order;
 * wave is trace_deal_placement's. */
static int bindex_by_sm(struct bindex *x, const struct trace_params *p, const uint32_t *wave)
{
    x->sm_first = calloc((size_t)p->sms + 1, sizeof *x->sm_first);
    x->by_sm = malloc((x->l.n ? x->l.n : 1) * sizeof *x->by_sm);
    if (!x->sm_first || !x->by_sm)
        return -1;
    for (size_t j = 0; j < x->l.n; j++)
        x->sm_first[trace_sched_block_sm(p, wave, x->l.id[j]) + 1]++;
    for (uint32_t s = 0; s < p->sms; s++)
        x->sm_first[s + 1] += x->sm_first[s];
    size_t *fill = calloc((size_t)p->sms, sizeof *fill);
    if (!fill)
        return -1;
    for (size_t j = 0; j < x->l.n; j++) {
        uint32_t s = trace_sched_block_sm(p, wave, x->l.id[j]);
        x->by_sm[x->sm_first[s] + fill[s]++] = j;
    }
    free(fill);
    return 0;
}

/* ---- the block source of one SM ---------------------------------------- */

/* How a resident block's records are read (see sort.h's DESIGN). */
enum block_read {
    READ_IN_PLACE,                       /* the mapped records; their pages dropped at retire */
    READ_COPY,                           /* the whole block copied into the slot's buffer */
    READ_STREAM,                         /* per-thread buffers, refilled as the warps go */
};

/* Per resident slot: where its block's records are and, for a block read
 * through buffers, each thread's records still to read and its buffer; for
 * a copied block, the copy. */
struct slot_info {
    struct sm_src *src;
    size_t lo, hi;                       /* the block's records */
    enum block_read how;
    struct trace_warp *warps;            /* the loop's warps of this slot */
    struct trace_rec *buf;               /* chunk records per thread, `stride` apart */
    size_t chunk;                        /* STREAM_CHUNK or STREAM_CHUNK_BIG */
    size_t stride;                       /* chunk + STREAM_PAD */
    size_t *next, *end;                  /* per thread of the block */
    struct trace_rec *copy;              /* READ_COPY: the block's records */
    size_t copy_cap;                     /* records copy holds room for */
};

struct sm_src {
    const struct view *v;
    const struct trace_params *p;
    const struct bindex *x;
    size_t k, end;                       /* next and end position in x->by_sm */
    size_t stream_above;                 /* blocks of more records are read through buffers */
    size_t copy_upto;                    /* blocks of at most this many records are copied */
    struct slot_info *slots;
    struct trace_rec *win;               /* SPLIT_WINDOW records, for splitting streamed blocks */
    int io_failed;
};

/* Reads records [first, first + n) of the input into dst, without touching
 * the mapping (a pread for a file). 0 or -1. */
static int read_records(const struct view *v, size_t first, size_t n, struct trace_rec *dst)
{
    if (!v->bin || v->bin->owned) { /* an array, or records decoded on a big-endian host */
        memcpy(dst, v->recs + first, n * sizeof *dst);
        return 0;
    }
    off_t at = (off_t)(v->base + first * sizeof *dst);
    /* little-endian host: the file's layout is trace_rec's */
    return fd_read_all(v->bin->fd, dst, n * sizeof *dst, at) == 0 ? 0 : -1;
}

static uint64_t tid_at(struct sm_src *s, size_t i)
{
    if (!s->v->bin)
        return s->v->recs[i].tid;
    struct trace_rec r;
    if (read_records(s->v, i, 1, &r)) {
        s->io_failed = 1;
        return UINT64_MAX;
    }
    return r.tid;
}

/* First index in (i, hi] whose thread differs from record i's (galloping,
 * then bisection), reading only O(log length) records. */
static size_t thread_end(struct sm_src *s, size_t i, size_t hi, uint64_t tid)
{
    size_t lo = i + 1, step = 1, top = lo;
    while (top < hi && tid_at(s, top) == tid) {
        lo = top + 1;
        top = lo + step;
        step *= 2;
    }
    if (top > hi)
        top = hi;
    while (lo < top) { /* the first differing index is in [lo, top] */
        size_t mid = lo + (top - lo) / 2;
        if (tid_at(s, mid) == tid)
            lo = mid + 1;
        else
            top = mid;
    }
    return lo;
}

/* thread_end for the thread that starts at `first`, when the one before
 * had `guess` records: threads of a kernel are mostly as long as each
 * other, and two reads then confirm it. */
static size_t thread_end_guess(struct sm_src *s, size_t first, size_t i, size_t hi, uint64_t tid, size_t guess)
{
    size_t end = first + guess;
    if (guess && end > i && end <= hi && tid_at(s, end - 1) == tid && (end == hi || tid_at(s, end) != tid))
        return end;
    return thread_end(s, i, hi, tid);
}

/* Points the lane at its thread's next si->chunk records. */
static int refill(void *ctx, struct trace_warp *w, unsigned lane)
{
    struct slot_info *si = ctx;
    size_t t = (size_t)(w - si->warps) * TRACE_WARP_SIZE + lane;
    size_t n = si->end[t] - si->next[t];
    if (n > si->chunk)
        n = si->chunk;
    struct trace_rec *dst = si->buf + t * si->stride;
    if (n == 0 || read_records(si->src->v, si->next[t], n, dst)) {
        si->src->io_failed |= n != 0;
        w->more &= ~(1u << lane);
        return 0;
    }
    si->next[t] += n;
    w->cur[lane] = dst;
    w->end[lane] = dst + n;
    if (si->next[t] == si->end[t])
        w->more &= ~(1u << lane);
    return 1;
}

/* Sets up the buffers of a slot for a block read through them (kept for
 * the slot's later blocks): STREAM_CHUNK_BIG records per thread while the
 * big buffers of all the slots stay within STREAM_BIG_BYTES, else
 * STREAM_CHUNK, so an SM's buffers grow by at most STREAM_BIG_BYTES. The
 * buffers are STREAM_PAD records more than a chunk apart: at 4 or 16 KiB
 * apart a warp's 32 cursors would all fall in the same set of the CPU's
 * caches, which hold only a few of them (4 KiB aliasing). */
static int slot_buffers(struct slot_info *si, const struct sm_src *s, uint32_t tpb)
{
    if (si->buf)
        return 0;
    size_t big = 0;
    for (uint32_t k = 0; k < s->p->blocks_per_sm; k++)
        if (s->slots[k].buf && s->slots[k].chunk == STREAM_CHUNK_BIG)
            big += (size_t)tpb * STREAM_CHUNK_BIG * sizeof *si->buf;
    si->chunk = big + (size_t)tpb * STREAM_CHUNK_BIG * sizeof *si->buf <= STREAM_BIG_BYTES ? STREAM_CHUNK_BIG
                                                                                           : STREAM_CHUNK;
    si->stride = si->chunk + STREAM_PAD;
    si->buf = malloc((size_t)tpb * si->stride * sizeof *si->buf);
    si->next = malloc((size_t)tpb * sizeof *si->next);
    si->end = malloc((size_t)tpb * sizeof *si->end);
    return si->buf && si->next && si->end ? 0 : -1;
}

/* How a block of n records is read (see sort.h's DESIGN): copied when
 * small and read from a file, through buffers when large, else in place. */
static enum block_read block_read_how(const struct sm_src *s, size_t n)
{
    if (n > s->stream_above)
        return READ_STREAM;
    if (n <= s->copy_upto && s->v->bin && !s->v->bin->owned)
        return READ_COPY;
    return READ_IN_PLACE;
}

/* Copies the slot's block into its buffer; the records, or NULL. */
static const struct trace_rec *copy_block(struct sm_src *s, struct slot_info *si)
{
    size_t n = si->hi - si->lo;
    if (n > si->copy_cap) {
        struct trace_rec *c = realloc(si->copy, n * sizeof *c);
        if (!c)
            return NULL;
        si->copy = c;
        si->copy_cap = n;
    }
    if (read_records(s->v, si->lo, n, si->copy)) {
        s->io_failed = 1;
        return NULL;
    }
    return si->copy;
}

/* Gives the thread tid, records [first, end) of the slot's block, its
 * lane, its buffer and its first records: the `have` (>= 1) of them at
 * recs, read already, up to a chunk; refill reads the rest. */
static void stream_place(struct slot_info *si, struct trace_warp *warps, uint64_t tid, size_t first, size_t end,
                         const struct trace_rec *recs, size_t have)
{
    uint32_t in_block = (uint32_t)(tid % si->src->p->threads_per_block);
    struct trace_warp *w = &warps[in_block / TRACE_WARP_SIZE];
    unsigned lane = in_block % TRACE_WARP_SIZE;
    size_t n = have < si->chunk ? have : si->chunk;
    struct trace_rec *dst = si->buf + (size_t)in_block * si->stride;
    memcpy(dst, recs, n * sizeof *dst);
    w->live |= 1u << lane;
    w->cur[lane] = dst;
    w->end[lane] = dst + n;
    w->refill = refill;
    w->refill_ctx = si;
    si->next[in_block] = first + n;
    si->end[in_block] = end;
    if (first + n < end)
        w->more |= 1u << lane;
}

/* Splits a block read through buffers into threads without touching the
 * mapping: the records are read SPLIT_WINDOW at a time, each thread's
 * boundary found by scanning their thread ids and its first chunk copied
 * into its buffer from there, so a block of short threads costs a read
 * per window, not a few per thread. A thread that runs past the window
 * with a chunk or more read (or that fills the window) has its end found
 * by a galloping search from there, which reads only O(log length)
 * records, so a long thread is not read twice; one that runs past it with
 * less than a chunk starts the next window. */
static int split_streamed(struct sm_src *s, struct slot_info *si, struct trace_warp *warps)
{
    if (!s->win && !(s->win = malloc(SPLIT_WINDOW * sizeof *s->win)))
        return TRACE_SORT_ESYS;
    size_t len = 0; /* the last thread's records */
    for (size_t i = si->lo; i < si->hi;) {
        size_t n = si->hi - i < SPLIT_WINDOW ? si->hi - i : SPLIT_WINDOW;
        if (read_records(s->v, i, n, s->win)) {
            s->io_failed = 1;
            return TRACE_SORT_ESYS;
        }
        size_t k = 0;
        while (k < n) {
            uint64_t tid = s->win[k].tid;
            size_t e = k + 1;
            while (e < n && s->win[e].tid == tid)
                e++;
            size_t end = i + e;
            if (e == n && end < si->hi) { /* it may go on past the window */
                if (k > 0 && e - k < si->chunk)
                    break; /* the next window starts with it */
                end = thread_end_guess(s, i + k, end - 1, si->hi, tid, len);
                if (s->io_failed)
                    return TRACE_SORT_ESYS;
            }
            stream_place(si, warps, tid, i + k, end, &s->win[k], e - k);
            len = end - (i + k);
            if (end > i + e) { /* it went on: the next window starts past it */
                k = end - i;
                break;
            }
            k = e;
        }
        i += k;
    }
    return 0;
}

/* Splits records [lo, hi) of one block into threads, lanes and warps:
 * in place or copied (scanning the records), or through buffers. */
static int split_block(struct sm_src *s, struct slot_info *si, struct trace_warp *warps)
{
    const struct trace_rec *recs = s->v->recs + si->lo; /* record lo + i is recs[i] */
    uint32_t tpb = s->p->threads_per_block;
    si->how = block_read_how(s, si->hi - si->lo);
    if (si->how == READ_STREAM)
        return slot_buffers(si, s, tpb) ? TRACE_SORT_ESYS : split_streamed(s, si, warps);
    if (si->how == READ_COPY && !(recs = copy_block(s, si)))
        return TRACE_SORT_ESYS;
    for (size_t i = si->lo; i < si->hi;) {
        uint64_t tid = recs[i - si->lo].tid;
        size_t j = i + 1;
        while (j < si->hi && recs[j - si->lo].tid == tid)
            j++;
        uint32_t in_block = (uint32_t)(tid % tpb);
        struct trace_warp *w = &warps[in_block / TRACE_WARP_SIZE];
        unsigned lane = in_block % TRACE_WARP_SIZE;
        w->live |= 1u << lane;
        w->cur[lane] = &recs[i - si->lo];
        w->end[lane] = &recs[j - si->lo];
        i = j;
    }
    return 0;
}

static int src_next(void *ctx, uint32_t slot, uint64_t *block, uint64_t *records, struct trace_warp *warps)
{
    struct sm_src *s = ctx;
    if (s->k == s->end)
        return 0;
    size_t j = s->x->by_sm[s->k++];
    struct slot_info *si = &s->slots[slot];
    si->src = s;
    si->lo = s->x->l.start[j];
    si->hi = s->x->l.start[j + 1];
    si->warps = warps;
    *block = s->x->l.id[j];
    *records = si->hi - si->lo;
    int rc = split_block(s, si, warps);
    return rc ? rc : 1;
}

static void src_retire(void *ctx, uint32_t slot)
{
    struct sm_src *s = ctx;
    struct slot_info *si = &s->slots[slot];
    if (si->how == READ_IN_PLACE)
        view_release(s->v, si->lo, si->hi);
}

static void slots_free(struct slot_info *slots, uint32_t n)
{
    if (!slots)
        return;
    for (uint32_t i = 0; i < n; i++) {
        free(slots[i].buf);
        free(slots[i].next);
        free(slots[i].end);
        free(slots[i].copy);
    }
    free(slots);
}

/* ---- per SM --------------------------------------------------------------- */

static int order_reference(const struct trace_params *p, uint32_t sm, const struct trace_block_src *src,
                           const struct trace_emit *emit, const struct trace_l1_ops *l1, struct trace_sm_stats *st)
{
    struct trace_ref_block *blocks;
    size_t n;
    int rc = trace_ref_collect(p, src, &blocks, &n);
    if (rc == 0)
        rc = trace_order_ref_sm_l1(p, sm, blocks, n, emit, l1, st);
    trace_ref_blocks_free(p, blocks, n);
    return rc;
}

static void add_stats(struct trace_summary *sum, const struct trace_sm_stats *st)
{
    sum->records_in += st->records_in;
    sum->requests_out += st->requests_out;
    sum->instructions += st->instructions;
    sum->blocks += st->blocks;
    sum->warps += st->warps;
    sum->ticks += st->ticks;
    sum->mshr_stall_ticks += st->mshr_stall_ticks;
    sum->idle_ticks += st->idle_ticks;
    sum->dep_blocks += st->dep_blocks;
    if (st->max_in_flight > sum->max_in_flight)
        sum->max_in_flight = st->max_in_flight;
    sum->l1_hits += st->l1_hits;
    sum->l1_merged += st->l1_merged;
}

/* Orders SM sm into emit; *io_failed set when a read failed. */
static int sort_one_sm(const struct view *v, const struct trace_params *p, const struct trace_sort_opts *o,
                       const struct bindex *x, uint32_t sm, struct slot_info *slots, const struct trace_emit *emit,
                       struct trace_sm_stats *st, int *io_failed)
{
    size_t above = o && o->stream_above ? o->stream_above : TRACE_SORT_STREAM_ABOVE;
    size_t copy_upto = o && o->copy_upto ? o->copy_upto : TRACE_SORT_COPY_UPTO;
    struct sm_src s = {.v = v, .p = p, .x = x, .k = x->sm_first[sm], .end = x->sm_first[sm + 1],
                       .stream_above = above / sizeof(struct trace_rec),
                       .copy_upto = copy_upto / sizeof(struct trace_rec), .slots = slots};
    struct trace_block_src src = {.next = src_next, .retire = src_retire, .ctx = &s};
    const struct trace_l1_ops *l1 = o ? o->l1 : NULL;
    /* the literal loop emits trace_out records: encoded into the room here */
    struct trace_emit as_out = {.sink = trace_bin_room_sink, .ctx = (void *)emit->bin};
    int rc = o && o->reference ? order_reference(p, sm, &src, emit->bin ? &as_out : emit, l1, st)
                               : trace_order_sm_l1(p, sm, &src, emit, l1, st);
    free(s.win);
    *io_failed = s.io_failed;
    if (rc == 0 && s.io_failed)
        rc = TRACE_SORT_ESYS;
    return rc;
}

static void sm_failure(int io_failed, uint32_t sm, struct trace_err *err)
{
    trace_err_set(err, 0, 0, "%s ordering SM %u", io_failed ? "read error" : "out of memory or an internal inconsistency",
                  sm);
}

static int sort_sms_serial(const struct view *v, const struct trace_params *p, const struct trace_sort_opts *o,
                           const struct bindex *x, trace_out_sink sink, void *ctx, struct trace_summary *sum,
                           struct trace_err *err)
{
    struct slot_info *slots = calloc(p->blocks_per_sm, sizeof *slots);
    if (!slots) {
        trace_err_set(err, 0, 0, "out of memory");
        return TRACE_SORT_ESYS;
    }
    int rc = 0;
    for (uint32_t sm = 0; sm < p->sms && rc == 0; sm++) {
        struct trace_emit emit = {.sink = sink, .ctx = ctx, .bin = o ? o->bin : NULL};
        int io_failed = 0;
        rc = sort_one_sm(v, p, o, x, sm, slots, &emit, &sum->sm[sm], &io_failed);
        add_stats(sum, &sum->sm[sm]);
        if (rc == TRACE_SORT_ESYS)
            sm_failure(io_failed, sm, err);
    }
    slots_free(slots, p->blocks_per_sm);
    return rc;
}

/* ---- two threads: SMs in parallel, output in SM order (see sort.h) ------ */

struct held {                 /* records of an SM that is not next yet */
    struct held *next;
    size_t n, cap;                /* records held, room for */
    unsigned char recs[];         /* n items of the reorder's item size */
};
_Static_assert(offsetof(struct held, recs) % _Alignof(struct trace_out) == 0, "held trace_out records aligned");

/* A held batch has room for at least this many records (the loop's batches
 * are at most this long), so that a spare one fits any later batch. */
#define HELD_MIN_RECS ((size_t)1024)

struct reorder {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    trace_out_sink sink;
    void *ctx;
    const struct trace_bin_room *bin; /* set: records are encoded (items of TRACE_BIN_OUT_BYTES) and go here */
    size_t item;                  /* bytes per record: sizeof(struct trace_out), or encoded */
    uint32_t nsms, cur, next_sm;  /* cur: the lowest SM not yet fully handed on */
    unsigned char *done;
    struct held **head, **tail;   /* per SM */
    struct held *spare;           /* handed-on batches kept for reuse: their pages stay mapped
                                     (freeing and allocating again faulted in every page each time) */
    size_t used, budget;          /* bytes held */
    int releasing;                /* a thread hands held records on (outside the lock) */
    int rc, failed_io;            /* the first failure (a sink's value or an error) */
    uint32_t failed_sm;
    const struct view *v;
    const struct trace_params *p;
    const struct trace_sort_opts *o;
    const struct bindex *x;
    struct trace_summary *sum;
};

struct sm_emit {
    struct reorder *ro;
    uint32_t sm;
    struct trace_bin_room bin;    /* encoded output: sm_room and sm_commit on this */
    uint8_t *scratch;             /* a room after a failure */
    int direct;                   /* the last room is the output's own */
    struct held *h;               /* else the batch it is in, if any */
    size_t placed;                /* records that room was placed for */
};

/* Hands n items on to the real output (without the lock). */
static int put_out(struct reorder *ro, const void *items, size_t n)
{
    return ro->bin ? trace_bin_room_copy(ro->bin, items, n) : ro->sink(ro->ctx, items, n);
}

/* Frees a chain of held batches. */
static void free_held(struct held *h)
{
    for (struct held *next; h; h = next) {
        next = h->next;
        free(h);
    }
}

/* Hands a chain of held records to the sink (unless something failed);
 * returns the sink's first non-zero value. The chain is left to the caller
 * to keep as spares. */
static int hand_on_held(struct reorder *ro, const struct held *h, int hand_on)
{
    int rc = 0;
    for (; h && hand_on && !rc; h = h->next)
        rc = put_out(ro, h->recs, h->n);
    return rc;
}

/* Moves cur past finished SMs, handing on what each held (lock held on
 * entry and exit). The sink is called without the lock, so the other
 * thread goes on ordering meanwhile; `releasing` makes it hold its records
 * (not write them) until everything held for its SM went out before them,
 * and keeps a second thread out of here until then. */
static void advance(struct reorder *ro)
{
    if (ro->releasing)
        return; /* the thread handing on sees this SM's done flag when it looks again */
    while (ro->cur < ro->nsms) {
        struct held *h = ro->head[ro->cur];
        if (h) {
            size_t bytes = 0;
            for (struct held *k = h; k; k = k->next)
                bytes += k->n * ro->item;
            struct held *last = ro->tail[ro->cur];
            ro->head[ro->cur] = ro->tail[ro->cur] = NULL;
            ro->releasing = 1;
            int hand_on = !ro->rc;
            pthread_mutex_unlock(&ro->mu);
            int rc = hand_on_held(ro, h, hand_on);
            pthread_mutex_lock(&ro->mu);
            last->next = ro->spare; /* the whole chain becomes spares */
            ro->spare = h;
            ro->releasing = 0;
            ro->used -= bytes;
            if (rc && !ro->rc)
                ro->rc = rc;
            pthread_cond_broadcast(&ro->cv); /* room in the reorder memory */
            continue; /* more may have been held meanwhile */
        }
        if (!ro->done[ro->cur])
            break;
        ro->cur++;
    }
    pthread_cond_broadcast(&ro->cv);
}

/* With the lock held: waits until n records of e's SM can go somewhere.
 * 1: straight to the output (the SM is next and nothing of it is held;
 * cur moves past it only when this thread finishes it); 0: into *hp, a
 * batch with room for them, their bytes counted as held; -1 after a
 * failure (ro->rc). */
static int reorder_place(struct sm_emit *e, size_t n, struct held **hp)
{
    struct reorder *ro = e->ro;
    size_t bytes = n * ro->item;
    while (!ro->rc) {
        if (e->sm == ro->cur && !ro->releasing && !ro->head[e->sm])
            return 1;
        if (ro->used + bytes <= ro->budget || ro->used == 0) {
            struct held *h = ro->spare;
            if (h && h->cap >= n) {
                ro->spare = h->next;
            } else {
                size_t cap = n > HELD_MIN_RECS ? n : HELD_MIN_RECS;
                if (!(h = malloc(sizeof *h + cap * ro->item))) {
                    ro->rc = TRACE_SORT_ESYS;
                    ro->failed_sm = e->sm;
                    return -1;
                }
                h->cap = cap;
            }
            h->next = NULL;
            h->n = 0;
            ro->used += bytes;
            *hp = h;
            return 0;
        }
        pthread_cond_wait(&ro->cv, &ro->mu); /* the reorder memory is full: wait for our turn */
    }
    return -1;
}

/* With the lock held: h, placed for `placed` records, holds n of them: it
 * joins the end of its SM's chain, which is handed on if the SM is next. */
static void reorder_hold(struct sm_emit *e, struct held *h, size_t placed, size_t n)
{
    struct reorder *ro = e->ro;
    ro->used -= (placed - n) * ro->item;
    h->n = n;
    *(ro->head[e->sm] ? &ro->tail[e->sm]->next : &ro->head[e->sm]) = h;
    ro->tail[e->sm] = h;
    if (e->sm == ro->cur)
        advance(ro); /* its SM came next while others' records went out: hand them on */
}

/* The sink each SM's loop writes trace_out records to. */
static int reorder_sink(void *c, const struct trace_out *o, size_t n)
{
    struct sm_emit *e = c;
    struct reorder *ro = e->ro;
    struct held *h;
    pthread_mutex_lock(&ro->mu);
    int where = reorder_place(e, n, &h);
    if (where == 1) { /* without the lock: the other thread goes on meanwhile */
        pthread_mutex_unlock(&ro->mu);
        int rc = put_out(ro, o, n);
        pthread_mutex_lock(&ro->mu);
        if (rc && !ro->rc)
            ro->rc = rc;
    } else if (where == 0) {
        memcpy(h->recs, o, n * ro->item);
        reorder_hold(e, h, n, n);
    }
    int rc = ro->rc;
    pthread_mutex_unlock(&ro->mu);
    return rc;
}

/* A batch a room placed that no commit took (the loop stopped on an error,
 * or asks for another room). */
static void sm_unplace(struct sm_emit *e)
{
    struct reorder *ro = e->ro;
    if (!e->h)
        return;
    pthread_mutex_lock(&ro->mu);
    ro->used -= e->placed * ro->item;
    e->h->next = ro->spare;
    ro->spare = e->h;
    e->h = NULL;
    pthread_mutex_unlock(&ro->mu);
}

/* The room each SM's loop encodes into (ro->bin set), as reorder_sink
 * places records: the output's own room while its SM is next and nothing
 * of it is held (nobody else writes to the output until this thread
 * commits), else a held batch, which the commit adds to the SM's chain
 * (the records are encoded once, into the batch, and copied once more
 * when handed on); after a failure, the thread's scratch (dropped). */
static void *sm_room(void *c, size_t *n)
{
    struct sm_emit *e = c;
    struct reorder *ro = e->ro;
    size_t held = *n < HELD_MIN_RECS ? *n : HELD_MIN_RECS; /* a batch's worth at most */
    sm_unplace(e);
    pthread_mutex_lock(&ro->mu);
    int where = reorder_place(e, held, &e->h);
    pthread_mutex_unlock(&ro->mu);
    e->direct = where == 1;
    if (e->direct)
        return ro->bin->room(ro->bin->ctx, n);
    *n = e->placed = held;
    return e->h ? e->h->recs : e->scratch;
}

static int sm_commit(void *c, size_t n)
{
    struct sm_emit *e = c;
    struct reorder *ro = e->ro;
    int rc = e->direct ? ro->bin->commit(ro->bin->ctx, n) : 0;
    pthread_mutex_lock(&ro->mu);
    if (rc && !ro->rc)
        ro->rc = rc;
    if (e->h)
        reorder_hold(e, e->h, e->placed, n);
    e->h = NULL;
    rc = ro->rc;
    pthread_mutex_unlock(&ro->mu);
    return rc;
}


static void *sm_worker(void *arg)
{
    struct reorder *ro = arg;
    struct slot_info *slots = calloc(ro->p->blocks_per_sm, sizeof *slots);
    uint8_t *scratch = ro->bin ? malloc(HELD_MIN_RECS * TRACE_BIN_OUT_BYTES) : NULL;
    for (;;) {
        pthread_mutex_lock(&ro->mu);
        if ((!slots || (ro->bin && !scratch)) && !ro->rc)
            ro->rc = TRACE_SORT_ESYS;
        if (ro->rc || ro->next_sm == ro->nsms) {
            pthread_mutex_unlock(&ro->mu);
            break;
        }
        uint32_t sm = ro->next_sm++;
        pthread_mutex_unlock(&ro->mu);
        struct sm_emit e = {.ro = ro, .sm = sm, .scratch = scratch};
        e.bin = (struct trace_bin_room){.room = sm_room, .commit = sm_commit, .ctx = &e};
        struct trace_emit emit = {.sink = reorder_sink, .ctx = &e, .bin = ro->bin ? &e.bin : NULL};
        int io_failed = 0;
        int rc = sort_one_sm(ro->v, ro->p, ro->o, ro->x, sm, slots, &emit, &ro->sum->sm[sm], &io_failed);
        sm_unplace(&e);
        pthread_mutex_lock(&ro->mu);
        if (rc && !ro->rc) {
            ro->rc = rc;
            ro->failed_sm = sm;
            ro->failed_io = io_failed;
        }
        ro->done[sm] = 1;
        advance(ro);
        pthread_mutex_unlock(&ro->mu);
    }
    slots_free(slots, ro->p->blocks_per_sm);
    free(scratch);
    return NULL;
}

static int sort_sms_parallel(const struct view *v, const struct trace_params *p, const struct trace_sort_opts *o,
                             const struct bindex *x, trace_out_sink sink, void *ctx, struct trace_summary *sum,
                             struct trace_err *err)
{
    struct reorder ro = {.sink = sink, .ctx = ctx, .bin = o->bin,
                         .item = o->bin ? TRACE_BIN_OUT_BYTES : sizeof(struct trace_out), .nsms = p->sms, .v = v, .p = p, .o = o, .x = x, .sum = sum,
                         .budget = o->reorder_bytes ? o->reorder_bytes : TRACE_SORT_REORDER_BYTES,
                         .failed_sm = UINT32_MAX};
    ro.done = calloc(p->sms, 1);
    ro.head = calloc(p->sms, sizeof *ro.head);
    ro.tail = calloc(p->sms, sizeof *ro.tail);
    pthread_t th;
    int rc = 0;
    if (!ro.done || !ro.head || !ro.tail) {
        trace_err_set(err, 0, 0, "out of memory");
        rc = TRACE_SORT_ESYS;
    } else {
        pthread_mutex_init(&ro.mu, NULL);
        pthread_cond_init(&ro.cv, NULL);
        int started = pthread_create(&th, NULL, sm_worker, &ro) == 0; /* else this thread does all */
        sm_worker(&ro);
        if (started)
            pthread_join(th, NULL);
        for (uint32_t sm = 0; sm < p->sms; sm++) {
            free_held(ro.head[sm]); /* left only after a failure */
            add_stats(sum, &sum->sm[sm]);
        }
        free_held(ro.spare);
        pthread_mutex_destroy(&ro.mu);
        pthread_cond_destroy(&ro.cv);
        rc = ro.rc;
        if (rc == TRACE_SORT_ESYS)
            sm_failure(ro.failed_io, ro.failed_sm, err);
    }
    free(ro.done);
    free(ro.head);
    free(ro.tail);
    return rc;
}

static int sort_sms(const struct view *v, const struct trace_params *p, const struct trace_sort_opts *o,
                    const struct bindex *x, trace_out_sink sink, void *ctx, struct trace_summary *sum,
                    struct trace_err *err)
{
    if (o && o->threads >= 2 && !o->reference && p->sms > 1)
        return sort_sms_parallel(v, p, o, x, sink, ctx, sum, err);
    return sort_sms_serial(v, p, o, x, sink, ctx, sum, err);
}

static int summary_init(struct trace_summary *sum, const struct trace_params *p, struct trace_err *err)
{
    memset(sum, 0, sizeof *sum);
    sum->params = *p;
    sum->nsms = p->sms;
    sum->sm = calloc(p->sms, sizeof *sum->sm);
    if (!sum->sm) {
        trace_err_set(err, 0, 0, "out of memory");
        return TRACE_SORT_ESYS;
    }
    return 0;
}

static int sort_view(const struct view *v, const struct trace_params *pin, const struct trace_sort_opts *o,
                     trace_out_sink sink, void *ctx, struct trace_summary *sum, struct trace_err *err)
{
    assert(v && pin && (sink || (o && o->bin)) && sum && err);
    assert(v->recs || v->n == 0);
    struct trace_params p = *pin;
    char msg[200];
    uint32_t *wave = NULL;
    trace_params_resolve(&p, 0);
    if (trace_params_validate(&p, msg, sizeof msg) || trace_deal_placement(&p, &wave, msg, sizeof msg)) {
        memset(sum, 0, sizeof *sum);
        trace_err_set(err, 0, 0, "%s", msg);
        return TRACE_SORT_EINPUT;
    }
    int rc = summary_init(sum, &p, err);
    if (rc) {
        free(wave);
        return rc;
    }
    sum->l1 = o && o->l1;
    struct bindex x = {0};
    rc = blocks_of(v, &p, o, &x.l, err);
    if (rc == 0 && bindex_by_sm(&x, &p, wave)) {
        trace_err_set(err, 0, 0, "out of memory for the block index");
        rc = TRACE_SORT_ESYS;
    }
    if (rc == 0)
        rc = sort_sms(v, &p, o, &x, sink, ctx, sum, err);
    bindex_free(&x);
    free(wave);
    return rc;
}

int trace_sort_records(const struct trace_rec *recs, size_t n, const struct trace_params *p,
                       const struct trace_sort_opts *o, trace_out_sink sink, void *ctx,
                       struct trace_summary *sum, struct trace_err *err)
{
    struct view v = view_of(recs, n, 0, NULL, TRACE_BIN_VERSION);
    return sort_view(&v, p, o, sink, ctx, sum, err);
}

/* ---- files -------------------------------------------------------------- */

static int is_thread_major(const struct trace_bin *b)
{
    int yes = 1;
    uint64_t released = 0;
    for (uint64_t i = 1; i < b->count && yes; i++) {
        yes = b->recs[i].tid >= b->recs[i - 1].tid;
        if (i - released >= SCAN_RELEASE_EVERY) {
            trace_bin_release(b, released, i);
            released = i;
        }
    }
    trace_bin_release(b, released, b->count);
    return yes;
}

int trace_input_from_spool(struct trace_input *in, struct trace_spool *sp,
                           uint32_t threads_per_block, const char *tmpdir, struct trace_err *err)
{
    char path[300];
    int named;
    memset(in, 0, sizeof *in);
    in->bin.fd = -1; /* closing an input that never opened closes nothing */
    int fd = trace_tmp_open(tmpdir, "requests", path, sizeof path, &named);
    int wfd = fd < 0 ? -1 : dup(fd); /* the writer closes its own; fd keeps path valid */
    if (wfd < 0) {
        trace_err_set(err, 0, 0, "temporary file in %s for the thread-major trace: %s",
                      trace_tmpdir(tmpdir), strerror(errno));
        if (fd >= 0)
            close(fd);
        return TRACE_SORT_ESYS;
    }
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    h.threads_per_block = threads_per_block;
    struct trace_bin_writer *w = trace_bin_writer_fd(wfd, 1, &h, err);
    int rc = w && trace_spool_finish(sp, w, err) == 0 ? 0 : TRACE_SORT_ESYS;
    if (w && trace_bin_writer_close(w, rc ? NULL : err) && rc == 0)
        rc = TRACE_SORT_ESYS;
    if (rc == 0 && trace_bin_open(path, &in->bin, err))
        rc = TRACE_SORT_ESYS;
    in->spooled = rc == 0;
    if (named)
        unlink(path);
    close(fd); /* the mapping keeps the file */
    return rc;
}

/* Spools a mapped input that is not thread-major and opens the copy instead. */
static int spool_input(struct trace_input *in, const struct trace_sort_opts *o, struct trace_err *err)
{
    const char *dir = o ? o->tmpdir : NULL;
    uint32_t tpb = in->bin.h.threads_per_block;
    struct trace_spool *sp = trace_spool_new(dir, o ? o->spool_mem : 0, err);
    if (!sp)
        return TRACE_SORT_ESYS;
    int rc = trace_bin_read(&in->bin, trace_spool_add, sp, err);
    trace_bin_close(&in->bin);
    if (rc < 0)
        rc = TRACE_SORT_EINPUT; /* a bad record; err says where */
    else /* rc > 0: the spool failed, and finishing says why */
        rc = trace_input_from_spool(in, sp, tpb, dir, err);
    trace_spool_free(sp);
    return rc;
}

int trace_input_open(struct trace_input *in, const char *path, const struct trace_sort_opts *o,
                     struct trace_err *err)
{
    memset(in, 0, sizeof *in);
    if (trace_bin_open(path, &in->bin, err))
        return TRACE_SORT_EINPUT;
    if (in->bin.h.kind != TRACE_BIN_REQUESTS) {
        trace_err_set(err, 0, 10, "a sorted trace cannot be sorted again: give the requests file");
        trace_bin_close(&in->bin);
        return TRACE_SORT_EINPUT;
    }
    if (in->bin.h.flags & TRACE_BIN_FLAG_THREAD_MAJOR || is_thread_major(&in->bin))
        return 0;
    /* spool needs valid records: report bad ones with their offsets first */
    if (trace_bin_validate(&in->bin, err)) {
        trace_bin_close(&in->bin);
        return TRACE_SORT_EINPUT;
    }
    int rc = spool_input(in, o, err);
    if (rc)
        trace_input_close(in);
    return rc;
}

void trace_input_close(struct trace_input *in)
{
    trace_bin_close(&in->bin);
}

int trace_sort_input(struct trace_input *in, const struct trace_params *p, const struct trace_sort_opts *o,
                     trace_out_sink sink, void *ctx, struct trace_summary *sum, struct trace_err *err)
{
    struct view v = view_of(in->bin.recs, (size_t)in->bin.count, in->bin.h.header_bytes, &in->bin,
                            in->bin.h.version);
    return sort_view(&v, p, o, sink, ctx, sum, err);
}

int trace_sort_file(const char *path, const struct trace_params *p, const struct trace_sort_opts *o,
                    trace_out_sink sink, void *ctx, struct trace_summary *sum, struct trace_err *err)
{
    struct trace_input in;
    memset(sum, 0, sizeof *sum);
    int rc = trace_input_open(&in, path, o, err);
    if (rc)
        return rc;
    struct trace_params q = *p;
    trace_params_resolve(&q, in.bin.h.threads_per_block);
    rc = trace_sort_input(&in, &q, o, sink, ctx, sum, err);
    trace_input_close(&in);
    return rc;
}

/* ---- summary -------------------------------------------------------------- */

void trace_summary_free(struct trace_summary *s)
{
    free(s->sm);
    s->sm = NULL;
    s->nsms = 0;
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

static json_t *sm_json(uint32_t sm, const struct trace_sm_stats *st)
{
    return json_pack("{sI sI sI sI sI sI sI sI sI sI sI sf}", "sm", (json_int_t)sm, "blocks",
                     (json_int_t)st->blocks, "warps", (json_int_t)st->warps, "records_in",
                     (json_int_t)st->records_in, "requests_out", (json_int_t)st->requests_out, "instructions",
                     (json_int_t)st->instructions, "ticks", (json_int_t)st->ticks, "mshr_full_ticks",
                     (json_int_t)st->mshr_stall_ticks, "all_blocked_ticks", (json_int_t)st->idle_ticks,
                     "dependency_waits", (json_int_t)st->dep_blocks, "max_in_flight",
                     (json_int_t)st->max_in_flight, "coalescing_ratio", ratio(st->records_in, st->requests_out));
}

/* With an L1: what became of the requests (the fetches are the rest). */
static json_t *l1_json(uint64_t hits, uint64_t merged, uint64_t out)
{
    return json_pack("{sI sI sI}", "hits", (json_int_t)hits, "merged", (json_int_t)merged, "fetches",
                     (json_int_t)(out - hits - merged));
}

/* An SM's object, with its L1's counts when the ordering consulted one. */
static json_t *sm_entry(const struct trace_summary *s, uint32_t i)
{
    const struct trace_sm_stats *st = &s->sm[i];
    json_t *o = sm_json(i, st);
    if (o && s->l1 &&
        (json_object_set_new(o, "l1_hits", json_integer((json_int_t)st->l1_hits)) ||
         json_object_set_new(o, "l1_merged", json_integer((json_int_t)st->l1_merged)) ||
         json_object_set_new(o, "l1_fetches",
                             json_integer((json_int_t)(st->requests_out - st->l1_hits - st->l1_merged))))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *trace_summary_to_json(const struct trace_summary *s)
{
    json_t *sms = json_array();
    for (uint32_t i = 0; sms && i < s->nsms; i++)
        if (json_array_append_new(sms, sm_entry(s, i))) {
            json_decref(sms);
            return NULL;
        }
    json_t *params = trace_params_to_json(&s->params);
    if (!sms || !params) {
        json_decref(sms);
        json_decref(params);
        return NULL;
    }
    json_t *doc = json_pack("{so sI sI sf sI sI sI sI s{sI sI sI sI} so}", "params", params, "records_in",
                     (json_int_t)s->records_in, "requests_out", (json_int_t)s->requests_out,
                     "coalescing_ratio", ratio(s->records_in, s->requests_out), "instructions",
                     (json_int_t)s->instructions, "blocks", (json_int_t)s->blocks, "warps",
                     (json_int_t)s->warps, "ticks", (json_int_t)s->ticks, "stalls", "mshr_full_ticks",
                     (json_int_t)s->mshr_stall_ticks, "all_blocked_ticks", (json_int_t)s->idle_ticks,
                     "dependency_waits", (json_int_t)s->dep_blocks, "max_in_flight",
                     (json_int_t)s->max_in_flight, "sms", sms);
    if (doc && s->l1 && json_object_set_new(doc, "l1", l1_json(s->l1_hits, s->l1_merged, s->requests_out))) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

void trace_summary_print(const struct trace_summary *s, FILE *f)
{
    const struct trace_params *p = &s->params;
    fprintf(f, "trace sort: %s coalescing, %s scheduling, %s delays (M=%u sigma=%g seed=%" PRIu64 "), %u SMs x %u blocks of %u threads placed %s, line %u, mshr %u\n",
            trace_coalesce_name(p->coalesce), trace_schedule_name(p->schedule), trace_delay_name(p->delay),
            p->lat_min, p->lat_sigma, p->seed, p->sms, p->blocks_per_sm, p->threads_per_block,
            trace_placement_name(p->placement), p->line_bytes, p->mshr);
    fprintf(f, "requests in %" PRIu64 ", out %" PRIu64 " (coalescing ratio %.3f), %" PRIu64 " warp instructions, %" PRIu64 " blocks, %" PRIu64 " warps\n",
            s->records_in, s->requests_out, ratio(s->records_in, s->requests_out), s->instructions, s->blocks,
            s->warps);
    fprintf(f, "ticks %" PRIu64 ": %" PRIu64 " with the MSHRs full, %" PRIu64 " with every warp blocked; %" PRIu64 " dependency waits; at most %" PRIu64 " in flight\n",
            s->ticks, s->mshr_stall_ticks, s->idle_ticks, s->dep_blocks, s->max_in_flight);
    if (s->l1)
        fprintf(f, "L1 during the ordering: %" PRIu64 " hits (%.2f%%), %" PRIu64 " merged into a fetch in flight, %" PRIu64 " fetches\n",
                s->l1_hits, 100 * ratio(s->l1_hits, s->requests_out), s->l1_merged,
                s->requests_out - s->l1_hits - s->l1_merged);
    for (uint32_t i = 0; i < s->nsms; i++) {
        const struct trace_sm_stats *st = &s->sm[i];
        if (!st->blocks)
            continue;
        fprintf(f, "  sm %u: %" PRIu64 " blocks, in %" PRIu64 ", out %" PRIu64 ", ticks %" PRIu64 " (mshr full %" PRIu64 ", all blocked %" PRIu64 ")\n",
                i, st->blocks, st->records_in, st->requests_out, st->ticks, st->mshr_stall_ticks, st->idle_ticks);
    }
}
