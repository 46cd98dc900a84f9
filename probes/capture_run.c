/*
 * Running a capture on the GPU (see capture.h for the passes and the
 * same-answer check).
 *
 * DESIGN
 * One struct run holds everything a capture owns (modules, device
 * buffers, host images, records) so that one release frees it however far
 * the capture got. Each pass is the same function (run_pass): upload every
 * buffer from its host image, reset the control block, launch with the
 * kernel's parameters (plus the two added ones for the rewrites), wait,
 * and copy every buffer back into that pass's host copy. Times are host
 * CLOCK_MONOTONIC around launch and synchronisation (one launch each,
 * first launch of each module: they include the module's first-launch
 * cost, and are reported as such, not as kernel times).
 */
#include "probes/capture.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes/gpu/gpu.h"
#include "trace/binfmt.h"
#include "util/clock.h"
#include "util/outfile.h"

#define PASSES 3
enum { PASS_COUNT, PASS_RECORD, PASS_ORIGINAL };
static const char *const pass_names[PASSES] = {"counting", "recording", "original"};
#define DEFAULT_SHARED_LIMIT (48u * 1024u)

struct run {
    const struct capture_req *req;
    struct gpu g;
    int g_open;
    struct ptxi_kernel k;
    int k_ok;
    struct capture_value *values;
    CUdeviceptr *dev;               /* per parameter: the buffer, or 0 */
    unsigned char **init;           /* per parameter: the buffer's first bytes */
    unsigned char **after[PASSES];  /* per pass and parameter: the bytes after it */
    struct gpu_module mods[PASSES];
    CUfunction fns[PASSES];
    CUdeviceptr records, control;
    unsigned char *host_records;
    uint64_t count, threads, recorded;
    uint64_t limit;                 /* threads at or past it do not record */
    double ms[PASSES], jit_ms[PASSES], write_ms;
};

static const char *const module_names[PASSES] = {"capture_count", "capture_record",
                                                 "capture_original"};

/* ---- set-up ------------------------------------------------------------------ */

static int alloc_host(struct run *r, char *err, size_t errlen)
{
    size_t n = r->k.nparams ? r->k.nparams : 1;
    r->values = calloc(n, sizeof *r->values);
    r->dev = calloc(n, sizeof *r->dev);
    r->init = calloc(n, sizeof *r->init);
    for (int p = 0; p < PASSES; p++)
        r->after[p] = calloc(n, sizeof *r->after[p]);
    if (!r->values || !r->dev || !r->init || !r->after[0] || !r->after[1] || !r->after[2])
        return snprintf(err, errlen, "out of memory"), -1;
    return 0;
}

/* Host images and device buffers of every buffer parameter. */
static int make_buffers(struct run *r, char *err, size_t errlen)
{
    for (size_t i = 0; i < r->k.nparams; i++) {
        const struct capture_value *v = &r->values[i];
        if (!v->is_buffer)
            continue;
        r->init[i] = malloc(v->bytes);
        for (int p = 0; p < PASSES; p++)
            r->after[p][i] = malloc(v->bytes);
        if (!r->init[i] || !r->after[0][i] || !r->after[1][i] || !r->after[2][i])
            return snprintf(err, errlen, "out of memory for %s (%llu bytes)", r->k.params[i].name,
                            (unsigned long long)v->bytes), -1;
        capture_fill_bytes(v, r->init[i]);
        if (gpu_check(&r->g, r->g.cu->cuMemAlloc(&r->dev[i], v->bytes), "cuMemAlloc", err,
                      errlen) < 0)
            return -1;
    }
    return gpu_check(&r->g, r->g.cu->cuMemAlloc(&r->control, PTXI_CONTROL_BYTES), "cuMemAlloc",
                     err, errlen);
}

