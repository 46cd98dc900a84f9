/*
 * GPU discovery and the inventory's JSON form (see devices.h for the contract).
 *
 * DESIGN
 * Two tables carry the work, so that adding a field is one line in each:
 *   attrs[]   maps a CUdevice_attribute to the int member of struct gpu_device
 *             that receives it; discovery reads them in one loop.
 *   fields[]  lists the DEVICE object's members in the order of docs/api.md,
 *             each with its JSON type and its place in struct gpu_device;
 *             gpu_device_to_json and gpu_inventory_from_json both walk it, so
 *             the writer and the strict reader cannot drift apart.
 * Discovery never fails for want of a driver or a GPU: every such state ends
 * as an empty inventory with the reason. An attribute the driver does not know
 * (CUDA_ERROR_INVALID_VALUE, e.g. an older driver) reads as 0; any other
 * failure while describing a device empties the list and names the device,
 * the call and the CUDA error. Only running out of memory returns -1.
 * The kernel driver's version comes from /proc/driver/nvidia/version, read
 * independently of libcuda, so it is reported even when libcuda is missing.
 */
#include "probes/gpu/devices.h"

#include "probes/gpu/cuda.h"
#include "util/utf8.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVIDIA_VERSION_FILE "/proc/driver/nvidia/version"

/* ---- reading the driver ----------------------------------------------- */

struct attr_slot {
    int attribute;
    const char *name;   /* for error messages */
    size_t offset;      /* int member of struct gpu_device */
};

#define ATTR(a, member) { CU_DEVICE_ATTRIBUTE_##a, #a, offsetof(struct gpu_device, member) }

static const struct attr_slot attrs[] = {
    ATTR(COMPUTE_CAPABILITY_MAJOR, cc_major),
    ATTR(COMPUTE_CAPABILITY_MINOR, cc_minor),
    ATTR(MULTIPROCESSOR_COUNT, sm_count),
    ATTR(CLOCK_RATE, clock_khz),
    ATTR(MEMORY_CLOCK_RATE, memory_clock_khz),
    ATTR(GLOBAL_MEMORY_BUS_WIDTH, memory_bus_width_bits),
    ATTR(L2_CACHE_SIZE, l2_bytes),
    ATTR(MAX_REGISTERS_PER_MULTIPROCESSOR, registers_per_sm),
    ATTR(MAX_REGISTERS_PER_BLOCK, registers_per_block),
    ATTR(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, shared_memory_per_sm),
    ATTR(MAX_SHARED_MEMORY_PER_BLOCK, shared_memory_per_block),
    ATTR(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, shared_memory_per_block_optin),
    ATTR(RESERVED_SHARED_MEMORY_PER_BLOCK, reserved_shared_memory_per_block),
    ATTR(MAX_THREADS_PER_MULTIPROCESSOR, max_threads_per_sm),
    ATTR(MAX_THREADS_PER_BLOCK, max_threads_per_block),
    ATTR(MAX_BLOCKS_PER_MULTIPROCESSOR, max_blocks_per_sm),
    ATTR(WARP_SIZE, warp_size),
    ATTR(ECC_ENABLED, ecc_enabled),
};

/* Appends s to the string in buf, truncating to the buffer. */
static void append_text(char *buf, size_t len, const char *s)
{
    size_t used = strnlen(buf, len), n = strlen(s);

    if (used + 1 >= len)
        return;
    if (n > len - used - 1)
        n = len - used - 1;
    memcpy(buf + used, s, n);
    buf[used + n] = '\0';
}

/* "<what>: <CUDA error text>" into why. */
__attribute__((format(printf, 5, 6)))
static void cuda_reason(char *why, size_t len, const struct cuda_api *api, CUresult rc,
                        const char *fmt, ...)
{
    char err[192];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    cuda_error_text(api, rc, err, sizeof err);
    append_text(why, len, ": ");
    append_text(why, len, err);
}

