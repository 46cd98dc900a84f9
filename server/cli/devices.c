/*
 * `gpuprobe devices`: discovery in this process, printed as the same JSON
 * the API serves. No GPU is not an error: the list is empty and says why.
 */
#include <getopt.h>
#include <stdio.h>

#include "probes/gpu/devices.h"
#include "server/cli/cli.h"

static const char usage[] =
    "usage: gpuprobe devices [--compact]\n"
    "Prints the attached GPUs and their attributes as JSON. With no driver or no GPU\n"
    "the list is empty and \"reason\" says why; the exit status is still 0.\n";

int cmd_devices(int argc, char **argv)
{
    static const struct option opts[] = {
        {"compact", no_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int compact = 0, c;
    opterr = 0; /* our own one-line message instead of getopt's */
    while ((c = getopt_long(argc, argv, "ch", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return 0;
        }
        if (c != 'c')
            return cli_unknown_option("devices", argc, argv);
        compact = 1;
    }
    if (optind < argc)
        return cli_fail("devices", 2, "unexpected argument '%s'", argv[optind]);
    struct gpu_inventory inv;
    if (gpu_discover(&inv) < 0)
        return cli_fail("devices", 1, "out of memory");
    json_t *j = gpu_inventory_to_json(&inv);
    gpu_inventory_free(&inv);
    return cli_print_json(j, compact) == 0 ? 0 : cli_fail("devices", 1, "cannot write output");
}
