/*
 * Unit tests of the distributed-shared-memory probe's host side
 * (probes/dsmem_run.c) on a stand-in Driver API: the probe never ran on a
 * GPU before it was written, so its calls, its reading of the kernels'
 * output and its refusals are checked against a table of functions that
 * behave as the kernels' contracts say (dsmem.h).
 *
 * DESIGN
 * struct gpu takes its struct cuda_api by pointer, so the test hands
 * dsm_probe one of its own. The "JIT" answers every module with the
 * committed fixture cubin (tests/fixtures/ptx/dsmem_4.sm_90.cubin: the
 * machine-code check runs on real compiler output) and remembers the
 * module's .reqnctapercluster from the PTX it was given. A launch checks
 * the cluster attribute against that size, then writes what the kernel
 * would: the chase's cycles (30 a load from rank 0's ring, 200 + rank
 * from another's), the cluster size, each block's %smid (rank + 10);
 * the stream's cycles per block. Switches make the stand-in refuse 16
 * (no cluster fits), refuse the launch attribute or the occupancy query,
 * lack cuLaunchKernelEx or report another width, and each case's entries
 * are checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/results.h"
#include "probes/dsmem.h"
#include "probes/gpu/gpu.h"
#include "tests/unit/support/resultdb.h"
#include "tests/unit/support/tmpfile.h"

#define CUBIN "tests/fixtures/ptx/dsmem_4.sm_90.cubin"
#define LAT ((CUfunction)(uintptr_t)1)
#define BW ((CUfunction)(uintptr_t)2)

static struct {
    unsigned size;             /* the loaded module's .reqnctapercluster */
    int refuse_16, refuse_attr, wrong_width, refuse_query;
    int launches, attr_launches, nonportable_set, memsets;
    char *cubin;
    size_t cubin_size;
} fake;

