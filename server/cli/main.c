/*
 * gpuprobe: measures the hidden microarchitecture of attached GPUs and
 * serves what it learned. This file only dispatches to the subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "server/cli/cli.h"
#include "server/jobs/worker.h"
#include "util/version.h"

static const char usage[] =
    "usage: gpuprobe COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  serve     run the daemon: HTTP JSON API, dashboard, job scheduler\n"
    "  devices   print the attached GPUs as JSON\n"
    "  probe     run a probe (latency, memory, banks, control-codes, dual-issue, suite)\n"
    "            on GPUs here and print the result (--push: send it to a central)\n"
    "  model     occupancy of a launch, or a kernel's time predicted from measurements\n"
    "  trace     sort a memory trace into L1 arrival order, convert its format,\n"
    "            capture a kernel's trace from its PTX on a GPU, synthesize one, or\n"
    "            model its L1/L2 hit rates\n"
    "  export    write a device's stored results as a bundle another gpuprobe imports\n"
    "  import    read result bundles into a database\n"
    "  push      send a database's waiting results to a central gpuprobe\n"
    "  fleet     characterize a cluster: a Slurm job array that runs the suite on\n"
    "            every GPU of every node and pushes the results to a central gpuprobe\n"
    "  worker    run one job or device discovery (used by the daemon)\n"
    "  regs-limit  developer experiment: which registers a kernel may name (one\n"
    "            variant per process; tests/gpu/regs_limit.sh runs them all)\n"
    "\n"
    "  gpuprobe --version | --help;  gpuprobe COMMAND --help\n";

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"serve", cmd_serve},
    {"devices", cmd_devices},
    {"probe", cmd_probe},
    {"model", cmd_model},
    {"trace", cmd_trace},
    {"export", cmd_export},
    {"import", cmd_import},
    {"push", cmd_push},
    {"fleet", cmd_fleet},
    {"worker", worker_main},
    {"regs-limit", cmd_regs_limit},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("gpuprobe %s\n", gpuprobe_version());
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gpuprobe: unknown command '%s' (see gpuprobe --help)\n", argv[1]);
    return 2;
}
