/*
 * Unit tests of the pure half of the patch-and-run harness (probes/patch.c)
 * on the committed fixtures (tests/fixtures/cubins/), with no GPU.
 *
 * DESIGN
 * Text offsets are checked against the oracle, not against the reader that
 * computed them: the first instruction of every kernel in cuobjdump's
 * disassembly (NAME.sass) must be the 16 bytes found at the computed file
 * offset. Edits are checked on whole files: after patch_apply, the bytes of
 * the edited instructions hold the new field values with nothing else in
 * them changed, every other byte of the file is as it was, and the file
 * still parses. Refused edit lists (index past the end, value too wide,
 * unknown kernel, not a cubin, one bad edit at the end of a good list)
 * must leave every byte as it was. A list passed wrongly (a count with no
 * array, an edit of a field that does not exist) breaks the harness's
 * contract instead: the call must abort, in a child (test_contracts).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/cubin.h"
#include "probes/gpu/patch.h"
#include "probes/gpu/sass.h"
#include "tests/unit/support/death.h"

#define FIXDIR "tests/fixtures/cubins/"

static const char *const fixtures[] = {
    "fp32", "half_double", "integer", "cvt_mufu", "memory", "vector", "arch_sm80", "arch_sm75",
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

static uint8_t *read_all(const char *name, const char *ext, size_t *size)
{
    char path[256];
    snprintf(path, sizeof path, FIXDIR "%s.%s", name, ext);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s (run the tests from the repository root)", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    uint8_t *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* The two words of the instruction at offset 0000 of each function in the oracle,
 * called back with the function's name. */
static size_t each_oracle_entry(const char *sass, void (*fn)(const char *name, uint64_t lo,
                                                             uint64_t hi, void *arg),
                                void *arg)
{
    size_t count = 0;
    for (const char *p = sass; (p = strstr(p, "Function : ")) != NULL;) {
        p += strlen("Function : ");
        char name[128];
        size_t n = strcspn(p, "\r\n");
        assert_true(n < sizeof name);
        memcpy(name, p, n);
        name[n] = '\0';
        const char *first = strstr(p, "/*0000*/");
        assert_non_null(first);
        const char *w1 = strstr(first, "/* 0x");
        assert_non_null(w1);
        const char *w2 = strstr(w1 + 5, "/* 0x");
        assert_non_null(w2);
        fn(name, strtoull(w1 + 3, NULL, 16), strtoull(w2 + 3, NULL, 16), arg);
        count++;
    }
    return count;
}

