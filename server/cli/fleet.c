/*
 * `gpuprobe fleet slurm`: characterizing a cluster with Slurm, no scheduler
 * of our own (docs/fleet.md, "Slurm").
 *
 * DESIGN
 * The command writes the batch script (fleet_script.c) and, with --submit,
 * hands it to sbatch and prints the job's id. --nodes N asks for an array of
 * N whole-node tasks wherever Slurm places them; --nodelist L names the
 * nodes: the list is expanded by `scontrol show hostnames`, the array is
 * submitted held, each task i is pinned to node i (`scontrol update
 * JobId=J_i ReqNodeList=NODE`) and the array released, so each named node
 * gets exactly one task. Slurm's tools are run as child processes found on
 * PATH; their failure is reported with what they said.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/cli/cli.h"
#include "server/cli/fleet_script.h"
#include "server/cli/push.h"
#include "server/jobs/spawn.h"
#include "util/text.h"

#define SLURM_TOOL_TIMEOUT_S 60
#define SLURM_TOOL_OUTPUT (1u << 20)

static const char usage[] =
    "usage: gpuprobe fleet slurm --central URL --token-file F (--nodes N | --nodelist L)\n"
    "                            [--partition P] [--time T] [--bundle DIR] [--db PATH]\n"
    "                            [--probe KIND] [--content full|figures] [--submit]\n"
    "                            [-o FILE]\n"
    "Writes a Slurm job array that runs the GPU suite on every GPU of every node, from\n"
    "the make dist bundle (DIR/bin/gpuprobe probe suite --device all --push URL\n"
    "--token-file F), each result pushed to the central gpuprobe at URL.\n"
    "  --central URL   the central gpuprobe (a daemon that takes POST /api/v1/import)\n"
    "  --token-file F  the central's write token, the first line of F; F must be\n"
    "                  readable at the same path on every node\n"
    "  --nodes N       an array of N tasks, each on a whole node of Slurm's choosing\n"
    "                  (--exclusive: never two at once on a node; docs/fleet.md says\n"
    "                  why that is not N distinct nodes)\n"
    "  --nodelist L    the nodes, as Slurm writes them (gpu[01-16],gpu20): one task each,\n"
    "                  pinned to its node by --submit\n"
    "  --partition P   the partition (default: the cluster's)\n"
    "  --time T        the time limit of each task, as sbatch takes it\n"
    "  --bundle DIR    the unpacked make dist bundle as the nodes see it (default: the\n"
    "                  bundle this gpuprobe runs from)\n"
    "  --db PATH       a node-local database that keeps each node's results, and those\n"
    "                  the central did not acknowledge (gpuprobe push sends them later)\n"
    "  --probe KIND    what each node runs (default suite)\n"
    "  --content full|figures  what each push carries: the whole result (default) or\n"
    "                  its fleet figures alone (docs/fleet.md)\n"
    "  --submit        submit with sbatch and print the job id\n"
    "  -o FILE         where to write the script (default: standard output; with\n"
    "                  --submit, a temporary file)\n"
    "Exit status: 0 written (and submitted), 1 Slurm refused or a tool failed, 2 bad\n"
    "usage.\n";

struct fleet_opts {
    const char *sub, *central, *token_file, *nodes, *nodelist, *partition, *time, *bundle, *db,
        *probe, *out, *content;
    int submit;
};

/* ---- running Slurm's tools --------------------------------------------------- */

/* The full path of tool on PATH into buf; -1 when it is not there. */
static int on_path(const char *tool, char *buf, size_t len)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(buf, len, "%s/%s", d, tool);
        if (access(buf, X_OK) == 0)
            return 0;
    }
    return -1;
}

/* Runs argv (argv[0] a tool on PATH); its output into *out. 0, or 1 after the message. */
static int slurm_tool(char *const argv[], char **out)
{
    char exe[4200], err[1024];
    *out = NULL;
    if (on_path(argv[0], exe, sizeof exe) < 0)
        return cli_fail("fleet", 1, "%s is not on PATH: run this on a Slurm login node", argv[0]);
    if (child_run(exe, argv, SLURM_TOOL_TIMEOUT_S, SLURM_TOOL_OUTPUT, out, err, sizeof err) < 0)
        return cli_fail("fleet", 1, "%s failed: %s", argv[0], err);
    return 0;
}

