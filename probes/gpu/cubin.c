/*
 * Cubin reader (see cubin.h): a bounds-checked ELF64 parser for EM_CUDA.
 *
 * DESIGN
 * Every multi-byte field is read through rd16/rd32/rd64 (little-endian,
 * from a pointer already checked to lie inside the buffer), and every
 * offset+size pair through range_ok, which cannot overflow. The parse runs
 * in stages -- header, section table, names, overlaps, symbols, kernels,
 * attributes -- each of which may fail with a reason naming the section or
 * symbol at fault; on failure everything allocated so far is released and
 * the struct is left zeroed. Attribute lists (.nv.info*) are walked entry by
 * entry: 4-byte header {format, attribute, u16}, where the u16 is the value
 * for EIFMT_HVAL/BVAL and the payload size for EIFMT_SVAL.
 * The bytes are input and every flaw in them is a refusal with a reason;
 * only a wrong call (no struct, a size with no buffer, a lookup on no
 * cubin or for no name) is an assert.
 */
#include "probes/gpu/cubin.h"

#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EHDR_SIZE 64
#define SHDR_SIZE 64
#define PHDR_SIZE 56
#define SYM_SIZE 24

#define SHT_SYMTAB 2
#define SHT_STRTAB 3
#define SHT_NOBITS 8
#define SHT_CUDA_INFO 0x70000000u
#define SHF_EXECINSTR 0x4u
#define STT_FUNC 2
#define STO_CUDA_ENTRY 0x10
#define SHN_LORESERVE 0xff00u

/* .nv.info attribute formats and the attributes read here. */
enum { EIFMT_NVAL = 1, EIFMT_BVAL = 2, EIFMT_HVAL = 3, EIFMT_SVAL = 4 };
enum {
    EIATTR_MAX_THREADS = 0x05,
    EIATTR_REQNTID = 0x10,
    EIATTR_FRAME_SIZE = 0x11,
    EIATTR_MIN_STACK_SIZE = 0x12,
    EIATTR_MAXREG_COUNT = 0x1b,
    EIATTR_REGCOUNT = 0x2f,
};

