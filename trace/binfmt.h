/*
 * The binary trace format, version 2 (docs/trace-format.md): a 128-byte
 * little-endian header, then fixed-size little-endian records — 32 bytes per
 * request (trace_rec) in a requests file, 40 bytes per sorted request
 * (trace_out) in a sorted file. Version 2 added the store flag (byte 29 of
 * a request, 39 of a sorted record), bytes that version 1 kept zero: a
 * version-1 file reads the same, every record a load (a set byte there is
 * refused as damage: trace_bin_store_max), and a version-1 reader refuses a
 * version-2 file instead of reading its stores as loads.
 *
 * DESIGN
 * Reading maps the file (mmap, read-only) and checks the header and the
 * size up front; records are checked as they are used (the sorter) or all
 * at once (trace_bin_validate), an error naming the byte offset of the
 * first bad record. On a little-endian host a request record has exactly
 * the layout of struct trace_rec, so the sorter reads the mapping in place
 * (no copy, no parse); on a big-endian host trace_bin_open decodes the
 * records into memory instead. trace_bin_release drops the pages of records
 * already used from this process's memory (madvise), which is what keeps
 * the sorter's resident memory flat on traces of many GB.
 * Writing goes through a buffer to a file descriptor (sorted records
 * already encoded elsewhere, a writer queue's buffer, are written from
 * where they are: trace_bin_write_encoded); the header's record
 * count (and, for requests, the thread-major flag, known only at the end)
 * are patched at close when the descriptor can seek, and otherwise left as
 * "unknown" (count UINT64_MAX: read to the end; flag clear).
 */
#ifndef GPUPROBE_TRACE_BINFMT_H
#define GPUPROBE_TRACE_BINFMT_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace/params.h"
#include "trace/record.h"

#define TRACE_BIN_MAGIC "GPTRACE\0"
#define TRACE_BIN_VERSION 2u        /* written; 1 and 2 are read */
#define TRACE_BIN_HEADER_BYTES 128u
#define TRACE_BIN_REQ_BYTES 32u
#define TRACE_BIN_OUT_BYTES 40u
#define TRACE_BIN_COUNT_UNKNOWN UINT64_MAX

enum trace_bin_kind { TRACE_BIN_REQUESTS = 1, TRACE_BIN_SORTED = 2 };

/* Requests file: sorted by thread id, each thread's records in its order. */
#define TRACE_BIN_FLAG_THREAD_MAJOR 1u

struct trace_bin_header {
    enum trace_bin_kind kind;
    uint32_t version;
    uint32_t header_bytes;
    uint32_t record_bytes;
    uint32_t flags;
    uint32_t threads_per_block;    /* requests: of the kernel, 0 if unknown */
    uint64_t count;                /* records, or TRACE_BIN_COUNT_UNKNOWN */
    /* sorted files only (zero in requests files): */
    struct trace_params params;    /* the run's resolved parameters (no `set`, no arch) */
    uint64_t input_records;        /* requests the run read */
};

/* Fills a header for `kind` with record size and version; params copied
 * from p for a sorted file (p may be NULL for a requests file). */
void trace_bin_header_init(struct trace_bin_header *h, enum trace_bin_kind kind, const struct trace_params *p);

/* Encodes h into 128 bytes. */
void trace_bin_header_encode(const struct trace_bin_header *h, uint8_t out[TRACE_BIN_HEADER_BYTES]);
/* Decodes and checks a header from the first len bytes of a file. */
int trace_bin_header_decode(const uint8_t *buf, size_t len, struct trace_bin_header *h, struct trace_err *err);

/* Record codecs (any host byte order). */
void trace_bin_req_encode(const struct trace_rec *r, uint8_t out[TRACE_BIN_REQ_BYTES]);
void trace_bin_req_decode(const uint8_t *in, struct trace_rec *r);
void trace_bin_out_encode(const struct trace_out *o, uint8_t out[TRACE_BIN_OUT_BYTES]);
void trace_bin_out_decode(const uint8_t *in, struct trace_out *o);
/* The largest store flag a file of this version may hold: 1 from version
 * 2 on; 0 in version 1, which kept that byte zero (a version-1 file whose
 * byte is set is damaged, not a file of stores). */
static inline unsigned trace_bin_store_max(uint32_t version)
{
    return version >= 2;
}