struct offset_check {
    const uint8_t *cubin;
    size_t size;
};

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void check_offset(const char *name, uint64_t lo, uint64_t hi, void *arg)
{
    const struct offset_check *oc = arg;
    size_t off, len;
    char err[256];
    if (patch_find_text(oc->cubin, oc->size, name, &off, &len, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    assert_true(off + len <= oc->size && len >= SASS_INSN_BYTES);
    if (le64(oc->cubin + off) != lo || le64(oc->cubin + off + 8) != hi)
        fail_msg("%s: the bytes at file offset 0x%zx are not cuobjdump's first instruction", name, off);
}

static void test_text_offsets_match_oracle(void **state)
{
    (void)state;
    size_t kernels = 0;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        size_t tsize;
        struct offset_check oc;
        uint8_t *cub = read_all(fixtures[i], "cubin", &oc.size);
        char *sass = (char *)read_all(fixtures[i], "sass", &tsize);
        oc.cubin = cub;
        kernels += each_oracle_entry(sass, check_offset, &oc);
        free(sass);
        free(cub);
    }
    assert_true(kernels >= 60);
}

/* Applies one edit at each of a few instructions of every kernel and
 * checks the whole file. */
static void test_apply_edits_whole_file(void **state)
{
    (void)state;
    static const struct {
        enum sass_field f;
        unsigned v;
    } kinds[] = {
        {SASS_STALL, 15}, {SASS_YIELD, 1},  {SASS_WBAR, 2},      {SASS_RBAR, 4},
        {SASS_WAIT, 0x3f}, {SASS_REUSE, 5}, {SASS_RD, 200},      {SASS_RA, SASS_RZ},
        {SASS_RB, 17},    {SASS_RC, 3},     {SASS_PRED, 1},      {SASS_PRED_NEG, 1},
        {SASS_OPCODE_BASE, 0x1ff}, {SASS_FORM, 6}, {SASS_SREG, 0x52}, {SASS_OPCODE, 0xabc},
    };
    size_t edited = 0;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        size_t size;
        uint8_t *orig = read_all(fixtures[i], "cubin", &size);
        struct cubin c;
        char err[256];
        assert_int_equal(cubin_parse(&c, orig, size, err, sizeof err), 0);
        for (size_t k = 0; k < c.nkernels; k++) {
            const char *name = c.kernels[k].name;
            size_t n = c.kernels[k].text_size / SASS_INSN_BYTES;
            uint8_t *copy = malloc(size);
            assert_non_null(copy);
            memcpy(copy, orig, size);
            struct patch_edit edits[3];
            size_t ne = 0;
            size_t idx[3] = {0, n / 2, n - 1};
            for (size_t e = 0; e < 3; e++) {
                if (e && idx[e] == idx[e - 1])
                    continue;
                size_t which = (k + e) % (sizeof kinds / sizeof kinds[0]);
                edits[ne++] = (struct patch_edit){idx[e], kinds[which].f, kinds[which].v};
            }
            if (patch_apply(copy, size, name, edits, ne, err, sizeof err) != 0)
                fail_msg("%s/%s: %s", fixtures[i], name, err);
            size_t off = (size_t)(c.kernels[k].text - c.data);
            /* Outside the edited instructions, nothing changed. */
            for (size_t b = 0; b < size; b++) {
                int in_edit = 0;
                for (size_t e = 0; e < ne; e++)
                    in_edit |= b >= off + edits[e].index * SASS_INSN_BYTES &&
                               b < off + (edits[e].index + 1) * SASS_INSN_BYTES;
                if (!in_edit && copy[b] != orig[b])
                    fail_msg("%s/%s: byte 0x%zx changed outside the edits", fixtures[i], name, b);
            }
            /* Inside: the new value, and every bit outside the field as before. */
            for (size_t e = 0; e < ne; e++) {
                size_t at = off + edits[e].index * SASS_INSN_BYTES;
                struct sass_insn was = sass_decode(orig, at), now = sass_decode(copy, at);
                assert_int_equal(sass_field(&now, edits[e].field), edits[e].value);
                assert_int_equal(sass_set_field(&was, edits[e].field, edits[e].value), 0);
                assert_true(was.lo == now.lo && was.hi == now.hi);
                edited++;
            }
            struct cubin again;
            if (cubin_parse(&again, copy, size, err, sizeof err) != 0)
                fail_msg("%s/%s: the patched file no longer parses: %s", fixtures[i], name, err);
            cubin_free(&again);
            free(copy);
        }
        cubin_free(&c);
        free(orig);
    }
    assert_true(edited >= 150);
}

static void expect_refused(const uint8_t *orig, size_t size, const char *kernel,
                           const struct patch_edit *edits, size_t n, const char *why)
{
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, orig, size);
    char err[256] = "";
    assert_int_equal(patch_apply(copy, size, kernel, edits, n, err, sizeof err), -1);
    if (!strstr(err, why))
        fail_msg("expected a reason with '%s', got '%s'", why, err);
    assert_memory_equal(copy, orig, size);
    free(copy);
}