struct range {
    uint64_t off, size;
    const char *what;
    size_t index;                    /* section index, or SIZE_MAX for tables */
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* off+size fits in total, without overflow. */
static int range_ok(uint64_t off, uint64_t size, uint64_t total)
{
    return off <= total && size <= total - off;
}

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        int n = snprintf(err, errlen, "cubin: ");
        if (n >= 0 && (size_t)n < errlen)
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- header ---------------------------------------------------------- */

static int parse_header(struct cubin *c, char *err, size_t errlen)
{
    const uint8_t *d = c->data;
    if (c->size < EHDR_SIZE)
        return fail(err, errlen, "truncated: %zu bytes, an ELF64 header needs %d", c->size, EHDR_SIZE);
    if (memcmp(d, "\177ELF", 4) != 0)
        return fail(err, errlen, "not an ELF file (bad magic)");
    if (d[4] != 2)
        return fail(err, errlen, "not ELF64: EI_CLASS is %u, cubins are ELFCLASS64 (2)", d[4]);
    if (d[5] != 1)
        return fail(err, errlen, "not little-endian: EI_DATA is %u", d[5]);
    uint16_t machine = rd16(d + 18);
    if (machine != CUBIN_EM_CUDA)
        return fail(err, errlen, "not a CUDA ELF: e_machine is %u, expected %d (EM_CUDA)", machine,
                    CUBIN_EM_CUDA);
    c->osabi = d[7];
    c->abi_version = d[8];
    c->type = rd16(d + 16);
    c->e_flags = rd32(d + 48);
    c->sm = c->abi_version >= 8 ? (c->e_flags >> 8) & 0xff : c->e_flags & 0xff;
    return 0;
}

/* ---- sections -------------------------------------------------------- */

static int check_tables(const struct cubin *c, char *err, size_t errlen)
{
    const uint8_t *d = c->data;
    uint64_t shoff = rd64(d + 40), phoff = rd64(d + 32);
    uint16_t shentsize = rd16(d + 58), shnum = rd16(d + 60), shstrndx = rd16(d + 62);
    uint16_t phentsize = rd16(d + 54), phnum = rd16(d + 56);
    if (shnum == 0)
        return fail(err, errlen, "no section headers (e_shnum 0; extended numbering is not supported)");
    if (shentsize != SHDR_SIZE)
        return fail(err, errlen, "e_shentsize is %u, ELF64 section headers are %d bytes", shentsize,
                    SHDR_SIZE);
    if (!range_ok(shoff, (uint64_t)shnum * SHDR_SIZE, c->size))
        return fail(err, errlen, "section header table 0x%llx+%u*%d is past the end of the %zu-byte file",
                    (unsigned long long)shoff, shnum, SHDR_SIZE, c->size);
    if (shstrndx >= shnum)
        return fail(err, errlen, "e_shstrndx %u is not a section (there are %u)", shstrndx, shnum);
    if (phnum && phentsize != PHDR_SIZE)
        return fail(err, errlen, "e_phentsize is %u, ELF64 program headers are %d bytes", phentsize,
                    PHDR_SIZE);
    if (phnum && !range_ok(phoff, (uint64_t)phnum * PHDR_SIZE, c->size))
        return fail(err, errlen, "program header table 0x%llx+%u*%d is past the end of the %zu-byte file",
                    (unsigned long long)phoff, phnum, PHDR_SIZE, c->size);
    return 0;
}

static int read_section_headers(struct cubin *c, char *err, size_t errlen)
{
    const uint8_t *d = c->data;
    uint64_t shoff = rd64(d + 40);
    c->nsections = rd16(d + 60);
    c->sections = calloc(c->nsections, sizeof *c->sections);
    if (!c->sections)
        return fail(err, errlen, "out of memory");
    for (size_t i = 0; i < c->nsections; i++) {
        const uint8_t *h = d + shoff + i * SHDR_SIZE;
        struct cubin_section *s = &c->sections[i];
        s->type = rd32(h + 4);
        s->flags = rd64(h + 8);
        s->offset = rd64(h + 24);
        s->size = rd64(h + 32);
        s->link = rd32(h + 40);
        s->info = rd32(h + 44);
        s->entsize = rd64(h + 56);
        if (s->type == SHT_NOBITS || s->size == 0 || i == 0)
            continue;
        if (!range_ok(s->offset, s->size, c->size))
            return fail(err, errlen, "section %zu: range 0x%llx+0x%llx is past the end of the %zu-byte file",
                        i, (unsigned long long)s->offset, (unsigned long long)s->size, c->size);
        s->data = d + s->offset;
    }
    return 0;
}

/* A NUL-terminated string at off inside a string-table section, or NULL. */
static const char *string_at(const struct cubin_section *strtab, uint64_t off)
{
    if (!strtab->data || off >= strtab->size)
        return NULL;
    const char *s = (const char *)strtab->data + off;
    return memchr(s, '\0', strtab->size - off) ? s : NULL;
}

static int name_sections(struct cubin *c, char *err, size_t errlen)
{
    const uint8_t *d = c->data;
    uint64_t shoff = rd64(d + 40);
    uint16_t shstrndx = rd16(d + 62);
    const struct cubin_section *names = &c->sections[shstrndx];
    if (names->type != SHT_STRTAB)
        return fail(err, errlen, "section %u (e_shstrndx) is not a string table (type %u)", shstrndx,
                    names->type);
    for (size_t i = 0; i < c->nsections; i++) {
        uint32_t off = rd32(d + shoff + i * SHDR_SIZE);
        c->sections[i].name = string_at(names, off);
        if (!c->sections[i].name)
            return fail(err, errlen, "section %zu: name offset %u is outside the section name table", i, off);
    }
    return 0;
}

static int range_cmp(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static void describe(const struct cubin *c, const struct range *r, char *buf, size_t len)
{
    if (r->index == SIZE_MAX)
        snprintf(buf, len, "the %s", r->what);
    else
        snprintf(buf, len, "section %zu (%s)", r->index, c->sections[r->index].name);
}

/* No two file ranges (ELF header, header tables, sections' bytes) overlap. */
static int check_overlaps(const struct cubin *c, char *err, size_t errlen)
{
    const uint8_t *d = c->data;
    struct range *r = calloc(c->nsections + 3, sizeof *r);
    if (!r)
        return fail(err, errlen, "out of memory");
    size_t n = 0;
    r[n++] = (struct range){0, EHDR_SIZE, "ELF header", SIZE_MAX};
    r[n++] = (struct range){rd64(d + 40), (uint64_t)c->nsections * SHDR_SIZE, "section header table", SIZE_MAX};
    if (rd16(d + 56))
        r[n++] = (struct range){rd64(d + 32), (uint64_t)rd16(d + 56) * PHDR_SIZE, "program header table",
                                SIZE_MAX};
    for (size_t i = 1; i < c->nsections; i++)
        if (c->sections[i].data)
            r[n++] = (struct range){c->sections[i].offset, c->sections[i].size, NULL, i};
    qsort(r, n, sizeof *r, range_cmp);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++) {
        if (r[i].off < r[i - 1].off + r[i - 1].size) {
            char a[160], b[160];
            describe(c, &r[i - 1], a, sizeof a);
            describe(c, &r[i], b, sizeof b);
            rc = fail(err, errlen, "%s and %s overlap at file offset 0x%llx", a, b,
                      (unsigned long long)r[i].off);
        }
    }
    free(r);
    return rc;
}

/* ---- symbols --------------------------------------------------------- */

static int find_symtab(const struct cubin *c, size_t *out, char *err, size_t errlen)
{
    size_t found = 0;
    for (size_t i = 1; i < c->nsections; i++) {
        if (c->sections[i].type != SHT_SYMTAB)
            continue;
        if (found)
            return fail(err, errlen, "two symbol tables (sections %zu and %zu)", found, i);
        found = i;
    }
    if (!found)
        return fail(err, errlen, "no symbol table (SHT_SYMTAB section)");
    const struct cubin_section *s = &c->sections[found];
    if (s->entsize != SYM_SIZE || s->size % SYM_SIZE)
        return fail(err, errlen, "section %zu (%s): symbol entries of %llu bytes in %llu, expected %d each",
                    found, s->name, (unsigned long long)s->entsize, (unsigned long long)s->size, SYM_SIZE);
    if (s->link == 0 || s->link >= c->nsections || c->sections[s->link].type != SHT_STRTAB)
        return fail(err, errlen, "section %zu (%s): sh_link %u is not a string table", found, s->name, s->link);
    *out = found;
    return 0;
}

static int read_symbols(struct cubin *c, char *err, size_t errlen)
{
    size_t si = 0;
    if (find_symtab(c, &si, err, errlen))
        return -1;
    const struct cubin_section *tab = &c->sections[si], *str = &c->sections[tab->link];
    c->nsymbols = tab->size / SYM_SIZE;
    c->symbols = calloc(c->nsymbols ? c->nsymbols : 1, sizeof *c->symbols);
    if (!c->symbols)
        return fail(err, errlen, "out of memory");
    for (size_t i = 0; i < c->nsymbols; i++) {
        const uint8_t *p = tab->data + i * SYM_SIZE;
        struct cubin_symbol *s = &c->symbols[i];
        s->name = string_at(str, rd32(p));
        if (!s->name)
            return fail(err, errlen, "symbol %zu: name offset %u is outside %s", i, rd32(p), str->name);
        s->type = p[4] & 0xf;
        s->bind = p[4] >> 4;
        s->other = p[5];
        s->shndx = rd16(p + 6);
        s->value = rd64(p + 8);
        s->size = rd64(p + 16);
        if (s->shndx < SHN_LORESERVE && s->shndx >= c->nsections)
            return fail(err, errlen, "symbol %zu (%s): section index %u is not a section", i, s->name, s->shndx);
    }
    return 0;
}

/* ---- kernels --------------------------------------------------------- */

static int is_kernel_symbol(const struct cubin_symbol *s)
{
    return s->type == STT_FUNC && s->shndx != 0 && s->shndx < SHN_LORESERVE;
}

static int init_kernel(const struct cubin *c, size_t si, struct cubin_kernel *k, char *err, size_t errlen)
{
    const struct cubin_symbol *s = &c->symbols[si];
    const struct cubin_section *t = &c->sections[s->shndx];
    if (!(t->flags & SHF_EXECINSTR) || !t->data)
        return fail(err, errlen, "function %s: its section %u (%s) holds no code", s->name, s->shndx, t->name);
    uint64_t size = s->size ? s->size : (s->value <= t->size ? t->size - s->value : 0);
    if (!range_ok(s->value, size, t->size) || size == 0)
        return fail(err, errlen, "function %s: code 0x%llx+0x%llx is outside its section %s (0x%llx bytes)",
                    s->name, (unsigned long long)s->value, (unsigned long long)size, t->name,
                    (unsigned long long)t->size);
    *k = (struct cubin_kernel){
        .name = s->name, .symbol = (uint32_t)si, .section = s->shndx,
        .entry = (s->other & STO_CUDA_ENTRY) != 0,
        .text = t->data + s->value, .text_size = (size_t)size,
        .regs = -1, .frame_size = -1, .min_stack_size = -1, .max_regs = -1,
    };
    return 0;
}

static int find_kernels(struct cubin *c, char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nsymbols; i++)
        n += is_kernel_symbol(&c->symbols[i]);
    c->kernels = calloc(n ? n : 1, sizeof *c->kernels);
    if (!c->kernels)
        return fail(err, errlen, "out of memory");
    for (size_t i = 0; i < c->nsymbols; i++) {
        if (!is_kernel_symbol(&c->symbols[i]))
            continue;
        if (init_kernel(c, i, &c->kernels[c->nkernels], err, errlen))
            return -1;
        c->nkernels++;
    }
    return 0;
}