/* Whether a sorted record's fields are in range in a file of `sms` SMs and
 * this version: the one rule every reader of sorted files applies (a
 * power-of-two width whose bytes stay below 2^64, flags 0 or 1 — the store
 * flag 0 in version 1 —, an SM of the file). */
static inline int trace_bin_out_valid(const struct trace_out *o, uint32_t sms, uint32_t version)
{
    return o->width && !(o->width & (o->width - 1)) && o->dep <= 1 && o->store <= trace_bin_store_max(version) &&
           o->sm < sms && trace_span_fits(o->addr, o->width);
}

/* Encodes n sorted records into out (n * TRACE_BIN_OUT_BYTES bytes). */
void trace_bin_out_encode_n(const struct trace_out *o, size_t n, uint8_t *out);

/* Little-endian fields, each one store (the converted value copied in one
 * memcpy): the codecs of binfmt.c and the inline encoder below. */
static inline void trace_le_put16(uint8_t *p, uint16_t v)
{
    uint16_t le = htole16(v);
    memcpy(p, &le, sizeof le);
}
static inline void trace_le_put32(uint8_t *p, uint32_t v)
{
    uint32_t le = htole32(v);
    memcpy(p, &le, sizeof le);
}
static inline void trace_le_put64(uint8_t *p, uint64_t v)
{
    uint64_t le = htole64(v);
    memcpy(p, &le, sizeof le);
}

/* Their readers. */
static inline uint16_t trace_le_get16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return le16toh(v);
}
static inline uint32_t trace_le_get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return le32toh(v);
}
static inline uint64_t trace_le_get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return le64toh(v);
}

/* One sorted record's fields, inline: trace_bin_out_decode is this, and
 * the CSV writer of encoded records reads each record with it (a call per
 * record added 5% to the CPU time of a sort written as CSV). */
static inline void trace_bin_out_get(const uint8_t *in, struct trace_out *o)
{
    o->seq = trace_le_get64(in);
    o->tid = trace_le_get64(in + 8);
    o->pc = trace_le_get64(in + 16);
    o->addr = trace_le_get64(in + 24);
    o->sm = trace_le_get32(in + 32);
    o->width = trace_le_get16(in + 36);
    o->dep = in[38];
    o->store = in[39];
}

/* One sorted record from its fields, inline: the ordering loop encodes each
 * transaction with it straight into the output's memory (trace_bin_room),
 * and trace_bin_out_encode is this on a trace_out. */
static inline void trace_bin_out_put(uint8_t *out, uint64_t seq, uint64_t tid, uint64_t pc, uint64_t addr,
                                     uint32_t sm, uint32_t width, uint32_t dep, uint32_t is_store)
{
    trace_le_put64(out, seq);
    trace_le_put64(out + 8, tid);
    trace_le_put64(out + 16, pc);
    trace_le_put64(out + 24, addr);
    trace_le_put32(out + 32, sm);
    trace_le_put16(out + 36, (uint16_t)width);
    out[38] = (uint8_t)dep;
    out[39] = (uint8_t)is_store; /* 0 in version 1: old files read as loads */
}

/* Where sorted records go already encoded (TRACE_BIN_OUT_BYTES each), built
 * in place by the producer, so a record is encoded once, into the memory
 * that is finally written: room(ctx, &n), *n >= 1, returns memory for *n
 * records, lowering *n to what fits (at least 1); it always returns
 * writable memory, even after a failure. commit(ctx, k) hands on the first
 * k (<= granted) records written at the last room; 0, or non-zero to stop
 * (kept: later commits return it). A room not committed is given up by the
 * next room. trace_outq_room and trace_outq_commit are such a pair. */
struct trace_bin_room {
    void *(*room)(void *ctx, size_t *n);
    int (*commit)(void *ctx, size_t n);
    void *ctx;
};

/* A trace_out_sink (ctx: a struct trace_bin_room *): encodes o[0..n) into
 * the room's memory, committing as it goes. */
int trace_bin_room_sink(void *room, const struct trace_out *o, size_t n);
/* Copies n records already encoded into the room. 0 or commit's non-zero. */
int trace_bin_room_copy(const struct trace_bin_room *r, const uint8_t *bytes, size_t n);