/* One attribute; an attribute unknown to the driver reads as 0. */
static int get_attr(const struct cuda_api *api, CUdevice dev, int ordinal, int attribute,
                    const char *name, int *value, char *why, size_t len)
{
    CUresult rc = api->cuDeviceGetAttribute(value, attribute, dev);

    if (rc == CUDA_ERROR_INVALID_VALUE)
        *value = 0;
    else if (rc != CUDA_SUCCESS) {
        cuda_reason(why, len, api, rc, "device %d: cuDeviceGetAttribute(%s)", ordinal, name);
        return -1;
    }
    return 0;
}

static int read_attrs(const struct cuda_api *api, CUdevice dev, struct gpu_device *d,
                      char *why, size_t len)
{
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = 0;
        if (get_attr(api, dev, d->index, attrs[i].attribute, attrs[i].name, &v, why, len))
            return -1;
        memcpy((char *)d + attrs[i].offset, &v, sizeof v);
    }
    d->max_warps_per_sm = d->warp_size > 0 ? d->max_threads_per_sm / d->warp_size : 0;
    d->ecc_enabled = d->ecc_enabled != 0;
    return 0;
}

static int read_pci(const struct cuda_api *api, CUdevice dev, struct gpu_device *d,
                    char *why, size_t len)
{
    int domain = 0, bus = 0, slot = 0;

    if (get_attr(api, dev, d->index, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, "PCI_DOMAIN_ID",
                 &domain, why, len) ||
        get_attr(api, dev, d->index, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, "PCI_BUS_ID", &bus, why,
                 len) ||
        get_attr(api, dev, d->index, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, "PCI_DEVICE_ID", &slot,
                 why, len))
        return -1;
    snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "%04x:%02x:%02x.0", (unsigned)domain,
             (unsigned)bus, (unsigned)slot);
    return 0;
}

/* Describes CUDA ordinal `ordinal` into d; 0, or -1 with the reason in why. */
static int read_device(const struct cuda_api *api, int ordinal, struct gpu_device *d,
                       char *why, size_t len)
{
    CUdevice dev = 0;
    CUuuid uuid;
    size_t bytes = 0;
    CUresult rc;

    d->index = ordinal;
    if ((rc = api->cuDeviceGet(&dev, ordinal)) != CUDA_SUCCESS) {
        cuda_reason(why, len, api, rc, "device %d: cuDeviceGet", ordinal);
        return -1;
    }
    if ((rc = api->cuDeviceGetName(d->name, (int)sizeof d->name, dev)) != CUDA_SUCCESS) {
        cuda_reason(why, len, api, rc, "device %d: cuDeviceGetName", ordinal);
        return -1;
    }
    d->name[sizeof d->name - 1] = '\0';
    if ((rc = api->cuDeviceGetUuid(&uuid, dev)) != CUDA_SUCCESS) {
        cuda_reason(why, len, api, rc, "device %d: cuDeviceGetUuid_v2", ordinal);
        return -1;
    }
    gpu_uuid_format(uuid.bytes, d->uuid, sizeof d->uuid);
    if ((rc = api->cuDeviceTotalMem(&bytes, dev)) != CUDA_SUCCESS) {
        cuda_reason(why, len, api, rc, "device %d: cuDeviceTotalMem_v2", ordinal);
        return -1;
    }
    d->memory_bytes = bytes;
    if (read_pci(api, dev, d, why, len) || read_attrs(api, dev, d, why, len))
        return -1;
    d->numa_node = gpu_numa_node(GPU_SYSFS_PCI_DEVICES, d->pci_bus_id);
    return 0;
}

/* cuInit and cuDeviceGetCount: the number of devices, or 0 with the reason. */
static int init_and_count(const struct cuda_api *api, struct gpu_inventory *inv)
{
    int n = 0;
    CUresult rc = api->cuInit(0);

    if (rc == CUDA_ERROR_NO_DEVICE)
        cuda_reason(inv->reason, sizeof inv->reason, api, rc, "no CUDA device");
    else if (rc != CUDA_SUCCESS)
        cuda_reason(inv->reason, sizeof inv->reason, api, rc, "cuInit failed");
    else if ((rc = api->cuDeviceGetCount(&n)) != CUDA_SUCCESS)
        cuda_reason(inv->reason, sizeof inv->reason, api, rc, "cuDeviceGetCount failed");
    else if (n <= 0)
        snprintf(inv->reason, sizeof inv->reason, "no CUDA device: the driver reports none");
    else
        return n;
    return 0;
}