static int build_modules(struct run *r, char *err, size_t errlen)
{
    char *texts[PASSES] = {ptxi_rewrite(r->req->ptx, &r->k, PTXI_COUNT, err, errlen),
                           ptxi_rewrite(r->req->ptx, &r->k, PTXI_RECORD, err, errlen),
                           strdup(r->req->ptx)};
    int rc = 0;
    for (int p = 0; p < PASSES && rc == 0; p++) {
        rc = gpu_module_build_generated(&r->g, texts[p], module_names[p], &r->mods[p], err,
                                        errlen);
        texts[p] = NULL;
        if (rc == 0) {
            r->jit_ms[p] = r->mods[p].jit_ms;
            rc = gpu_module_function(&r->g, &r->mods[p], r->k.entry, &r->fns[p], err, errlen);
        }
        if (rc == 0 && r->req->shared_bytes > DEFAULT_SHARED_LIMIT)
            rc = gpu_check(&r->g, r->g.cu->cuFuncSetAttribute(
                                      r->fns[p], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      (int)r->req->shared_bytes),
                           "cuFuncSetAttribute (dynamic shared memory)", err, errlen);
    }
    for (int p = 0; p < PASSES; p++)
        free(texts[p]);
    return rc;
}

/* ---- a pass ----------------------------------------------------------------------- */

static int upload(struct run *r, uint64_t capacity, char *err, size_t errlen)
{
    for (size_t i = 0; i < r->k.nparams; i++)
        if (r->values[i].is_buffer &&
            gpu_check(&r->g, r->g.cu->cuMemcpyHtoD(r->dev[i], r->init[i], r->values[i].bytes),
                      "cuMemcpyHtoD", err, errlen) < 0)
            return -1;
    uint64_t ctl[3] = {0, capacity, r->limit};
    return gpu_check(&r->g, r->g.cu->cuMemcpyHtoD(r->control, ctl, sizeof ctl), "cuMemcpyHtoD",
                     err, errlen);
}

