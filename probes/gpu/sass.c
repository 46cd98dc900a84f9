/*
 * SASS codec (see sass.h): field extraction and insertion, the opcode table,
 * clock regions and listings for 128-bit sm_70..sm_90 machine code.
 *
 * DESIGN
 * fields[] is the one description of the bit layout: each entry is a bit
 * position and width in the 128-bit instruction, read by extract() and
 * written by insert(), which share the word/straddle logic so a field
 * reads back exactly what was written. The
 * opcode table is committed data, keyed by the 9-bit operation
 * (opcode bits [8:0]) and sorted for binary search; every entry was seen
 * in cuobjdump's disassembly of the fixtures (sm_90, with sm_80 and sm_75
 * agreeing), where no two mnemonics share a 9-bit operation, and the unit
 * test checks the table against that oracle for every instruction. Entries
 * whose only text in the fixtures carried a modifier note it in a comment.
 *
 * Contracts: a field index comes from enum sass_field in the caller's
 * code, never from input, so one out of range is a programming error and
 * an assert, as is a NULL instruction or text; so is a value that does
 * not fit its field reaching insert(), which would spill into the next
 * field. A value that does not fit is refused by sass_set_field with -1
 * (the patch harness checks edit lists through it); that is the one
 * run-time refusal here.
 */
#include "probes/gpu/sass.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct field_desc {
    const char *name;
    unsigned lo, width;
};

static const struct field_desc fields[SASS_FIELD_COUNT] = {
    [SASS_OPCODE] = {"opcode", 0, 12},
    [SASS_OPCODE_BASE] = {"opcode_base", 0, 9},
    [SASS_FORM] = {"form", 9, 3},
    [SASS_PRED] = {"pred", 12, 3},
    [SASS_PRED_NEG] = {"pred_neg", 15, 1},
    [SASS_RD] = {"rd", 16, 8},
    [SASS_RA] = {"ra", 24, 8},
    [SASS_RB] = {"rb", 32, 8},
    [SASS_RC] = {"rc", 64, 8},
    [SASS_SREG] = {"sreg", 72, 8},
    [SASS_MEM_SEM] = {"mem_sem", 77, 3},
    [SASS_STALL] = {"stall", 105, 4},
    [SASS_YIELD] = {"yield", 109, 1},
    [SASS_WBAR] = {"wbar", 110, 3},
    [SASS_RBAR] = {"rbar", 113, 3},
    [SASS_WAIT] = {"wait", 116, 6},
    [SASS_REUSE] = {"reuse", 122, 4},
};

struct opcode_entry {
    uint16_t base;
    const char *mnemonic;
};

/* Derived from the .sass files of tests/fixtures/cubins and its model/ folder (cuobjdump 13.0;
 * sm_90, sm_80, sm_75), and of the table fixtures (test_sass.c: the distributed-shared-memory,
 * asynchronous-copy and wgmma kernels, whose entries were first read from ptxas's code alone
 * and then confirmed by cuobjdump 13.0's listing of the same cubins on a GPU machine). Two
 * bases of those kernels are left out: each carries two mnemonics (0x1ab ERRBAR and
 * CGAERRBAR, 0x1c7 UCGABAR_ARV and UCGABAR_WAIT) that the 9-bit base cannot tell apart. */