/* ---- attributes ------------------------------------------------------ */

static struct cubin_kernel *kernel_by_symbol(struct cubin *c, uint32_t sym)
{
    for (size_t i = 0; i < c->nkernels; i++)
        if (c->kernels[i].symbol == sym)
            return &c->kernels[i];
    return NULL;
}

/* An attribute of the global .nv.info: {u32 symbol, u32 value}. */
static void apply_global_attr(struct cubin *c, uint8_t attr, const uint8_t *p, uint16_t n)
{
    if (n < 8)
        return;
    struct cubin_kernel *k = kernel_by_symbol(c, rd32(p));
    if (!k)
        return;
    uint32_t v = rd32(p + 4);
    int iv = v > 0x7fffffffu ? -1 : (int)v;
    if (attr == EIATTR_REGCOUNT) {
        k->regs = iv;
        k->regs_offset = (size_t)(p + 4 - c->data);
    }
    else if (attr == EIATTR_FRAME_SIZE)
        k->frame_size = iv;
    else if (attr == EIATTR_MIN_STACK_SIZE)
        k->min_stack_size = iv;
}

static void apply_kernel_attr(struct cubin_kernel *k, uint8_t attr, const uint8_t *p, uint16_t n,
                              uint16_t hval)
{
    uint32_t *dims = attr == EIATTR_MAX_THREADS ? k->max_threads
                     : attr == EIATTR_REQNTID   ? k->req_threads
                                                : NULL;
    if (dims && p && n >= 12)
        for (int i = 0; i < 3; i++)
            dims[i] = rd32(p + 4 * i);
    if (attr == EIATTR_MAXREG_COUNT && !p)
        k->max_regs = hval;
}

