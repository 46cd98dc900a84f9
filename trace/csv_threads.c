/*
 * The CSV reader on several threads: trace_csv_read_fd_batch (csv.h).
 *
 * DESIGN
 * The file is read in chunks, in turn (under the lock: a chunk is the
 * text up to its last LF, the rest carried to the front of the next one,
 * as trace_csv_read_fd cuts them), and each chunk is parsed by the thread
 * that read it, without the lock, into that thread's array of records. The
 * chunks are handed on in file order: a thread whose chunk is parsed waits
 * for its turn (the chunks before it handed on), then runs the
 * one-flag-per-PC checks on its records with the tables of the whole file
 * (csv_reader.h), calls the sink with them, and passes the turn. So the
 * checks see the records in file order as the reader of one thread does,
 * and the sink is called by one thread at a time. Line numbers are known
 * only at the turn (the lines of the chunks before): a chunk's parse
 * errors carry their line within the chunk, fixed up when reported; an
 * error stops the reading, and the chunks after it are dropped, so the
 * error reported is the first in the file. A failed check is rare: the
 * check is run again with its line's start found (the error's offset).
 * With two threads one parses while the other hands on (writes) its
 * chunk. Memory: per thread, one chunk of text (grown for a long line up
 * to TRACE_CSV_MAX_LINE, as trace_csv_read_fd's) and its records.
 */
#include "trace/csv.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/csv_reader.h"

/* One thread's chunk of the file: its text, read in turn, and the records
 * parsed from it, handed on in turn. */
struct piece {
    char *text;
    size_t cap, len;
    uint64_t base;           /* file offset of text[0] */
    uint64_t seq;            /* its place among the chunks */
    int first;               /* it starts with the header (already checked) */
    struct trace_rec *recs;
    size_t n, reccap;
    int rc;                  /* 0, or what ended its reading or parsing (err) */
    int err_local;           /* err.line counts from the chunk's first line */
    struct trace_err err;
};

struct par {
    int fd;
    const struct trace_csv_opts *o;
    trace_rec_batch_sink sink;
    void *ctx;
    pthread_mutex_t mu;
    pthread_cond_t turn;
    /* reading, under mu: the bytes after the last chunk's last LF, and
     * where the next chunk starts */
    char *carry;
    size_t carry_len, carry_cap, chunk;
    uint64_t next_base, next_seq;
    int read_done, ops;
    /* handing on, in chunk order: under mu, the chunk whose turn it is;
     * the rest is the turn holder's alone */
    uint64_t turn_seq, lines_done;
    int stop, rc;
    struct csv_reader r; /* the flag tables and the checks' line */
    struct trace_err *err;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 1;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * size);
    if (!np)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
}

/* A chunk that ends the reading with an error at its first line. */
static int piece_fail(struct par *P, struct piece *c, int rc, uint64_t local_line, uint64_t offset,
                      const char *what, size_t n)
{
    P->read_done = 1;
    c->rc = rc;
    c->err_local = local_line != 0;
    if (rc == TRACE_EINPUT)
        trace_err_set(&c->err, local_line, offset, "line longer than %zu bytes", n);
    else if (what)
        trace_err_set(&c->err, local_line, offset, "%s", what);
    else
        trace_err_set(&c->err, local_line, offset, "out of memory for a line of %zu bytes", n);
    return 1;
}

/* Under mu: reads the next chunk into c, as trace_csv_read_fd reads its
 * chunks (the text up to the last LF, all of it at the end, a buffer grown
 * for a long line up to TRACE_CSV_MAX_LINE). 1 when c has a chunk to parse
 * (maybe one that only reports an error), 0 when the file is done. */
static int piece_read(struct par *P, struct piece *c)
{
    if (P->read_done || P->stop)
        return 0;
    c->seq = P->next_seq++;
    c->base = P->next_base;
    c->first = c->seq == 0;
    c->rc = c->err_local = 0;
    c->n = c->len = 0;
    if (grow((void **)&c->text, &c->cap, P->carry_len + P->chunk, 1))
        return piece_fail(P, c, TRACE_ENOMEM, 1, c->base, NULL, P->carry_len + P->chunk);
    struct csv_chunks k = {.fd = P->fd, .buf = c->text, .cap = c->cap, .have = P->carry_len, .base = c->base};
    if (P->carry_len)
        memcpy(k.buf, P->carry, P->carry_len);
    P->carry_len = 0;
    long long got;
    int failed;
    do {
        failed = trace_csv_chunk_fill(&k);
        got = failed ? 0 : trace_csv_chunk_cut(&k);
    } while (!failed && got == 0 && !k.eof);
    c->text = k.buf; /* chunk_cut may have grown it */
    c->cap = k.cap;
    c->len = k.have;
    int eof = k.eof;
    if (failed) {
        char why[160];
        snprintf(why, sizeof why, "reading the trace: %s", strerror(errno));
        return piece_fail(P, c, TRACE_ENOMEM, 0, c->base + c->len, why, 0);
    }
    if (got < 0)
        return piece_fail(P, c, got == -1 ? TRACE_EINPUT : TRACE_ENOMEM, 1, c->base, NULL,
                          got == -1 ? TRACE_CSV_MAX_LINE : c->len);
    size_t cut = (size_t)got;
    if (grow((void **)&P->carry, &P->carry_cap, c->len - cut, 1))
        return piece_fail(P, c, TRACE_ENOMEM, 1, c->base, NULL, c->len);
    if (c->len > cut)
        memcpy(P->carry, c->text + cut, c->len - cut);
    P->carry_len = c->len - cut;
    c->len = cut;
    P->next_base += cut;
    P->read_done = eof;
    if (c->first) { /* the other chunks' parsing needs to know the columns */
        struct csv_reader h = {.o = P->o};
        trace_text_init(&h.t, c->text, c->len, &c->err);
        c->rc = trace_csv_reader_header(&h);
        c->err_local = 1;
        P->ops = h.ops;
        P->read_done |= c->rc != 0;
    }
    return 1;
}

