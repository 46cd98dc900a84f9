/*
 * The binary trace format: header and record codecs, the mapped reader with
 * its checks, and the buffered writer (see binfmt.h and
 * docs/trace-format.md for the layout).
 *
 * DESIGN
 * All multi-byte fields go through put/get helpers that assemble bytes, so
 * the codecs are right on any host; only the in-place view of request
 * records is conditional on a little-endian host (where the file's record
 * layout is the in-memory layout of struct trace_rec, checked below). The
 * (tid, pc, addr) run of a request has one codec; a sorted record is
 * encoded by trace_bin_out_put (binfmt.h, inline: the ordering loop calls
 * it per record). The writer's bytes reach the descriptor through fdio.h.
 */
#include "trace/binfmt.h"

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdio.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_LE 1
_Static_assert(sizeof(struct trace_rec) == TRACE_BIN_REQ_BYTES, "trace_rec is the request record");
_Static_assert(offsetof(struct trace_rec, width) == 24 && offsetof(struct trace_rec, dep) == 28 &&
                   offsetof(struct trace_rec, store) == 29 && offsetof(struct trace_rec, reserved) == 30,
               "trace_rec is the request record");
#else
#define HOST_LE 0
#endif

/* ---- little-endian fields ----------------------------------------------- */

/* ---- header --------------------------------------------------------------- */

void trace_bin_header_init(struct trace_bin_header *h, enum trace_bin_kind kind, const struct trace_params *p)
{
    memset(h, 0, sizeof *h);
    h->kind = kind;
    h->version = TRACE_BIN_VERSION;
    h->header_bytes = TRACE_BIN_HEADER_BYTES;
    h->record_bytes = kind == TRACE_BIN_SORTED ? TRACE_BIN_OUT_BYTES : TRACE_BIN_REQ_BYTES;
    h->count = TRACE_BIN_COUNT_UNKNOWN;
    if (kind == TRACE_BIN_SORTED && p) {
        h->params = *p;
        h->params.set = 0;
        h->params.arch[0] = '\0';
        h->threads_per_block = p->threads_per_block;
    }
}

void trace_bin_header_encode(const struct trace_bin_header *h, uint8_t out[TRACE_BIN_HEADER_BYTES])
{
    memset(out, 0, TRACE_BIN_HEADER_BYTES);
    memcpy(out, TRACE_BIN_MAGIC, 8);
    trace_le_put16(out + 8, (uint16_t)h->version);
    trace_le_put16(out + 10, (uint16_t)h->kind);
    trace_le_put16(out + 12, (uint16_t)h->header_bytes);
    trace_le_put16(out + 14, (uint16_t)h->record_bytes);
    trace_le_put32(out + 16, h->flags);
    trace_le_put32(out + 20, h->threads_per_block);
    trace_le_put64(out + 24, h->count);
    if (h->kind != TRACE_BIN_SORTED)
        return;
    const struct trace_params *p = &h->params;
    trace_le_put32(out + 32, p->blocks_per_sm);
    trace_le_put32(out + 36, p->sms);
    trace_le_put32(out + 40, p->line_bytes);
    trace_le_put32(out + 44, p->mshr);
    trace_le_put32(out + 48, p->lat_min);
    out[52] = (uint8_t)p->coalesce;
    out[53] = (uint8_t)p->schedule;
    out[54] = (uint8_t)p->delay;
    out[55] = (uint8_t)p->placement;
    uint64_t sigma;
    memcpy(&sigma, &p->lat_sigma, sizeof sigma);
    trace_le_put64(out + 56, sigma);
    trace_le_put64(out + 64, p->seed);
    trace_le_put64(out + 72, h->input_records);
}

