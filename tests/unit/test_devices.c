/*
 * Unit tests of GPU discovery (probes/devices.c) and the driver loader
 * (probes/cuda.c), runnable on a machine without a GPU or driver.
 *
 * DESIGN
 * The JSON form is tested on a hand-filled inventory: a round trip compared
 * member by member, then the strict reader fed one broken copy per field
 * (removed, then given a wrong type) and required to name that field.
 * cuda_load() runs once per process (pthread_once), so every case that sets
 * GPUPROBE_LIBCUDA runs in a forked child that reports through its exit
 * status; cmocka's own assertions are not used in the child, whose failure
 * must not unwind into the parent's test runner. The captured-fixture case
 * reads tests/fixtures/devices/h200.json, captured on a real H200.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probes/gpu/cuda.h"
#include "probes/gpu/devices.h"

#define H200_FIXTURE "tests/fixtures/devices/h200.json"

static const char *const device_fields[] = {
    "index", "uuid", "name", "pci_bus_id", "compute_capability", "sm_count", "clock_khz",
    "memory_clock_khz", "memory_bytes", "memory_bus_width_bits", "l2_bytes",
    "registers_per_sm", "registers_per_block", "shared_memory_per_sm",
    "shared_memory_per_block", "shared_memory_per_block_optin",
    "reserved_shared_memory_per_block", "max_threads_per_sm", "max_threads_per_block",
    "max_warps_per_sm", "max_blocks_per_sm", "warp_size", "ecc_enabled", "driver_version",
    "cuda_driver_version",
};
#define N_DEVICE_FIELDS (sizeof device_fields / sizeof device_fields[0])

static const char *const inventory_fields[] = {
    "driver_version", "cuda_driver_version", "reason", "devices",
};

/* Two plausible devices with every member distinct from its neighbours. */
static void fill_inventory(struct gpu_inventory *inv)
{
    memset(inv, 0, sizeof *inv);
    snprintf(inv->driver_version, sizeof inv->driver_version, "580.159.04");
    inv->cuda_driver_version = 13000;
    inv->count = 2;
    inv->devices = calloc(2, sizeof *inv->devices);
    assert_non_null(inv->devices);
    for (int i = 0; i < 2; i++) {
        struct gpu_device *d = &inv->devices[i];
        d->index = i;
        snprintf(d->uuid, sizeof d->uuid, "GPU-0123abcd-4567-89ef-0123-45678%07d", i);
        snprintf(d->name, sizeof d->name, "NVIDIA H100 80GB HBM3 #%d", i);
        snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:%02x:00.0", 0x18 + i);
        d->numa_node = i == 0 ? -1 : 1;
        d->cc_major = 9;
        d->cc_minor = i;
        d->sm_count = 132;
        d->clock_khz = 1980000;
        d->memory_clock_khz = 2619000;
        d->memory_bytes = 85520809984ull + (uint64_t)i;
        d->memory_bus_width_bits = 5120;
        d->l2_bytes = 52428800;
        d->registers_per_sm = 65536;
        d->registers_per_block = 65537;
        d->shared_memory_per_sm = 233472;
        d->shared_memory_per_block = 49152;
        d->shared_memory_per_block_optin = 232448;
        d->reserved_shared_memory_per_block = 1024;
        d->max_threads_per_sm = 2048;
        d->max_threads_per_block = 1024;
        d->max_warps_per_sm = 64;
        d->max_blocks_per_sm = 32;
        d->warp_size = 32;
        d->ecc_enabled = i == 0;
    }
}

static void assert_devices_equal(const struct gpu_device *a, const struct gpu_device *b)
{
    assert_int_equal(a->index, b->index);
    assert_string_equal(a->uuid, b->uuid);
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->pci_bus_id, b->pci_bus_id);
    assert_int_equal(a->numa_node, b->numa_node);
    assert_int_equal(a->cc_major, b->cc_major);
    assert_int_equal(a->cc_minor, b->cc_minor);
    assert_int_equal(a->sm_count, b->sm_count);
    assert_int_equal(a->clock_khz, b->clock_khz);
    assert_int_equal(a->memory_clock_khz, b->memory_clock_khz);
    assert_true(a->memory_bytes == b->memory_bytes);
    assert_int_equal(a->memory_bus_width_bits, b->memory_bus_width_bits);
    assert_int_equal(a->l2_bytes, b->l2_bytes);
    assert_int_equal(a->registers_per_sm, b->registers_per_sm);
    assert_int_equal(a->registers_per_block, b->registers_per_block);
    assert_int_equal(a->shared_memory_per_sm, b->shared_memory_per_sm);
    assert_int_equal(a->shared_memory_per_block, b->shared_memory_per_block);
    assert_int_equal(a->shared_memory_per_block_optin, b->shared_memory_per_block_optin);
    assert_int_equal(a->reserved_shared_memory_per_block, b->reserved_shared_memory_per_block);
    assert_int_equal(a->max_threads_per_sm, b->max_threads_per_sm);
    assert_int_equal(a->max_threads_per_block, b->max_threads_per_block);
    assert_int_equal(a->max_warps_per_sm, b->max_warps_per_sm);
    assert_int_equal(a->max_blocks_per_sm, b->max_blocks_per_sm);
    assert_int_equal(a->warp_size, b->warp_size);
    assert_int_equal(a->ecc_enabled, b->ecc_enabled);
}