/* Checks one request record of a file of this version (TRACE_BIN_VERSION
 * for records of any other source): width, dependency and store flags (0
 * or 1; the store flag 0 in version 1; reserved bytes 0), and that its
 * bytes do not pass the top of the address space. 0, or -1 with the problem
 * in msg. */
int trace_bin_req_check(const struct trace_rec *r, uint32_t version, char *msg, size_t msglen);

/* An open, mapped file. */
struct trace_bin {
    struct trace_bin_header h;
    uint64_t count;                /* records in the file */
    const uint8_t *data;           /* the records' bytes */
    const struct trace_rec *recs;  /* requests files: the records */
    void *map;
    size_t map_len;
    struct trace_rec *owned;       /* decoded copy on big-endian hosts */
    int fd;
};

/* Opens and maps path, checks the header and that the size holds whole
 * records (and the count, when known). 0 or -1 with err. */
int trace_bin_open(const char *path, struct trace_bin *b, struct trace_err *err);
void trace_bin_close(struct trace_bin *b);

/* Checks every record (requests: widths, flags, address range, and thread
 * order when the file says it is thread-major; sorted: widths, flags). */
int trace_bin_validate(const struct trace_bin *b, struct trace_err *err);

/* Hands the records of a requests file to sink in file order. Returns 0,
 * the sink's non-zero value, or -1 with err for a bad record. */
int trace_bin_read(const struct trace_bin *b, trace_sink sink, void *ctx, struct trace_err *err);

/* Checks sorted record i of b, decoded in o (trace_bin_out_valid): 0, or -1
 * with err naming the record, its byte offset and its fields. */
int trace_bin_out_check(const struct trace_bin *b, uint64_t i, const struct trace_out *o, struct trace_err *err);

/* Record i of a sorted file. */
void trace_bin_get_out(const struct trace_bin *b, uint64_t i, struct trace_out *o);

/* Hands the records of a sorted file to sink in file order, in batches
 * (to write them in another format). Returns 0, the sink's non-zero value,
 * or -1 with err for a record out of range. */
int trace_bin_read_out(const struct trace_bin *b, trace_out_sink sink, void *ctx, struct trace_err *err);

/* Drops the pages holding records [first, end) from this process's memory
 * (they stay in the page cache), widened to aligned 2 MiB windows (a page
 * fault maps a whole large folio, up to 2 MiB, so narrower releases leave
 * pages mapped). Harmless to call on records still needed: they are read
 * back in on the next access. */
void trace_bin_release(const struct trace_bin *b, uint64_t first, uint64_t end);

/* Writer. */
struct trace_bin_writer;
/* Takes fd (closed by trace_bin_writer_close when own_fd). NULL with err. */
struct trace_bin_writer *trace_bin_writer_fd(int fd, int own_fd, const struct trace_bin_header *h,
                                             struct trace_err *err);
/* Creates (truncates) path with mode 0644. */
struct trace_bin_writer *trace_bin_writer_open(const char *path, const struct trace_bin_header *h,
                                               struct trace_err *err);
/* A trace_sink: appends one request (ctx is the writer). */
int trace_bin_write_rec(void *w, const struct trace_rec *r);
/* Appends n requests: 0, or 1 when a write failed (the writer says why). */
int trace_bin_write_recs(struct trace_bin_writer *w, const struct trace_rec *r, size_t n);
/* A trace_out_sink: appends sorted records (ctx is the writer). */
int trace_bin_write_out(void *w, const struct trace_out *o, size_t n);
/* Appends n sorted records already encoded (trace_bin_out_encode_n) from
 * bytes: written straight from there, not copied through the writer's
 * buffer. 0, or 1 once writing failed (as trace_bin_write_out). */
int trace_bin_write_encoded(struct trace_bin_writer *w, const uint8_t *bytes, size_t n);
/* Sets input_records in the header written at close (sorted files). */
void trace_bin_writer_set_input(struct trace_bin_writer *w, uint64_t input_records);
/* Sets threads_per_block in the header written at close, for a requests file
 * whose geometry is known only once read (NVBit, Accel-Sim). Only a seekable
 * output gets it: on a pipe the header stays as first written. */
void trace_bin_writer_set_threads_per_block(struct trace_bin_writer *w, uint32_t tpb);
/* Flushes, patches the header where possible, closes; frees w. 0 or -1. */
int trace_bin_writer_close(struct trace_bin_writer *w, struct trace_err *err);

#endif
