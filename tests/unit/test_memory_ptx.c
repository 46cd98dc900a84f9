/*
 * Unit tests of the memory probe's kernels (probes/memory_ptx.c): the PTX
 * text, the check of the machine code it compiles to, and the random ring
 * the chases follow (mem_random_cycle).
 *
 * DESIGN
 * Golden files: every module for sm_90 must equal
 * tests/fixtures/ptx/memory_<name>.ptx byte for byte (after a deliberate
 * change, GPUPROBE_UPDATE_GOLDEN=1 rewrites them; review the diff). The
 * structure is checked apart from the goldens, so a golden rewritten in
 * error is still caught: each timed region's count of the intended load,
 * the clock reads, the nounroll pragmas, the target. The machine-code
 * check runs on committed cubins that ptxas 13.0 made from the goldens
 * (memory_<name>.sm_90.cubin), so it is tested without a toolkit: each must
 * verify, and copies with one load's opcode changed, the wrong kernel's
 * expectations, garbage and truncation must not. Where ptxas exists
 * (/usr/local/cuda/bin/ptxas, or $PTXAS) the current text is also compiled
 * and checked; elsewhere that test is skipped with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes/gpu/cubin.h"
#include "probes/memory.h"
#include "probes/gpu/sass.h"
#include "tests/unit/support/ptxas.h"
#include "tests/unit/support/tmpfile.h"

#define GOLDEN_DIR "tests/fixtures/ptx/"
#define PTXAS_HINT "/usr/local/cuda/bin/ptxas"

/* ---- helpers ------------------------------------------------------------ */


static void golden_path(char *buf, size_t len, enum mem_kernel_id id, const char *suffix)
{
    snprintf(buf, len, GOLDEN_DIR "memory_%s%s", mem_kernels[id].name, suffix);
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = text; (p = strstr(p, needle)); p += len)
        n++;
    return n;
}

static int timed(enum mem_kernel_id id) { return mem_kernels[id].entry != NULL; }

static int total_loads(enum mem_kernel_id id)
{
    int n = 0;
    for (int r = 0; r < mem_kernels[id].regions; r++)
        n += mem_kernels[id].region_loads[r];
    return n;
}

/* Fails with the first line where got and want differ. */
static void same_text(const char *name, const char *got, const char *want)
{
    int line = 1;
    const char *g = got, *w = want;
    while (*g && *g == *w) {
        line += *g == '\n';
        g++, w++;
    }
    if (*g || *w)
        fail_msg("%s differs from its golden file at line %d (GPUPROBE_UPDATE_GOLDEN=1 "
                 "rewrites it)", name, line);
}

/* ---- the text ----------------------------------------------------------- */

static void test_golden_files(void **state)
{
    (void)state;
    int update = getenv("GPUPROBE_UPDATE_GOLDEN") != NULL;
    for (int id = 0; id < MK_COUNT; id++) {
        char path[256];
        char *text = mem_ptx((enum mem_kernel_id)id, 9, 0);
        assert_non_null(text);
        golden_path(path, sizeof path, (enum mem_kernel_id)id, ".ptx");
        if (update) {
            write_file(path, text);
        } else {
            size_t n;
            char *want = (char *)(uint8_t *)must_read_file(path, &n);
            same_text(path, text, want);
            free(want);
        }
        free(text);
    }
}

static void test_structure(void **state)
{
    (void)state;
    for (int i = 0; i < MK_COUNT; i++) {
        enum mem_kernel_id id = (enum mem_kernel_id)i;
        char *text = mem_ptx(id, 9, 0);
        assert_non_null(text);
        assert_non_null(strstr(text, ".target sm_90\n"));
        if (!timed(id)) {
            assert_non_null(strstr(text, ".entry build("));
            assert_non_null(strstr(text, ".entry warm("));
            assert_int_equal(count_of(text, "%clock64"), 0);
            free(text);
            continue;
        }
        char load[64], entry[64];
        snprintf(load, sizeof load, "\t%s ", mem_kernels[id].ptx_load);
        snprintf(entry, sizeof entry, ".entry %s(", mem_kernels[id].entry);
        assert_non_null(strstr(text, entry));
        /* the chases' loads are in the loop body once; departure's in each region */
        assert_int_equal(count_of(text, load), (size_t)total_loads(id));
        assert_int_equal(count_of(text, "%clock64"), 2 * (size_t)mem_kernels[id].regions);
        assert_int_equal(count_of(text, ".pragma \"nounroll\";"), id <= MK_CHASE_SHARED ? 2 : 1);
        free(text);
    }
}

static void test_other_targets(void **state)
{
    (void)state;
    char *text = mem_ptx(MK_CHASE_CG, 8, 0);
    assert_non_null(text);
    assert_non_null(strstr(text, ".target sm_80\n"));
    free(text);
    assert_null(mem_ptx(MK_COUNT, 9, 0));
}

