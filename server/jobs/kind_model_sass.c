/*
 * The SASS side of a validation kernel's description (see kind_model_sass.h).
 */
#include "server/jobs/kind_model_sass.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/sass_counts.h"
#include "probes/gpu/gpu.h"
#include "probes/gpu/sass_cfg.h"
#include "util/errf.h"
#include "util/fdio.h"

#define MAX_CUBIN (64u << 20)       /* far above any validation kernel's */

/* The whole file at path (malloc'd, size in *size); NULL with the reason. */
static void *read_cubin(const char *path, size_t *size, char *err, size_t errlen)
{
    struct stat st;
    void *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > MAX_CUBIN ||
        !(buf = malloc((size_t)st.st_size)) ||
        fd_read_all(fd, buf, (size_t)st.st_size, 0) != 0) {
        errf(err, errlen, "cannot read %.400s", path);
        free(buf);
        buf = NULL;
    } else {
        *size = (size_t)st.st_size;
    }
    if (fd >= 0)
        close(fd);
    return buf;
}

void model_sass_attach(json_t *description, const json_t *k, const struct pd_launch *l)
{
    const char *dir = getenv("GPUPROBE_CUBIN_DIR");
    const char *name = json_string_value(json_object_get(k, "name"));
    const char *entry = json_string_value(json_object_get(k, "entry"));
    char path[1200], err[512];
    size_t size;
    void *cubin = NULL;
    json_t *sass = NULL, *counts = NULL;
    if (!dir || !dir[0] || !name || !entry)
        errf(err, sizeof err, "no cubin kept (the worker has no --cubin-dir)");
    else if (snprintf(path, sizeof path, "%s/validation_%s.cubin", dir, name) >= (int)sizeof path)
        errf(err, sizeof err, "the cubin's path is too long");
    else if ((cubin = read_cubin(path, &size, err, sizeof err)) &&
             (sass = sass_cfg_describe_cubin(cubin, size, entry, err, sizeof err)))
        counts = sc_describe(sass, json_string_value(json_object_get(k, "ptx")), entry, l, err,
                             sizeof err);
    free(cubin);
    if (sass)
        json_object_set_new(description, "sass", sass);
    if (counts)
        json_object_set_new(description, "sass_counts", counts);
    else
        json_object_set_new(description, "sass_error", json_string(err));
}

json_t *model_sass_describe_ptx(const char *device, const char *ptx, const char *entry,
                                const struct pd_launch *l, char *err, size_t errlen)
{
    struct gpu g;
    struct gpu_module m;
    json_t *sass = NULL, *counts = NULL;
    memset(&m, 0, sizeof m);
    if (gpu_open(&g, device, err, errlen) < 0)
        return NULL;
    if (gpu_module_build(&g, ptx, entry, &m, err, errlen) == 0) {
        sass = sass_cfg_describe_cubin(m.cubin, m.cubin_size, entry, err, errlen);
        if (sass)
            counts = sc_describe(sass, ptx, entry, l, err, errlen);
        gpu_module_free(&g, &m);
    }
    json_decref(sass);
    gpu_close(&g);
    return counts;
}
