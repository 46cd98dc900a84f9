/*
 * gpuprobe: measures the hidden microarchitecture of attached GPUs and
 * serves what it learned. This file only dispatches to the subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "server/cli/cli.h"
#include "server/jobs/worker.h"
#include "trace/pipeline.h"
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
    int sorts; /* it may sort traces: the environment's setting is checked first */
} commands[] = {
    {"serve", cmd_serve, 1},
    {"devices", cmd_devices, 0},
    {"probe", cmd_probe, 0},
    {"model", cmd_model, 0},
    {"trace", cmd_trace, 1},
    {"export", cmd_export, 0},
    {"import", cmd_import, 0},
    {"push", cmd_push, 0},
    {"fleet", cmd_fleet, 0},
    {"worker", worker_main, 1},
    {"regs-limit", cmd_regs_limit, 0},
};

/* 0, or 2 (bad usage) with the reason printed when the environment holds a
 * sorting-thread setting that means nothing. */
static int check_sort_env(void)
{
    char why[200];
    if (trace_threads_env_check(why, sizeof why) == 0)
        return 0;
    fprintf(stderr, "gpuprobe: %s\n", why);
    return 2;
}

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
        if (strcmp(argv[1], commands[i].name) == 0) {
            int bad = commands[i].sorts ? check_sort_env() : 0;
            return bad ? bad : commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "gpuprobe: unknown command '%s' (see gpuprobe --help)\n", argv[1]);
    return 2;
}