/* ---- UUID and driver version text -------------------------------------- */

static void test_uuid_format(void **state)
{
    const unsigned char bytes[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                      0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 };
    char buf[48], small[10];

    (void)state;
    gpu_uuid_format(bytes, buf, sizeof buf);
    assert_string_equal(buf, "GPU-01234567-89ab-cdef-fedc-ba9876543210");
    assert_int_equal(strlen(buf), 40);
    gpu_uuid_format(bytes, small, sizeof small);          /* truncates, terminated */
    assert_string_equal(small, "GPU-01234");
}

static void test_driver_version_parse(void **state)
{
    char v[32];

    (void)state;
    assert_int_equal(gpu_driver_version_parse(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 2025\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n", v, sizeof v), 0);
    assert_string_equal(v, "580.159.04");
    assert_int_equal(gpu_driver_version_parse(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build"
        "  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 2025\n", v, sizeof v), 0);
    assert_string_equal(v, "570.86.15");
    assert_int_equal(gpu_driver_version_parse(
        "NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.54.15  Tue Mar  5 2024\n", v,
        sizeof v), 0);
    assert_string_equal(v, "550.54.15");
    assert_int_equal(gpu_driver_version_parse("garbage\n", v, sizeof v), -1);
    assert_string_equal(v, "");
    /* The version must be on the module's line, not further down. */
    assert_int_equal(gpu_driver_version_parse("NVRM version: NVIDIA UNIX Kernel Module\n"
                                              "GCC version:  gcc version 12.2.0\n", v, sizeof v),
                     -1);
}

static void test_error_text_without_driver(void **state)
{
    char buf[64];

    (void)state;
    cuda_error_text(NULL, 999, buf, sizeof buf);
    assert_string_equal(buf, "CUDA error 999");
}

/* ---- JSON -------------------------------------------------------------- */

static void test_json_shape(void **state)
{
    struct gpu_inventory inv;
    json_t *j, *d;

    (void)state;
    fill_inventory(&inv);
    j = gpu_inventory_to_json(&inv);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "cuda_driver_version")), "13.0");
    assert_string_equal(json_string_value(json_object_get(j, "driver_version")), "580.159.04");
    assert_true(json_is_null(json_object_get(j, "reason")));
    d = json_array_get(json_object_get(j, "devices"), 1);
    /* numa_node besides: optional on reading (test_numa_node_member) */
    assert_int_equal(json_object_size(d), N_DEVICE_FIELDS + 1);
    assert_int_equal(json_integer_value(json_object_get(d, "numa_node")), 1);
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(j, "devices"), 0), "numa_node")), -1);
    for (size_t i = 0; i < N_DEVICE_FIELDS; i++)
        assert_non_null(json_object_get(d, device_fields[i]));
    assert_string_equal(json_string_value(json_object_get(d, "compute_capability")), "9.1");
    assert_true(json_is_false(json_object_get(d, "ecc_enabled")));
    assert_true(json_is_integer(json_object_get(d, "memory_bytes")));
    assert_string_equal(json_string_value(json_object_get(d, "cuda_driver_version")), "13.0");
    json_decref(j);

    inv.cuda_driver_version = 12040;
    j = gpu_inventory_to_json(&inv);
    assert_string_equal(json_string_value(json_object_get(j, "cuda_driver_version")), "12.4");
    json_decref(j);
    gpu_inventory_free(&inv);

    inv.cuda_driver_version = 0;
    snprintf(inv.reason, sizeof inv.reason, "no CUDA device: none");
    j = gpu_inventory_to_json(&inv);
    assert_true(json_is_null(json_object_get(j, "cuda_driver_version")));
    assert_string_equal(json_string_value(json_object_get(j, "reason")), "no CUDA device: none");
    assert_int_equal(json_array_size(json_object_get(j, "devices")), 0);
    json_decref(j);
}

