/*
 * `gpuprobe trace synth`: writes the synthetic memory trace of a described
 * kernel (trace/synth.h, docs/trace-synth.md) as a requests file that
 * `gpuprobe trace sort` and `trace convert` read.
 *
 * DESIGN
 * A thin driver: the options become a struct synth_opts, synth_resolve
 * checks them against the pattern, and synth_run streams the records to the
 * binary writer (trace/binfmt.h; the header carries threads_per_block, so
 * the sorter needs no --threads-per-block) or the CSV writer
 * (trace/csv.h). Nothing is held in memory. OUT is written whole or not at
 * all, a device or FIFO in place (util/outfile.h); -o - writes to standard
 * output. Before anything is written the records are counted
 * (synth_count: the pattern's own arithmetic on one block of each kind, not
 * a second copy of it) and OUT's size worked out from the format (a binary
 * record's fixed size; the longest CSV line a record of this kernel can be);
 * one line on stderr describes the kernel, the count and the size (--quiet:
 * not), and an OUT larger than the space free on its file system (statvfs)
 * is refused unless --force: --size 4096 of a naive matrix multiply is 4.4
 * TB, which would otherwise be found out by filling the disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "server/cli/cli.h"
#include "util/text.h"
#include "trace/binfmt.h"
#include "trace/csv.h"
#include "trace/synth.h"
#include "util/fdio.h"
#include "util/outfile.h"

#define CMD "trace synth"

static const char usage_head[] =
    "usage: gpuprobe trace synth --pattern NAME --size N[,M,K] -o OUT [options]\n"
    "Writes the global-memory requests of a described CUDA kernel, generated from\n"
    "its index arithmetic (docs/trace-synth.md), as a trace that `gpuprobe trace\n"
    "sort` reads: each thread's loads and stores in program order, thread by thread.\n"
    "options:\n"
    "  --pattern NAME          the kernel (below)\n"
    "  --size N[,M,K]          its sizes in elements (one value: all equal)\n"
    "  --tile T                tiled patterns: the tile's extent (default 16; the\n"
    "                          block is then T x T)\n"
    "  --block BXxBY           untiled patterns: the thread block (default 16x16;\n"
    "                          1-D patterns: BX, default 256)\n"
    "  --elem-size E           bytes per element and request: 1, 2, 4, 8 or 16\n"
    "                          (default 4, float)\n"
    "  --stride S              strided: elements between reads (default 32)\n"
    "  -o, --output OUT        the file to write ('-': standard output)\n"
    "  --out-format F          bin (docs/trace-format.md) or csv\n"
    "                          (tid,pc,addr,width,dep,op; op st for the writes;\n"
    "                          the block size is not in a CSV file: sort it with\n"
    "                          --threads-per-block, as stderr says); default: as\n"
    "                          trace sort tells it, csv for an OUT named *.csv,\n"
    "                          bin for *.bin, else bin\n"
    "  --force                 write even when OUT would not fit in the space free\n"
    "                          on its file system\n"
    "  --quiet                 no description of the kernel on stderr\n"
    "patterns (--size):\n";

static const char usage_tail[] =
    "PCs are 16 x the memory instruction's place in the kernel's source; the\n"
    "dependency flags and array addresses: docs/trace-synth.md.\n"
    "Before writing, the records are counted from the pattern's arithmetic and\n"
    "the kernel, the count and OUT's size are printed on stderr; an OUT that would\n"
    "not fit in the space free on its file system is refused (status 2) unless\n"
    "--force.\n"
    "Exit status: 0 done; 1 the output cannot be written; 2 bad usage, or OUT too\n"
    "large for its file system.\n";

/* The help text: the fixed parts around one entry per pattern. */
static const char *usage(void)
{
    static char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "%s", usage_head);
    for (size_t i = 0; i < synth_pattern_count() && n < sizeof text; i++) {
        const struct synth_pattern *p = synth_pattern_at(i);
        n += (size_t)snprintf(text + n, sizeof text - n, "  %-16s --size %s\n      %s\n", p->name,
                              p->sizes, p->summary);
    }
    if (n < sizeof text)
        snprintf(text + n, sizeof text - n, "%s", usage_tail);
    return text;
}

