/*
 * Unit tests of the cubin reader (probes/cubin.c) against the fixtures of
 * tests/fixtures/cubins/ and against malformed copies of them.
 *
 * DESIGN
 * Oracles: for each NAME.cubin, NAME.elf (cuobjdump -elf: header, section
 * table, symbol table, decoded .nv.info attributes), NAME.res (cuobjdump
 * -res-usage: REG, STACK, SHARED per function) and NAME.ptxas.txt (ptxas -v:
 * "Used N registers"), all made by the CUDA toolkit, parsed here by small
 * line parsers; the reader must agree with every one of them. Malformed
 * inputs are made by mutating a copy of a good fixture one field at a time;
 * each must be refused with a reason that names the fault. Finally every
 * truncated prefix and a few thousand seeded byte flips must be refused or
 * read without touching memory outside the buffer (run under ASan). A
 * wrong call, unlike wrong bytes, breaks the reader's contract and must
 * abort (test_contracts, each call in a child).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/support/death.h"
#include "tests/unit/support/tmpfile.h"
#include "probes/gpu/cubin.h"

#define FIXDIR "tests/fixtures/cubins/"

struct fixture {
    const char *name;
    unsigned sm;
};

static const struct fixture fixtures[] = {
    {"fp32", 90},   {"half_double", 90}, {"integer", 90},   {"cvt_mufu", 90},
    {"memory", 90}, {"vector", 90},      {"arch_sm80", 80}, {"arch_sm75", 75}, {"tensor", 90},
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

/* ---- helpers ------------------------------------------------------------ */


static char *slurp_text(const char *name, const char *ext)
{
    char path[256];
    size_t n;
    snprintf(path, sizeof path, FIXDIR "%s.%s", name, ext);
    uint8_t *b = (uint8_t *)must_read_file(path, &n);
    char *s = realloc(b, n + 1);
    assert_non_null(s);
    s[n] = '\0';
    return s;
}

static uint8_t *load_cubin(const char *name, size_t *size)
{
    char path[256];
    snprintf(path, sizeof path, FIXDIR "%s.cubin", name);
    return (uint8_t *)must_read_file(path, size);
}

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void wr(uint8_t *p, int n, uint64_t v)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

/* The next line of text (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **cursor)
{
    char *s = *cursor;
    if (!s || !*s)
        return NULL;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *cursor = nl + 1;
    } else {
        *cursor = s + strlen(s);
    }
    return s;
}

/* ---- oracle: cuobjdump -res-usage and ptxas -v --------------------------- */

struct res_row {
    char name[128];
    long reg, stack, shared;
};

static size_t parse_res(const char *name, struct res_row *rows, size_t max)
{
    char *text = slurp_text(name, "res"), *cur = text, *line;
    size_t n = 0;
    while ((line = next_line(&cur)) != NULL) {
        char fn[128];
        if (sscanf(line, " Function %127[^:]:", fn) == 1) {
            assert_true(n < max);
            snprintf(rows[n].name, sizeof rows[n].name, "%s", fn);
            char *l2 = next_line(&cur);
            assert_non_null(l2);
            assert_int_equal(sscanf(l2, " REG:%ld STACK:%ld SHARED:%ld", &rows[n].reg, &rows[n].stack,
                                    &rows[n].shared), 3);
            n++;
        }
    }
    free(text);
    return n;
}

/* Registers ptxas -v reported for a function, or -1. */
static long ptxas_regs(const char *name, const char *fn)
{
    char *text = slurp_text(name, "ptxas.txt"), *cur = text, *line;
    long regs = -1;
    int in_fn = 0;
    while ((line = next_line(&cur)) != NULL) {
        char got[128];
        if (sscanf(line, "ptxas info : Compiling entry function '%127[^']'", got) == 1)
            in_fn = strcmp(got, fn) == 0;
        const char *u = strstr(line, "Used ");
        if (in_fn && u && strstr(u, "registers")) {
            regs = strtol(u + 5, NULL, 10);
            break;
        }
    }
    free(text);
    return regs;
}

