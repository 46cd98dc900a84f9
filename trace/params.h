/*
 * Parameters of a trace sort (docs/trace-sort.md): how the trace is read
 * and written (the formats), the machine model (SM count, resident blocks,
 * line size, MSHR capacity), the latency model (T = M + |N(0, sigma)| or
 * fixed T = M), the seed and the policies.
 *
 * DESIGN
 * One struct, filled from defaults, then an architecture preset, then
 * name=value settings. The settings table (trace_setting_at) is the one list
 * of trace settings in gpuprobe: the CLI's --name options and help, the
 * API's query arguments, the trace-sort job kind's schema and the table in
 * docs/trace-sort.md are all derived from it (a unit test holds the last
 * two to it). Every field a setting touches is
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

#include "trace/readfile.h"

struct trace_deal;

enum trace_coalesce { TRACE_COALESCE_LINE128 = 0, TRACE_COALESCE_SECTOR32 = 1 };
enum trace_schedule { TRACE_SCHEDULE_RR = 0, TRACE_SCHEDULE_GTO = 1 };
enum trace_delay { TRACE_DELAY_NORMAL = 0, TRACE_DELAY_FIXED = 1 };
enum trace_placement { TRACE_PLACEMENT_RR = 0, TRACE_PLACEMENT_FILL = 1, TRACE_PLACEMENT_DEALT = 2 };
enum trace_out_format { TRACE_OUT_CSV = 0, TRACE_OUT_BIN = 1 };

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
    TRACE_P_IN_FORMAT = 1u << 14,
    TRACE_P_OUT_FORMAT = 1u << 15,
    TRACE_P_ARCH = 1u << 16,
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
    enum trace_format in_format;  /* how the input is read; AUTO: told from its content */
    enum trace_out_format out_format;
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
    const struct trace_deal *deal; /* placement dealt: the measured order (trace/deal.h), the
                                      caller's; not a setting, never written to a file */
    uint32_t set;                 /* TRACE_P_* bits set explicitly */
};

/* The defaults: Nugteren et al.'s method (HPCA 2014) as written (line128
 * coalescing, round-robin, normal delays) on a Fermi-class machine, i.e. the
 * "fermi" preset; the input's format told from its content, CSV output. */
void trace_params_default(struct trace_params *p);

/* Applies the named preset to every field not in p->set; -1 if the name is
 * unknown (msg says which names exist). */
int trace_params_preset(struct trace_params *p, const char *arch, char *msg, size_t msglen);

/* The preset names, NULL-terminated. */
extern const char *const trace_arch_names[];

/* ---- the settings table ---------------------------------------------- */

enum trace_setting_type {
    TRACE_SETTING_INT,      /* an integer in [min, max] (a power of two where pow2) */
    TRACE_SETTING_U64,      /* any unsigned 64-bit integer, in decimal */
    TRACE_SETTING_NUMBER,   /* a finite number in [min, max] */
    TRACE_SETTING_CHOICE,   /* one of choices */
};

/* One setting as users see it. name is spelt with '_' in JSON and with '-'
 * on the command line and in query arguments (trace_setting_find takes
 * either). */
struct trace_setting {
    const char *name;
    enum trace_setting_type type;
    double min, max;             /* INT, NUMBER */
    int pow2;                    /* INT: must also be a power of two */
    const char *const *choices;  /* CHOICE: NULL-terminated */
    int io;                      /* how the trace is read or written, not the sorter's
                                    model: the only settings `trace convert` takes */
    const char *meaning;         /* one phrase, for help texts and schemas */
    const char *default_text;    /* the default as a phrase ("preset", "256") */
    const char *fixed_default;   /* JSON of a default that never depends on anything
                                    else, or NULL (most follow the preset or the input) */
};

/* How many settings the table holds (a build-time check keeps it true), for
 * tables sized at build time that hold one entry per setting. */
#define TRACE_SETTING_COUNT 17

/* Setting i (0 <= i < TRACE_SETTING_COUNT) of the table, in the order help
 * texts and the docs list them. */
const struct trace_setting *trace_setting_at(size_t i);
/* The setting named name ('-' or '_'), or NULL. */
const struct trace_setting *trace_setting_find(const char *name);

/* Applies one setting given as text. 0, or -1 with the reason, without the
 * setting's name ("must be an integer from 1 to 1024, not 'x'"), in why;
 * p is unchanged then. Range checks that involve one value are done here;
 * the rest in trace_params_validate. */
int trace_setting_apply(struct trace_params *p, const struct trace_setting *s, const char *text,
                        char *why, size_t whylen);

/* The value text gives s, typed as JSON carries it (INT an integer,
 * NUMBER a real, U64 and CHOICE a string); NULL with the reason in why
 * when text is not a value of s (the same reason trace_setting_apply
 * gives). */
json_t *trace_setting_json(const struct trace_setting *s, const char *text, char *why,
                           size_t whylen);

/* The setting's bounds as a phrase for help texts and the docs ("1-1024",
 * "power of two, 32-4096", "line128, sector32", "0 to 2^64-1"). */
void trace_setting_bounds(const struct trace_setting *s, char *buf, size_t len);

/* Sets one field from text by its name ('_' spelling): trace_setting_apply
 * with the reason prefixed by the name ("sms: must be ..."), or "unknown
 * setting 'x'". */
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

/* JSON object with every setting of the sorter by its name (policies as
 * their names; not the formats, which are not the sort's); NULL when out of
 * memory. */
json_t *trace_params_to_json(const struct trace_params *p);

/* Applies an object made by trace_params_to_json, or any subset of the
 * settings (formats too; "arch" first, whatever its position): numbers for
 * numeric settings, strings for choices, integers or strings for the seed.
 * Unknown keys are refused. */
int trace_params_from_json(struct trace_params *p, const json_t *obj, char *msg, size_t msglen);

const char *trace_coalesce_name(enum trace_coalesce c);
const char *trace_schedule_name(enum trace_schedule s);
const char *trace_delay_name(enum trace_delay d);
const char *trace_placement_name(enum trace_placement pl);
const char *trace_out_format_name(enum trace_out_format f);

#endif
