/*
 * GPU discovery: what is attached, described by the Driver API's attributes.
 *
 * DESIGN
 * No driver and no GPU are normal states, not errors: discovery always
 * produces an inventory, and an empty one carries the reason. The inventory
 * has one JSON form, used alike by `gpuprobe devices`, by the worker that the
 * daemon runs at start-up, and by the HTTP API; the daemon reads it back with
 * gpu_inventory_from_json, so the JSON is the contract between processes.
 */
#ifndef GPUPROBE_PROBES_GPU_DEVICES_H
#define GPUPROBE_PROBES_GPU_DEVICES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct gpu_device {
    int index;                       /* CUDA ordinal */
    char uuid[48];                   /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char name[256];
    char pci_bus_id[32];             /* "0000:18:00.0" */
    int numa_node;                   /* the host NUMA node the GPU's PCI slot hangs off
                                      * (sysfs); -1: none (one node) or unknown */
    int cc_major, cc_minor;
    int sm_count;
    int clock_khz;                   /* SM clock the driver reports as typical */
    int memory_clock_khz;
    uint64_t memory_bytes;
    int memory_bus_width_bits;
    int l2_bytes;
    int registers_per_sm, registers_per_block;
    int shared_memory_per_sm, shared_memory_per_block;
    int shared_memory_per_block_optin, reserved_shared_memory_per_block;
    int max_threads_per_sm, max_threads_per_block;
    int max_warps_per_sm, max_blocks_per_sm;
    int warp_size;
    int ecc_enabled;
};

struct gpu_inventory {
    char driver_version[32];         /* kernel driver, e.g. "580.159.04"; "" if unknown */
    int cuda_driver_version;         /* cuDriverGetVersion, e.g. 13000; 0 if no driver */
    char reason[256];                /* why the list is empty; "" when it is not */
    size_t count;
    struct gpu_device *devices;      /* malloc'd, count entries */
};

/* Fills inv with what is attached. Returns 0 always for "no driver" and "no
 * GPU" (count 0, reason set); -1 only when memory runs out. */
int gpu_discover(struct gpu_inventory *inv);

#ifdef GPUPROBE_TEST_BUILD
/* Test build only (tests/kinds/standin.c): appends the stand-in GPUs that
 * GPUPROBE_STANDIN_GPUS asks for, after the real ones. -1 when they could
 * not be made. */
int standin_gpus_add(struct gpu_inventory *inv);
#endif
void gpu_inventory_free(struct gpu_inventory *inv);

/* {"driver_version":..., "cuda_driver_version":"13.0", "reason":null|"...",
 *  "devices":[{...}, ...]} -- the field names are part of the API. */
json_t *gpu_inventory_to_json(const struct gpu_inventory *inv);
json_t *gpu_device_to_json(const struct gpu_device *d, const struct gpu_inventory *inv);
/* Strictly parses what gpu_inventory_to_json wrote; -1 with a reason on any
 * missing or mistyped field (but numa_node, which inventories written before
 * it existed lack: absent, it reads as -1). */
int gpu_inventory_from_json(const json_t *j, struct gpu_inventory *inv, char *err, size_t errlen);

/* The NUMA node of PCI device pci_bus_id ("0000:18:00.0", any case) as
 * sysfs gives it: the integer in <pci_devices>/<bus id in lower case>/numa_node,
 * pci_devices being GPU_SYSFS_PCI_DEVICES on a real host. -1 when the file is
 * missing or holds no integer >= -1 (-1 is also what the kernel writes when
 * the platform has no NUMA affinity). */
#define GPU_SYSFS_PCI_DEVICES "/sys/bus/pci/devices"
int gpu_numa_node(const char *pci_devices, const char *pci_bus_id);

/* Formats 16 UUID bytes as "GPU-8-4-4-4-12" hex. buf must hold 41 bytes. */
void gpu_uuid_format(const unsigned char bytes[16], char *buf, size_t len);

/* Finds the kernel module's version ("580.159.04") in the text of
 * /proc/driver/nvidia/version, proprietary or open module alike. Returns 0,
 * or -1 with out set to "" when the text has none. */
int gpu_driver_version_parse(const char *text, char *out, size_t len);

#endif
