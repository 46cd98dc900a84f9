/*
 * `gpuprobe trace capture`: a kernel's memory trace from its PTX, on this
 * machine's GPU (docs/trace-capture.md).
 *
 * DESIGN
 * A thin driver over probes/capture.h, the same call the daemon's
 * trace-capture job makes: the options become a struct capture_req, the
 * result document is printed on stdout. With --emit-ptx the recording
 * rewrite is also written to a file; given alone (no -o), nothing runs and
 * no GPU is needed: the command prints the kernel's sites (pc, width,
 * dependency flag, line) and what it does not cover — how the rewriter is
 * checked against ptxas (tests/unit/ptxas_capture.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/capture.h"
#include "server/cli/cli.h"
#include "util/text.h"
#include "util/textfile.h"


static const char usage[] =
    "usage: gpuprobe trace capture --ptx FILE [--entry NAME] --grid G --block B\n"
    "                              [--param NAME=VALUE]... [--device N] -o TRACE\n"
    "       gpuprobe trace capture --ptx FILE [--entry NAME] --emit-ptx OUT\n"
    "Rewrites the kernel's PTX so that every global load and store also records\n"
    "(thread, pc, address), runs it on the GPU through the driver (a counting pass,\n"
    "a recording pass, then the original kernel on the same inputs: every buffer\n"
    "must come out byte for byte the same), and writes the binary requests trace\n"
    "(thread-major; width and dependency flag of each record from the PTX).\n"
    "options:\n"
    "  --ptx FILE            the module (nvcc -ptx output, or any PTX with .address_size 64)\n"
    "  --entry NAME          the kernel, when the module has more than one\n"
    "  --grid X[,Y[,Z]]      blocks of the launch ('x' may separate too)\n"
    "  --block X[,Y[,Z]]     threads per block\n"
    "  --param NAME=VALUE    each kernel parameter, by its PTX name or index from 0:\n"
    "                        a pointer is a buffer buf:BYTES[:FILL], FILL one of zero\n"
    "                        (the default), iota (32-bit words 0,1,2,...), perm:SEED\n"
    "                        (those words in a random order), rand:SEED (random\n"
    "                        bytes), randf:SEED (floats in [0,1)), f32:V;\n"
    "                        a scalar is its value (integer or number, as declared)\n"
    "  --shared BYTES        dynamic shared memory of the launch (default 0)\n"
    "  --device N            GPU index or UUID (default 0)\n"
    "  -o, --output TRACE    the trace, written as TRACE.part and renamed (a device\n"
    "                        such as /dev/null is written in place)\n"
    "  --max-records N       refuse a kernel making more accesses (default 134217728)\n"
    "  --sample-blocks N     record only the launch's first N blocks (linear index, x\n"
    "                        fastest); the whole launch still runs (default: all)\n"
    "  --emit-ptx OUT        also write the instrumented (recording) PTX; alone, print\n"
    "                        the sites and run nothing (no GPU needed)\n"
    "  --emit-count          with --emit-ptx: write the counting rewrite instead\n"
    "The result (stdout, JSON): the sites, what is not covered (atomics, generic\n"
    "accesses, cp.async, calls), records in all and per site, the same-answer check\n"
    "per buffer, and the times of the three passes.\n"
    "Exit status: 0 done; 1 the capture failed (the reason on stderr); 2 bad usage.\n";

struct capture_opts {
    const char *ptx, *entry, *grid, *block, *shared, *device, *output, *max_records, *sample, *emit;
    struct cli_list params;
    int emit_count;
};

static int emit_ptx(const char *text, const struct ptxi_kernel *k, const char *path,
                    int counting)
{
    char err[256];
    char *out = ptxi_rewrite(text, k, counting ? PTXI_COUNT : PTXI_RECORD, err, sizeof err);
    if (!out)
        return cli_fail("trace capture", 1, "%s", err);
    int rc = text_file_write(path, out, strlen(out), err, sizeof err) < 0
                 ? cli_fail("trace capture", 1, "%s", err)
                 : 0;
    free(out);
    return rc;
}

/* --emit-ptx alone: the sites, no GPU. */
static int rewrite_only(const struct capture_opts *o, const char *text)
{
    struct ptxi_kernel k;
    char err[512];
    if (ptxi_analyze(text, o->entry, &k, err, sizeof err) < 0)
        return cli_fail("trace capture", 1, "%s: %s", o->ptx, err);
    int rc = emit_ptx(text, &k, o->emit, o->emit_count);
    if (rc == 0 && cli_print_json(capture_sites_json(&k), 0) < 0)
        rc = 1;
    ptxi_kernel_free(&k);
    return rc;
}