/* After cuda_load succeeded: version, init, count, describe. */
static int discover_with(const struct cuda_api *api, struct gpu_inventory *inv)
{
    int version = 0, n;

    /* Asked first: the driver answers it even when no device is usable. */
    if (api->cuDriverGetVersion(&version) == CUDA_SUCCESS)
        inv->cuda_driver_version = version;
    if ((n = init_and_count(api, inv)) == 0)
        return 0;
    inv->devices = calloc((size_t)n, sizeof *inv->devices);
    if (inv->devices == NULL) {
        snprintf(inv->reason, sizeof inv->reason, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (read_device(api, i, &inv->devices[i], inv->reason, sizeof inv->reason) != 0) {
            free(inv->devices);
            inv->devices = NULL;
            return 0;
        }
    }
    inv->count = (size_t)n;
    return 0;
}

static void read_driver_version(char *out, size_t len)
{
    char text[1024];
    FILE *f = fopen(NVIDIA_VERSION_FILE, "r");
    size_t n = 0;

    out[0] = '\0';
    if (f == NULL)
        return;
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    gpu_driver_version_parse(text, out, len);
}

int gpu_discover(struct gpu_inventory *inv)
{
    const struct cuda_api *api;

    memset(inv, 0, sizeof *inv);
    read_driver_version(inv->driver_version, sizeof inv->driver_version);
    api = cuda_load(inv->reason, sizeof inv->reason);
    int rc = api == NULL ? 0 : discover_with(api, inv);
#ifdef GPUPROBE_TEST_BUILD
    if (rc == 0)
        rc = standin_gpus_add(inv);
#endif
    return rc;
}

void gpu_inventory_free(struct gpu_inventory *inv)
{
    if (inv == NULL)
        return;
    free(inv->devices);
    inv->devices = NULL;
    inv->count = 0;
}

/* ---- small text helpers ----------------------------------------------- */

int gpu_numa_node(const char *pci_devices, const char *pci_bus_id)
{
    char id[32], path[512], text[32];
    size_t i = 0;
    long node;
    char *end;

    for (; pci_bus_id[i] != '\0' && i < sizeof id - 1; i++)
        id[i] = (char)tolower((unsigned char)pci_bus_id[i]);
    id[i] = '\0';
    /* a bus id is hex digits, ':' and '.' alone: nothing can climb out */
    if (i == 0 || id[strspn(id, "0123456789abcdef:.")] != '\0')
        return -1;
    snprintf(path, sizeof path, "%s/%s/numa_node", pci_devices, id);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    errno = 0;
    node = strtol(text, &end, 10);
    if (end == text || errno != 0 || (*end != '\0' && *end != '\n') || node < -1 ||
        node > 0x7fffffff)
        return -1;
    return (int)node;
}

void gpu_uuid_format(const unsigned char bytes[16], char *buf, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char out[41];
    size_t o = 0;

    memcpy(out, "GPU-", 4);
    o = 4;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[bytes[i] >> 4];
        out[o++] = hex[bytes[i] & 0xf];
    }
    out[o] = '\0';
    snprintf(buf, len, "%s", out);
}

