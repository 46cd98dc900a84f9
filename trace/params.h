/*
 * Parameters of the trace sorter (docs/trace-sort.md): the machine model
 * (SM count, resident blocks, line size, MSHR capacity), the latency model
 * (T = M + |N(0, sigma)| or fixed T = M), the seed and the policies.
 *
 * DESIGN
 * One struct, filled from defaults, then an architecture preset, then
 * name=value settings (the CLI's --name value and the API's query arguments
 * map one to one onto the names below). Every field a setting touches is
 * remembered in `set`, so a preset applied later ("arch" given after other
 * settings) never overrides what the user asked for, and a field left unset
 * can still be taken from the input (threads_per_block from a binary trace's
 * header). blocks_per_sm 0 means "derive": min(the architecture's hardware
 * limit, threads_per_sm / threads_per_block), at least 1.
 * Validation is separate from parsing so a caller can set several values and
 * then get one clear message for the first thing wrong.
 */
#ifndef GPUPROBE_TRACE_PARAMS_H
#define GPUPROBE_TRACE_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum trace_coalesce { TRACE_COALESCE_LINE128 = 0, TRACE_COALESCE_SECTOR32 = 1 };
enum trace_schedule { TRACE_SCHEDULE_RR = 0, TRACE_SCHEDULE_GTO = 1 };
enum trace_delay { TRACE_DELAY_NORMAL = 0, TRACE_DELAY_FIXED = 1 };
enum trace_placement { TRACE_PLACEMENT_RR = 0, TRACE_PLACEMENT_FILL = 1 };

/* Bits of trace_params.set, one per settable field. */
enum {
    TRACE_P_THREADS_PER_BLOCK = 1u << 0,
    TRACE_P_BLOCKS_PER_SM = 1u << 1,
    TRACE_P_THREADS_PER_SM = 1u << 2,
    TRACE_P_SMS = 1u << 3,
    TRACE_P_LINE = 1u << 4,
    TRACE_P_MSHR = 1u << 5,
    TRACE_P_LAT_MIN = 1u << 6,
    TRACE_P_LAT_SIGMA = 1u << 7,
    TRACE_P_SEED = 1u << 8,
    TRACE_P_COALESCE = 1u << 9,
    TRACE_P_SCHEDULE = 1u << 10,
    TRACE_P_DELAY = 1u << 11,
    TRACE_P_PLACEMENT = 1u << 12,
    TRACE_P_MAX_BLOCKS = 1u << 13,
};

/* Bounds checked by trace_params_validate. */
#define TRACE_MAX_THREADS_PER_BLOCK 1024u
#define TRACE_MAX_BLOCKS_PER_SM 64u
#define TRACE_MAX_THREADS_PER_SM 4096u
#define TRACE_MAX_SMS 4096u
#define TRACE_MAX_LINE 4096u
#define TRACE_MAX_MSHR 65536u
#define TRACE_MAX_LAT_MIN 1000000u
#define TRACE_MAX_LAT_SIGMA 1000000.0

struct trace_params {
    char arch[16];                /* preset applied last, "" for none */
    uint32_t threads_per_block;
    uint32_t blocks_per_sm;       /* 0: derive (see above) */
    uint32_t threads_per_sm;      /* hardware limit used to derive blocks_per_sm */
    uint32_t max_blocks_per_sm;   /* hardware limit used to derive blocks_per_sm */
    uint32_t sms;
    uint32_t line_bytes;          /* line128: line size; sector32: the L1 line (sectors are 32 B) */
    uint32_t mshr;                /* in-flight requests per SM before the LSU is busy */
    uint32_t lat_min;             /* M, in issued requests */
    double lat_sigma;             /* sigma of N(0, sigma), in issued requests */
    uint64_t seed;
    enum trace_coalesce coalesce;
    enum trace_schedule schedule;
    enum trace_delay delay;
    enum trace_placement placement;
    uint32_t set;                 /* TRACE_P_* bits set explicitly */
};

/* The defaults: the seed's method as written (line128 coalescing, round-robin,
 * normal delays) on a Fermi-class machine, i.e. the "fermi" preset. */
void trace_params_default(struct trace_params *p);

/* Applies the named preset to every field not in p->set; -1 if the name is
 * unknown (msg says which names exist). */
int trace_params_preset(struct trace_params *p, const char *arch, char *msg, size_t msglen);

/* The preset names, NULL-terminated. */
extern const char *const trace_arch_names[];

/* Sets one field from text: name is one of threads_per_block, blocks_per_sm,
 * threads_per_sm, max_blocks_per_sm, sms, line, mshr, lat_min, lat_sigma,
 * seed, coalesce (line128|sector32), schedule (rr|gto), delay
 * (normal|fixed), placement (rr|fill), arch. 0, or -1 with a message naming
 * the setting. Range checks that involve one value are done here; the rest in
 * trace_params_validate. */
int trace_params_set(struct trace_params *p, const char *name, const char *value,
                     char *msg, size_t msglen);

/* Parses "name=value". */
int trace_params_parse(struct trace_params *p, const char *assignment, char *msg, size_t msglen);

/* Fills the derived fields: threads_per_block from the input when not set
 * explicitly and input_tpb is non-zero, blocks_per_sm when 0. Idempotent. */
void trace_params_resolve(struct trace_params *p, uint32_t input_tpb);

/* 0 when the (resolved) parameters are usable; -1 with the first problem. */
int trace_params_validate(const struct trace_params *p, char *msg, size_t msglen);

/* Warps in one block: ceil(threads_per_block / 32). */
uint32_t trace_params_warps_per_block(const struct trace_params *p);

/* JSON object with every setting by its name (policies as their names);
 * NULL when out of memory. */
json_t *trace_params_to_json(const struct trace_params *p);

/* Applies an object made by trace_params_to_json (or any subset; "arch"
 * first, whatever its position): numbers for numeric settings, strings for
 * policies and arch. Unknown keys are refused. */
int trace_params_from_json(struct trace_params *p, const json_t *obj, char *msg, size_t msglen);

const char *trace_coalesce_name(enum trace_coalesce c);
const char *trace_schedule_name(enum trace_schedule s);
const char *trace_delay_name(enum trace_delay d);
const char *trace_placement_name(enum trace_placement pl);

#endif