/* ---- oracle: cuobjdump -elf -------------------------------------------- */

static void check_elf_header_line(const struct cubin *c, const char *line)
{
    unsigned abi, sm, flags;
    assert_int_equal(sscanf(line, "64-bit ELF: type=ET_EXEC, ABI=%u, sm=%u, toolkit=%*[^,], flags=%x", &abi,
                            &sm, &flags), 3);
    assert_int_equal(c->abi_version, abi);
    assert_int_equal(c->sm, sm);
    assert_int_equal(c->e_flags, flags);
}

static void check_section_row(const struct cubin *c, const char *line)
{
    size_t idx;
    unsigned long long off, size, es, align, flags;
    unsigned link, info;
    char type[64], name[256];
    if (sscanf(line, "%zx %llx %llx %llx %llx %63s %llx %x %x %255s", &idx, &off, &size, &es, &align, type,
               &flags, &link, &info, name) != 10)
        return;
    assert_true(idx < c->nsections);
    const struct cubin_section *s = &c->sections[idx];
    assert_string_equal(s->name, name);
    assert_int_equal(s->offset, off);
    assert_int_equal(s->size, size);
    assert_int_equal(s->entsize, es);
    assert_int_equal(s->flags, flags);
    assert_int_equal(s->link, link);
    assert_int_equal(s->info, info);
}

static void check_symbol_row(const struct cubin *c, const char *line, size_t *rows)
{
    char idx[32], name[256];
    unsigned long long value, size, info, other, shndx;
    if (sscanf(line, " %31s %llx %llx %llx %llx %llx %255s", idx, &value, &size, &info, &other, &shndx,
               name) != 7)
        return;
    size_t i = strtoul(idx, NULL, 16);
    assert_true(i < c->nsymbols);
    const struct cubin_symbol *s = &c->symbols[i];
    if (strcmp(name, "(null)") != 0)
        assert_string_equal(s->name, name);
    assert_int_equal(s->value, value);
    assert_int_equal(s->size, size);
    assert_int_equal(s->type | s->bind << 4, info);
    assert_int_equal(s->other, other);
    assert_int_equal(s->shndx, shndx);
    (*rows)++;
}

/* "Attribute: EIATTR_X" in section .nv.info.<kernel>: the "Value:" two lines on. */
static void check_attribute(const struct cubin *c, const char *section, const char *attr, char **cur)
{
    const char *prefix = ".nv.info.";
    if (strncmp(section, prefix, strlen(prefix)) != 0)
        return;
    const struct cubin_kernel *k = cubin_kernel_find(c, section + strlen(prefix));
    assert_non_null(k);
    next_line(cur);                                   /* Format: */
    char *value = next_line(cur);
    assert_non_null(value);
    unsigned x, y, z;
    if (strcmp(attr, "EIATTR_MAX_THREADS") == 0 || strcmp(attr, "EIATTR_REQNTID") == 0) {
        assert_int_equal(sscanf(value, " Value: %x %x %x", &x, &y, &z), 3);
        const uint32_t *d = attr[7] == 'M' ? k->max_threads : k->req_threads;
        assert_int_equal(d[0], x);
        assert_int_equal(d[1], y);
        assert_int_equal(d[2], z);
    } else if (strcmp(attr, "EIATTR_MAXREG_COUNT") == 0) {
        assert_int_equal(sscanf(value, " Value: %x", &x), 1);
        assert_int_equal(k->max_regs, (int)x);
    }
}

