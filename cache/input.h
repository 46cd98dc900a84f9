/*
 * The cache model's input: the sorter's output (the L1 arrival order), a
 * sorted binary file (docs/trace-format.md, kind 2) or its CSV form
 * (sm,seq,tid,pc,addr,width,dep,op, as `trace sort` and `trace convert`
 * write it; without op, as older ones did, every record a load), indexed
 * by SM.
 *
 * DESIGN
 * The model walks every SM's stream at once (the L2 sees the SMs
 * interleaved), so the input is opened, checked and indexed first: one
 * pass finds where each SM's records start and how many there are, and
 * checks the order the sorter promises — SM-major, seq counting 0, 1, 2 ...
 * within each SM — naming the first record that breaks it. A binary file
 * stays mapped and records are decoded in place when asked for
 * (cache_input_release drops the pages already used, so resident memory
 * does not grow with the file); a CSV file is parsed into memory (40 bytes
 * a record: use the binary form for large traces). The run's parameters
 * come with a binary file (its header); a CSV file has none.
 */
#ifndef GPUPROBE_CACHE_INPUT_H
#define GPUPROBE_CACHE_INPUT_H

#include <stdint.h>
#include <string.h>

#include "trace/binfmt.h"
#include "trace/params.h"
#include "trace/record.h"

#define CACHE_INPUT_MAX_SMS TRACE_MAX_SMS /* what the sorter can number: a sorted file of more SMs is not one of its own */

struct cache_input {
    int binary;                  /* 1: a mapped sorted binary file; 0: CSV in memory */
    struct trace_bin bin;
    struct trace_out *recs;      /* CSV: the records */
    uint64_t count;              /* records */
    uint32_t sms;                /* highest SM id + 1 */
    uint64_t *start, *len;       /* per SM: first record, records */
    int has_params;              /* binary: params holds the sort's parameters */
    struct trace_params params;
};

/* Opens path (format told from content: the binary magic, else CSV with the
 * sm,seq,... header), checks and indexes it. 0, or TRACE_EINPUT (err: the
 * line for CSV, the byte offset, why) or TRACE_ENOMEM (memory, or the file
 * cannot be read: err says which). in is empty after a failure. */
int cache_input_open(struct cache_input *in, const char *path, struct trace_err *err);
void cache_input_close(struct cache_input *in);

/* Record i (< len[sm]) of SM sm's stream. */
void cache_input_get(const struct cache_input *in, uint32_t sm, uint64_t i, struct trace_out *o);

/* What the model needs of record i of SM sm: its seq, address, width and
 * store flag (a binary file's fields read in place, without decoding the
 * rest). */
static inline void cache_input_req(const struct cache_input *in, uint32_t sm, uint64_t i, uint64_t *seq,
                                   uint64_t *addr, uint32_t *width, int *store)
{
    uint64_t k = in->start[sm] + i;
    if (!in->binary) {
        *seq = in->recs[k].seq;
        *addr = in->recs[k].addr;
        *width = in->recs[k].width;
        *store = (int)in->recs[k].store;
        return;
    }
    const uint8_t *p = in->bin.data + k * TRACE_BIN_OUT_BYTES;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint16_t w;
    memcpy(seq, p, 8);
    memcpy(addr, p + 24, 8);
    memcpy(&w, p + 36, 2);
    *width = w;
    *store = p[39];
#else
    struct trace_out o;
    trace_bin_out_decode(p, &o);
    *seq = o.seq;
    *addr = o.addr;
    *width = o.width;
    *store = (int)o.store;
#endif
}

/* Drops the pages of SM sm's records before i from memory (binary files;
 * harmless otherwise). */
void cache_input_release(const struct cache_input *in, uint32_t sm, uint64_t i);

#endif