static int run_pass(struct run *r, int pass, uint64_t capacity, char *err, size_t errlen)
{
    size_t n = r->k.nparams;
    void **params = calloc(n + 2, sizeof *params);
    int rc = -1;
    if (!params)
        return snprintf(err, errlen, "out of memory"), -1;
    for (size_t i = 0; i < n; i++)
        params[i] = r->values[i].is_buffer ? (void *)&r->dev[i] : (void *)r->values[i].scalar;
    params[n] = &r->records;
    params[n + 1] = &r->control;
    const unsigned *gd = r->req->grid, *bd = r->req->block;
    if (upload(r, capacity, err, errlen) == 0) {
        double t0 = mono_s();
        char what[64];
        snprintf(what, sizeof what, "the %s launch", pass_names[pass]);
        if (gpu_check(&r->g, r->g.cu->cuLaunchKernel(r->fns[pass], gd[0], gd[1], gd[2], bd[0],
                                                     bd[1], bd[2], r->req->shared_bytes, NULL,
                                                     params, NULL),
                      what, err, errlen) == 0 &&
            gpu_check(&r->g, r->g.cu->cuCtxSynchronize(), what, err, errlen) == 0) {
            r->ms[pass] = (mono_s() - t0) * 1e3;
            rc = 0;
        }
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        if (r->values[i].is_buffer)
            rc = gpu_check(&r->g, r->g.cu->cuMemcpyDtoH(r->after[pass][i], r->dev[i],
                                                        r->values[i].bytes),
                           "cuMemcpyDtoH", err, errlen);
    free(params);
    return rc;
}

static int read_counter(struct run *r, uint64_t *count, char *err, size_t errlen)
{
    return gpu_check(&r->g, r->g.cu->cuMemcpyDtoH(count, r->control, sizeof *count),
                     "cuMemcpyDtoH", err, errlen);
}

/* The three passes; the records copied to the host. */
static int run_passes(struct run *r, char *err, size_t errlen)
{
    uint64_t max = r->req->max_records ? r->req->max_records : CAPTURE_MAX_RECORDS_DEFAULT;
    if (max > UINT32_MAX) /* a record's slot is sorted as 32 bits (write_trace) */
        max = UINT32_MAX;
    if (run_pass(r, PASS_COUNT, 0, err, errlen) < 0 || read_counter(r, &r->count, err, errlen) < 0)
        return -1;
    if (r->count > max)
        return snprintf(err, errlen,
                        "the recorded threads make %llu global accesses, over the limit of %llu "
                        "records (raise it, capture a smaller launch, or sample fewer blocks)",
                        (unsigned long long)r->count, (unsigned long long)max), -1;
    size_t bytes = (size_t)(r->count ? r->count : 1) * PTXI_RECORD_BYTES;
    if (gpu_check(&r->g, r->g.cu->cuMemAlloc(&r->records, bytes), "cuMemAlloc (records)", err,
                  errlen) < 0)
        return -1;
    if (!(r->host_records = malloc(bytes)))
        return snprintf(err, errlen, "out of memory for the records (%zu bytes)", bytes), -1;
    if (run_pass(r, PASS_RECORD, r->count, err, errlen) < 0 ||
        read_counter(r, &r->recorded, err, errlen) < 0)
        return -1;
    if (r->recorded != r->count)
        return snprintf(err, errlen,
                        "the recording pass made %llu accesses and the counting pass %llu: the "
                        "kernel's accesses depend on more than its inputs",
                        (unsigned long long)r->recorded, (unsigned long long)r->count), -1;
    if (gpu_check(&r->g, r->g.cu->cuMemcpyDtoH(r->host_records, r->records,
                                               (size_t)r->count * PTXI_RECORD_BYTES),
                  "cuMemcpyDtoH (records)", err, errlen) < 0)
        return -1;
    return run_pass(r, PASS_ORIGINAL, 0, err, errlen);
}

/* ---- the same-answer check -------------------------------------------------------- */

/* Per buffer: equal after the rewrites and after the original? */
static json_t *compare(const struct run *r, int *same)
{
    json_t *list = json_array();
    *same = 1;
    for (size_t i = 0; i < r->k.nparams; i++) {
        if (!r->values[i].is_buffer)
            continue;
        json_t *b = json_pack("{s:s, s:I, s:I}", "param", r->k.params[i].name, "bytes",
                              (json_int_t)r->values[i].bytes, "address",
                              (json_int_t)r->dev[i]); /* where the trace's addresses point */
        for (int p = PASS_COUNT; p <= PASS_RECORD; p++) {
            uint64_t n = r->values[i].bytes;
            struct capture_diff d;
            char key[48];
            snprintf(key, sizeof key, "%s_same", pass_names[p]);
            if (capture_compare(r->after[p][i], r->after[PASS_ORIGINAL][i], n, r->dev[i], &r->k,
                                r->host_records, r->count, &d) < 0) {
                *same = 0;
                json_object_set_new(b, key, json_string("out of memory for comparing"));
                continue;
            }
            json_object_set_new(b, key, json_boolean(d.first == n));
            if (d.first < n) {
                *same = 0;
                snprintf(key, sizeof key, "%s_first_difference", pass_names[p]);
                json_object_set_new(b, key, json_integer((json_int_t)d.first));
            }
            if (d.rounded) {
                snprintf(key, sizeof key, "%s_float_add_rounding", pass_names[p]);
                json_object_set_new(b, key,
                                    json_pack("{s:I, s:f}", "elements", (json_int_t)d.rounded,
                                              "largest_share_of_bound", d.worst));
            }
        }
        json_object_set_new(b, "changed_by_kernel",
                            json_boolean(memcmp(r->init[i], r->after[PASS_ORIGINAL][i],
                                                r->values[i].bytes) != 0));
        json_array_append_new(list, b);
    }
    return list;
}

/* ---- the trace ---------------------------------------------------------------------- */

/* Writes the records thread-major (capture_order: by thread, each thread's
 * slots in order) to the output, whole or not at all (util/outfile.h). */
static int write_trace(struct run *r, char *err, size_t errlen)
{
    uint64_t n = r->count;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    struct outfile out;
    char why[PATH_MAX + 300] = "";
    struct trace_err terr = {0};
    double t0 = mono_s();
    if (!order || capture_order(r->host_records, n, order) < 0) {
        free(order);
        return snprintf(err, errlen, "out of memory for ordering the records"), -1;
    }
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    h.threads_per_block = r->req->block[0] * r->req->block[1] * r->req->block[2];
    int fd = outfile_open(&out, r->req->output, why, sizeof why);
    /* the writer owns fd from here, closing it whatever happens */
    struct trace_bin_writer *w = fd >= 0 ? trace_bin_writer_fd(fd, 1, &h, &terr) : NULL;
    int rc = w ? 0 : -1;
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        struct ptxi_record rec = ptxi_record_at(r->host_records, order[i]);
        uint32_t pc = rec.pc;
        struct trace_rec t = {0};
        t.addr = rec.addr;
        if (pc >= r->k.nsites) {
            snprintf(terr.msg, sizeof terr.msg, "record %llu has pc %u: no such site",
                     (unsigned long long)i, pc);
            rc = -1;
            break;
        }
        t.tid = rec.tid;
        t.pc = pc;
        t.width = r->k.sites[pc].width;
        t.dep = (uint8_t)r->k.sites[pc].dep;
        t.store = r->k.sites[pc].is_store ? 1 : 0; /* st, atom, red: the rewriter knows */
        rc = trace_bin_write_rec(w, &t) == 0 ? 0 : -1;
    }
    if (w && trace_bin_writer_close(w, rc == 0 ? &terr : NULL) < 0)
        rc = -1;
    free(order);
    if (rc == 0 && outfile_commit(&out, why, sizeof why) < 0)
        rc = -1;
    if (rc < 0) {
        if (fd >= 0)
            outfile_discard(&out);
        snprintf(err, errlen, "writing the trace %s: %s", r->req->output,
                 why[0] ? why : terr.msg[0] ? terr.msg : "failed");
    }
    r->write_ms = (mono_s() - t0) * 1e3;
    return rc;
}