static void test_refusals_leave_the_file_alone(void **state)
{
    (void)state;
    size_t size, off, len;
    uint8_t *orig = read_all("fp32", "cubin", &size);
    char err[256];
    assert_int_equal(patch_find_text(orig, size, "lat_fadd", &off, &len, err, sizeof err), 0);
    size_t n = len / SASS_INSN_BYTES;
    struct patch_edit past = {n, SASS_STALL, 1};
    expect_refused(orig, size, "lat_fadd", &past, 1, "past the end");
    struct patch_edit wide = {0, SASS_PRED, 8};
    expect_refused(orig, size, "lat_fadd", &wide, 1, "does not fit field pred");
    struct patch_edit good_then_bad[] = {{0, SASS_STALL, 3}, {1, SASS_RD, 10}, {2, SASS_WAIT, 64}};
    expect_refused(orig, size, "lat_fadd", good_then_bad, 3, "edit 2");
    expect_refused(orig, size, "no_such_kernel", good_then_bad, 1, "no function 'no_such_kernel'");
    expect_refused(orig, 40, "lat_fadd", good_then_bad, 1, "not a usable cubin");
    /* A list of no edits is accepted and changes nothing. */
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, orig, size);
    assert_int_equal(patch_apply(copy, size, "lat_fadd", NULL, 0, err, sizeof err), 0);
    assert_memory_equal(copy, orig, size);
    free(copy);
    free(orig);
}

/* patch_verify accepts exactly the listed edits and names the first
 * instruction that differs otherwise. */
static void test_verify(void **state)
{
    (void)state;
    size_t size, off, len;
    uint8_t *orig = read_all("fp32", "cubin", &size);
    char err[256] = "";
    assert_int_equal(patch_find_text(orig, size, "lat_fadd", &off, &len, err, sizeof err), 0);
    struct patch_edit e[] = {{1, SASS_STALL, 9}, {1, SASS_YIELD, 1}, {3, SASS_REUSE, 15}};
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, orig, size);
    assert_int_equal(patch_apply(copy, size, "lat_fadd", e, 3, err, sizeof err), 0);
    assert_int_equal(patch_verify(orig, copy, size, "lat_fadd", e, 3, err, sizeof err), 0);
    /* a list that leaves one edit out no longer explains the bytes */
    assert_int_equal(patch_verify(orig, copy, size, "lat_fadd", e, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "0x30"));
    /* one more bit flipped in an unedited instruction */
    copy[off + 5 * SASS_INSN_BYTES] ^= 0x10;
    assert_int_equal(patch_verify(orig, copy, size, "lat_fadd", e, 3, err, sizeof err), -1);
    assert_non_null(strstr(err, "0x50"));
    copy[off + 5 * SASS_INSN_BYTES] ^= 0x10;
    /* a byte outside the kernel's text */
    copy[0] ^= 1;
    assert_int_equal(patch_verify(orig, copy, size, "lat_fadd", e, 3, err, sizeof err), -1);
    assert_non_null(strstr(err, "outside"));
    free(copy);
    free(orig);
}

/* patch_find_mnemonic agrees with the oracle's listing of lat_fadd. */
static void test_find_mnemonic(void **state)
{
    (void)state;
    size_t size, tsize;
    uint8_t *cub = read_all("fp32", "cubin", &size);
    char *sass = (char *)read_all("fp32", "sass", &tsize), err[256];
    const char *fn = strstr(sass, "Function : lat_fadd\n");
    assert_non_null(fn);
    const char *next = strstr(fn + 1, "Function : ");
    /* The oracle's index of the 1st and 3rd FADD and of EXIT. */
    long want[3] = {-1, -1, -1};
    long idx = 0, fadds = 0;
    for (const char *p = fn; (p = strstr(p, "*/ ")) != NULL && (!next || p < next); p++) {
        const char *line_start = p;
        while (line_start > fn && line_start[-1] != '\n')
            line_start--;
        if (!strstr(line_start, "/*") || line_start[strspn(line_start, " \t")] != '/' ||
            line_start[strspn(line_start, " \t") + 2] == ' ')
            continue;                /* not an instruction line */
        const char *text = p + 3;
        while (*text == ' ')
            text++;
        if (strncmp(text, "FADD", 4) == 0 && (text[4] == ' ' || text[4] == '.')) {
            if (fadds == 0)
                want[0] = idx;
            if (fadds == 2)
                want[1] = idx;
            fadds++;
        }
        if (strncmp(text, "EXIT", 4) == 0 && want[2] < 0)
            want[2] = idx;
        idx++;
    }
    assert_true(want[0] >= 0 && want[1] > want[0] && want[2] > want[1]);
    assert_int_equal(patch_find_mnemonic(cub, size, "lat_fadd", "FADD", 0, err, sizeof err), want[0]);
    assert_int_equal(patch_find_mnemonic(cub, size, "lat_fadd", "FADD", 2, err, sizeof err), want[1]);
    assert_int_equal(patch_find_mnemonic(cub, size, "lat_fadd", "EXIT", 0, err, sizeof err), want[2]);
    assert_int_equal(patch_find_mnemonic(cub, size, "lat_fadd", "FADD", 1000, err, sizeof err), -1);
    assert_non_null(strstr(err, "not 1001"));
    assert_int_equal(patch_find_mnemonic(cub, size, "lat_fadd", "DFMA", 0, err, sizeof err), -1);
    assert_int_equal(patch_find_mnemonic(cub, size, "nope", "FADD", 0, err, sizeof err), -1);
    free(sass);
    free(cub);
}