static int fill_request(const struct capture_opts *o, struct capture_req *q)
{
    char err[256];
    long long v;
    if (!o->grid || !o->block || !o->output || !*o->output)
        return cli_fail("trace capture", 2, "--grid, --block and -o TRACE are required "
                                            "(or --emit-ptx alone to only rewrite)");
    if (capture_dims_parse(o->grid, q->grid, err, sizeof err) < 0 ||
        capture_dims_limit("grid", q->grid, err, sizeof err) < 0)
        return cli_fail("trace capture", 2, "--grid: %s", err);
    if (capture_dims_parse(o->block, q->block, err, sizeof err) < 0 ||
        capture_dims_limit("block", q->block, err, sizeof err) < 0)
        return cli_fail("trace capture", 2, "--block: %s", err);
    if (o->shared && parse_ll(o->shared, 0, 1 << 30, &v) < 0)
        return cli_fail("trace capture", 2, "--shared must be a byte count, not '%s'", o->shared);
    q->shared_bytes = o->shared ? (unsigned)v : 0;
    if (o->max_records && parse_ll(o->max_records, 1, UINT32_MAX, &v) < 0)
        return cli_fail("trace capture", 2, "--max-records must be from 1 to 2^32-1");
    q->max_records = o->max_records ? (uint64_t)v : 0;
    if (o->sample && parse_ll(o->sample, 1, UINT32_MAX, &v) < 0)
        return cli_fail("trace capture", 2, "--sample-blocks must be from 1 to 2^32-1");
    q->sample_blocks = o->sample ? (uint64_t)v : 0;
    q->entry = o->entry;
    for (int i = 0; i < o->params.n; i++) /* what can be told without the PTX is bad usage */
        if (capture_arg_check(o->params.item[i], err, sizeof err) < 0)
            return cli_fail("trace capture", 2, "--param: %s", err);
    q->args = o->params.item;
    q->nargs = (size_t)o->params.n;
    q->device = o->device ? o->device : "0";
    q->output = o->output;
    return 0;
}

int cmd_trace_capture(int argc, char **argv)
{
    struct capture_opts o = {0};
    const struct cli_option opts[] = {
        {"ptx", 0, &o.ptx, NULL, NULL},         {"entry", 0, &o.entry, NULL, NULL},
        {"grid", 0, &o.grid, NULL, NULL},       {"block", 0, &o.block, NULL, NULL},
        {"param", 0, NULL, NULL, &o.params},    {"shared", 0, &o.shared, NULL, NULL},
        {"device", 0, &o.device, NULL, NULL},   {"output", 'o', &o.output, NULL, NULL},
        {"max-records", 0, &o.max_records, NULL, NULL},
        {"sample-blocks", 0, &o.sample, NULL, NULL},
        {"emit-ptx", 0, &o.emit, NULL, NULL},   {"emit-count", 0, NULL, &o.emit_count, NULL},
        {NULL, 0, NULL, NULL, NULL}};
    int status;
    if (cli_parse("trace capture", usage, opts, NULL, argc, argv, &status) < 0)
        return status;
    if (!o.ptx)
        return cli_fail("trace capture", 2, "--ptx FILE is required");
    if (o.emit && strcmp(o.emit, "-") == 0)
        return cli_fail("trace capture", 2, "--emit-ptx -: standard output carries the result "
                                            "document; name a file");
    char why[512];
    char *text = text_file_read(o.ptx, TEXT_FILE_PTX_MAX, why, sizeof why);
    if (!text)
        return cli_fail("trace capture", 1, "%s", why);
    struct capture_req q = {.ptx = text};
    if (o.emit && !o.output && !o.grid && !o.block) {
        status = rewrite_only(&o, text);
    } else if ((status = fill_request(&o, &q)) == 0) {
        char err[1024];
        int input_fault;
        json_t *doc = capture_run(&q, err, sizeof err, &input_fault);
        if (!doc)
            status = cli_fail("trace capture", 1, "%s", err);
        else if (cli_print_json(doc, 0) < 0)
            status = 1;
        if (status == 0 && o.emit) {
            struct ptxi_kernel k;
            if (ptxi_analyze(text, o.entry, &k, err, sizeof err) == 0) {
                status = emit_ptx(text, &k, o.emit, o.emit_count);
                ptxi_kernel_free(&k);
            }
        }
    }
    free(text);
    return status;
}