/* Walks one attribute list; k is NULL for the global .nv.info. */
static int walk_info(struct cubin *c, const struct cubin_section *s, struct cubin_kernel *k, char *err,
                     size_t errlen)
{
    uint64_t pos = 0;
    while (pos < s->size) {
        if (!range_ok(pos, 4, s->size))
            return fail(err, errlen, "%s: attribute at 0x%llx is cut short", s->name, (unsigned long long)pos);
        const uint8_t *h = s->data + pos;
        uint8_t fmt = h[0], attr = h[1];
        uint16_t v = rd16(h + 2);
        if (fmt < EIFMT_NVAL || fmt > EIFMT_SVAL)
            return fail(err, errlen, "%s: attribute at 0x%llx has unknown format %u", s->name,
                        (unsigned long long)pos, fmt);
        pos += 4;
        if (fmt != EIFMT_SVAL) {
            if (k)
                apply_kernel_attr(k, attr, NULL, 0, v);
            continue;
        }
        if (!range_ok(pos, v, s->size))
            return fail(err, errlen, "%s: attribute 0x%02x at 0x%llx: %u bytes run past the section end",
                        s->name, attr, (unsigned long long)(pos - 4), v);
        if (k)
            apply_kernel_attr(k, attr, s->data + pos, v, 0);
        else
            apply_global_attr(c, attr, s->data + pos, v);
        pos += v;
    }
    return 0;
}