/* ---- contracts ------------------------------------------------------------ */

/* A fixture's bytes for a child to break a contract on. */
struct cubin_copy {
    uint8_t *bytes;
    size_t size;
};

static void apply_count_without_edits(void *arg)
{
    struct cubin_copy *c = arg;
    char err[128];
    (void)patch_apply(c->bytes, c->size, "lat_fadd", NULL, 1, err, sizeof err);
}

static void apply_edit_of_no_field(void *arg)
{
    struct cubin_copy *c = arg;
    struct patch_edit nofield = {0, SASS_FIELD_COUNT, 0};
    char err[128];
    (void)patch_apply(c->bytes, c->size, "lat_fadd", &nofield, 1, err, sizeof err);
}

static void rewrite_count_without_bits(void *arg)
{
    struct cubin_copy *c = arg;
    char err[128];
    (void)patch_rewrite(c->bytes, c->size, "lat_fadd", NULL, 2, NULL, 0, err, sizeof err);
}

static void verify_count_without_edits(void *arg)
{
    struct cubin_copy *c = arg;
    char err[128];
    (void)patch_verify(c->bytes, c->bytes, c->size, "lat_fadd", NULL, 3, err, sizeof err);
}

static void find_text_of_no_buffer(void *arg)
{
    size_t off, len;
    char err[128];
    (void)arg;
    (void)patch_find_text(NULL, 0, "lat_fadd", &off, &len, err, sizeof err);
}

/* The same calls kept within their contracts must return. */
static void within_contract(void *arg)
{
    struct cubin_copy *c = arg;
    struct patch_edit wide = {0, SASS_PRED, 8};
    char err[128];
    if (patch_apply(c->bytes, c->size, "lat_fadd", NULL, 0, err, sizeof err) != 0 ||
        patch_apply(c->bytes, c->size, "lat_fadd", &wide, 1, err, sizeof err) != -1 ||
        patch_verify(c->bytes, c->bytes, c->size, "lat_fadd", NULL, 0, err, sizeof err) != 0)
        abort();
}

static void test_contracts(void **state)
{
    (void)state;
    struct cubin_copy c;
    c.bytes = read_all("fp32", "cubin", &c.size);
    assert_true(dies_by_assert(apply_count_without_edits, &c));
    assert_true(dies_by_assert(apply_edit_of_no_field, &c));
    assert_true(dies_by_assert(rewrite_count_without_bits, &c));
    assert_true(dies_by_assert(verify_count_without_edits, &c));
    assert_true(dies_by_assert(find_text_of_no_buffer, NULL));
    assert_false(dies_by_assert(within_contract, &c));
    free(c.bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_offsets_match_oracle),
        cmocka_unit_test(test_apply_edits_whole_file),
        cmocka_unit_test(test_refusals_leave_the_file_alone),
        cmocka_unit_test(test_find_mnemonic),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_contracts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