/* ---- the result ----------------------------------------------------------------------- */

json_t *capture_sites_json(const struct ptxi_kernel *k)
{
    json_t *sites = json_array();
    for (size_t i = 0; i < k->nsites; i++) {
        const struct ptxi_site *s = &k->sites[i];
        json_array_append_new(sites, json_pack("{s:I, s:s, s:I, s:I, s:I, s:s}", "pc",
                                               (json_int_t)s->pc, "kind", ptxi_kind_name(s->kind), "width",
                                               (json_int_t)s->width, "dep", (json_int_t)s->dep,
                                               "line", (json_int_t)s->line, "ptx", s->text));
    }
    return json_pack("{s:s, s:o, s:{s:I, s:I, s:I, s:I}}", "entry", k->entry, "sites", sites,
                     "not_covered", "atomics", (json_int_t)k->atomics, "generic",
                     (json_int_t)k->generic, "async_copies", (json_int_t)k->async_copies,
                     "calls", (json_int_t)k->calls);
}

static json_t *per_site_counts(const struct run *r)
{
    json_t *a = json_array();
    uint64_t *c = calloc(r->k.nsites + 1, sizeof *c);
    for (uint64_t s = 0; c && s < r->count; s++) {
        uint32_t pc = ptxi_record_at(r->host_records, s).pc;
        c[pc < r->k.nsites ? pc : r->k.nsites]++;
    }
    for (size_t i = 0; c && i < r->k.nsites; i++)
        json_array_append_new(a, json_integer((json_int_t)c[i]));
    free(c);
    return a;
}

static json_t *result(const struct run *r, json_t *buffers, int same)
{
    json_t *doc = capture_sites_json(&r->k);
    const unsigned *gd = r->req->grid, *bd = r->req->block;
    json_object_update_new(
        doc, json_pack("{s:o, s:s, s:[i,i,i], s:[i,i,i], s:i, s:I, s:I, s:I, s:o, s:b, s:o, s:s, "
                       "s:I, s:{s:f, s:f, s:f, s:f, s:f, s:f, s:f}}",
                       "device", gpu_json(&r->g), "driver_version", r->g.driver_version, "grid",
                       gd[0], gd[1], gd[2], "block", bd[0], bd[1], bd[2], "shared_bytes",
                       r->req->shared_bytes, "threads", (json_int_t)r->threads,
                       "recorded_threads", (json_int_t)r->limit, "records",
                       (json_int_t)r->count, "records_per_site", per_site_counts(r),
                       "same_answer", same, "buffers", buffers, "output", r->req->output,
                       "trace_bytes",
                       (json_int_t)(TRACE_BIN_HEADER_BYTES + r->count * TRACE_BIN_REQ_BYTES),
                       "ms", "jit_original", r->jit_ms[PASS_ORIGINAL], "jit_counting",
                       r->jit_ms[PASS_COUNT], "jit_recording", r->jit_ms[PASS_RECORD],
                       "original", r->ms[PASS_ORIGINAL], "counting", r->ms[PASS_COUNT],
                       "recording", r->ms[PASS_RECORD], "write", r->write_ms));
    return doc;
}