/* Text the driver gave that is not UTF-8 (a name or a reason cut inside a
 * character): only the ill-formed bytes become '?', characters that are
 * well-formed stay, and the document still reads back. An empty driver
 * version stays "" and an empty reason is null, as docs/api.md shows. */
static void test_json_text_not_utf8(void **state)
{
    struct gpu_inventory inv, back;
    char err[256] = "";
    json_t *j, *d;

    (void)state;
    fill_inventory(&inv);
    snprintf(inv.devices[0].name, sizeof inv.devices[0].name, "GPU caf\xc3\xa9 \xff!");
    inv.driver_version[0] = '\0';
    j = gpu_inventory_to_json(&inv);
    assert_non_null(j);
    d = json_array_get(json_object_get(j, "devices"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "name")), "GPU caf\xc3\xa9 ?!");
    assert_string_equal(json_string_value(json_object_get(d, "driver_version")), "");
    assert_string_equal(json_string_value(json_object_get(j, "driver_version")), "");
    assert_true(json_is_null(json_object_get(j, "reason")));
    assert_int_equal(gpu_inventory_from_json(j, &back, err, sizeof err), 0);
    assert_string_equal(back.devices[0].name, "GPU caf\xc3\xa9 ?!");
    json_decref(j);
    gpu_inventory_free(&back);
    gpu_inventory_free(&inv);

    /* an empty inventory whose reason was cut after the first byte of "é" */
    memset(&inv, 0, sizeof inv);
    snprintf(inv.reason, sizeof inv.reason, "libcuda.so.1 not found: /opt/caf\xc3");
    j = gpu_inventory_to_json(&inv);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "reason")),
                        "libcuda.so.1 not found: /opt/caf?");
    json_decref(j);
}

static void test_json_round_trip(void **state)
{
    struct gpu_inventory in, out;
    char err[256] = "";
    json_t *j;

    (void)state;
    fill_inventory(&in);
    j = gpu_inventory_to_json(&in);
    assert_non_null(j);
    assert_int_equal(gpu_inventory_from_json(j, &out, err, sizeof err), 0);
    assert_string_equal(out.driver_version, in.driver_version);
    assert_int_equal(out.cuda_driver_version, in.cuda_driver_version);
    assert_string_equal(out.reason, "");
    assert_int_equal(out.count, in.count);
    for (size_t i = 0; i < in.count; i++)
        assert_devices_equal(&out.devices[i], &in.devices[i]);
    json_decref(j);
    gpu_inventory_free(&in);
    gpu_inventory_free(&out);
}

/* Expects from_json to refuse j with a reason that names `field`. */
static void assert_refused(const json_t *j, const char *field)
{
    struct gpu_inventory out;
    char err[256] = "";

    assert_int_equal(gpu_inventory_from_json(j, &out, err, sizeof err), -1);
    if (strstr(err, field) == NULL)
        fail_msg("reason \"%s\" does not name %s", err, field);
    assert_null(out.devices);
    assert_int_equal(out.count, 0);
}

static void test_from_json_rejects_each_device_field(void **state)
{
    struct gpu_inventory in;
    json_t *good;
    char path[64];

    (void)state;
    fill_inventory(&in);
    good = gpu_inventory_to_json(&in);
    for (size_t i = 0; i < N_DEVICE_FIELDS; i++) {
        json_t *bad = json_deep_copy(good);
        json_t *dev = json_array_get(json_object_get(bad, "devices"), 1);
        snprintf(path, sizeof path, "devices[1].%s", device_fields[i]);
        json_object_del(dev, device_fields[i]);
        assert_refused(bad, path);
        /* Wrong type: an array is valid for none of them. */
        json_object_set_new(dev, device_fields[i], json_array());
        assert_refused(bad, path);
        json_decref(bad);
    }
    json_decref(good);
    gpu_inventory_free(&in);
}

static void test_from_json_rejects_each_inventory_field(void **state)
{
    struct gpu_inventory in;
    json_t *good;

    (void)state;
    fill_inventory(&in);
    good = gpu_inventory_to_json(&in);
    for (size_t i = 0; i < sizeof inventory_fields / sizeof inventory_fields[0]; i++) {
        json_t *bad = json_deep_copy(good);
        json_object_del(bad, inventory_fields[i]);
        assert_refused(bad, inventory_fields[i]);
        json_object_set_new(bad, inventory_fields[i], json_integer(7));
        assert_refused(bad, inventory_fields[i]);
        json_decref(bad);
    }
    json_decref(good);
    gpu_inventory_free(&in);
}