/* True when tok[0..n) is digits separated by single dots, with one dot at least. */
static int looks_like_version(const char *tok, size_t n)
{
    int dots = 0;

    if (n == 0 || !isdigit((unsigned char)tok[0]) || !isdigit((unsigned char)tok[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (tok[i] == '.') {
            if (tok[i + 1] == '.')
                return 0;
            dots++;
        } else if (!isdigit((unsigned char)tok[i]))
            return 0;
    }
    return dots > 0;
}

int gpu_driver_version_parse(const char *text, char *out, size_t len)
{
    const char *p = strstr(text, "Kernel Module");

    if (len > 0)
        out[0] = '\0';
    if (p == NULL)
        return -1;
    p += strlen("Kernel Module");
    /* "Kernel Module  580.1.2  Date" or "Open Kernel Module for x86_64  580.1.2  ..." */
    while (*p != '\0' && *p != '\n') {
        size_t n;
        while (*p == ' ' || *p == '\t')
            p++;
        n = strcspn(p, " \t\n");
        if (looks_like_version(p, n)) {
            if (n >= len)
                return -1;
            memcpy(out, p, n);
            out[n] = '\0';
            return 0;
        }
        p += n;
    }
    return -1;
}

/* "13.0" for 13000, "12.4" for 12040. */
static void cuda_version_text(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}

/* Parses "A.B" (decimal digits only, each part below 100000). */
static int parse_pair(const char *s, int *a, int *b)
{
    int *parts[2] = { a, b };

    for (int k = 0; k < 2; k++) {
        int v = 0, digits = 0;
        for (; isdigit((unsigned char)*s) && digits < 5; s++, digits++)
            v = v * 10 + (*s - '0');
        if (digits == 0 || (k == 0 ? *s != '.' : *s != '\0'))
            return -1;
        *parts[k] = v;
        s++;
    }
    return 0;
}

/* A string member of the inventory, through util/utf8.h's json_text (bytes
 * that are not well-formed UTF-8 become '?', the rest is kept). json_text
 * answers null for a string only when memory runs out; docs/api.md types
 * these members as strings, so that null fails the document instead. */
static json_t *string_member(const char *s)
{
    json_t *j = json_text(s);

    return json_is_string(j) ? j : NULL;
}

static json_t *cuda_version_json(int v)
{
    char buf[32];

    if (v <= 0)
        return json_null();
    cuda_version_text(v, buf, sizeof buf);
    return json_string(buf);
}

/* ---- the DEVICE object ------------------------------------------------ */

enum field_type { F_INT, F_STR, F_U64, F_BOOL, F_CC, F_NODE /* an int, -1 allowed */ };

struct field {
    const char *name;
    enum field_type type;
    size_t offset;      /* member of struct gpu_device (F_CC: unused) */
    size_t size;        /* F_STR: the buffer's size */
};

#define MEMBER_SIZE(m) sizeof(((struct gpu_device *)0)->m)
#define INT_F(m) { #m, F_INT, offsetof(struct gpu_device, m), 0 }
#define STR_F(m) { #m, F_STR, offsetof(struct gpu_device, m), MEMBER_SIZE(m) }

static const struct field fields[] = {
    INT_F(index),
    STR_F(uuid),
    STR_F(name),
    STR_F(pci_bus_id),
    { "numa_node", F_NODE, offsetof(struct gpu_device, numa_node), 0 },
    { "compute_capability", F_CC, 0, 0 },
    INT_F(sm_count),
    INT_F(clock_khz),
    INT_F(memory_clock_khz),
    { "memory_bytes", F_U64, offsetof(struct gpu_device, memory_bytes), 0 },
    INT_F(memory_bus_width_bits),
    INT_F(l2_bytes),
    INT_F(registers_per_sm),
    INT_F(registers_per_block),
    INT_F(shared_memory_per_sm),
    INT_F(shared_memory_per_block),
    INT_F(shared_memory_per_block_optin),
    INT_F(reserved_shared_memory_per_block),
    INT_F(max_threads_per_sm),
    INT_F(max_threads_per_block),
    INT_F(max_warps_per_sm),
    INT_F(max_blocks_per_sm),
    INT_F(warp_size),
    { "ecc_enabled", F_BOOL, offsetof(struct gpu_device, ecc_enabled), 0 },
};

static json_t *field_to_json(const struct field *f, const struct gpu_device *d)
{
    const char *p = (const char *)d + f->offset;
    char cc[32];
    int i;
    uint64_t u;

    switch (f->type) {
    case F_INT:
    case F_NODE:
        memcpy(&i, p, sizeof i);
        return json_integer(i);
    case F_BOOL:
        memcpy(&i, p, sizeof i);
        return json_boolean(i);
    case F_U64:
        memcpy(&u, p, sizeof u);
        return json_integer((json_int_t)u);
    case F_STR:
        return string_member(p);
    case F_CC:
        snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
        return json_string(cc);
    }
    return NULL;
}

json_t *gpu_device_to_json(const struct gpu_device *d, const struct gpu_inventory *inv)
{
    json_t *o = json_object();
    int bad = o == NULL;

    for (size_t i = 0; !bad && i < sizeof fields / sizeof fields[0]; i++)
        bad = json_object_set_new(o, fields[i].name, field_to_json(&fields[i], d)) != 0;
    if (!bad)
        bad = json_object_set_new(o, "driver_version", string_member(inv->driver_version)) ||
              json_object_set_new(o, "cuda_driver_version",
                                  cuda_version_json(inv->cuda_driver_version));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *gpu_inventory_to_json(const struct gpu_inventory *inv)
{
    json_t *o = json_object(), *list = json_array();
    int bad = o == NULL || list == NULL;

    for (size_t i = 0; !bad && i < inv->count; i++)
        bad = json_array_append_new(list, gpu_device_to_json(&inv->devices[i], inv)) != 0;
    if (!bad)
        bad = json_object_set_new(o, "driver_version", string_member(inv->driver_version)) ||
              json_object_set_new(o, "cuda_driver_version",
                                  cuda_version_json(inv->cuda_driver_version)) ||
              json_object_set_new(o, "reason", inv->reason[0] != '\0'
                                                   ? string_member(inv->reason) : json_null());
    if (bad || json_object_set_new(o, "devices", list) != 0) {
        if (bad)
            json_decref(list);
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- the strict reader ------------------------------------------------ */

static const char *type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Error context: the JSON path of the member being read. */
struct reader {
    char *err;
    size_t errlen;
    const char *prefix;     /* "" or "devices[3]." */
};

__attribute__((format(printf, 3, 4)))
static int bad_field(const struct reader *r, const char *name, const char *fmt, ...)
{
    char what[160];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (r->err != NULL && r->errlen > 0)
        snprintf(r->err, r->errlen, "%s%s: %s", r->prefix, name, what);
    return -1;
}

/* Member `name` of o with JSON type `want` (JSON_NULL in nullable: also null). */
static const json_t *member(const struct reader *r, const json_t *o, const char *name,
                            json_type want, int nullable)
{
    const json_t *v = json_object_get(o, name);
    json_type t;

    if (v == NULL) {
        bad_field(r, name, "missing");
        return NULL;
    }
    t = json_typeof(v);
    if (t == JSON_FALSE && want == JSON_TRUE)
        t = JSON_TRUE;
    if (t == want || (nullable && t == JSON_NULL))
        return v;
    bad_field(r, name, "expected %s%s, got %s",
              want == JSON_TRUE ? "boolean" : want == JSON_INTEGER ? "integer"
              : want == JSON_ARRAY ? "array" : want == JSON_OBJECT ? "object" : "string",
              nullable ? " or null" : "", type_name(v));
    return NULL;
}

static int read_string(const struct reader *r, const json_t *o, const char *name, char *buf,
                       size_t size, int nullable)
{
    const json_t *v = member(r, o, name, JSON_STRING, nullable);

    if (v == NULL)
        return -1;
    buf[0] = '\0';
    if (json_is_null(v))
        return 0;
    if (json_string_length(v) >= size)
        return bad_field(r, name, "longer than %zu bytes", size - 1);
    if (strlen(json_string_value(v)) != json_string_length(v))
        return bad_field(r, name, "contains a NUL byte");
    memcpy(buf, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

/* "13.0" or null into *version (13000 or 0). */
static int read_cuda_version(const struct reader *r, const json_t *o, int *version)
{
    const json_t *v = member(r, o, "cuda_driver_version", JSON_STRING, 1);
    int major = 0, minor = 0;

    *version = 0;
    if (v == NULL)
        return -1;
    if (json_is_null(v))
        return 0;
    if (parse_pair(json_string_value(v), &major, &minor) != 0 || major == 0 || major > 999 ||
        minor > 99)
        return bad_field(r, "cuda_driver_version", "expected \"MAJOR.MINOR\", got \"%.32s\"",
                         json_string_value(v));
    *version = major * 1000 + minor * 10;
    return 0;
}

/* A non-negative integer member into an int (F_INT; F_NODE: -1 too) or a
 * uint64_t (F_U64). */
static int read_integer(const struct reader *r, const json_t *o, const struct field *f, char *p)
{
    const json_t *v = member(r, o, f->name, JSON_INTEGER, 0);
    json_int_t n;

    if (v == NULL)
        return -1;
    n = json_integer_value(v);
    if (n < (f->type == F_NODE ? -1 : 0) || (f->type != F_U64 && n > 0x7fffffff))
        return bad_field(r, f->name, "%lld is out of range", (long long)n);
    if (f->type == F_U64) {
        uint64_t u = (uint64_t)n;
        memcpy(p, &u, sizeof u);
    } else {
        int i = (int)n;
        memcpy(p, &i, sizeof i);
    }
    return 0;
}

static int field_from_json(const struct reader *r, const json_t *o, const struct field *f,
                           struct gpu_device *d)
{
    char *p = (char *)d + f->offset;
    const json_t *v;
    char cc[32];
    int b;

    switch (f->type) {
    case F_STR:
        return read_string(r, o, f->name, p, f->size, 0);
    case F_CC:
        if (read_string(r, o, f->name, cc, sizeof cc, 0) != 0)
            return -1;
        if (parse_pair(cc, &d->cc_major, &d->cc_minor) != 0)
            return bad_field(r, f->name, "expected \"MAJOR.MINOR\", got \"%s\"", cc);
        return 0;
    case F_BOOL:
        if ((v = member(r, o, f->name, JSON_TRUE, 0)) == NULL)
            return -1;
        b = json_is_true(v);
        memcpy(p, &b, sizeof b);
        return 0;
    case F_NODE:
        /* newer than the first inventories (tests/fixtures/devices/): absent
         * reads as -1, unknown, so those still read */
        if (json_object_get(o, f->name) == NULL) {
            b = -1;
            memcpy(p, &b, sizeof b);
            return 0;
        }
        return read_integer(r, o, f, p);
    case F_INT:
    case F_U64:
        return read_integer(r, o, f, p);
    }
    return -1;
}

static int device_from_json(const json_t *o, size_t index, struct gpu_device *d, char *err,
                            size_t errlen)
{
    char prefix[48], scratch[64];
    struct reader r = { err, errlen, prefix };
    int version = 0;

    snprintf(prefix, sizeof prefix, "devices[%zu].", index);
    if (!json_is_object(o)) {
        prefix[strlen(prefix) - 1] = '\0';     /* "devices[3]: expected object" */
        return bad_field(&(struct reader){ err, errlen, "" }, prefix, "expected object, got %s",
                         type_name(o));
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (field_from_json(&r, o, &fields[i], d) != 0)
            return -1;
    /* Copies of the inventory's values: checked for presence and type only. */
    if (read_string(&r, o, "driver_version", scratch, sizeof scratch, 0) != 0 ||
        read_cuda_version(&r, o, &version) != 0)
        return -1;
    return 0;
}

int gpu_inventory_from_json(const json_t *j, struct gpu_inventory *inv, char *err, size_t errlen)
{
    struct reader r = { err, errlen, "" };
    const json_t *list;
    size_t n;

    memset(inv, 0, sizeof *inv);
    if (j == NULL || !json_is_object(j))
        return bad_field(&r, "inventory", "expected object, got %s",
                         j != NULL ? type_name(j) : "nothing");
    if (read_string(&r, j, "driver_version", inv->driver_version, sizeof inv->driver_version,
                    0) != 0 ||
        read_cuda_version(&r, j, &inv->cuda_driver_version) != 0 ||
        read_string(&r, j, "reason", inv->reason, sizeof inv->reason, 1) != 0 ||
        (list = member(&r, j, "devices", JSON_ARRAY, 0)) == NULL)
        goto fail;
    n = json_array_size(list);
    if (n > 0 && (inv->devices = calloc(n, sizeof *inv->devices)) == NULL) {
        bad_field(&r, "devices", "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        if (device_from_json(json_array_get(list, i), i, &inv->devices[i], err, errlen) != 0)
            goto fail;
    inv->count = n;
    return 0;
fail:
    gpu_inventory_free(inv);
    memset(inv, 0, sizeof *inv);
    return -1;
}