static CUresult link_create(unsigned n, int *o, void **v, CUlinkState *st)
{
    (void)n, (void)o, (void)v;
    *st = (CUlinkState)(uintptr_t)1;
    return CUDA_SUCCESS;
}
static CUresult link_add(CUlinkState st, int type, void *data, size_t size, const char *name, unsigned n,
                         int *o, void **v)
{
    (void)st, (void)type, (void)size, (void)name, (void)n, (void)o, (void)v;
    const char *at = strstr(data, ".reqnctapercluster ");
    fake.size = at ? (unsigned)atoi(at + 19) : 0;
    return CUDA_SUCCESS;
}
static CUresult link_complete(CUlinkState st, void **cubin, size_t *size)
{
    (void)st;
    *cubin = fake.cubin;
    *size = fake.cubin_size;
    return CUDA_SUCCESS;
}
static CUresult link_destroy(CUlinkState st) { (void)st; return CUDA_SUCCESS; }
static CUresult module_load(CUmodule *m, const void *image) { (void)image; *m = (CUmodule)(uintptr_t)1; return CUDA_SUCCESS; }
static CUresult module_unload(CUmodule m) { (void)m; return CUDA_SUCCESS; }
static CUresult get_function(CUfunction *fn, CUmodule m, const char *name)
{
    (void)m;
    *fn = strcmp(name, "dsm_lat") == 0 ? LAT : strcmp(name, "dsm_bw") == 0 ? BW : NULL;
    return *fn ? CUDA_SUCCESS : 500;
}
static CUresult set_attr(CUfunction fn, int attr, int value)
{
    (void)fn;
    if (attr == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED && value == 1)
        fake.nonportable_set++;
    return CUDA_SUCCESS;
}
static CUresult get_attr(int *value, int attr, CUfunction fn)
{
    (void)fn;
    if (attr != CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH)
        return CUDA_ERROR_INVALID_VALUE;
    *value = fake.wrong_width && fake.size == 8 ? 4 : (int)fake.size;
    return CUDA_SUCCESS;
}
static CUresult max_clusters(int *n, CUfunction fn, const CUlaunchConfig *cfg)
{
    (void)fn;
    if (fake.refuse_query || cfg->numAttrs != 1 || cfg->attrs[0].value.cluster_dim.x != fake.size)
        return CUDA_ERROR_INVALID_VALUE;
    *n = fake.refuse_16 && fake.size == 16 ? 0 : 132 / (int)fake.size / 2;
    return CUDA_SUCCESS;
}
static CUresult mem_alloc(CUdeviceptr *p, size_t bytes) { *p = (CUdeviceptr)(uintptr_t)calloc(1, bytes); return *p ? CUDA_SUCCESS : 2; }
static CUresult mem_free(CUdeviceptr p) { free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
static CUresult dtoh(void *dst, CUdeviceptr src, size_t bytes) { memcpy(dst, (void *)(uintptr_t)src, bytes); return CUDA_SUCCESS; }
static CUresult sync_ctx(void) { return CUDA_SUCCESS; }
static CUresult memset32(CUdeviceptr p, unsigned v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((uint32_t *)(uintptr_t)p)[i] = v;
    fake.memsets++;
    return CUDA_SUCCESS;
}

/* What the kernels write (dsmem.h's contract). */
static void run_kernel(CUfunction fn, unsigned blocks, void **params)
{
    uint64_t *out = (uint64_t *)(uintptr_t)*(CUdeviceptr *)params[0];
    unsigned arg = *(unsigned *)params[1], trips = *(unsigned *)params[2];
    fake.launches++;
    if (fn == LAT) {
        assert_int_equal(trips, DSM_CHASE_TRIPS);
        out[0] = (uint64_t)(arg == 0 ? 30 : 200 + arg) * trips * DSM_UNROLL;
        out[2] = blocks;
        for (unsigned r = 0; r < blocks; r++)
            out[3 + r] = 10 + r;
    } else {
        assert_int_equal(trips, DSM_BW_TRIPS);
        for (unsigned b = 0; b < blocks; b++) {
            out[3 * b] = (arg ? 400000 : 100000) + (b == blocks - 1 ? 1000 : 0);
            out[3 * b + 1] = blocks;
            out[3 * b + 2] = 10 + b;
        }
    }
}

static CUresult launch_ex(const CUlaunchConfig *cfg, CUfunction fn, void **params, void **extra)
{
    (void)extra;
    assert_int_equal(cfg->gridDimX, fake.size);
    assert_true(cfg->sharedMemBytes > 0);
    if (cfg->numAttrs) {
        if (fake.refuse_attr)
            return CUDA_ERROR_INVALID_VALUE;
        assert_int_equal(cfg->attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
        assert_int_equal(cfg->attrs[0].value.cluster_dim.x, fake.size);
        fake.attr_launches++;
    }
    run_kernel(fn, cfg->gridDimX, params);
    return CUDA_SUCCESS;
}

static CUresult launch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, CUstream s, void **params, void **extra)
{
    (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s, (void)extra;
    run_kernel(fn, gx, params);
    return CUDA_SUCCESS;
}

static struct cuda_api api(int with_ex)
{
    struct cuda_api a;
    memset(&a, 0, sizeof a);
    a.cuLinkCreate = link_create;
    a.cuLinkAddData = link_add;
    a.cuLinkComplete = link_complete;
    a.cuLinkDestroy = link_destroy;
    a.cuModuleLoadData = module_load;
    a.cuModuleUnload = module_unload;
    a.cuModuleGetFunction = get_function;
    a.cuFuncSetAttribute = set_attr;
    a.cuFuncGetAttribute = get_attr;
    a.cuMemAlloc = mem_alloc;
    a.cuMemFree = mem_free;
    a.cuMemcpyDtoH = dtoh;
    a.cuCtxSynchronize = sync_ctx;
    a.cuMemsetD32 = memset32;
    a.cuLaunchKernel = launch;
    if (with_ex) {
        a.cuLaunchKernelEx = launch_ex;
        a.cuOccupancyMaxActiveClusters = max_clusters;
    }
    return a;
}

/* dsm_probe on an H100-like stand-in (SM clock 1500 MHz). */
static json_t *probe(const struct cuda_api *a)
{
    static struct gpu g;
    memset(&g, 0, sizeof g);
    g.cu = a;
    g.info.cc_major = 9;
    g.info.sm_count = 132;
    g.info.shared_memory_per_sm = 233472;
    g.info.shared_memory_per_block_optin = 232448;
    fake.cubin = must_read_file(CUBIN, &fake.cubin_size);
    fake.launches = fake.attr_launches = fake.nonportable_set = fake.memsets = 0;
    json_t *d = dsm_probe(&g, 3, 1500.0);
    free(fake.cubin);
    assert_non_null(d);
    return d;
}

/* The member as the probe wrote it passes the store's check (a memory job
 * whose member the walk refused would fail whole). */
static void store_accepts(const json_t *d)
{
    char *text = json_dumps(d, JSON_COMPACT), err[512];
    json_t *doc = rdb_memory_with("distributed_shared", text);
    if (results_memory_check(doc, err, sizeof err) != 0)
        fail_msg("the store refuses the probe's member: %s", err);
    json_decref(doc);
    free(text);
}

static json_t *size_entry(json_t *d, unsigned n)
{
    json_t *sizes = json_object_get(d, "sizes");
    for (size_t i = 0; i < json_array_size(sizes); i++)
        if (json_integer_value(json_object_get(json_array_get(sizes, i), "asked")) == n)
            return json_array_get(sizes, i);
    fail_msg("no entry for %u", n);
    return NULL;
}

static double median(json_t *e, const char *group, const char *key)
{
    return json_number_value(json_object_get(json_object_get(json_object_get(e, group), key), "median"));
}

static void test_every_size(void **state)
{
    (void)state;
    memset(&fake, 0, sizeof fake);
    fake.refuse_16 = 1;
    struct cuda_api a = api(1);
    json_t *d = probe(&a);
    assert_null(json_object_get(d, "error"));
    assert_true(json_integer_value(json_object_get(d, "block_pad_bytes")) * 2 > 233472 - 2 * 4096);
    for (int i = 0; i < 3; i++) {
        unsigned n = dsm_sizes[i];
        json_t *e = size_entry(d, n);
        assert_true(json_is_true(json_object_get(e, "launched")));
        assert_true(json_is_true(json_object_get(e, "agrees")));
        assert_null(json_object_get(e, "error"));
        assert_int_equal(json_integer_value(json_object_get(e, "distinct_sms")), n);
        assert_int_equal(json_integer_value(json_object_get(e, "max_active_clusters")), 132 / (int)n / 2);
        assert_true(median(e, "latency_cycles", "local") == 30.0);
        assert_true(median(e, "latency_cycles", "neighbour") == 201.0);
        assert_true(median(e, "latency_cycles", "farthest") == 200.0 + (n - 1));
        assert_true(median(e, "bytes_per_clk_sm", "local") == DSM_BW_BLOCK_BYTES / 101000.0);
        assert_true(median(e, "bytes_per_clk_sm", "remote") == DSM_BW_BLOCK_BYTES / 401000.0);
        char key[16];
        snprintf(key, sizeof key, "%u", n);
        assert_true(json_is_true(json_object_get(json_object_get(json_object_get(json_object_get(d, "sass"), key),
                                                                 "dsm_lat"), "verified")));
    }
    /* 16: the width set and read, then refused before any launch */
    json_t *e = size_entry(d, 16);
    assert_false(json_is_true(json_object_get(e, "launched")));
    assert_int_equal(json_integer_value(json_object_get(e, "driver_width")), 16);
    assert_int_equal(json_integer_value(json_object_get(e, "max_active_clusters")), 0);
    assert_non_null(strstr(json_string_value(json_object_get(e, "error")), "cuOccupancyMaxActiveClusters"));
    assert_null(json_object_get(e, "latency_cycles"));
    assert_int_equal(fake.nonportable_set, 2);               /* both kernels of 16 */
    assert_int_equal(fake.launches, 3 * 3 * (3 + 2));        /* 3 sizes x 3 repeats x 5 */
    assert_int_equal(fake.attr_launches, fake.launches);
    assert_int_equal(fake.memsets, fake.launches);           /* each output zeroed first */
    store_accepts(d);
    json_decref(d);
}

static void test_attribute_refused_or_absent(void **state)
{
    (void)state;
    memset(&fake, 0, sizeof fake);
    fake.refuse_attr = 1;
    struct cuda_api a = api(1);
    json_t *d = probe(&a);
    json_t *e = size_entry(d, 16);
    assert_true(json_is_true(json_object_get(e, "launched")));
    assert_non_null(strstr(json_string_value(json_object_get(e, "error")), "refused the cluster attribute"));
    assert_int_equal(fake.attr_launches, 0);
    json_decref(d);

    memset(&fake, 0, sizeof fake);           /* the occupancy query refused: launched anyway */
    fake.refuse_query = 1;
    a = api(1);
    d = probe(&a);
    e = size_entry(d, 4);
    assert_true(json_is_true(json_object_get(e, "launched")));
    assert_null(json_object_get(e, "max_active_clusters"));
    assert_non_null(strstr(json_string_value(json_object_get(e, "error")), "cuOccupancyMaxActiveClusters"));
    store_accepts(d);
    json_decref(d);

    a = api(0);                              /* an old driver: no cuLaunchKernelEx */
    d = probe(&a);
    e = size_entry(d, 4);
    assert_true(json_is_true(json_object_get(e, "launched")));
    assert_true(json_is_true(json_object_get(e, "agrees")));
    assert_null(json_object_get(e, "max_active_clusters"));
    assert_non_null(strstr(json_string_value(json_object_get(e, "error")), "no cuLaunchKernelEx"));
    json_decref(d);
}

static void test_disagreement_and_old_device(void **state)
{
    (void)state;
    memset(&fake, 0, sizeof fake);
    fake.wrong_width = 1;                    /* the driver reads 4 for the module of 8 */
    struct cuda_api a = api(1);
    json_t *d = probe(&a);
    json_t *e = size_entry(d, 8);
    assert_false(json_is_true(json_object_get(e, "agrees")));
    assert_int_equal(json_integer_value(json_object_get(e, "driver_width")), 4);
    assert_int_equal(json_integer_value(json_object_get(e, "ranks_seen")), 8);
    store_accepts(d);
    json_decref(d);

    static struct gpu g;
    memset(&g, 0, sizeof g);
    g.cu = &a;
    g.info.cc_major = 8;
    d = dsm_probe(&g, 3, 1500.0);
    assert_non_null(strstr(json_string_value(json_object_get(d, "error")), "compute capability 9.0"));
    assert_null(json_object_get(d, "sizes"));
    store_accepts(d);
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_size),
        cmocka_unit_test(test_attribute_refused_or_absent),
        cmocka_unit_test(test_disagreement_and_old_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