/* The output: a binary writer or a CSV buffer over one descriptor. */
struct out {
    struct outfile file;
    int fd, csv;
    int write_errno; /* why the CSV buffer's write failed */
    struct trace_bin_writer *bin;
    struct trace_wbuf wbuf;
    char buf[1 << 16];
};

static int fd_flush(void *ctx, const char *data, size_t n)
{
    struct out *o = ctx;
    if (fd_write_all(o->fd, data, n, FD_CURRENT) == 0)
        return 0;
    o->write_errno = errno ? errno : EIO;
    return -1;
}

/* Opens OUT whole or not at all (util/outfile.h). */
static int out_open(struct out *o, const char *path, const struct synth_kernel *k)
{
    char why[PATH_MAX + 300];
    o->fd = outfile_open(&o->file, path, why, sizeof why);
    if (o->fd < 0)
        return cli_fail(CMD, 1, "%s", why);
    struct trace_err err = {0};
    if (o->csv) {
        trace_wbuf_init(&o->wbuf, o->buf, sizeof o->buf, fd_flush, o);
        if (trace_csv_write_in_header(&o->wbuf) == 0)
            return 0;
        snprintf(err.msg, sizeof err.msg, "cannot write %s: %s",
                 strcmp(path, "-") == 0 ? "standard output" : path, strerror(o->write_errno));
    } else {
        struct trace_bin_header h;
        trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
        h.threads_per_block = k->threads_per_block;
        if ((o->bin = trace_bin_writer_fd(o->fd, 0, &h, &err)))
            return 0;
    }
    close(o->fd);
    outfile_discard(&o->file);
    return cli_fail(CMD, 1, "%s", err.msg);
}

/* Finishes the output. ok 0: writing the records failed (they stop at the
 * first failure). On any failure removes what it wrote and returns -1 with
 * the reason in why: the binary writer keeps its own, the CSV buffer's is
 * write_errno. */
static int out_close(struct out *o, int ok, char *why, size_t len)
{
    struct trace_err err = {0};
    int rc = 0;
    if (o->csv ? trace_wbuf_flush(&o->wbuf) < 0 : trace_bin_writer_close(o->bin, &err) < 0) {
        snprintf(why, len, "%s", o->csv ? strerror(o->write_errno ? o->write_errno : EIO) : err.msg);
        rc = -1;
    }
    if (close(o->fd) < 0 && rc == 0) {
        snprintf(why, len, "%s", strerror(errno));
        rc = -1;
    }
    if (!ok && rc == 0) { /* a writer that failed says so at close: not expected */
        snprintf(why, len, "the records could not be written");
        rc = -1;
    }
    if (rc == 0 && outfile_commit(&o->file, why, len) < 0)
        rc = -1;
    if (rc < 0)
        outfile_discard(&o->file);
    return rc;
}

/* ---- OUT's size --------------------------------------------------------------------- */

/* 4398046511232 -> "4 TiB", 1536 -> "1.5 KiB". */
static void bytes_text(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double b = (double)bytes;
    size_t u = 0;
    while (b >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, "%.3g %s", b, units[u]);
}

static int no_flush(void *ctx, const char *data, size_t n)
{
    (void)ctx, (void)data, (void)n;
    return -1;
}

/* The bytes OUT starts with (*head) and those of one record at most: a
 * binary file's are fixed; a CSV line is longest for the largest thread
 * id, PC, address and flag of the kernel, as the CSV writer itself writes
 * them. */