static const struct opcode_entry opcodes[] = {
    {0x002, "MOV"},   {0x005, "CS2R"},  {0x006, "VOTE"},   {0x007, "SEL"},
    {0x008, "FSEL"},  /* capture-validation_saxpy_sfu (the sin range reduction) */
    {0x009, "FMNMX"}, {0x00b, "FSETP"}, {0x00c, "ISETP"},  {0x010, "IADD3"},
    {0x011, "LEA"},   {0x012, "LOP3"},  {0x016, "PRMT"},   {0x019, "SHF"},
    {0x01c, "PLOP3"}, {0x020, "FMUL"},  {0x021, "FADD"},   {0x023, "FFMA"},
    {0x024, "IMAD"},  {0x025, "IMAD"},  /* seen as IMAD.WIDE, IMAD.WIDE.U32 */
    {0x027, "IMAD"},  /* IMAD.SHL.U32 and others: the table fixtures (below) */
    {0x029, "DADD"},  {0x02b, "DFMA"},  {0x02f, "ELECT"},  {0x030, "HADD2"},  {0x031, "HFMA2"},
    {0x035, "HFMA2"}, /* seen as HFMA2.MMA */
    {0x036, "VIADD"}, {0x037, "IMMA"},  {0x03c, "HMMA"},   {0x03e, "F2FP"},  /* IMMA, HMMA, */
    {0x03f, "DMMA"},  /* DMMA: tests/fixtures/cubins/tensor */
    {0x045, "I2FP"},  {0x082, "UMOV"},
    {0x090, "UIADD3"}, {0x091, "ULEA"}, {0x092, "ULOP3"}, {0x097, "UIADD3"},
    {0x099, "USHF"},   /* tests/fixtures/cubins/model/ and the table fixtures */
    {0x0a5, "UIMAD"}, {0x0b9, "ULDC"},
    {0x0bd, "UFLO"},  {0x0bf, "UPOPC"}, {0x0ca, "R2UR"},  {0x100, "FLO"},    {0x101, "BREV"},
    {0x105, "F2I"},   {0x106, "I2F"},   {0x108, "MUFU"},   {0x109, "POPC"},
    {0x110, "F2F"},   {0x112, "I2F"},   /* seen as I2F.F64.U32 */
    {0x118, "NOP"},   {0x119, "S2R"},   {0x11a, "DEPBAR"},
    {0x11d, "BAR"},   {0x141, "BSYNC"}, {0x144, "CALL"},   {0x145, "BSSY"},
    {0x147, "BRA"},   {0x14d, "EXIT"},  {0x150, "RET"},
    {0x180, "LD"},    /* generic; ld.shared::cluster: tests/fixtures/ptx/dsmem_4.sm_90.cubin */
    {0x181, "LDG"},
    {0x182, "LDC"},   {0x183, "LDL"},   {0x184, "LDS"},    {0x186, "STG"},
    {0x187, "STL"},   {0x188, "STS"},   {0x189, "SHFL"},   {0x18c, "ATOMS"},
    {0x18e, "REDG"},  /* red.global (no value back): capture-validation_histogram */
    {0x18f, "CCTL"},  {0x192, "MEMBAR"},
    {0x1a7, "SYNCS"}, /* mbarrier arrive.expect_tx and try_wait.parity */
    {0x1a8, "ATOMG"},
    {0x1ae, "LDGSTS"}, {0x1af, "LDGDEPBAR"}, /* cp.async, its commit_group */
    {0x1b2, "SYNCS"}, /* mbarrier.init (SYNCS.EXCH) */
    {0x1b4, "UTMALDG"}, {0x1ba, "UBLKCP"},  /* cp.async.bulk.tensor, cp.async.bulk */
    {0x1c3, "S2UR"},
    /* wgmma (sm_90a; tests/fixtures/cubins/latency/wgmma_*): WARPGROUP (.ARRIVE for
     * wgmma.fence, .DEPBAR for wait_group), HGMMA (f16, bf16, tf32, A from
     * shared memory or registers), IGMMA (s8), QGMMA (e4m3, e5m2) */
    {0x1c5, "WARPGROUP"}, {0x1c6, "FENCE"}, {0x1f0, "HGMMA"}, {0x1f1, "IGMMA"}, {0x1f3, "QGMMA"},
};
#define N_OPCODES (sizeof opcodes / sizeof opcodes[0])

/* Special registers as cuobjdump names them in the fixtures. */
static const struct {
    unsigned index;
    const char *name;
} sregs[] = {
    {0x00, "SR_LANEID"},  {0x21, "SR_TID.X"},         {0x22, "SR_TID.Y"},
    {0x25, "SR_CTAID.X"}, {0x26, "SR_CTAID.Y"},       {0x39, "SR_LTMASK"},
    {0x50, "SR_CLOCKLO"}, {0x52, "SR_GLOBALTIMERLO"}, {0x88, "SR_CgaCtaId"},
};

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Bits [lo, lo+width) of the 128-bit value hi:lo; width <= 32. */
static unsigned extract(const struct sass_insn *in, unsigned lo, unsigned width)
{
    assert(in != NULL && width >= 1 && width <= 32 && lo + width <= 128);
    uint64_t v;
    if (lo >= 64)
        v = in->hi >> (lo - 64);
    else if (lo + width <= 64)
        v = in->lo >> lo;
    else
        v = in->lo >> lo | in->hi << (64 - lo);
    return (unsigned)(v & ((1ull << width) - 1));
}