static void test_chase_steps(void **state)
{
    (void)state;
    assert_int_equal(mem_chase_steps(8), MEM_K_MIN);
    assert_int_equal(mem_chase_steps(MEM_K_MIN), MEM_K_MIN);
    assert_int_equal(mem_chase_steps(5000), 5024); /* rounded up to MEM_UNROLL */
    assert_int_equal(mem_chase_steps(MEM_K_MAX), MEM_K_MAX);
    assert_int_equal(mem_chase_steps(2000000), MEM_K_MAX);
    assert_int_equal(mem_chase_steps(5000) % MEM_UNROLL, 0);
    assert_true(mem_chase_covered(MEM_K_MAX));
    assert_false(mem_chase_covered(MEM_K_MAX + 1));
}

/* ---- the ring ----------------------------------------------------------- */

/* 1 if following a from 0 visits all n elements and comes back after n. */
static int one_cycle(const uint32_t *a, size_t n)
{
    size_t i = 0, steps = 0;
    do {
        if (a[i] >= n)
            return 0;
        i = a[i];
        steps++;
    } while (i != 0 && steps <= n);
    return steps == n;
}

static void test_random_cycle(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 2, 3, 7, 1000, 65536, 1966080};
    uint32_t *a = malloc(sizes[6] * sizeof *a), *b = malloc(sizes[6] * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        mem_random_cycle(a, sizes[k], MEM_SEED ^ sizes[k]);
        assert_true(one_cycle(a, sizes[k]));
    }
    mem_random_cycle(a, 1000, 42);
    mem_random_cycle(b, 1000, 42);
    assert_memory_equal(a, b, 1000 * sizeof *a);
    mem_random_cycle(b, 1000, 43);
    assert_true(memcmp(a, b, 1000 * sizeof *a) != 0);
    /* both cycles of three elements come up */
    int seen[2] = {0, 0};
    for (uint64_t seed = 0; seed < 64; seed++) {
        mem_random_cycle(a, 3, seed);
        seen[a[0] == 1]++;
    }
    assert_true(seen[0] > 8 && seen[1] > 8);
    free(a);
    free(b);
}

/* ---- the machine-code check --------------------------------------------- */

static int verified(const json_t *o) { return json_is_true(json_object_get(o, "verified")); }

static json_t *check_fixture(enum mem_kernel_id as, enum mem_kernel_id file)
{
    char path[256];
    size_t n;
    golden_path(path, sizeof path, file, ".sm_90.cubin");
    uint8_t *cubin = (uint8_t *)must_read_file(path, &n);
    json_t *o = mem_sass_check(as, cubin, n);
    free(cubin);
    assert_non_null(o);
    return o;
}

static void test_sass_fixtures_verify(void **state)
{
    (void)state;
    for (int i = 0; i < MK_COUNT; i++) {
        enum mem_kernel_id id = (enum mem_kernel_id)i;
        if (!timed(id))
            continue;
        json_t *o = check_fixture(id, id);
        if (!verified(o))
            fail_msg("%s: %s", mem_kernels[id].name, json_dumps(o, JSON_COMPACT));
        const json_t *regions = json_object_get(o, "regions");
        assert_int_equal(json_array_size(regions), (size_t)mem_kernels[id].regions);
        for (int r = 0; r < mem_kernels[id].regions; r++) {
            const json_t *reg = json_array_get(regions, (size_t)r);
            assert_int_equal(json_integer_value(json_object_get(reg, "found")),
                             mem_kernels[id].region_loads[r]);
            assert_int_equal(json_integer_value(json_object_get(reg, "other_loads")), 0);
            assert_int_equal(json_integer_value(json_object_get(reg, "wrong_ordering")), 0);
        }
        assert_null(json_object_get(o, "listing"));
        json_decref(o);
    }
}

static void test_sass_wrong_expectations(void **state)
{
    (void)state;
    /* the shared chase's cubin has a kernel "chase", but of LDS, not LDG */
    json_t *o = check_fixture(MK_CHASE_CA, MK_CHASE_SHARED);
    assert_false(verified(o));
    const json_t *reg = json_array_get(json_object_get(o, "regions"), 0);
    assert_int_equal(json_integer_value(json_object_get(reg, "found")), 0);
    assert_int_equal(json_integer_value(json_object_get(reg, "other_loads")), MEM_UNROLL);
    assert_true(json_is_string(json_object_get(o, "listing")));
    json_decref(o);
    /* the .ca chase's loads are LDG.E.64.STRONG.SM: as the .cg chase they
     * have the right count and the wrong ordering, and the reverse */
    static const enum mem_kernel_id swapped[][2] = {{MK_CHASE_CG, MK_CHASE_CA}, {MK_CHASE_CA, MK_CHASE_CG},
                                                    {MK_DEP_COAL_CA, MK_DEP_COAL_CG}};
    for (size_t i = 0; i < sizeof swapped / sizeof swapped[0]; i++) {
        o = check_fixture(swapped[i][0], swapped[i][1]);
        assert_false(verified(o));
        reg = json_array_get(json_object_get(o, "regions"), mem_kernels[swapped[i][0]].regions - 1);
        assert_int_equal(json_integer_value(json_object_get(reg, "found")),
                         json_integer_value(json_object_get(reg, "expect")));
        assert_int_equal(json_integer_value(json_object_get(reg, "wrong_ordering")),
                         json_integer_value(json_object_get(reg, "found")));
        json_decref(o);
    }
    /* a departure check on a chase cubin: no kernel "depart" */
    o = check_fixture(MK_DEP_COAL_CG, MK_CHASE_CG);
    assert_false(verified(o));
    assert_non_null(strstr(json_string_value(json_object_get(o, "error")), "no such kernel"));
    json_decref(o);
    o = mem_sass_check(MK_SUPPORT, "x", 1);
    assert_false(verified(o));
    json_decref(o);
}