/* s->name is "<prefix><kernel name>". */
static struct cubin_kernel *kernel_by_suffix(struct cubin *c, const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0)
        return NULL;
    for (size_t i = 0; i < c->nkernels; i++)
        if (strcmp(name + n, c->kernels[i].name) == 0)
            return &c->kernels[i];
    return NULL;
}

static int read_attributes(struct cubin *c, char *err, size_t errlen)
{
    for (size_t i = 1; i < c->nsections; i++) {
        const struct cubin_section *s = &c->sections[i];
        struct cubin_kernel *k = kernel_by_suffix(c, s->name, ".nv.shared.");
        if (k)
            k->shared_bytes = s->size;
        if (s->type != SHT_CUDA_INFO || !s->data)
            continue;
        if (strcmp(s->name, ".nv.info") == 0) {
            if (walk_info(c, s, NULL, err, errlen))
                return -1;
        } else if ((k = kernel_by_suffix(c, s->name, ".nv.info.")) != NULL) {
            if (walk_info(c, s, k, err, errlen))
                return -1;
        }
    }
    /* Older toolkits: register count in the text section's sh_info [31:24]. */
    for (size_t i = 0; i < c->nkernels; i++) {
        struct cubin_kernel *k = &c->kernels[i];
        uint32_t hi = c->sections[k->section].info >> 24;
        if (k->regs < 0 && hi)
            k->regs = (int)hi;
    }
    return 0;
}

/* ---- API ------------------------------------------------------------- */

void cubin_free(struct cubin *c)
{
    if (!c)
        return;
    free(c->sections);
    free(c->symbols);
    free(c->kernels);
    memset(c, 0, sizeof *c);
}

int cubin_parse(struct cubin *c, const void *data, size_t size, char *err, size_t errlen)
{
    assert(c != NULL);
    assert(data != NULL || size == 0);
    assert(err != NULL || errlen == 0);
    memset(c, 0, sizeof *c);
    if (err && errlen)
        err[0] = '\0';
    if (!data)
        return fail(err, errlen, "no data");
    c->data = data;
    c->size = size;
    if (parse_header(c, err, errlen) || check_tables(c, err, errlen) ||
        read_section_headers(c, err, errlen) || name_sections(c, err, errlen) ||
        check_overlaps(c, err, errlen) || read_symbols(c, err, errlen) ||
        find_kernels(c, err, errlen) || read_attributes(c, err, errlen)) {
        cubin_free(c);
        return -1;
    }
    return 0;
}

_Static_assert(offsetof(struct cubin_kernel, name) == 0 &&
                   offsetof(struct cubin_section, name) == 0,
               "by_name reads an entry's name as its first member");

/* The index of the entry called name among n entries of `size` bytes each
 * whose first member is their name, or n when none is: one look-up for
 * kernels and sections. */
static size_t by_name(const void *entries, size_t n, size_t size, const char *name)
{
    const unsigned char *p = entries;
    assert(name != NULL);
    for (size_t i = 0; i < n; i++, p += size) {
        const char *entry;
        memcpy(&entry, p, sizeof entry);
        if (strcmp(entry, name) == 0)
            return i;
    }
    return n;
}

const struct cubin_kernel *cubin_kernel_find(const struct cubin *c, const char *name)
{
    assert(c != NULL);
    size_t i = by_name(c->kernels, c->nkernels, sizeof *c->kernels, name);
    return i < c->nkernels ? &c->kernels[i] : NULL;
}

const struct cubin_section *cubin_section_find(const struct cubin *c, const char *name)
{
    assert(c != NULL);
    size_t i = by_name(c->sections, c->nsections, sizeof *c->sections, name);
    return i < c->nsections ? &c->sections[i] : NULL;
}