/* ---- the whole ----------------------------------------------------------------------- */

static void release(struct run *r)
{
    if (r->g_open) {
        CUdeviceptr *const fixed[] = {&r->records, &r->control};
        gpu_free_buffers(&r->g, fixed, 2);
        for (size_t i = 0; r->dev && i < r->k.nparams; i++)
            if (r->dev[i])
                r->g.cu->cuMemFree(r->dev[i]);
        for (int p = 0; p < PASSES; p++)
            if (r->mods[p].mod)
                gpu_module_free(&r->g, &r->mods[p]);
        gpu_close(&r->g);
    }
    for (size_t i = 0; r->init && i < r->k.nparams; i++) {
        free(r->init[i]);
        for (int p = 0; p < PASSES; p++)
            free(r->after[p] ? r->after[p][i] : NULL);
    }
    for (int p = 0; p < PASSES; p++)
        free(r->after[p]);
    free(r->init);
    free(r->dev);
    free(r->values);
    free(r->host_records);
    if (r->k_ok)
        ptxi_kernel_free(&r->k);
}

/* Checks what needs no GPU: the kernel, its parameters, the launch shape. */
static int check_input(struct run *r, char *err, size_t errlen)
{
    const struct capture_req *q = r->req;
    if (ptxi_analyze(q->ptx, q->entry, &r->k, err, errlen) < 0)
        return -1;
    r->k_ok = 1;
    if (alloc_host(r, err, errlen) < 0 ||
        capture_args_bind(&r->k, q->args, q->nargs, r->values, err, errlen) < 0)
        return -1;
    uint64_t tpb = (uint64_t)q->block[0] * q->block[1] * q->block[2];
    r->threads = (uint64_t)q->grid[0] * q->grid[1] * q->grid[2] * tpb;
    r->limit = q->sample_blocks && q->sample_blocks < r->threads / (tpb ? tpb : 1)
                   ? q->sample_blocks * tpb
                   : r->threads;
    if (r->limit == 0 || r->limit > UINT32_MAX)
        return snprintf(err, errlen,
                        "the capture would record %llu threads: it records 1 to 2^32-1 (a "
                        "sample of blocks records fewer)",
                        (unsigned long long)r->limit), -1;
    if (r->k.nsites == 0)
        return snprintf(err, errlen, "%s has no global load or store to record", r->k.entry), -1;
    return 0;
}

json_t *capture_run(const struct capture_req *req, char *err, size_t errlen, int *input_fault)
{
    struct run *r = calloc(1, sizeof *r);
    json_t *doc = NULL;
    *input_fault = 0;
    if (!r)
        return snprintf(err, errlen, "out of memory"), NULL;
    r->req = req;
    if (check_input(r, err, errlen) < 0) {
        *input_fault = 1;
    } else if (gpu_open(&r->g, req->device, err, errlen) == 0) {
        r->g_open = 1;
        int same = 0;
        if (make_buffers(r, err, errlen) == 0 && build_modules(r, err, errlen) == 0 &&
            run_passes(r, err, errlen) == 0) {
            json_t *buffers = compare(r, &same);
            if (!same) {
                char *text = json_dumps(buffers, JSON_COMPACT);
                snprintf(err, errlen,
                         "the instrumented kernel's answer differs from the original's: %s",
                         text ? text : "(buffers)");
                free(text);
                json_decref(buffers);
            } else if (write_trace(r, err, errlen) == 0) {
                doc = result(r, buffers, same);
            } else {
                json_decref(buffers);
            }
        }
    }
    release(r);
    free(r);
    return doc;
}