/* Changes the first LDG of the chase's timed region into an LDS: the check
 * must see one load too few and one other load. */
static void test_sass_edited_code(void **state)
{
    (void)state;
    char path[256];
    size_t n;
    struct cubin c;
    char err[256];
    golden_path(path, sizeof path, MK_CHASE_CG, ".sm_90.cubin");
    uint8_t *cubin = (uint8_t *)must_read_file(path, &n);
    assert_int_equal(cubin_parse(&c, cubin, n, err, sizeof err), 0);
    const struct cubin_kernel *k = cubin_kernel_find(&c, "chase");
    assert_non_null(k);
    struct sass_region r;
    assert_int_equal(sass_clock_region(k->text, k->text_size, 0, &r), 0);
    size_t at = (size_t)(k->text - cubin) + r.first * SASS_INSN_BYTES;
    char mn[SASS_MNEMONIC_MAX];
    struct sass_insn in = sass_decode(k->text, r.first * SASS_INSN_BYTES);
    assert_string_equal(sass_mnemonic(&in, mn), "LDG");
    cubin_free(&c);
    /* opcode bits [8:0]: LDG is 0x181, LDS 0x184 (docs/sass.md) */
    cubin[at] = (uint8_t)((cubin[at] & ~0x0f) | 0x04);
    json_t *o = mem_sass_check(MK_CHASE_CG, cubin, n);
    assert_false(verified(o));
    const json_t *reg = json_array_get(json_object_get(o, "regions"), 0);
    assert_int_equal(json_integer_value(json_object_get(reg, "found")), MEM_UNROLL - 1);
    assert_int_equal(json_integer_value(json_object_get(reg, "other_loads")), 1);
    json_decref(o);
    free(cubin);
}

static void test_sass_bad_cubins(void **state)
{
    (void)state;
    char path[256];
    size_t n;
    golden_path(path, sizeof path, MK_CHASE_CA, ".sm_90.cubin");
    uint8_t *cubin = (uint8_t *)must_read_file(path, &n);
    json_t *o = mem_sass_check(MK_CHASE_CA, cubin, n / 2);
    assert_false(verified(o));
    assert_true(json_is_string(json_object_get(o, "error")));
    json_decref(o);
    memset(cubin, 0x5a, 64);
    o = mem_sass_check(MK_CHASE_CA, cubin, n);
    assert_false(verified(o));
    assert_true(json_is_string(json_object_get(o, "error")));
    json_decref(o);
    free(cubin);
}

/* ---- with the toolkit --------------------------------------------------- */

static void test_ptxas_compiles_and_verifies(void **state)
{
    struct tmp *t = *state;
    const char *ptxas = ptxas_find();
    if (!ptxas) {
        print_message("ptxas not found ($PTXAS or " PTXAS_HINT "): compiling the kernels is skipped\n");
        skip();
    }
    char cubin_path[160];
    snprintf(cubin_path, sizeof cubin_path, "%s/k.cubin", t->dir);
    for (int i = 0; i < MK_COUNT; i++) {
        enum mem_kernel_id id = (enum mem_kernel_id)i;
        char *text = mem_ptx(id, 9, 0);
        assert_non_null(text);
        write_file(t->path, text);
        free(text);
        int rc = ptxas_run(ptxas, t->path, cubin_path);
        if (rc != 0)
            fail_msg("ptxas failed (%d) on %s", rc, mem_kernels[id].name);
        if (timed(id)) {
            size_t n;
            uint8_t *cubin = (uint8_t *)must_read_file(cubin_path, &n);
            json_t *o = mem_sass_check(id, cubin, n);
            if (!verified(o))
                fail_msg("%s: %s", mem_kernels[id].name, json_dumps(o, JSON_COMPACT));
            json_decref(o);
            free(cubin);
        }
        unlink(cubin_path);
    }
}

static int setup_tmp(void **state) { return tmp_setup(state, "memptx", "k.ptx"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_files),
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_other_targets),
        cmocka_unit_test(test_chase_steps),
        cmocka_unit_test(test_random_cycle),
        cmocka_unit_test(test_sass_fixtures_verify),
        cmocka_unit_test(test_sass_wrong_expectations),
        cmocka_unit_test(test_sass_edited_code),
        cmocka_unit_test(test_sass_bad_cubins),
        cmocka_unit_test_setup_teardown(test_ptxas_compiles_and_verifies, setup_tmp,
                                        tmp_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
