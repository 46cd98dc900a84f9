/*
 * Writing the Slurm batch script (see fleet_script.h).
 */
#include "server/cli/fleet_script.h"

#include "util/version.h"

/* s quoted for the shell: inside '...', each ' written as '\''. */
static void quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

static void header(FILE *f, const struct fleet_slurm *j)
{
    fprintf(f, "#!/bin/bash\n"
               "# gpuprobe fleet: the GPU %s on every GPU of every node, each result pushed\n"
               "# to the central gpuprobe. Written by `gpuprobe fleet slurm` (gpuprobe %s);\n"
               "# see docs/fleet.md, \"Slurm\". One array task per node: each task takes a\n"
               "# whole node (--nodes=1 --exclusive), so no two tasks and no other job share\n"
               "# its GPUs while they are measured.\n",
            j->probe, gpuprobe_version());
    fprintf(f, "#SBATCH --job-name=gpuprobe-fleet\n"
               "#SBATCH --array=0-%zu\n"
               "#SBATCH --nodes=1\n"
               "#SBATCH --ntasks=1\n"
               "#SBATCH --exclusive\n"
               "#SBATCH --output=gpuprobe-fleet-%%A_%%a.out\n",
            j->nnodes - 1);
    if (j->partition)
        fprintf(f, "#SBATCH --partition=%s\n", j->partition);
    if (j->time)
        fprintf(f, "#SBATCH --time=%s\n", j->time);
}

/* With a node list: the node of this index, and a task elsewhere fails. */
static void node_check(FILE *f, const struct fleet_slurm *j)
{
    if (!j->nodes)
        return;
    fputs("# array index i is for nodes[i] (gpuprobe fleet slurm --submit pins each task\n"
          "# to its node before it releases the array)\n"
          "nodes=(",
          f);
    for (size_t i = 0; i < j->nnodes; i++) {
        fputs(i ? " " : "", f);
        quoted(f, j->nodes[i]);
    }
    fputs(")\n"
          "want=${nodes[$SLURM_ARRAY_TASK_ID]}\n"
          "if [ \"$want\" != \"$SLURMD_NODENAME\" ]; then\n"
          "    echo \"gpuprobe fleet: task $SLURM_ARRAY_TASK_ID is for node $want but runs on "
          "$SLURMD_NODENAME\" >&2\n"
          "    exit 1\n"
          "fi\n",
          f);
}

static void command(FILE *f, const struct fleet_slurm *j)
{
    fputs("echo \"gpuprobe fleet: array task $SLURM_ARRAY_TASK_ID on $SLURMD_NODENAME\"\n"
          "exec ",
          f);
    quoted(f, j->bundle);
    fputs("/bin/gpuprobe probe ", f);
    quoted(f, j->probe);
    fputs(" --device all --compact --push ", f);
    quoted(f, j->central);
    fputs(" --token-file ", f);
    quoted(f, j->token_file);
    if (j->figures_only)
        fputs(" --content figures", f);
    if (j->db) {
        fputs(" --db ", f);
        quoted(f, j->db);
    }
    fputc('\n', f);
}

int fleet_script_write(FILE *f, const struct fleet_slurm *j)
{
    header(f, j);
    fputs("set -u\n", f);
    node_check(f, j);
    command(f, j);
    return ferror(f) ? -1 : 0;
}