static void decode_params(const uint8_t *buf, struct trace_bin_header *h)
{
    struct trace_params *p = &h->params;
    trace_params_default(p);
    p->arch[0] = '\0';
    p->set = 0;
    p->threads_per_block = h->threads_per_block;
    p->blocks_per_sm = trace_le_get32(buf + 32);
    p->sms = trace_le_get32(buf + 36);
    p->line_bytes = trace_le_get32(buf + 40);
    p->mshr = trace_le_get32(buf + 44);
    p->lat_min = trace_le_get32(buf + 48);
    p->coalesce = (enum trace_coalesce)buf[52];
    p->schedule = (enum trace_schedule)buf[53];
    p->delay = (enum trace_delay)buf[54];
    p->placement = (enum trace_placement)buf[55];
    uint64_t sigma = trace_le_get64(buf + 56);
    memcpy(&p->lat_sigma, &sigma, sizeof sigma);
    p->seed = trace_le_get64(buf + 64);
    h->input_records = trace_le_get64(buf + 72);
}

int trace_bin_header_decode(const uint8_t *buf, size_t len, struct trace_bin_header *h, struct trace_err *err)
{
    memset(h, 0, sizeof *h);
    if (len < 16 || memcmp(buf, TRACE_BIN_MAGIC, 8) != 0) {
        trace_err_set(err, 0, 0, "not a gpuprobe binary trace (no GPTRACE magic at byte 0)");
        return -1;
    }
    h->version = trace_le_get16(buf + 8);
    h->kind = (enum trace_bin_kind)trace_le_get16(buf + 10);
    h->header_bytes = trace_le_get16(buf + 12);
    h->record_bytes = trace_le_get16(buf + 14);
    if (h->version == 0 || h->version > TRACE_BIN_VERSION) {
        trace_err_set(err, 0, 8, "format version %u is not one this gpuprobe reads (1, 2)", h->version);
        return -1;
    }
    if (h->kind != TRACE_BIN_REQUESTS && h->kind != TRACE_BIN_SORTED) {
        trace_err_set(err, 0, 10, "unknown record kind %u (1: requests, 2: sorted)", (unsigned)h->kind);
        return -1;
    }
    if (h->header_bytes < TRACE_BIN_HEADER_BYTES || h->header_bytes % 8) {
        trace_err_set(err, 0, 12, "header size %u is not a multiple of 8 from 128", h->header_bytes);
        return -1;
    }
    if (len < h->header_bytes) {
        trace_err_set(err, 0, len, "file ends inside the %u-byte header", h->header_bytes);
        return -1;
    }
    uint32_t want = h->kind == TRACE_BIN_SORTED ? TRACE_BIN_OUT_BYTES : TRACE_BIN_REQ_BYTES;
    if (h->record_bytes != want) {
        trace_err_set(err, 0, 14, "record size %u does not match the record kind (%u)", h->record_bytes, want);
        return -1;
    }
    h->flags = trace_le_get32(buf + 16);
    uint32_t known = h->kind == TRACE_BIN_REQUESTS ? TRACE_BIN_FLAG_THREAD_MAJOR : 0;
    if (h->flags & ~known) {
        trace_err_set(err, 0, 16, "unknown flags 0x%x", h->flags & ~known);
        return -1;
    }
    h->threads_per_block = trace_le_get32(buf + 20);
    h->count = trace_le_get64(buf + 24);
    if (h->kind == TRACE_BIN_SORTED) {
        decode_params(buf, h);
        char msg[200];
        if (trace_params_validate(&h->params, msg, sizeof msg)) {
            trace_err_set(err, 0, 20, "header parameters: %s", msg);
            return -1;
        }
    }
    return 0;
}

/* ---- records ---------------------------------------------------------------- */

/* Both record kinds carry the request as tid, pc, addr: three u64 in a row
 * (at byte 0 of a request record, at byte 8 of a sorted one, after seq). */
static void put_request(uint8_t *p, uint64_t tid, uint64_t pc, uint64_t addr)
{
    trace_le_put64(p, tid);
    trace_le_put64(p + 8, pc);
    trace_le_put64(p + 16, addr);
}