/* Sets bits [lo, lo+width) of hi:lo to v (which fits in width bits). */
static void insert(struct sass_insn *in, unsigned lo, unsigned width, uint64_t v)
{
    assert(in != NULL && width >= 1 && width <= 32 && lo + width <= 128);
    assert(v >> width == 0);
    uint64_t mask = (1ull << width) - 1;
    if (lo >= 64) {
        in->hi = (in->hi & ~(mask << (lo - 64))) | v << (lo - 64);
    } else if (lo + width <= 64) {
        in->lo = (in->lo & ~(mask << lo)) | v << lo;
    } else {                         /* straddles the two words */
        in->lo = (in->lo & ~(mask << lo)) | v << lo;
        in->hi = (in->hi & ~(mask >> (64 - lo))) | v >> (64 - lo);
    }
}

static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

/* Every public accessor's field argument passes through here. */
static const struct field_desc *field_of(enum sass_field f)
{
    assert((unsigned)f < SASS_FIELD_COUNT);
    return &fields[f];
}

struct sass_insn sass_decode(const uint8_t *text, size_t off)
{
    assert(text != NULL);
    return (struct sass_insn){rd64(text + off), rd64(text + off + 8), (uint32_t)off};
}

unsigned sass_field(const struct sass_insn *in, enum sass_field f)
{
    const struct field_desc *d = field_of(f);
    return extract(in, d->lo, d->width);
}

int sass_set_field(struct sass_insn *in, enum sass_field f, unsigned value)
{
    const struct field_desc *d = field_of(f);
    assert(in != NULL);
    if ((uint64_t)value >> d->width != 0)
        return -1;
    insert(in, d->lo, d->width, value);
    return 0;
}

struct sass_insn sass_field_mask(enum sass_field f)
{
    const struct field_desc *d = field_of(f);
    struct sass_insn m = {0, 0, 0};
    insert(&m, d->lo, d->width, (1ull << d->width) - 1);
    return m;
}

#define NOP_OPCODE 0x918             /* operation 0x118, operand form 4 */

void sass_make_nop(struct sass_insn *in)
{
    assert(in != NULL);
    struct sass_insn n = {0, 0, in->offset};
    sass_set_field(&n, SASS_OPCODE, NOP_OPCODE);
    sass_set_field(&n, SASS_PRED, SASS_PT);
    sass_set_field(&n, SASS_WBAR, SASS_SCOREBOARD_NONE);
    sass_set_field(&n, SASS_RBAR, SASS_SCOREBOARD_NONE);
    *in = n;
}

void sass_encode(const struct sass_insn *in, uint8_t *text, size_t off)
{
    assert(in != NULL && text != NULL);
    wr64(text + off, in->lo);
    wr64(text + off + 8, in->hi);
}

unsigned sass_field_lo(enum sass_field f) { return field_of(f)->lo; }

unsigned sass_field_width(enum sass_field f) { return field_of(f)->width; }

const char *sass_field_name(enum sass_field f) { return field_of(f)->name; }

static int opcode_cmp(const void *key, const void *elem)
{
    unsigned k = *(const unsigned *)key, e = ((const struct opcode_entry *)elem)->base;
    return k < e ? -1 : k > e;
}

static const struct opcode_entry *lookup(const struct sass_insn *in)
{
    unsigned base = sass_field(in, SASS_OPCODE_BASE);
    return bsearch(&base, opcodes, N_OPCODES, sizeof opcodes[0], opcode_cmp);
}

const char *sass_mnemonic(const struct sass_insn *in, char buf[SASS_MNEMONIC_MAX])
{
    assert(buf != NULL);
    const struct opcode_entry *e = lookup(in);
    if (e)
        return e->mnemonic;
    snprintf(buf, SASS_MNEMONIC_MAX, "?0x%03x", sass_field(in, SASS_OPCODE));
    return buf;
}

int sass_opcode_known(const struct sass_insn *in) { return lookup(in) != NULL; }

size_t sass_opcode_table_size(void) { return N_OPCODES; }

void sass_opcode_table_entry(size_t i, unsigned *base, const char **mnemonic)
{
    *base = i < N_OPCODES ? opcodes[i].base : 0;
    *mnemonic = i < N_OPCODES ? opcodes[i].mnemonic : NULL;
}