/* Compares the reader with the whole .elf dump; returns attributes checked. */
static size_t check_against_elf(const struct cubin *c, const char *name)
{
    char *text = slurp_text(name, "elf"), *cur = text, *line, section[256] = "";
    size_t symbols = 0, attrs = 0;
    enum { NONE, SECTIONS, SYMBOLS } mode = NONE;
    while ((line = next_line(&cur)) != NULL) {
        char attr[64];
        if (strncmp(line, "64-bit ELF:", 11) == 0)
            check_elf_header_line(c, line);
        else if (strncmp(line, "Index Offset", 12) == 0)
            mode = SECTIONS;
        else if (strncmp(line, ".section .symtab", 16) == 0)
            mode = SYMBOLS;
        else if (line[0] == '.' || line[0] == '\0') {
            mode = NONE;
            if (line[0] == '.')
                snprintf(section, sizeof section, "%s", line);
        } else if (mode == SECTIONS)
            check_section_row(c, line);
        else if (mode == SYMBOLS)
            check_symbol_row(c, line, &symbols);
        else if (sscanf(line, " Attribute: %63s", attr) == 1) {
            check_attribute(c, section, attr, &cur);
            attrs++;
        }
    }
    free(text);
    assert_int_equal(symbols, c->nsymbols);
    return attrs;
}

/* ---- fixtures ---------------------------------------------------------- */

static void check_kernels_against_res(const struct cubin *c, const char *name)
{
    struct res_row rows[64];
    size_t n = parse_res(name, rows, 64), entries = 0;
    for (size_t i = 0; i < c->nkernels; i++) {
        const struct cubin_kernel *k = &c->kernels[i];
        const struct cubin_section *t = &c->sections[k->section];
        entries += k->entry;
        /* A non-entry function (e.g. the rcp.rn slow path) lives in the
         * text section of the kernel that calls it. */
        assert_true(k->text >= t->data && k->text + k->text_size <= t->data + t->size);
    }
    assert_int_equal(n, entries);
    for (size_t i = 0; i < n; i++) {
        const struct cubin_kernel *k = cubin_kernel_find(c, rows[i].name);
        if (!k)
            fail_msg("%s: kernel %s of the oracle not found", name, rows[i].name);
        assert_true(k->entry);
        assert_int_equal(k->regs, rows[i].reg);
        assert_int_equal(k->regs, ptxas_regs(name, k->name));
        /* where the count is written: the u32 at regs_offset (the
         * register-limit experiment edits it there) */
        assert_true(k->regs_offset > 0 && k->regs_offset + 4 <= c->size);
        const uint8_t *at = c->data + k->regs_offset;
        assert_int_equal(at[0] | at[1] << 8 | at[2] << 16 | (uint32_t)at[3] << 24,
                         (uint32_t)k->regs);
        assert_int_equal(k->frame_size, rows[i].stack);
        assert_int_equal((long)k->shared_bytes, rows[i].shared);
        assert_true(k->text_size > 0 && k->text_size % 128 == 0);
        assert_true(k->text >= c->data && k->text + k->text_size <= c->data + c->size);
        char want[300];
        snprintf(want, sizeof want, ".text.%s", k->name);
        assert_string_equal(c->sections[k->section].name, want);
    }
}

static void test_fixtures_match_oracle(void **state)
{
    (void)state;
    size_t kernels = 0, attrs = 0;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        size_t size;
        uint8_t *buf = load_cubin(fixtures[i].name, &size);
        struct cubin c;
        char err[256];
        if (cubin_parse(&c, buf, size, err, sizeof err) != 0)
            fail_msg("%s: %s", fixtures[i].name, err);
        assert_int_equal(c.sm, fixtures[i].sm);
        check_kernels_against_res(&c, fixtures[i].name);
        attrs += check_against_elf(&c, fixtures[i].name);
        kernels += c.nkernels;
        cubin_free(&c);
        free(buf);
    }
    print_message("cubin: %zu kernels in %zu fixtures match cuobjdump; %zu attributes seen\n", kernels,
                  N_FIXTURES, attrs);
    assert_true(kernels >= 60);
}

