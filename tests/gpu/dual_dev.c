/*
 * Development driver for the dual-issue probe: runs dual_issue_probe_run
 * on one GPU and prints the result document. Not part of the release: it
 * is linked by hand against the dist variant's objects, like
 * tests/gpu/banks_dev.c (see tests/gpu/results/2026-11-21-h200-banks/
 * summary.md for the command), until the probe is wired as a job kind.
 * usage: dual_dev [DEVICE [REPEATS]]      (defaults: 0, 3)
 */
#include <stdio.h>
#include <stdlib.h>

#include "probes/dual_issue.h"

int main(int argc, char **argv)
{
    char err[1024];
    const char *dev = argc > 1 ? argv[1] : "0";
    json_t *res = dual_issue_probe_run(dev, argc > 2 ? atoi(argv[2]) : 3, err, sizeof err);
    if (!res) {
        fprintf(stderr, "dual-issue: %s\n", err);
        return 1;
    }
    json_dumpf(res, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(res);
    return 0;
}