static int piece_add(void *ctx, const struct trace_rec *r)
{
    struct piece *c = ctx;
    if (c->n == c->reccap && grow((void **)&c->recs, &c->reccap, c->n + 1, sizeof *c->recs))
        return TRACE_ENOMEM;
    c->recs[c->n++] = *r;
    return 0;
}

/* Outside the lock: the records of c's lines, up to the first bad one. */
static void piece_parse(const struct par *P, struct piece *c)
{
    if (c->rc)
        return;
    struct csv_reader r = {.o = P->o, .ops = P->ops};
    struct trace_cur line;
    trace_text_init(&r.t, "", 0, &c->err);
    trace_text_next_chunk(&r.t, c->text, c->len, c->base);
    if (c->first)
        trace_text_line(&r.t, &line); /* the header */
    c->rc = trace_csv_reader_lines(&r, 0, piece_add, c);
    if (c->rc == TRACE_ENOMEM)
        trace_text_fail(&r.t, TRACE_ENOMEM, "out of memory");
    c->err_local = 1;
}

/* The turn holder's flag checks on c's records, then c's records handed
 * on, then c's own error; P->lines_done moves past c. */
static int piece_hand_on(struct par *P, struct piece *c)
{
    struct csv_reader *r = &P->r;
    r->ops = P->ops; /* set by the first chunk's reading, before any turn */
    uint64_t line0 = P->lines_done + (uint64_t)c->first; /* the line before record 0 */
    size_t n = c->n;
    int rc = 0;
    struct trace_err kept; /* *P->err before a failed check wrote to it */
    if (P->err)
        kept = *P->err;
    for (size_t i = 0; i < n && rc == 0; i++) {
        r->t.line = line0 + i + 1;
        if (trace_csv_reader_check(r, &c->recs[i]) == 0)
            continue;
        /* again with the line's start known (the message's offset): rare */
        struct trace_cur cur;
        trace_text_next_chunk(&r->t, c->text, c->len, c->base);
        for (size_t k = 0; k <= i + (size_t)c->first; k++)
            trace_text_line(&r->t, &cur);
        r->t.line = line0 + i + 1;
        rc = trace_csv_reader_check(r, &c->recs[i]);
        n = i;
    }
    if (n) {
        /* the records before a bad line are handed on before it is
         * reached, as by the reader of one thread: a write that fails
         * ends the reading, not the line */
        int s = P->sink(P->ctx, c->recs, n);
        if (s && rc && P->err)
            *P->err = kept;
        if (s)
            rc = s;
    }
    if (rc == 0 && c->rc) {
        if (c->err_local && c->err.line)
            c->err.line += P->lines_done;
        if (P->err)
            *P->err = c->err;
        rc = c->rc;
    }
    P->lines_done = line0 + c->n;
    return rc;
}

static void *par_worker(void *arg)
{
    struct par *P = arg;
    struct piece c = {.cap = 0};
    pthread_mutex_lock(&P->mu);
    while (piece_read(P, &c)) {
        pthread_mutex_unlock(&P->mu);
        piece_parse(P, &c);
        pthread_mutex_lock(&P->mu);
        while (P->turn_seq != c.seq && !P->stop)
            pthread_cond_wait(&P->turn, &P->mu);
        if (P->stop)
            break;
        pthread_mutex_unlock(&P->mu);
        int rc = piece_hand_on(P, &c);
        pthread_mutex_lock(&P->mu);
        if (rc) {
            P->stop = 1;
            P->rc = rc;
        }
        P->turn_seq++;
        pthread_cond_broadcast(&P->turn);
    }
    pthread_mutex_unlock(&P->mu);
    free(c.text);
    free(c.recs);
    return NULL;
}

int trace_csv_read_fd_batch(int fd, const struct trace_csv_opts *o, trace_rec_batch_sink sink, void *ctx,
                            struct trace_err *err)
{
    struct par P = {.fd = fd, .o = o, .sink = sink, .ctx = ctx, .err = err};
    P.chunk = o && o->chunk_bytes ? o->chunk_bytes : TRACE_CSV_CHUNK;
    P.r.o = o;
    trace_text_init(&P.r.t, "", 0, err);
    trace_pcflags_init(&P.r.seen, o ? o->max_pcs : 0);
    trace_pcflags_init(&P.r.kind, o ? o->max_pcs : 0);
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.turn, NULL);
    int want = o && o->threads > 1 ? o->threads : 1, started = 0;
    pthread_t th[7];
    if (want > 8)
        want = 8;
    while (started < want - 1 && pthread_create(&th[started], NULL, par_worker, &P) == 0)
        started++;
    par_worker(&P);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_cond_destroy(&P.turn);
    pthread_mutex_destroy(&P.mu);
    trace_pcflags_free(&P.r.seen);
    trace_pcflags_free(&P.r.kind);
    free(P.carry);
    return P.rc;
}