/* The node list expanded, one name each, into o's nodes. */
static int expand_nodelist(const char *list, struct fleet_slurm *j)
{
    char *out;
    char *const argv[] = {"scontrol", "show", "hostnames", (char *)list, NULL};
    if (slurm_tool(argv, &out) != 0)
        return 1;
    for (char *save = NULL, *n = strtok_r(out, "\n", &save); n; n = strtok_r(NULL, "\n", &save)) {
        char **more = realloc(j->nodes, (j->nnodes + 1) * sizeof *more);
        if (!more || !(more[j->nnodes] = strdup(n))) {
            j->nodes = more ? more : j->nodes;
            free(out);
            return cli_fail("fleet", 1, "out of memory");
        }
        j->nodes = more;
        j->nnodes++;
    }
    free(out);
    return j->nnodes ? 0 : cli_fail("fleet", 2, "--nodelist '%s' names no node", list);
}

/* Pins each task of the held array to its node, then releases the array. */
static int pin_and_release(const char *job, const struct fleet_slurm *j)
{
    char task[64], nodes[300], *out;
    for (size_t i = 0; i < j->nnodes; i++) {
        snprintf(task, sizeof task, "JobId=%s_%zu", job, i);
        snprintf(nodes, sizeof nodes, "ReqNodeList=%s", j->nodes[i]);
        char *const argv[] = {"scontrol", "update", task, nodes, NULL};
        if (slurm_tool(argv, &out) != 0)
            return 1;
        free(out);
    }
    char *const argv[] = {"scontrol", "release", (char *)job, NULL};
    if (slurm_tool(argv, &out) != 0)
        return 1;
    free(out);
    return 0;
}

/* sbatch --parsable [--hold] script; prints the job id. */
static int submit(const char *script, const struct fleet_slurm *j)
{
    char *out;
    char *const held[] = {"sbatch", "--parsable", "--hold", (char *)script, NULL};
    char *const plain[] = {"sbatch", "--parsable", (char *)script, NULL};
    if (slurm_tool(j->nodes ? held : plain, &out) != 0)
        return 1;
    out[strcspn(out, ";\n")] = '\0'; /* "JOBID" or "JOBID;CLUSTER" */
    long long id;
    int status = parse_ll(out, 1, LLONG_MAX, &id) == 0
                     ? 0
                     : cli_fail("fleet", 1, "sbatch answered no job id: '%.100s'", out);
    if (status == 0 && j->nodes)
        status = pin_and_release(out, j);
    if (status == 0)
        printf("%s\n", out);
    free(out);
    return status == 0 && fflush(stdout) != 0 ? cli_fail("fleet", 1, "cannot write") : status;
}

/* ---- the options --------------------------------------------------------------- */

/* A value written as it is into an #SBATCH line: no white space, no quotes. */
static int plain_word(const char *option, const char *v)
{
    if (!v || (*v && strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                               "0123456789_.,:-[]") == strlen(v)))
        return 0;
    return cli_fail("fleet", 2, "--%s: '%s' is not a plain Slurm value", option, v);
}

/* The make dist folder this gpuprobe runs from: the one above its bin/. */
static int own_bundle(char *buf, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash || slash == exe)
            return -1;
        *slash = '\0';
    }
    snprintf(buf, len, "%s", exe);
    return 0;
}

/* Whether dir is laid out as a make dist bundle: dir/bin/gpuprobe an
 * executable file, the program every task of the array runs. */
static int is_bundle(const char *dir)
{
    char exe[PATH_MAX + 16];
    struct stat st;
    snprintf(exe, sizeof exe, "%s/bin/gpuprobe", dir);
    return stat(exe, &st) == 0 && S_ISREG(st.st_mode) && access(exe, X_OK) == 0;
}

/* Absolute forms of the paths the nodes read. The bundle is checked here,
 * where the script is written: a folder without bin/gpuprobe (a build tree's
 * build/, when this gpuprobe is not the bundle's) would only fail on the
 * nodes, once per task. */