/* Values of the right JSON type that still do not fit. */
static void test_from_json_rejects_bad_values(void **state)
{
    static const struct { const char *field; const char *json; } cases[] = {
        { "compute_capability", "\"9\"" },
        { "compute_capability", "\"9.0x\"" },
        { "sm_count", "-1" },
        { "numa_node", "-2" },
        { "numa_node", "2147483648" },
        { "numa_node", "\"0\"" },
        { "sm_count", "3000000000" },
        { "memory_bytes", "-5" },
        { "cuda_driver_version", "\"thirteen\"" },
        { "ecc_enabled", "1" },
        { "uuid", "\"GPU-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"" },
    };
    struct gpu_inventory in;
    json_t *good;
    char path[64];

    (void)state;
    fill_inventory(&in);
    good = gpu_inventory_to_json(&in);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *bad = json_deep_copy(good);
        json_t *dev = json_array_get(json_object_get(bad, "devices"), 0);
        json_object_set_new(dev, cases[i].field, json_loads(cases[i].json, JSON_DECODE_ANY, NULL));
        snprintf(path, sizeof path, "devices[0].%s", cases[i].field);
        assert_refused(bad, path);
        json_decref(bad);
    }
    json_decref(good);
    gpu_inventory_free(&in);

    json_t *not_object = json_loads("{\"driver_version\":\"\",\"cuda_driver_version\":null,"
                                    "\"reason\":null,\"devices\":[3]}", 0, NULL);
    assert_refused(not_object, "devices[0]");
    json_decref(not_object);
    assert_refused(NULL, "inventory");
}

/* ---- discovery without a driver (forked: cuda_load loads once) --------- */

