/*
 * `gpuprobe devices`: discovery in this process, printed as the same JSON
 * the API serves. No GPU is not an error: the list is empty and says why.
 */
#include <stdio.h>

#include "probes/gpu/devices.h"
#include "server/cli/cli.h"

static const char usage[] =
    "usage: gpuprobe devices [--compact]\n"
    "Prints the attached GPUs and their attributes as JSON. With no driver or no GPU\n"
    "the list is empty and \"reason\" says why; the exit status is still 0.\n";

int cmd_devices(int argc, char **argv)
{
    int compact = 0, status;
    const struct cli_option opts[] = {{"compact", 'c', .flag = &compact}, {0}};
    if (cli_parse("devices", usage, opts, NULL, argc, argv, &status) < 0)
        return status;
    struct gpu_inventory inv;
    if (gpu_discover(&inv) < 0)
        return cli_fail("devices", 1, "out of memory");
    json_t *j = gpu_inventory_to_json(&inv);
    gpu_inventory_free(&inv);
    return cli_print_json(j, compact) == 0 ? 0 : cli_fail("devices", 1, "cannot write output");
}