/* Attributes that the fixtures were written to produce. */
static void test_known_attributes(void **state)
{
    (void)state;
    size_t size;
    uint8_t *buf = load_cubin("memory", &size);
    struct cubin c;
    assert_int_equal(cubin_parse(&c, buf, size, NULL, 0), 0);
    const struct cubin_kernel *k = cubin_kernel_find(&c, "lat_local");
    assert_non_null(k);
    assert_int_equal(k->frame_size, 256);
    assert_int_equal(k->req_threads[0], 128);
    assert_int_equal(cubin_kernel_find(&c, "lat_lds")->shared_bytes, 5120);  /* 4096 + 1 KiB reserved */
    assert_null(cubin_kernel_find(&c, "no_such_kernel"));
    assert_non_null(cubin_section_find(&c, ".nv.info"));
    assert_null(cubin_section_find(&c, ".nope"));
    cubin_free(&c);
    free(buf);

    buf = load_cubin("fp32", &size);
    assert_int_equal(cubin_parse(&c, buf, size, NULL, 0), 0);
    assert_int_equal(cubin_kernel_find(&c, "lat_fmax")->max_threads[0], 256);
    assert_int_equal(cubin_kernel_find(&c, "thr_ffma_ilp")->regs, 32);
    assert_int_equal(cubin_kernel_find(&c, "lat_fadd")->max_threads[0], 0);
    assert_int_equal(c.e_flags, 0x06005a04);
    cubin_free(&c);
    free(buf);
}

/* sh_info [31:24] of a text section: the register count up to sm_80,
 * zero on sm_90 where only EIATTR_REGCOUNT has it. */
static void test_sh_info_register_bits(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        size_t size;
        uint8_t *buf = load_cubin(fixtures[i].name, &size);
        struct cubin c;
        assert_int_equal(cubin_parse(&c, buf, size, NULL, 0), 0);
        for (size_t j = 0; j < c.nkernels; j++) {
            const struct cubin_kernel *k = &c.kernels[j];
            if (!k->entry)
                continue;
            unsigned hi = c.sections[k->section].info >> 24;
            assert_int_equal(hi, fixtures[i].sm >= 90 ? 0u : (unsigned)k->regs);
            assert_int_equal(c.sections[k->section].info & 0xffffff, k->symbol);
        }
        cubin_free(&c);
        free(buf);
    }
}

/* Without EIATTR_REGCOUNT the reader falls back to sh_info [31:24]. */
static void test_register_fallback(void **state)
{
    (void)state;
    size_t size;
    uint8_t *buf = load_cubin("fp32", &size);
    struct cubin c;
    assert_int_equal(cubin_parse(&c, buf, size, NULL, 0), 0);
    const struct cubin_kernel *k = cubin_kernel_find(&c, "lat_fadd");
    const struct cubin_section *info = cubin_section_find(&c, ".nv.info");
    size_t info_off = info->offset, info_size = info->size, text = k->section;
    uint32_t sym = k->symbol;
    uint64_t shoff = rd(buf + 40, 8);
    cubin_free(&c);
    for (size_t p = 0; p + 12 <= info_size;) {       /* hide its REGCOUNT */
        uint8_t *e = buf + info_off + p;
        if (e[1] == 0x2f && rd(e + 4, 4) == sym)
            e[1] = 0x7e;
        p += e[0] == 4 ? 4 + rd(e + 2, 2) : 4;
    }
    assert_int_equal(cubin_parse(&c, buf, size, NULL, 0), 0);
    assert_int_equal(cubin_kernel_find(&c, "lat_fadd")->regs, -1);
    assert_int_equal(cubin_kernel_find(&c, "lat_fmul")->regs, 12);
    cubin_free(&c);
    uint8_t *h = buf + shoff + text * 64 + 44;
    wr(h, 4, rd(h, 4) | 40u << 24);
    assert_int_equal(cubin_parse(&c, buf, size, NULL, 0), 0);
    assert_int_equal(cubin_kernel_find(&c, "lat_fadd")->regs, 40);
    cubin_free(&c);
    free(buf);
}