/* Runs fn in a child with GPUPROBE_LIBCUDA=lib; fails the test unless it exits 0. */
static void run_in_child(const char *lib, int (*fn)(void))
{
    int status = 0;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("GPUPROBE_LIBCUDA", lib, 1);
        _exit(fn());
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Child side: prints what went wrong and returns non-zero. */
static int child_check(int ok, const char *what, const struct gpu_inventory *inv)
{
    if (!ok)
        fprintf(stderr, "child: %s (reason \"%s\")\n", what, inv->reason);
    return !ok;
}

static int discover_missing_library(void)
{
    struct gpu_inventory inv;
    char why[256] = "";
    int bad = 0;

    bad |= child_check(gpu_discover(&inv) == 0, "gpu_discover did not return 0", &inv);
    bad |= child_check(inv.count == 0 && inv.devices == NULL, "devices listed", &inv);
    bad |= child_check(strstr(inv.reason, "not found") != NULL, "reason lacks 'not found'", &inv);
    bad |= child_check(strstr(inv.reason, "/nonexistent/libcuda.so.1") != NULL,
                       "reason lacks the path", &inv);
    bad |= child_check(cuda_load(why, sizeof why) == NULL && strcmp(why, inv.reason) == 0,
                       "cuda_load does not repeat the reason", &inv);
    json_t *j = gpu_inventory_to_json(&inv);
    bad |= child_check(j != NULL && json_is_string(json_object_get(j, "reason")) &&
                       json_array_size(json_object_get(j, "devices")) == 0,
                       "JSON of the empty inventory", &inv);
    json_decref(j);
    gpu_inventory_free(&inv);
    return bad;
}

static int discover_library_without_symbols(void)
{
    struct gpu_inventory inv;
    int bad = 0;

    bad |= child_check(gpu_discover(&inv) == 0, "gpu_discover did not return 0", &inv);
    bad |= child_check(inv.count == 0, "devices listed", &inv);
    bad |= child_check(strstr(inv.reason, "lacks cuInit") != NULL,
                       "reason does not name cuInit", &inv);
    gpu_inventory_free(&inv);
    return bad;
}

static void test_discover_without_library(void **state)
{
    (void)state;
    run_in_child("/nonexistent/libcuda.so.1", discover_missing_library);
}

static void test_discover_library_lacking_symbols(void **state)
{
    (void)state;
    run_in_child("libm.so.6", discover_library_without_symbols);
}

/* ---- a real device, captured on a GPU machine ---------------------------- */

static void test_h200_fixture(void **state)
{
    struct gpu_inventory inv;
    char err[256] = "";
    json_error_t jerr;
    json_t *j, *again;

    (void)state;
    j = json_load_file(H200_FIXTURE, 0, &jerr);
    if (j == NULL)
        fail_msg("%s:%d: %s", H200_FIXTURE, jerr.line, jerr.text);
    if (gpu_inventory_from_json(j, &inv, err, sizeof err) != 0)
        fail_msg("%s: %s", H200_FIXTURE, err);
    assert_true(inv.count >= 1);
    assert_string_equal(inv.devices[0].name, "NVIDIA H200");
    assert_int_equal(inv.devices[0].sm_count, 132);
    assert_string_equal(inv.driver_version, "580.159.04");
    assert_int_equal(inv.devices[0].cc_major, 9);
    assert_int_equal(inv.devices[0].cc_minor, 0);
    assert_int_equal(inv.devices[0].warp_size, 32);
    assert_int_equal(inv.devices[0].max_warps_per_sm, 64);
    assert_int_equal(strncmp(inv.devices[0].uuid, "GPU-", 4), 0);
    /* captured before numa_node existed: it reads as unknown, and the rest
     * comes back as it was printed */
    assert_int_equal(inv.devices[0].numa_node, -1);
    again = gpu_inventory_to_json(&inv);
    json_object_del(json_array_get(json_object_get(again, "devices"), 0), "numa_node");
    assert_true(json_equal(json_object_get(j, "devices"), json_object_get(again, "devices")));
    json_decref(again);
    json_decref(j);
    gpu_inventory_free(&inv);
}

/* ---- NUMA node: the sysfs reader and the optional member --------------- */

/* Writes text to DIR/BUSID/numa_node. */
static void put_node(const char *dir, const char *bus, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, bus);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/%s/numa_node", dir, bus);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_numa_node_reader(void **state)
{
    char dir[] = "/tmp/gpuprobe-test-numa-XXXXXX";
    (void)state;
    assert_non_null(mkdtemp(dir));
    put_node(dir, "0000:18:00.0", "1\n");
    put_node(dir, "0000:1a:00.0", "-1\n");
    put_node(dir, "0000:1b:00.0", "x\n");
    put_node(dir, "0000:1c:00.0", "-2\n");
    put_node(dir, "0000:1d:00.0", "3 4\n");
    assert_int_equal(gpu_numa_node(dir, "0000:18:00.0"), 1);
    assert_int_equal(gpu_numa_node(dir, "0000:1A:00.0"), -1); /* the driver's upper case */
    assert_int_equal(gpu_numa_node(dir, "0000:1b:00.0"), -1);
    assert_int_equal(gpu_numa_node(dir, "0000:1c:00.0"), -1);
    assert_int_equal(gpu_numa_node(dir, "0000:1d:00.0"), -1);
    assert_int_equal(gpu_numa_node(dir, "0000:99:00.0"), -1); /* no such device */
    assert_int_equal(gpu_numa_node(dir, "../0000:18:00.0"), -1);
    assert_int_equal(gpu_numa_node(dir, ""), -1);
    const char *const bus[] = {"0000:18:00.0", "0000:1a:00.0", "0000:1b:00.0", "0000:1c:00.0",
                               "0000:1d:00.0"};
    char path[256];
    for (size_t i = 0; i < sizeof bus / sizeof bus[0]; i++) {
        snprintf(path, sizeof path, "%s/%s/numa_node", dir, bus[i]);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s", dir, bus[i]);
        rmdir(path);
    }
    rmdir(dir);
}

/* numa_node absent reads as -1 (inventories older than it); present, it
 * must be an integer >= -1 (test_from_json_rejects_bad_values). */
static void test_numa_node_member(void **state)
{
    struct gpu_inventory in, out;
    char err[256] = "";
    (void)state;
    fill_inventory(&in);
    json_t *j = gpu_inventory_to_json(&in);
    json_object_del(json_array_get(json_object_get(j, "devices"), 1), "numa_node");
    assert_int_equal(gpu_inventory_from_json(j, &out, err, sizeof err), 0);
    assert_int_equal(out.devices[0].numa_node, -1);
    assert_int_equal(out.devices[1].numa_node, -1);
    gpu_inventory_free(&out);
    json_decref(j);
    gpu_inventory_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uuid_format),
        cmocka_unit_test(test_driver_version_parse),
        cmocka_unit_test(test_error_text_without_driver),
        cmocka_unit_test(test_json_shape),
        cmocka_unit_test(test_json_text_not_utf8),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_from_json_rejects_each_device_field),
        cmocka_unit_test(test_from_json_rejects_each_inventory_field),
        cmocka_unit_test(test_from_json_rejects_bad_values),
        cmocka_unit_test(test_discover_without_library),
        cmocka_unit_test(test_discover_library_lacking_symbols),
        cmocka_unit_test(test_h200_fixture),
        cmocka_unit_test(test_numa_node_reader),
        cmocka_unit_test(test_numa_node_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