static int absolute_paths(const struct fleet_opts *o, struct fleet_slurm *j, char *token,
                          char *bundle)
{
    if (!realpath(o->token_file, token))
        return cli_fail("fleet", 2, "--token-file %s: no such file", o->token_file);
    if (o->bundle ? !realpath(o->bundle, bundle) : own_bundle(bundle, PATH_MAX) < 0)
        return cli_fail("fleet", 2, "--bundle %s: no such folder", o->bundle ? o->bundle : "");
    if (!is_bundle(bundle))
        return cli_fail("fleet", 2,
                        "%s%s/bin/gpuprobe is not an executable file, and every task runs it:"
                        " run this from an unpacked make dist bundle (its bin/gpuprobe), or"
                        " pass --bundle DIR of one",
                        o->bundle ? "--bundle: " : "this gpuprobe is not in a bundle: ", bundle);
    j->token_file = token;
    j->bundle = bundle;
    return 0;
}

static int check_options(const struct fleet_opts *o, struct fleet_slurm *j)
{
    int status, tries;
    struct push_target target;
    const struct cli_push_args push = {o->central, o->token_file, NULL, o->content, NULL};
    if (!o->sub || strcmp(o->sub, "slurm") != 0)
        return cli_fail("fleet", 2, "name what to write: gpuprobe fleet slurm (see --help)");
    if (!o->central)
        return cli_fail("fleet", 2, "--central URL is required");
    if ((status = cli_push_setup("fleet", &push, &target, &tries)) != 0)
        return status;
    j->figures_only = target.figures_only;
    if (!o->nodes == !o->nodelist)
        return cli_fail("fleet", 2, "give one of --nodes N and --nodelist L");
    if ((status = plain_word("partition", o->partition)) != 0 ||
        (status = plain_word("time", o->time)) != 0 || (status = plain_word("probe", o->probe)))
        return status;
    return 0;
}

static int fill_job(const struct fleet_opts *o, struct fleet_slurm *j, char *token, char *bundle)
{
    long long n;
    int status = absolute_paths(o, j, token, bundle);
    if (status != 0)
        return status;
    j->central = o->central;
    j->partition = o->partition;
    j->time = o->time;
    j->db = o->db;
    j->probe = o->probe ? o->probe : "suite";
    if (o->nodelist)
        return expand_nodelist(o->nodelist, j);
    if (parse_ll(o->nodes, 1, 100000, &n) < 0)
        return cli_fail("fleet", 2, "--nodes: expected an integer from 1 to 100000, got '%s'",
                        o->nodes);
    j->nnodes = (size_t)n;
    return 0;
}

/* Writes the script to path ("-": standard output). */
static int write_script(const char *path, const struct fleet_slurm *j)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f)
        return cli_fail("fleet", 1, "cannot write %s", path);
    int rc = fleet_script_write(f, j);
    rc |= f == stdout ? fflush(f) : fclose(f);
    return rc ? cli_fail("fleet", 1, "cannot write %s", path) : 0;
}

static int write_and_submit(const struct fleet_opts *o, const struct fleet_slurm *j)
{
    char tmp[] = "/tmp/gpuprobe-fleet-XXXXXX";
    const char *path = o->out ? o->out : "-";
    if (o->submit && !o->out) {
        int fd = mkstemp(tmp);
        if (fd < 0)
            return cli_fail("fleet", 1, "cannot make a temporary file");
        close(fd);
        path = tmp;
    }
    int status = write_script(path, j);
    if (status == 0 && o->submit)
        status = submit(path, j);
    if (path == tmp)
        unlink(tmp); /* sbatch keeps its own copy of the script */
    return status;
}

int cmd_fleet(int argc, char **argv)
{
    struct fleet_opts o = {0};
    struct fleet_slurm j = {0};
    int status;
    char token[PATH_MAX], bundle[PATH_MAX];
    const struct cli_option opts[] = {
        {"central", .text = &o.central}, {"token-file", .text = &o.token_file},
        {"nodes", .text = &o.nodes}, {"nodelist", .text = &o.nodelist},
        {"partition", .text = &o.partition}, {"time", .text = &o.time},
        {"bundle", .text = &o.bundle}, {"db", .text = &o.db}, {"probe", .text = &o.probe},
        {"content", .text = &o.content}, {"submit", .flag = &o.submit},
        {"output", 'o', .text = &o.out}, {0}};
    if (cli_parse("fleet", usage, opts, &o.sub, argc, argv, &status) < 0)
        return status;
    if ((status = check_options(&o, &j)) == 0 && (status = fill_job(&o, &j, token, bundle)) == 0)
        status = write_and_submit(&o, &j);
    for (size_t i = 0; j.nodes && i < j.nnodes; i++)
        free(j.nodes[i]);
    free(j.nodes);
    return status;
}
