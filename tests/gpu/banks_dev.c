/*
 * Development driver for the register-bank probe: runs banks_probe_run on
 * one GPU and prints the result document. Not part of the release: it is
 * linked by hand against the dist variant's objects (see
 * tests/gpu/results/2026-11-21-h200-banks/summary.md for the command)
 * until the probe is wired as a job kind.
 * usage: banks_dev [DEVICE [SAMPLE]]
 *        banks_dev DEVICE one [RA RB RC REUSE]   one measurement (255 = RZ;
 *                                                no registers: unedited)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/banks.h"

int main(int argc, char **argv)
{
    char err[1024];
    const char *dev = argc > 1 ? argv[1] : "0";
    json_t *res;
    if (argc > 2 && strcmp(argv[2], "one") == 0) {
        struct banks_test t = {{0, 0, 0}, 0};
        for (int i = 0; i < 3 && 3 + i < argc; i++)
            t.src[i] = (unsigned)atoi(argv[3 + i]);
        if (argc > 6)
            t.reuse = (unsigned)atoi(argv[6]);
        res = banks_probe_one(dev, argc > 5 ? &t : NULL, err, sizeof err);
    } else {
        res = banks_probe_run(dev, argc > 2 ? atoi(argv[2]) : 64, 3, err, sizeof err);
    }
    if (!res) {
        fprintf(stderr, "banks: %s\n", err);
        return 1;
    }
    json_dumpf(res, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(res);
    return 0;
}
