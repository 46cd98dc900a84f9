/*
 * The L1 pass's fetches handed from the thread that runs the L1s to the
 * thread that names and spills them (model.c, --threads 2): a
 * single-producer, single-consumer queue of blocks.
 *
 * DESIGN
 * With two threads the L1 pass is a pipeline of two stages: the L1 engines
 * (one SM after the other, as on one thread) and, behind them, what is
 * done with each fetch they send below — its dense id looked up (a hash
 * table of tens of megabytes, lineid.h), its L2 set, its spill record.
 * The stages meet here, in order: the consumer takes the fetches exactly as
 * the producer made them, so the ids are handed out in the one-thread
 * order and the spill files are byte for byte the same. Fetches travel in
 * blocks of 4,096 (96 KiB), a mutex and a condition variable per block
 * handed over, not per fetch; at most 8 blocks wait, so the producer
 * waits when the consumer falls behind and memory stays ~800 KiB.
 */
#ifndef GPUPROBE_CACHE_HANDOFF_H
#define GPUPROBE_CACHE_HANDOFF_H

#include <pthread.h>
#include <stdint.h>

/* One fetch an L1 sends below (or a store it writes through). */
struct cache_l1_out {
    uint64_t line;     /* the line number (address >> line shift) */
    uint64_t seq;      /* the request's seq in its SM's stream */
    uint32_t sectors;
    uint16_t sm;
    uint8_t engine;    /* CACHE_EXACT or CACHE_REUSE: whose L1 sent it */
    uint8_t flags;     /* CACHE_OUT_STORE, CACHE_OUT_HOME1 (homed in partition 1) */
};
#define CACHE_OUT_STORE 1u
#define CACHE_OUT_HOME1 2u

#define CACHE_HANDOFF_BLOCK 4096u
#define CACHE_HANDOFF_BLOCKS 8u

struct cache_handoff {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct cache_l1_out *blk;                  /* [BLOCKS][BLOCK] */
    uint32_t fill[CACHE_HANDOFF_BLOCKS];       /* fetches in each block handed over */
    uint64_t made, taken;                      /* blocks handed over, blocks given back */
    uint32_t used;                             /* producer: fetches in the block it fills */
    int closed;                                /* producer: no more blocks */
    int failed;                                /* consumer: gave up (later fetches are dropped) */
};

/* 0, or -1 out of memory. */
int cache_handoff_init(struct cache_handoff *h);
void cache_handoff_free(struct cache_handoff *h);

/* Producer: the next fetch's place in the block being filled (handed over
 * when full, waiting for room), or NULL when the consumer has failed. */
struct cache_l1_out *cache_handoff_slot(struct cache_handoff *h);
/* Producer: hands over the last block and says there is no more. */
void cache_handoff_close(struct cache_handoff *h);

/* Consumer: the next block handed over and its count in *n, or NULL when
 * the producer has closed and every block is taken. The block is the
 * consumer's until cache_handoff_done. */
const struct cache_l1_out *cache_handoff_take(struct cache_handoff *h, uint32_t *n);
/* Consumer: gives the block taken last back. */
void cache_handoff_done(struct cache_handoff *h);
/* Consumer: stops taking blocks (an error): the producer's next slot is NULL. */
void cache_handoff_fail(struct cache_handoff *h);

#endif
