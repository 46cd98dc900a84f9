/*
 * Patch-and-run harness (see patch.h): locating a kernel's code in a cubin
 * buffer, applying field edits to it, and running the edited cubin.
 *
 * DESIGN
 * Every look-up goes through cubin_parse(), so an offset is only computed
 * from a buffer the reader has checked; the cubin struct points into the
 * caller's buffer, which is why text offsets are `k->text - c.data`. Edits
 * are validated against a scratch copy of each instruction before any byte
 * of the buffer is written. Timing is host wall time around launch and
 * synchronise (gpu_launch), enough to compare a patched kernel with its
 * original; probes that need cycles read the clock inside the kernel, and
 * patch_time_stamped() turns the stamps their kernels write into cycles
 * and an SM clock, the one reading of them that every such probe shares.
 * Whole-instruction rewrites are masked writes (patch_bits), checked with
 * the field edits in one pass, so the all-or-nothing promise covers both.
 * What an edit list says (an index past the kernel, a value too wide for
 * its field) is checked and refused with a reason, since a probe computes
 * it; how the list is passed (a count with no array, no buffer, no kernel
 * name, a field that is not one) is asserted: only a bug gets it wrong.
 */
#include "probes/gpu/patch.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/gpu/cubin.h"
#include "probes/gpu/stats.h"

/* Parses the buffer and finds the kernel; on success c must be freed. */
static const struct cubin_kernel *open_kernel(struct cubin *c, const void *cubin, size_t size,
                                              const char *kernel, char *err, size_t errlen)
{
    char why[256];
    if (cubin_parse(c, cubin, size, why, sizeof why) < 0) {
        snprintf(err, errlen, "not a usable cubin: %s", why);
        cubin_free(c);
        return NULL;
    }
    const struct cubin_kernel *k = cubin_kernel_find(c, kernel);
    if (!k) {
        snprintf(err, errlen, "the cubin has no function '%.100s'", kernel);
        cubin_free(c);
    }
    return k;
}

int patch_find_text(const void *cubin, size_t size, const char *kernel, size_t *offset,
                    size_t *text_size, char *err, size_t errlen)
{
    assert(cubin != NULL && kernel != NULL && offset != NULL && text_size != NULL);
    struct cubin c;
    const struct cubin_kernel *k = open_kernel(&c, cubin, size, kernel, err, errlen);
    if (!k)
        return -1;
    *offset = (size_t)(k->text - c.data);
    *text_size = k->text_size;
    cubin_free(&c);
    return 0;
}

long patch_find_mnemonic(const void *cubin, size_t size, const char *kernel,
                         const char *mnemonic, size_t nth, char *err, size_t errlen)
{
    assert(mnemonic != NULL);
    size_t off, len, seen = 0;
    if (patch_find_text(cubin, size, kernel, &off, &len, err, errlen) < 0)
        return -1;
    const uint8_t *text = (const uint8_t *)cubin + off;
    char buf[SASS_MNEMONIC_MAX];
    for (size_t i = 0; i < sass_count(len, NULL); i++) {
        struct sass_insn in = sass_decode(text, i * SASS_INSN_BYTES);
        if (strcmp(sass_mnemonic(&in, buf), mnemonic) == 0 && seen++ == nth)
            return (long)i;
    }
    snprintf(err, errlen, "%.100s has %zu %.20s instruction(s), not %zu", kernel, seen, mnemonic,
             nth + 1);
    return -1;
}

/* Checks every masked write and edit against a kernel of n instructions. */
static int check_writes(const char *kernel, size_t n, const struct patch_bits *bits,
                        size_t nbits, const struct patch_edit *edits, size_t nedits, char *err,
                        size_t errlen)
{
    for (size_t w = 0; w < nbits; w++) {
        const struct sass_insn *v = &bits[w].value, *m = &bits[w].mask;
        if (bits[w].index >= n) {
            snprintf(err, errlen, "write %zu: instruction %zu is past the end of %.100s (%zu "
                     "instructions)", w, bits[w].index, kernel, n);
            return -1;
        }
        if ((v->lo & ~m->lo) || (v->hi & ~m->hi)) {
            snprintf(err, errlen, "write %zu: value bits outside its mask", w);
            return -1;
        }
    }
    for (size_t e = 0; e < nedits; e++) {
        if (edits[e].index >= n) {
            snprintf(err, errlen, "edit %zu: instruction %zu is past the end of %.100s (%zu "
                     "instructions)", e, edits[e].index, kernel, n);
            return -1;
        }
        struct sass_insn scratch = {0};
        if (sass_set_field(&scratch, edits[e].field, edits[e].value) < 0) {
            snprintf(err, errlen, "edit %zu: %u does not fit field %s (%u bits)", e,
                     edits[e].value, sass_field_name(edits[e].field),
                     sass_field_width(edits[e].field));
            return -1;
        }
    }
    return 0;
}