static void get_request(const uint8_t *p, uint64_t *tid, uint64_t *pc, uint64_t *addr)
{
    *tid = trace_le_get64(p);
    *pc = trace_le_get64(p + 8);
    *addr = trace_le_get64(p + 16);
}

/* Bytes 28-31 of a request: dep, store, two reserved zero bytes. A
 * version-1 file held dep there as a 32-bit 0 or 1, which is the same bytes
 * with store 0: old files read as loads. */
void trace_bin_req_encode(const struct trace_rec *r, uint8_t out[TRACE_BIN_REQ_BYTES])
{
    put_request(out, r->tid, r->pc, r->addr);
    trace_le_put32(out + 24, r->width);
    out[28] = r->dep;
    out[29] = r->store;
    trace_le_put16(out + 30, r->reserved);
}

void trace_bin_req_decode(const uint8_t *in, struct trace_rec *r)
{
    get_request(in, &r->tid, &r->pc, &r->addr);
    r->width = trace_le_get32(in + 24);
    r->dep = in[28];
    r->store = in[29];
    r->reserved = trace_le_get16(in + 30);
}

void trace_bin_out_encode(const struct trace_out *o, uint8_t out[TRACE_BIN_OUT_BYTES])
{
    trace_bin_out_put(out, o->seq, o->tid, o->pc, o->addr, o->sm, o->width, o->dep, o->store);
}

void trace_bin_out_encode_n(const struct trace_out *o, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++)
        trace_bin_out_encode(&o[i], out + i * TRACE_BIN_OUT_BYTES);
}

int trace_bin_room_sink(void *room, const struct trace_out *o, size_t n)
{
    const struct trace_bin_room *r = room;
    while (n) {
        size_t k = n;
        uint8_t *at = r->room(r->ctx, &k);
        trace_bin_out_encode_n(o, k, at);
        int rc = r->commit(r->ctx, k);
        if (rc)
            return rc;
        o += k;
        n -= k;
    }
    return 0;
}

int trace_bin_room_copy(const struct trace_bin_room *r, const uint8_t *bytes, size_t n)
{
    while (n) {
        size_t k = n;
        uint8_t *at = r->room(r->ctx, &k);
        memcpy(at, bytes, k * TRACE_BIN_OUT_BYTES);
        int rc = r->commit(r->ctx, k);
        if (rc)
            return rc;
        bytes += k * TRACE_BIN_OUT_BYTES;
        n -= k;
    }
    return 0;
}

void trace_bin_out_decode(const uint8_t *in, struct trace_out *o)
{
    trace_bin_out_get(in, o);
}

int trace_bin_req_check(const struct trace_rec *r, uint32_t version, char *msg, size_t msglen)
{
    if (!trace_width_valid(r->width)) {
        snprintf(msg, msglen, "width %" PRIu32 " is not 1, 2, 4, 8 or 16", r->width);
        return -1;
    }
    if (r->dep > 1) {
        snprintf(msg, msglen, "dependency flag %u is not 0 or 1", (unsigned)r->dep);
        return -1;
    }
    if (r->store > trace_bin_store_max(version) || r->reserved) {
        if (r->reserved || version >= 2)
            snprintf(msg, msglen, "store flag %u is not 0 or 1, or reserved bytes 30-31 are not 0",
                     (unsigned)r->store);
        else
            snprintf(msg, msglen, "byte 29 is %u: a version-1 file has no store flag and keeps it 0",
                     (unsigned)r->store);
        return -1;
    }
    if (!trace_span_fits(r->addr, r->width)) {
        snprintf(msg, msglen, "address 0x%" PRIx64 " + width %" PRIu32 " passes 2^64", r->addr,
                 r->width);
        return -1;
    }
    return 0;
}

/* ---- reader ------------------------------------------------------------------ */