const char *sass_sreg_name(unsigned sreg)
{
    for (size_t i = 0; i < sizeof sregs / sizeof sregs[0]; i++)
        if (sregs[i].index == sreg)
            return sregs[i].name;
    return NULL;
}

/* ---- iteration and regions ---------------------------------------------- */

void sass_iter_init(struct sass_iter *it, const uint8_t *text, size_t size)
{
    assert(it != NULL);
    *it = (struct sass_iter){text, text ? size : 0, 0};
}

int sass_iter_next(struct sass_iter *it, struct sass_insn *out)
{
    if (it->size - it->pos < SASS_INSN_BYTES)
        return 0;
    *out = sass_decode(it->text, it->pos);
    it->pos += SASS_INSN_BYTES;
    return 1;
}

size_t sass_count(size_t text_size, size_t *trailing_bytes)
{
    if (trailing_bytes)
        *trailing_bytes = text_size % SASS_INSN_BYTES;
    return text_size / SASS_INSN_BYTES;
}

int sass_is_clock_read(const struct sass_insn *in)
{
    const struct opcode_entry *e = lookup(in);
    if (!e || sass_field(in, SASS_SREG) != SASS_SR_CLOCKLO)
        return 0;
    return strcmp(e->mnemonic, "CS2R") == 0 || strcmp(e->mnemonic, "S2R") == 0 ||
           strcmp(e->mnemonic, "S2UR") == 0;
}

int sass_clock_region(const uint8_t *text, size_t size, size_t from, struct sass_region *r)
{
    assert(r != NULL);
    size_t n = sass_count(text ? size : 0, NULL), first = SIZE_MAX;
    for (size_t i = from; i < n; i++) {
        struct sass_insn in = sass_decode(text, i * SASS_INSN_BYTES);
        if (!sass_is_clock_read(&in))
            continue;
        if (first == SIZE_MAX) {
            first = i;
            continue;
        }
        *r = (struct sass_region){first + 1, i};
        return 0;
    }
    return -1;
}

/* The region clamped to the text; the whole text when r is NULL. */
static struct sass_region clamp(size_t size, const struct sass_region *r)
{
    size_t n = sass_count(size, NULL);
    struct sass_region c = r ? *r : (struct sass_region){0, n};
    if (c.end > n)
        c.end = n;
    if (c.first > c.end)
        c.first = c.end;
    return c;
}

size_t sass_count_mnemonic(const uint8_t *text, size_t size, const struct sass_region *r,
                           const char *mnemonic)
{
    if (!text || !mnemonic)
        return 0;
    struct sass_region c = clamp(size, r);
    size_t count = 0;
    char buf[SASS_MNEMONIC_MAX];
    for (size_t i = c.first; i < c.end; i++) {
        struct sass_insn in = sass_decode(text, i * SASS_INSN_BYTES);
        count += strcmp(sass_mnemonic(&in, buf), mnemonic) == 0;
    }
    return count;
}

/* ---- listing -------------------------------------------------------------- */

#define LISTING_LINE 128

static int format_line(const struct sass_insn *in, char *out, size_t len)
{
    char buf[SASS_MNEMONIC_MAX], wb = '-', rb = '-';
    unsigned w = sass_field(in, SASS_WBAR), r = sass_field(in, SASS_RBAR);
    if (w != SASS_SCOREBOARD_NONE)
        wb = (char)('0' + w);
    if (r != SASS_SCOREBOARD_NONE)
        rb = (char)('0' + r);
    return snprintf(out, len, "/*%04x*/ %-7s /* 0x%016llx */ /* 0x%016llx */ stall %2u wb %c rb %c wait %02x\n",
                    in->offset, sass_mnemonic(in, buf), (unsigned long long)in->lo,
                    (unsigned long long)in->hi, sass_field(in, SASS_STALL), wb, rb, sass_field(in, SASS_WAIT));
}

char *sass_listing(const uint8_t *text, size_t size, const struct sass_region *r)
{
    struct sass_region c = clamp(text ? size : 0, r);
    size_t cap = (c.end - c.first) * LISTING_LINE + 1, used = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (size_t i = c.first; i < c.end; i++) {
        struct sass_insn in = sass_decode(text, i * SASS_INSN_BYTES);
        int n = format_line(&in, out + used, cap - used);
        if (n < 0 || (size_t)n >= cap - used)
            break;                   /* cannot happen: lines are shorter than LISTING_LINE */
        used += (size_t)n;
    }
    return out;
}