int patch_rewrite(void *cubin, size_t size, const char *kernel, const struct patch_bits *bits,
                  size_t nbits, const struct patch_edit *edits, size_t nedits, char *err,
                  size_t errlen)
{
    assert(bits != NULL || nbits == 0);
    assert(edits != NULL || nedits == 0);
    size_t off, len;
    if (patch_find_text(cubin, size, kernel, &off, &len, err, errlen) < 0)
        return -1;
    uint8_t *text = (uint8_t *)cubin + off;
    if (check_writes(kernel, sass_count(len, NULL), bits, nbits, edits, nedits, err, errlen) < 0)
        return -1;
    for (size_t w = 0; w < nbits; w++) {
        size_t at = bits[w].index * SASS_INSN_BYTES;
        struct sass_insn in = sass_decode(text, at);
        in.lo = (in.lo & ~bits[w].mask.lo) | bits[w].value.lo;
        in.hi = (in.hi & ~bits[w].mask.hi) | bits[w].value.hi;
        sass_encode(&in, text, at);
    }
    for (size_t e = 0; e < nedits; e++) {
        size_t at = edits[e].index * SASS_INSN_BYTES;
        struct sass_insn in = sass_decode(text, at);
        sass_set_field(&in, edits[e].field, edits[e].value); /* checked above */
        sass_encode(&in, text, at);
    }
    return 0;
}