static int check_size(struct trace_bin *b, uint64_t size, struct trace_err *err)
{
    uint64_t body = size - b->h.header_bytes, rb = b->h.record_bytes;
    uint64_t whole = body / rb;
    if (b->h.count == TRACE_BIN_COUNT_UNKNOWN) {
        if (body % rb) {
            trace_err_set(err, 0, b->h.header_bytes + whole * rb, "file ends inside record %" PRIu64, whole);
            return -1;
        }
        b->count = whole;
        return 0;
    }
    if (b->h.count > whole || (b->h.count == whole && body % rb)) {
        uint64_t at = b->h.header_bytes + whole * rb;
        trace_err_set(err, 0, at, "truncated: the header announces %" PRIu64 " records, the file ends inside record %" PRIu64,
             b->h.count, whole);
        return -1;
    }
    if (b->h.count < whole || body % rb) {
        trace_err_set(err, 0, b->h.header_bytes + b->h.count * rb,
             "%" PRIu64 " bytes after the %" PRIu64 " records the header announces", body - b->h.count * rb,
             b->h.count);
        return -1;
    }
    b->count = whole;
    return 0;
}

static int decode_copy(struct trace_bin *b, struct trace_err *err)
{
    if (b->count > SIZE_MAX / sizeof(struct trace_rec)) {
        trace_err_set(err, 0, 0, "trace too large for this host");
        return -1;
    }
    b->owned = malloc(b->count ? b->count * sizeof *b->owned : 1);
    if (!b->owned) {
        trace_err_set(err, 0, 0, "out of memory decoding %" PRIu64 " records", b->count);
        return -1;
    }
    for (uint64_t i = 0; i < b->count; i++)
        trace_bin_req_decode(b->data + i * TRACE_BIN_REQ_BYTES, &b->owned[i]);
    b->recs = b->owned;
    return 0;
}