/* ---- malformed inputs -------------------------------------------------- */

struct layout {                                      /* facts about fp32.cubin */
    uint64_t shoff;
    size_t shnum, text, symtab, strtab, info, kernel_sym;
};

static struct layout layout_of(const uint8_t *buf, size_t size)
{
    struct cubin c;
    assert_int_equal(cubin_parse(&c, buf, size, NULL, 0), 0);
    const struct cubin_kernel *k = cubin_kernel_find(&c, "lat_fadd");
    struct layout l = {rd(buf + 40, 8), c.nsections, k->section, 0, 0, 0, k->symbol};
    for (size_t i = 0; i < c.nsections; i++) {
        if (c.sections[i].type == 2)
            l.symtab = i;
        if (strcmp(c.sections[i].name, ".strtab") == 0)
            l.strtab = i;
        if (strcmp(c.sections[i].name, ".nv.info") == 0)
            l.info = i;
    }
    cubin_free(&c);
    return l;
}

static uint8_t *shdr(uint8_t *buf, const struct layout *l, size_t i) { return buf + l->shoff + i * 64; }

struct bad_case {
    const char *what, *reason;
    void (*mutate)(uint8_t *buf, size_t *size, const struct layout *l);
};

static void m_short(uint8_t *b, size_t *n, const struct layout *l) { (void)b, (void)l, *n = 40; }
static void m_magic(uint8_t *b, size_t *n, const struct layout *l) { (void)n, (void)l, b[1] = 'X'; }
static void m_class(uint8_t *b, size_t *n, const struct layout *l) { (void)n, (void)l, b[4] = 1; }
static void m_endian(uint8_t *b, size_t *n, const struct layout *l) { (void)n, (void)l, b[5] = 2; }
static void m_machine(uint8_t *b, size_t *n, const struct layout *l) { (void)n, (void)l, wr(b + 18, 2, 62); }
static void m_shentsize(uint8_t *b, size_t *n, const struct layout *l) { (void)n, (void)l, wr(b + 58, 2, 40); }
static void m_shnum0(uint8_t *b, size_t *n, const struct layout *l) { (void)n, (void)l, wr(b + 60, 2, 0); }
static void m_shoff(uint8_t *b, size_t *n, const struct layout *l) { (void)l, wr(b + 40, 8, *n - 64); }
static void m_shoff_wrap(uint8_t *b, size_t *n, const struct layout *l) { (void)n, (void)l, wr(b + 40, 8, UINT64_MAX - 8); }
static void m_truncated(uint8_t *b, size_t *n, const struct layout *l) { (void)b, *n = l->shoff + 64 * 3; }
static void m_shstrndx(uint8_t *b, size_t *n, const struct layout *l) { (void)n, wr(b + 62, 2, l->shnum); }
static void m_phent(uint8_t *b, size_t *n, const struct layout *l) { (void)n, (void)l, wr(b + 54, 2, 32); }
static void m_phoff(uint8_t *b, size_t *n, const struct layout *l) { (void)l, wr(b + 32, 8, *n); }

static void m_text_past_end(uint8_t *b, size_t *n, const struct layout *l)
{
    wr(shdr(b, l, l->text) + 24, 8, *n - 16);
}

static void m_text_size_wrap(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(shdr(b, l, l->text) + 32, 8, UINT64_MAX - 4);
}

static void m_overlap(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(shdr(b, l, l->text) + 24, 8, rd(shdr(b, l, l->symtab) + 24, 8) + 8);
}

static void m_overlap_header(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(shdr(b, l, l->text) + 24, 8, 16);
}

static void m_name(uint8_t *b, size_t *n, const struct layout *l) { (void)n, wr(shdr(b, l, l->text), 4, 1u << 30); }
static void m_shstr_type(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(shdr(b, l, rd(b + 62, 2)) + 4, 4, 1);
}
static void m_symtab_entsize(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(shdr(b, l, l->symtab) + 56, 8, 16);
}
static void m_symtab_link(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(shdr(b, l, l->symtab) + 40, 4, l->text);
}
static void m_no_symtab(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(shdr(b, l, l->symtab) + 4, 4, 1);
}

