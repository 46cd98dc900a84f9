/*
 * `gpuprobe regs-limit`: the register-limit experiment (probes/regs_limit.h),
 * a developer command. --list prints the variants, one a line; --variant
 * NAME runs one in this process and prints its outcome as one JSON line.
 *
 * DESIGN
 * One variant per process on purpose: a variant may fault the GPU, and a
 * fault ends this process's CUDA context, so the next variant must start
 * in a new process (tests/gpu/regs_limit.sh runs them one by one and
 * summarizes). A fault or a refused load is the experiment's answer and
 * exits 0; only an experiment that could not run (no GPU, the compile
 * failed, the edit was refused) exits 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "probes/regs_limit.h"
#include "server/cli/cli.h"

static const char usage[] =
    "usage: gpuprobe regs-limit --list\n"
    "       gpuprobe regs-limit --device N|UUID --variant NAME [--keep-cubins DIR]\n"
    "Developer experiment: why naming R253/R254 faults in a kernel of 255 registers\n"
    "(docs/banks.md). A variant compiles a kernel, edits one register field of one\n"
    "instruction (and with small-c255 / small-c+8 the register count the cubin\n"
    "declares), runs it once and prints one JSON line: outcome ok, fault or\n"
    "load_refused, the CUDA error, the register named, the counts. A variant may\n"
    "fault the GPU (an Xid in the kernel log); run each in its own process, as\n"
    "tests/gpu/regs_limit.sh does.\n"
    "  --list               print the variants' names, one a line\n"
    "  --device N|UUID      the GPU\n"
    "  --variant NAME       the variant to run\n"
    "  --keep-cubins DIR    write the compiled module's PTX and cubin into DIR\n"
    "Exit status: 0 the variant ran (whatever its outcome), 1 it could not run,\n"
    "2 bad usage.\n";

int cmd_regs_limit(int argc, char **argv)
{
    const char *device = NULL, *variant = NULL, *keep = NULL;
    int list = 0, status;
    const struct cli_option opts[] = {{"device", .text = &device},
                                      {"variant", .text = &variant},
                                      {"keep-cubins", .text = &keep},
                                      {"list", .flag = &list},
                                      {0}};
    if (cli_parse("regs-limit", usage, opts, NULL, argc, argv, &status) < 0)
        return status;
    if (list) {
        struct regs_variant v[REGS_VARIANTS_MAX];
        size_t n = regs_limit_variants(v);
        for (size_t i = 0; i < n; i++)
            puts(v[i].name);
        return 0;
    }
    if (!device || !variant)
        return cli_fail("regs-limit", 2, "--device and --variant are required (or --list)");
    if (keep)
        setenv("GPUPROBE_CUBIN_DIR", keep, 1); /* read by probes/gpu/gpu.c */
    char err[1024];
    json_t *res = regs_limit_run(device, variant, err, sizeof err);
    if (!res)
        return cli_fail("regs-limit", 1, "%s", err);
    return cli_print_json(res, 1) == 0 ? 0 : cli_fail("regs-limit", 1, "cannot write output");
}
