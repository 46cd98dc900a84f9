/*
 * Unit tests of the worker's SASS side of a validation kernel's
 * description (server/jobs/kind_model_sass.c).
 *
 * DESIGN
 * A temporary folder stands in for the worker's --cubin-dir
 * (GPUPROBE_CUBIN_DIR), holding a fixture cubin under the name
 * gpu_module_build gives a validation module (validation_KERNEL.cubin).
 * With it the description gains the control-flow object and the counts
 * from it; without the folder, without the file, or with a PTX the cubin
 * did not come from, it gains the reason instead and keeps its PTX counts.
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

#include "server/jobs/kind_model_sass.h"
#include "tests/unit/support/tmpfile.h"

#define MODEL "tests/fixtures/cubins/model/capture-validation_"
#define PTXS "tests/fixtures/ptx/capture/validation_"

static int setup(void **state)
{
    return tmp_setup(state, "kind-model-sass", "validation_mixed.cubin");
}

static int teardown(void **state)
{
    unsetenv("GPUPROBE_CUBIN_DIR");
    return tmp_teardown(state);
}

/* The mixed kernel's entry of a validation document; with `drop_fma`, its
 * PTX loses one of the loop's four fma (a PTX the cubin did not come from). */
static json_t *kernel(int drop_fma)
{
    char *text = must_read_file(PTXS "mixed.ptx", NULL);
    const char *fma = "\tfma.rn.f32 %x0, %x0, %m, %c;\n";
    char *at = strstr(text, fma);
    assert_non_null(at);
    if (drop_fma)
        memmove(at, at + strlen(fma), strlen(at + strlen(fma)) + 1);
    json_t *k = json_pack("{s:s, s:s, s:s}", "name", "mixed", "entry", "mixed", "ptx", text);
    free(text);
    return k;
}

static struct pd_launch launch(void)
{
    struct pd_launch l;
    memset(&l, 0, sizeof l);
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = 256;
    l.block[1] = l.block[2] = 1;
    l.nparams = 1;
    snprintf(l.params[0].name, sizeof l.params[0].name, "p_iters");
    l.params[0].value = 16;
    return l;
}

static void keep_cubin(const struct tmp *t)
{
    size_t size;
    char *cubin = must_read_file(MODEL "mixed.cubin", &size);
    FILE *f = fopen(t->path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(cubin, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    free(cubin);
    setenv("GPUPROBE_CUBIN_DIR", t->dir, 1);
}

static void test_attached(void **state)
{
    struct pd_launch l = launch();
    json_t *k = kernel(0), *desc = json_object();
    keep_cubin(*state);
    model_sass_attach(desc, k, &l);
    const json_t *sass = json_object_get(desc, "sass");
    const json_t *counts = json_object_get(desc, "sass_counts");
    assert_non_null(sass);
    assert_null(json_object_get(desc, "sass_error"));
    assert_int_equal(json_array_size(json_object_get(sass, "loops")), 1);
    /* 64 FFMA in the loop, 3 FADD, and the 4 FFMA of the last single trip
     * issued with P0 false */
    const json_t *pw = json_object_get(counts, "per_warp");
    assert_true(json_number_value(json_object_get(pw, "fp32")) == 64 + 3 + 4);
    assert_string_equal(json_string_value(json_object_get(counts, "source")), "sass");
    json_decref(desc);
    json_decref(k);
}

static void test_reasons(void **state)
{
    struct tmp *t = *state;
    struct pd_launch l = launch();
    json_t *k = kernel(0), *desc = json_object();
    /* no folder */
    unsetenv("GPUPROBE_CUBIN_DIR");
    model_sass_attach(desc, k, &l);
    const char *why = json_string_value(json_object_get(desc, "sass_error"));
    assert_non_null(strstr(why, "--cubin-dir"));
    assert_null(json_object_get(desc, "sass"));
    /* a folder without the module */
    setenv("GPUPROBE_CUBIN_DIR", t->dir, 1);
    model_sass_attach(desc, k, &l);
    why = json_string_value(json_object_get(desc, "sass_error"));
    assert_non_null(strstr(why, "cannot read"));
    /* a PTX the cubin did not come from: the control flow, and why no counts */
    json_decref(k);
    k = kernel(1);
    keep_cubin(t);
    model_sass_attach(desc, k, &l);
    assert_non_null(json_object_get(desc, "sass"));
    assert_null(json_object_get(desc, "sass_counts"));
    assert_non_null(strstr(json_string_value(json_object_get(desc, "sass_error")),
                           "matches no PTX loop"));
    json_decref(desc);
    json_decref(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_attached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reasons, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