static uint8_t *sym(uint8_t *b, const struct layout *l, size_t i)
{
    return b + rd(shdr(b, l, l->symtab) + 24, 8) + i * 24;
}

static void m_sym_name(uint8_t *b, size_t *n, const struct layout *l) { (void)n, wr(sym(b, l, l->kernel_sym), 4, 1u << 30); }
static void m_sym_shndx(uint8_t *b, size_t *n, const struct layout *l) { (void)n, wr(sym(b, l, l->kernel_sym) + 6, 2, l->shnum + 3); }
static void m_sym_value(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(sym(b, l, l->kernel_sym) + 8, 8, rd(shdr(b, l, l->text) + 32, 8));
}
static void m_sym_not_code(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(sym(b, l, l->kernel_sym) + 6, 2, l->symtab);
}
static void m_info_size(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    wr(b + rd(shdr(b, l, l->info) + 24, 8) + 2, 2, 0xfff0);
}
static void m_info_format(uint8_t *b, size_t *n, const struct layout *l)
{
    (void)n;
    b[rd(shdr(b, l, l->info) + 24, 8)] = 9;
}

static const struct bad_case bad_cases[] = {
    {"shorter than a header", "truncated", m_short},
    {"bad magic", "not an ELF", m_magic},
    {"ELFCLASS32", "not ELF64", m_class},
    {"big-endian", "little-endian", m_endian},
    {"x86-64 machine", "EM_CUDA", m_machine},
    {"section header size", "e_shentsize", m_shentsize},
    {"no sections", "no section headers", m_shnum0},
    {"section table past end", "section header table", m_shoff},
    {"section table offset wraps", "section header table", m_shoff_wrap},
    {"file cut inside section table", "section header table", m_truncated},
    {"e_shstrndx out of range", "e_shstrndx", m_shstrndx},
    {"program header size", "e_phentsize", m_phent},
    {"program headers past end", "program header table", m_phoff},
    {"text past end of file", "past the end", m_text_past_end},
    {"text size wraps", "past the end", m_text_size_wrap},
    {"text overlaps symtab", "overlap", m_overlap},
    {"text overlaps ELF header", "ELF header", m_overlap_header},
    {"section name offset", "name offset", m_name},
    {"shstrtab not STRTAB", "not a string table", m_shstr_type},
    {"symbol entry size", "symbol entries", m_symtab_entsize},
    {"symtab link", "not a string table", m_symtab_link},
    {"no symtab", "no symbol table", m_no_symtab},
    {"symbol name offset", "name offset", m_sym_name},
    {"symbol section index", "not a section", m_sym_shndx},
    {"function past its section", "outside its section", m_sym_value},
    {"function in a data section", "holds no code", m_sym_not_code},
    {".nv.info attribute size", "past the section end", m_info_size},
    {".nv.info attribute format", "unknown format", m_info_format},
};

static void test_malformed_refused(void **state)
{
    (void)state;
    size_t size;
    uint8_t *good = load_cubin("fp32", &size);
    struct layout l = layout_of(good, size);
    uint8_t *buf = malloc(size);
    assert_non_null(buf);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        memcpy(buf, good, size);
        size_t n = size;
        bad_cases[i].mutate(buf, &n, &l);
        struct cubin c;
        char err[256];
        int rc = cubin_parse(&c, buf, n, err, sizeof err);
        if (rc == 0 || !strstr(err, bad_cases[i].reason))
            fail_msg("%s: rc %d, reason \"%s\", expected one with \"%s\"", bad_cases[i].what, rc, err,
                     bad_cases[i].reason);
        assert_int_equal(c.nkernels, 0);
        assert_null(c.kernels);
        cubin_free(&c);
    }
    struct cubin c;
    char err[64];
    assert_int_equal(cubin_parse(&c, NULL, 0, err, sizeof err), -1);
    assert_int_equal(cubin_parse(&c, good, 0, err, sizeof err), -1);
    assert_int_equal(cubin_parse(&c, good, size, err, 8), 0);   /* short err buffer is fine */
    cubin_free(&c);
    free(buf);
    free(good);
}