int trace_bin_open(const char *path, struct trace_bin *b, struct trace_err *err)
{
    memset(b, 0, sizeof *b);
    b->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (b->fd < 0) {
        trace_err_set(err, 0, 0, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(b->fd, &sb) || !S_ISREG(sb.st_mode)) {
        trace_err_set(err, 0, 0, "%s: not a regular file", path);
        goto bad;
    }
    if (sb.st_size < 16) {
        trace_err_set(err, 0, 0, "not a gpuprobe binary trace (%lld bytes)", (long long)sb.st_size);
        goto bad;
    }
    b->map_len = (size_t)sb.st_size;
    b->map = mmap(NULL, b->map_len, PROT_READ, MAP_PRIVATE, b->fd, 0);
    if (b->map == MAP_FAILED) {
        b->map = NULL;
        trace_err_set(err, 0, 0, "%s: mmap: %s", path, strerror(errno));
        goto bad;
    }
    if (trace_bin_header_decode(b->map, b->map_len, &b->h, err) || check_size(b, (uint64_t)sb.st_size, err))
        goto bad;
    b->data = (const uint8_t *)b->map + b->h.header_bytes;
    if (b->h.kind == TRACE_BIN_REQUESTS) {
        if (HOST_LE)
            b->recs = (const struct trace_rec *)(const void *)b->data;
        else if (decode_copy(b, err))
            goto bad;
    }
    return 0;
bad:
    trace_bin_close(b);
    return -1;
}

void trace_bin_close(struct trace_bin *b)
{
    if (b->map)
        munmap(b->map, b->map_len);
    if (b->fd >= 0)
        close(b->fd);
    free(b->owned);
    memset(b, 0, sizeof *b);
    b->fd = -1;
}

/* Sequential passes drop what they have read every 8 MiB of records. */
static void release_behind(const struct trace_bin *b, uint64_t i)
{
    const uint64_t every = (uint64_t)1 << 18;
    if (i && i % every == 0)
        trace_bin_release(b, i - every, i);
}

static int validate_requests(const struct trace_bin *b, struct trace_err *err)
{
    int ordered = (b->h.flags & TRACE_BIN_FLAG_THREAD_MAJOR) != 0;
    uint64_t prev = 0;
    for (uint64_t i = 0; i < b->count; i++) {
        const struct trace_rec *r = &b->recs[i];
        uint64_t at = b->h.header_bytes + i * TRACE_BIN_REQ_BYTES;
        char m[200];
        if (trace_bin_req_check(r, b->h.version, m, sizeof m)) {
            trace_err_set(err, 0, at, "record %" PRIu64 ": %.200s", i, m);
            return -1;
        }
        if (ordered && r->tid < prev) {
            trace_err_set(err, 0, at, "record %" PRIu64 ": thread %" PRIu64 " after thread %" PRIu64
                 " in a file marked thread-major", i, r->tid, prev);
            return -1;
        }
        prev = r->tid;
        release_behind(b, i);
    }
    return 0;
}

int trace_bin_out_check(const struct trace_bin *b, uint64_t i, const struct trace_out *o, struct trace_err *err)
{
    if (trace_bin_out_valid(o, b->h.params.sms, b->h.version))
        return 0;
    trace_err_set(err, 0, b->h.header_bytes + i * TRACE_BIN_OUT_BYTES,
         "record %" PRIu64 ": sm %" PRIu32 ", width %" PRIu32 ", dep %" PRIu32 ", store %" PRIu32
         " out of range (%" PRIu32 " SMs; address 0x%" PRIx64 "%s)", i, o->sm, o->width, o->dep, o->store,
         b->h.params.sms, o->addr, b->h.version < 2 ? "; a version-1 file has no stores" : "");
    return -1;
}

static int validate_sorted(const struct trace_bin *b, struct trace_err *err)
{
    for (uint64_t i = 0; i < b->count; i++) {
        struct trace_out o;
        trace_bin_out_decode(b->data + i * TRACE_BIN_OUT_BYTES, &o);
        if (trace_bin_out_check(b, i, &o, err))
            return -1;
        release_behind(b, i);
    }
    return 0;
}

int trace_bin_validate(const struct trace_bin *b, struct trace_err *err)
{
    return b->h.kind == TRACE_BIN_REQUESTS ? validate_requests(b, err) : validate_sorted(b, err);
}

int trace_bin_read(const struct trace_bin *b, trace_sink sink, void *ctx, struct trace_err *err)
{
    if (b->h.kind != TRACE_BIN_REQUESTS) {
        trace_err_set(err, 0, 10, "not a requests file");
        return -1;
    }
    for (uint64_t i = 0; i < b->count; i++) {
        char m[200];
        if (trace_bin_req_check(&b->recs[i], b->h.version, m, sizeof m)) {
            trace_err_set(err, 0, b->h.header_bytes + i * TRACE_BIN_REQ_BYTES, "record %" PRIu64 ": %.200s", i, m);
            return -1;
        }
        int rc = sink(ctx, &b->recs[i]);
        if (rc)
            return rc;
        release_behind(b, i);
    }
    return 0;
}

void trace_bin_get_out(const struct trace_bin *b, uint64_t i, struct trace_out *o)
{
    assert(b->h.kind == TRACE_BIN_SORTED && i < b->count);
    trace_bin_out_decode(b->data + i * TRACE_BIN_OUT_BYTES, o);
}

int trace_bin_read_out(const struct trace_bin *b, trace_out_sink sink, void *ctx, struct trace_err *err)
{
    if (b->h.kind != TRACE_BIN_SORTED) {
        trace_err_set(err, 0, 10, "not a sorted file");
        return -1;
    }
    struct trace_out batch[256];
    size_t n = 0;
    for (uint64_t i = 0; i < b->count; i++) {
        struct trace_out *o = &batch[n++];
        trace_bin_get_out(b, i, o);
        if (trace_bin_out_check(b, i, o, err))
            return -1;
        if (n == sizeof batch / sizeof batch[0] || i + 1 == b->count) {
            int rc = sink(ctx, batch, n);
            if (rc)
                return rc;
            n = 0;
        }
        release_behind(b, i);
    }
    return 0;
}

#define RELEASE_WINDOW ((uintptr_t)2 << 20)

static void release_range(const struct trace_bin *b, uintptr_t lo, uintptr_t hi)
{
    uintptr_t base = (uintptr_t)b->map;
    if (lo < base)
        lo = base;
    if (hi > base + b->map_len)
        hi = base + b->map_len;
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void trace_bin_release(const struct trace_bin *b, uint64_t first, uint64_t end)
{
    if (!b || !b->map || b->owned || first >= end)
        return;
    uintptr_t lo = (uintptr_t)(b->data + first * b->h.record_bytes);
    uintptr_t hi = (uintptr_t)(b->data + end * b->h.record_bytes);
    lo &= ~(RELEASE_WINDOW - 1);
    hi = (hi + RELEASE_WINDOW - 1) & ~(RELEASE_WINDOW - 1);
    release_range(b, lo, hi);
}

/* ---- writer ------------------------------------------------------------------ */

#define WBUF (1u << 20)

struct trace_bin_writer {
    int fd, own_fd, failed;
    off_t start;        /* where the header is; -1 when fd cannot seek */
    struct trace_bin_header h;
    uint64_t count, last_tid;
    int thread_major;
    size_t used;
    char msg[160];
    uint8_t buf[WBUF];
};

/* Writes len bytes from p as they are; 0, or -1 with the writer failed. */
static int wraw(struct trace_bin_writer *w, const void *p, size_t len)
{
    if (fd_write_all(w->fd, p, len, FD_CURRENT) == 0)
        return 0;
    w->failed = 1;
    snprintf(w->msg, sizeof w->msg, "write: %s", strerror(errno));
    return -1;
}

static int wflush(struct trace_bin_writer *w)
{
    if (w->failed)
        return -1;
    if (w->used && wraw(w, w->buf, w->used))
        return -1;
    w->used = 0;
    return 0;
}

struct trace_bin_writer *trace_bin_writer_fd(int fd, int own_fd, const struct trace_bin_header *h,
                                             struct trace_err *err)
{
    struct trace_bin_writer *w = malloc(sizeof *w);
    if (!w) {
        trace_err_set(err, 0, 0, "out of memory");
        if (own_fd)
            close(fd);
        return NULL;
    }
    memset(w, 0, offsetof(struct trace_bin_writer, buf));
    w->fd = fd;
    w->own_fd = own_fd;
    w->h = *h;
    w->h.version = TRACE_BIN_VERSION; /* the records are written in this version's layout */
    w->h.count = TRACE_BIN_COUNT_UNKNOWN;
    w->h.flags &= ~TRACE_BIN_FLAG_THREAD_MAJOR;
    w->thread_major = 1;
    w->start = lseek(fd, 0, SEEK_CUR);
    trace_bin_header_encode(&w->h, w->buf);
    w->used = TRACE_BIN_HEADER_BYTES;
    return w;
}

struct trace_bin_writer *trace_bin_writer_open(const char *path, const struct trace_bin_header *h,
                                               struct trace_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        trace_err_set(err, 0, 0, "%s: %s", path, strerror(errno));
        return NULL;
    }
    return trace_bin_writer_fd(fd, 1, h, err);
}

/* Whether records r[0..n) keep w's thread-major order; w's last thread
 * moves to theirs. */
static void note_order(struct trace_bin_writer *w, const struct trace_rec *r, size_t n)
{
    uint64_t last = w->last_tid;
    int major = w->thread_major;
    for (size_t i = 0; i < n; i++) {
        major &= r[i].tid >= last;
        last = r[i].tid;
    }
    w->last_tid = last;
    w->thread_major = major;
}

int trace_bin_write_recs(struct trace_bin_writer *w, const struct trace_rec *r, size_t n)
{
    assert(w && (r || n == 0) && w->h.kind == TRACE_BIN_REQUESTS);
    if (HOST_LE && n * TRACE_BIN_REQ_BYTES >= WBUF / 4) {
        /* a large batch (a parsed CSV chunk) is its own encoding: written
         * from where it is instead of copied through the buffer, a copy
         * on the thread whose turn holds up the other's */
        if (wflush(w))
            return 1;
        note_order(w, r, n);
        if (wraw(w, r, n * TRACE_BIN_REQ_BYTES))
            return 1;
        w->count += n;
        return 0;
    }
    while (n) {
        if (w->used + TRACE_BIN_REQ_BYTES > WBUF && wflush(w))
            return 1;
        if (w->failed)
            return 1;
        /* as many as the buffer holds, in one loop: a call per record
         * was a sixth of a CSV copy's hand-on */
        size_t room = (WBUF - w->used) / TRACE_BIN_REQ_BYTES, k = n < room ? n : room;
        uint8_t *out = w->buf + w->used;
        for (size_t i = 0; i < k; i++)
            trace_bin_req_encode(&r[i], out + i * TRACE_BIN_REQ_BYTES);
        note_order(w, r, k);
        w->used += k * TRACE_BIN_REQ_BYTES;
        w->count += k;
        r += k;
        n -= k;
    }
    return 0;
}

int trace_bin_write_rec(void *ctx, const struct trace_rec *r)
{
    return trace_bin_write_recs(ctx, r, 1);
}

int trace_bin_write_out(void *ctx, const struct trace_out *o, size_t n)
{
    struct trace_bin_writer *w = ctx;
    assert(w && (o || n == 0) && w->h.kind == TRACE_BIN_SORTED);
    for (size_t i = 0; i < n; i++) {
        if (w->used + TRACE_BIN_OUT_BYTES > WBUF && wflush(w))
            return 1;
        if (w->failed)
            return 1;
        trace_bin_out_encode(&o[i], w->buf + w->used);
        w->used += TRACE_BIN_OUT_BYTES;
    }
    w->count += n;
    return 0;
}

int trace_bin_write_encoded(struct trace_bin_writer *w, const uint8_t *bytes, size_t n)
{
    assert(w && (bytes || n == 0) && w->h.kind == TRACE_BIN_SORTED);
    size_t len = n * TRACE_BIN_OUT_BYTES;
    if (w->failed)
        return 1;
    if (len < WBUF / 8 && w->used + len <= WBUF) { /* a few records: with the buffer's */
        memcpy(w->buf + w->used, bytes, len);
        w->used += len;
    } else { /* a queue's buffer: what the buffer holds (the header), then these in place */
        if (wflush(w) || wraw(w, bytes, len))
            return 1;
    }
    w->count += n;
    return 0;
}

void trace_bin_writer_set_input(struct trace_bin_writer *w, uint64_t input_records)
{
    w->h.input_records = input_records;
}

void trace_bin_writer_set_threads_per_block(struct trace_bin_writer *w, uint32_t tpb)
{
    w->h.threads_per_block = tpb;
}

int trace_bin_writer_close(struct trace_bin_writer *w, struct trace_err *err)
{
    int rc = wflush(w);
    if (rc == 0 && w->start >= 0) {
        w->h.count = w->count;
        if (w->h.kind == TRACE_BIN_REQUESTS && w->thread_major)
            w->h.flags |= TRACE_BIN_FLAG_THREAD_MAJOR;
        uint8_t hdr[TRACE_BIN_HEADER_BYTES];
        trace_bin_header_encode(&w->h, hdr);
        if (fd_write_all(w->fd, hdr, sizeof hdr, w->start)) {
            snprintf(w->msg, sizeof w->msg, "writing the header: %s", strerror(errno));
            rc = -1;
        }
    }
    if (w->own_fd && close(w->fd) && rc == 0) {
        snprintf(w->msg, sizeof w->msg, "close: %s", strerror(errno));
        rc = -1;
    }
    if (rc)
        trace_err_set(err, 0, 0, "%s", w->msg);
    free(w);
    return rc;
}