static void record_bytes(const struct synth_kernel *k, int csv, uint64_t *head, uint64_t *per)
{
    if (!csv) {
        *head = TRACE_BIN_HEADER_BYTES;
        *per = TRACE_BIN_REQ_BYTES;
        return;
    }
    char buf[1024];
    struct trace_wbuf w;
    struct trace_rec r = {.pc = (uint64_t)(k->pat->ninsns - 1) * SYNTH_PC_STEP, .width = k->elem,
                          .store = 1};
    r.tid = k->grid[0] * k->grid[1] * k->threads_per_block - 1; /* checked by synth_resolve */
    for (int i = 0; i < k->narrays; i++)
        if (k->array_elems[i] && k->base[i] + (k->array_elems[i] - 1) * k->elem > r.addr)
            r.addr = k->base[i] + (k->array_elems[i] - 1) * k->elem;
    for (int i = 0; i < k->pat->ninsns; i++)
        if (k->pat->insns[i].dep > r.dep)
            r.dep = (uint8_t)k->pat->insns[i].dep;
    trace_wbuf_init(&w, buf, sizeof buf, no_flush, NULL);
    trace_csv_write_in_header(&w);
    *head = w.len;
    trace_csv_write_in(&w, &r);
    *per = w.len - *head;
}

/* The bytes free on the file system OUT is to be made on, and that folder
 * (for the message); -1 when OUT is not a file made there (standard output,
 * a device or FIFO written in place: util/outfile.h) or it cannot be told
 * (a folder that is not there: opening OUT will say so). */
static int space_free(const char *path, uint64_t *bytes, char *dir, size_t len)
{
    struct stat st;
    struct statvfs vfs;
    if (strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode)))
        return -1;
    path_folder(path, dir, len);
    if (statvfs(dir, &vfs) != 0)
        return -1;
    *bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    return 0;
}

/* Counts the records and works out OUT's size: refuses (2) an OUT that
 * would not fit, else describes the kernel, the count and the size in
 * line, to be printed once OUT is open. */
static int check_size(const struct synth_kernel *k, const char *output, int csv, int force,
                      char *line, size_t len)
{
    uint64_t head, per, records, free_bytes;
    char dir[PATH_MAX], size_text[64] = "", free_text[32], desc[512];
    record_bytes(k, csv, &head, &per);
    /* at most as many as keep the size below 2^64 */
    int over = synth_count(k, (UINT64_MAX - head) / per, &records);
    uint64_t bytes = head + records * per;
    const char *upto = csv ? "up to " : "";
    if (bytes >= 1024) { /* ", 4 TiB" */
        bytes_text(bytes, free_text, sizeof free_text);
        snprintf(size_text, sizeof size_text, ", %s%s", upto, free_text);
    }
    if (!force && space_free(output, &free_bytes, dir, sizeof dir) == 0 && (over || bytes > free_bytes)) {
        bytes_text(free_bytes, free_text, sizeof free_text);
        char where[PATH_MAX];
        if (!realpath(dir, where))
            snprintf(where, sizeof where, "%s", dir);
        if (over)
            return cli_fail(CMD, 2, "%s would take more than 2^64 bytes: give a smaller --size", output);
        return cli_fail(CMD, 2,
                        "%s would take %s%" PRIu64 " bytes (%" PRIu64 " records%s): more than "
                        "the %s free on the file system of %s; give a smaller --size, or --force "
                        "to write it anyway",
                        output, upto, bytes, records, size_text, free_text, where);
    }
    synth_describe(k, desc, sizeof desc);
    if (over)
        snprintf(line, len, "%s; more than %" PRIu64 " records, more than 2^64 bytes", desc, records);
    else
        snprintf(line, len, "%s; %" PRIu64 " records, %s%" PRIu64 " bytes%s%s%s", desc, records,
                 upto, bytes, *size_text ? " (" : "", *size_text ? size_text + 2 : "",
                 *size_text ? ")" : "");
    return 0;
}

static int take_options(struct synth_opts *so, const char *size, const char *tile,
                        const char *block, const char *elem, const char *stride)
{
    char why[256];
    if (size && synth_parse_size(size, so, why, sizeof why) < 0)
        return cli_fail(CMD, 2, "%s", why);
    if (block && synth_parse_block(block, so, why, sizeof why) < 0)
        return cli_fail(CMD, 2, "%s", why);
    struct {
        const char *text, *name;
        uint64_t max, *v;
    } nums[] = {{tile, "--tile", 32, &so->tile}, {stride, "--stride", 1ull << 32, &so->stride}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char *end;
        if (!nums[i].text)
            continue;
        errno = 0;
        unsigned long long v = strtoull(nums[i].text, &end, 10);
        if (errno || *end || end == nums[i].text || nums[i].text[0] == '-' || v < 1 || v > nums[i].max)
            return cli_fail(CMD, 2, "%s takes 1 to %" PRIu64 ", not '%s'", nums[i].name, nums[i].max,
                            nums[i].text);
        *nums[i].v = v;
    }
    if (elem) {
        char *end;
        unsigned long v = strtoul(elem, &end, 10);
        if (*end || end == elem || !trace_width_valid((uint32_t)v) || v > 16)
            return cli_fail(CMD, 2, "--elem-size takes 1, 2, 4, 8 or 16, not '%s'", elem);
        so->elem = (uint32_t)v;
    }
    return 0;
}