/* Every proper prefix is refused; seeded byte flips never read outside. */
static void test_prefixes_and_flips(void **state)
{
    (void)state;
    size_t size;
    uint8_t *good = load_cubin("fp32", &size);
    for (size_t n = 0; n < size; n++) {
        uint8_t *cut = malloc(n ? n : 1);           /* exact size: ASan sees overreads */
        assert_non_null(cut);
        memcpy(cut, good, n);
        struct cubin c;
        char err[256];
        if (cubin_parse(&c, cut, n, err, sizeof err) == 0)
            fail_msg("prefix of %zu of %zu bytes accepted", n, size);
        assert_true(err[0] != '\0');
        free(cut);
    }
    uint32_t seed = 12345;
    uint8_t *buf = malloc(size);
    assert_non_null(buf);
    for (int round = 0; round < 3000; round++) {
        memcpy(buf, good, size);
        for (int k = 0; k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % (round % 2 ? size : 64 + 0u);
            seed = seed * 1103515245u + 12345u;
            buf[at] ^= (uint8_t)(1u << (seed >> 29));
        }
        struct cubin c;
        char err[256];
        if (cubin_parse(&c, buf, size, err, sizeof err) == 0) {
            for (size_t i = 0; i < c.nkernels; i++) {
                const struct cubin_kernel *k = &c.kernels[i];
                assert_true(k->text >= buf && k->text + k->text_size <= buf + size);
                assert_non_null(memchr(k->name, '\0', (size_t)(buf + size - (const uint8_t *)k->name)));
            }
        } else {
            assert_true(err[0] != '\0');
        }
        cubin_free(&c);
    }
    free(buf);
    free(good);
}

/* ---- contracts ------------------------------------------------------------ */

static void parse_size_without_buffer(void *arg)
{
    struct cubin c;
    char err[64];
    (void)arg;
    (void)cubin_parse(&c, NULL, 64, err, sizeof err);
}

static void parse_into_nothing(void *arg)
{
    char err[64];
    (void)cubin_parse(NULL, arg, 64, err, sizeof err);
}

static void parse_reason_length_without_buffer(void *arg)
{
    struct cubin c;
    (void)cubin_parse(&c, arg, 64, NULL, 64);
}

static void find_kernel_without_name(void *arg)
{
    (void)cubin_kernel_find(arg, NULL);
}

static void find_section_in_nothing(void *arg)
{
    (void)arg;
    (void)cubin_section_find(NULL, ".text");
}

static void test_contracts(void **state)
{
    (void)state;
    size_t size;
    uint8_t *good = load_cubin("fp32", &size);
    struct cubin c;
    assert_int_equal(cubin_parse(&c, good, size, NULL, 0), 0);
    assert_true(dies_by_assert(parse_size_without_buffer, NULL));
    assert_true(dies_by_assert(parse_into_nothing, good));
    assert_true(dies_by_assert(parse_reason_length_without_buffer, good));
    assert_true(dies_by_assert(find_kernel_without_name, &c));
    assert_true(dies_by_assert(find_section_in_nothing, NULL));
    cubin_free(&c);
    free(good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_match_oracle),
        cmocka_unit_test(test_known_attributes),
        cmocka_unit_test(test_sh_info_register_bits),
        cmocka_unit_test(test_register_fallback),
        cmocka_unit_test(test_malformed_refused),
        cmocka_unit_test(test_prefixes_and_flips),
        cmocka_unit_test(test_contracts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
