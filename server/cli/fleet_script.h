/*
 * The Slurm batch script of `gpuprobe fleet slurm` (docs/fleet.md, "Slurm").
 *
 * DESIGN
 * One job array, one task per node: every task asks for a whole node
 * (--nodes=1 --ntasks=1 --exclusive), so no two tasks and no other job share
 * a node's GPUs while they are measured, and runs the `make dist` bundle's
 * gpuprobe on every GPU of its node (`probe suite --device all --push`),
 * which pushes each result to the central. With a node list the script
 * knows which node each index is for and a task on another node fails
 * instead of measuring it twice; pinning index i to node i is done at
 * submission (fleet.c). Every value written into the script is quoted for
 * the shell.
 */
#ifndef GPUPROBE_SERVER_CLI_FLEET_SCRIPT_H
#define GPUPROBE_SERVER_CLI_FLEET_SCRIPT_H

#include <stddef.h>
#include <stdio.h>

struct fleet_slurm {
    const char *central;         /* the central gpuprobe's URL */
    const char *token_file;      /* absolute: read on every node */
    const char *bundle;          /* absolute: the make dist folder, as the nodes see it */
    const char *partition;       /* NULL: the cluster's default */
    const char *probe;           /* "suite" (the test build: "suite-standin") */
    const char *db;              /* NULL: a temporary database per task */
    const char *time;            /* NULL: the partition's default limit */
    int figures_only;            /* push the fleet figures alone (--content figures) */
    char **nodes;                /* with a node list: nodes[0..nnodes) */
    size_t nnodes;               /* the array's size, with or without a list */
};

/* Writes the script to f; -1 when it cannot be written. */
int fleet_script_write(FILE *f, const struct fleet_slurm *j);

#endif