int patch_apply(void *cubin, size_t size, const char *kernel, const struct patch_edit *edits,
                size_t nedits, char *err, size_t errlen)
{
    return patch_rewrite(cubin, size, kernel, NULL, 0, edits, nedits, err, errlen);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Launches the loaded kernel l->repeats times, timing each. */
static int time_launches(struct gpu *g, CUfunction fn, const struct patch_launch *l,
                         struct patch_result *r, char *err, size_t errlen)
{
    for (int i = 0; i < l->repeats; i++) {
        double t0 = now_ms();
        if (gpu_launch(g, fn, l->grid, l->block, l->smem, l->params, err, errlen) < 0)
            return -1;
        r->ms[r->runs++] = now_ms() - t0;
    }
    double sorted[PATCH_MAX_REPEATS];
    memcpy(sorted, r->ms, (size_t)r->runs * sizeof *sorted);
    qsort(sorted, (size_t)r->runs, sizeof *sorted, cmp_double);
    r->min_ms = sorted[0];
    r->median_ms = r->runs % 2 ? sorted[r->runs / 2]
                               : (sorted[r->runs / 2 - 1] + sorted[r->runs / 2]) / 2;
    return 0;
}

int patch_run(struct gpu *g, const char *ptx, const char *name, const char *kernel,
              const struct patch_edit *edits, size_t nedits, const struct patch_launch *l,
              struct patch_result *r, char *err, size_t errlen)
{
    assert(g != NULL && ptx != NULL && name != NULL && kernel != NULL && l != NULL && r != NULL);
    assert(edits != NULL || nedits == 0);
    memset(r, 0, sizeof *r);
    if (l->repeats < 1 || l->repeats > PATCH_MAX_REPEATS) {
        snprintf(err, errlen, "repeats must be 1..%d", PATCH_MAX_REPEATS);
        return -1;
    }
    struct gpu_module orig, patched;
    memset(&patched, 0, sizeof patched);
    if (gpu_module_build(g, ptx, name, &orig, err, errlen) < 0)
        return -1;
    r->jit_ms = orig.jit_ms;
    void *copy = malloc(orig.cubin_size);
    size_t size = orig.cubin_size;
    int rc = -1;
    CUfunction fn;
    if (!copy)
        snprintf(err, errlen, "out of memory");
    else {
        memcpy(copy, orig.cubin, size);
        rc = 0;
    }
    if (rc == 0)
        rc = patch_find_text(copy, size, kernel, &r->text_offset, &r->text_size, err, errlen);
    if (rc == 0)
        rc = patch_apply(copy, size, kernel, edits, nedits, err, errlen);
    gpu_module_free(g, &orig);           /* only the patched image runs */
    if (rc == 0)
        rc = gpu_module_load_image(g, copy, size, &patched, err, errlen);
    if (rc == 0)
        rc = gpu_module_function(g, &patched, kernel, &fn, err, errlen);
    if (rc == 0)
        rc = time_launches(g, fn, l, r, err, errlen);
    free(copy);
    gpu_module_free(g, &patched);
    return rc;
}

/* Per block: cycles between the stamps and the SM clock they imply. */
static void read_stamps(const unsigned long long *w, unsigned blocks, double *cyc, double *mhz)
{
    for (unsigned b = 0; b < blocks; b++, w += PATCH_STAMP_BYTES / sizeof *w) {
        cyc[b] = (double)(w[2] - w[0]);  /* clock, timer at start; clock, timer at end */
        mhz[b] = w[3] > w[1] ? (double)(w[2] - w[0]) / (double)(w[3] - w[1]) * 1e3 : 0;
    }
}

int patch_time_stamped(struct gpu *g, CUfunction fn, const struct patch_launch *l,
                       CUdeviceptr out, struct patch_timing *t, char *err, size_t errlen)
{
    assert(g != NULL && l != NULL && l->params != NULL && t != NULL);
    if (l->repeats < 1 || l->repeats > PATCH_MAX_REPEATS || l->grid == 0) {
        snprintf(err, errlen, "launches must be 1..%d on at least one block", PATCH_MAX_REPEATS);
        return -1;
    }
    size_t words = (size_t)l->grid * PATCH_STAMP_BYTES / sizeof(unsigned long long);
    unsigned long long *stamps = malloc(words * sizeof *stamps);
    double *cyc = malloc(l->grid * sizeof *cyc), *mhz = malloc(l->grid * sizeof *mhz);
    int rc = stamps && cyc && mhz ? 0 : (snprintf(err, errlen, "out of memory"), -1);
    for (int i = 0; rc == 0 && i < l->repeats; i++)
        rc = gpu_launch(g, fn, l->grid, l->block, l->smem, l->params, err, errlen);
    if (rc == 0)
        rc = gpu_check(g, g->cu->cuMemcpyDtoH(stamps, out, words * sizeof *stamps),
                       "cuMemcpyDtoH", err, errlen);
    if (rc == 0) {
        read_stamps(stamps, l->grid, cyc, mhz);
        t->cycles = spread_of(cyc, l->grid).median;
        t->mhz = spread_of(mhz, l->grid).median;
    }
    free(stamps);
    free(cyc);
    free(mhz);
    return rc;
}

int patch_verify(const void *orig, const void *patched, size_t size, const char *kernel,
                 const struct patch_edit *e, size_t n, char *err, size_t errlen)
{
    assert(patched != NULL);
    assert(e != NULL || n == 0);
    size_t off, tsize;
    const uint8_t *a = orig, *b = patched;
    if (patch_find_text(orig, size, kernel, &off, &tsize, err, errlen) < 0)
        return -1;
    if (memcmp(a, b, off) != 0 || memcmp(a + off + tsize, b + off + tsize, size - off - tsize)) {
        snprintf(err, errlen, "the patch changed bytes outside the kernel's text");
        return -1;
    }
    for (size_t i = 0; i < tsize / SASS_INSN_BYTES; i++) {
        struct sass_insn want = sass_decode(a + off, i * SASS_INSN_BYTES);
        struct sass_insn got = sass_decode(b + off, i * SASS_INSN_BYTES);
        for (size_t k = 0; k < n; k++)
            if (e[k].index == i)
                sass_set_field(&want, e[k].field, e[k].value);
        if (want.lo != got.lo || want.hi != got.hi) {
            snprintf(err, errlen, "instruction at 0x%zx is not the intended edit",
                     i * SASS_INSN_BYTES);
            return -1;
        }
    }
    return 0;
}