int cmd_trace_synth(int argc, char **argv)
{
    const char *pattern = NULL, *size = NULL, *tile = NULL, *block = NULL, *elem = NULL,
               *stride = NULL, *output = NULL, *format = NULL;
    int quiet = 0, force = 0, status;
    const struct cli_option opts[] = {
        {"pattern", 0, .text = &pattern}, {"size", 0, .text = &size},
        {"tile", 0, .text = &tile},       {"block", 0, .text = &block},
        {"elem-size", 0, .text = &elem},  {"stride", 0, .text = &stride},
        {"output", 'o', .text = &output}, {"out-format", 0, .text = &format},
        {"quiet", 0, .flag = &quiet},     {"force", 0, .flag = &force},
        {0}};
    if (cli_parse(CMD, usage(), opts, NULL, argc, argv, &status) < 0)
        return status;
    if (!pattern)
        return cli_fail(CMD, 2, "--pattern NAME is required (see gpuprobe trace synth --help)");
    const struct synth_pattern *p = synth_pattern_find(pattern);
    if (!p)
        return cli_fail(CMD, 2, "unknown pattern '%s' (see gpuprobe trace synth --help)", pattern);
    if (!output || !*output)
        return cli_fail(CMD, 2, "-o OUT is required ('-' for standard output)");
    struct out *o = calloc(1, sizeof *o);
    if (!o)
        return cli_fail(CMD, 1, "out of memory");
    if (format && strcmp(format, "csv") != 0 && strcmp(format, "bin") != 0) {
        free(o);
        return cli_fail(CMD, 2, "--out-format takes bin or csv, not '%s'", format);
    }
    o->csv = format ? strcmp(format, "csv") == 0
                    : cli_trace_out_format(output, TRACE_OUT_BIN) == TRACE_OUT_CSV;

    struct synth_opts so = {0};
    struct synth_kernel k;
    char why[256], line[700];
    if ((status = take_options(&so, size, tile, block, elem, stride)) != 0 ||
        (synth_resolve(p, &so, &k, why, sizeof why) < 0 && (status = cli_fail(CMD, 2, "%s", why))) ||
        (status = check_size(&k, output, o->csv, force, line, sizeof line)) != 0 ||
        (status = out_open(o, output, &k)) != 0) {
        free(o);
        return status;
    }
    if (!quiet) /* before writing: a large OUT takes a while */
        fprintf(stderr, "%s\n", line);
    uint64_t records = 0;
    int csv = o->csv;
    int rc = o->csv ? synth_run(&k, trace_csv_sink, &o->wbuf, &records)
                    : synth_run(&k, trace_bin_write_rec, o->bin, &records);
    char whyw[PATH_MAX + 300];
    if (out_close(o, rc == 0, whyw, sizeof whyw) < 0) {
        free(o);
        return cli_fail(CMD, 1, "cannot write %s: %s",
                        strcmp(output, "-") == 0 ? "standard output" : output, whyw);
    }
    free(o);
    struct trace_params dflt;
    trace_params_default(&dflt);
    if (csv && k.threads_per_block != dflt.threads_per_block) /* even with --quiet: the sort would be wrong */
        fprintf(stderr, "gpuprobe trace synth: %s holds no block size: sort it with --threads-per-block %" PRIu32
                        " (the sorter's default is %" PRIu32 ")\n",
                output, k.threads_per_block, dflt.threads_per_block);
    return 0;
}
