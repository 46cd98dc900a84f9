/*
 * The fault-injecting shim VFS (see fault_vfs.h).
 *
 * DESIGN
 * A shim file wraps the real file the default VFS opened, right behind it
 * in one allocation (szOsFile is ours plus the real one's); every method
 * passes through, and xWrite and xSync first ask should_fail(). The method
 * table keeps the real file's iVersion, so WAL's shared-memory methods and
 * memory-mapped I/O work as they would without the shim.
 */
#include "db/fault_vfs.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "util/errf.h"

struct shim_file {
    sqlite3_file base;
    sqlite3_file *real;      /* right behind this struct */
};

static sqlite3_vfs shim_vfs;
static sqlite3_vfs *real_vfs;
static atomic_long calls[2];          /* per enum fault_op since arm */
static atomic_long fail_at;           /* 0: disarmed */
static atomic_int fail_op;
static atomic_long injected;
static char hold_path[1024];          /* "" = fail once */
static pthread_mutex_t arm_lock = PTHREAD_MUTEX_INITIALIZER;

static int should_fail(enum fault_op op)
{
    long n = atomic_fetch_add(&calls[op], 1) + 1;
    long at = atomic_load(&fail_at);
    if (at <= 0 || atomic_load(&fail_op) != (int)op || n < at)
        return 0;
    pthread_mutex_lock(&arm_lock);
    int fail = hold_path[0] ? access(hold_path, F_OK) == 0 : n == at;
    pthread_mutex_unlock(&arm_lock);
    if (fail)
        atomic_fetch_add(&injected, 1);
    return fail;
}

static sqlite3_file *real(sqlite3_file *f) { return ((struct shim_file *)f)->real; }

/* ---- the file methods: pass through ------------------------------------- */

static int x_close(sqlite3_file *f)
{
    sqlite3_file *r = real(f);
    int rc = r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
    f->pMethods = NULL;
    return rc;
}

static int x_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    return real(f)->pMethods->xRead(real(f), buf, n, off);
}

static int x_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    if (should_fail(FAULT_WRITE))
        return SQLITE_FULL;
    return real(f)->pMethods->xWrite(real(f), buf, n, off);
}

static int x_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return real(f)->pMethods->xTruncate(real(f), size);
}

static int x_sync(sqlite3_file *f, int flags)
{
    if (should_fail(FAULT_SYNC))
        return SQLITE_IOERR_FSYNC;
    return real(f)->pMethods->xSync(real(f), flags);
}

static int x_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return real(f)->pMethods->xFileSize(real(f), size);
}

static int x_lock(sqlite3_file *f, int lock) { return real(f)->pMethods->xLock(real(f), lock); }
static int x_unlock(sqlite3_file *f, int lock)
{
    return real(f)->pMethods->xUnlock(real(f), lock);
}
static int x_check(sqlite3_file *f, int *out)
{
    return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
static int x_control(sqlite3_file *f, int op, void *arg)
{
    return real(f)->pMethods->xFileControl(real(f), op, arg);
}
static int x_sector(sqlite3_file *f) { return real(f)->pMethods->xSectorSize(real(f)); }
static int x_device(sqlite3_file *f)
{
    return real(f)->pMethods->xDeviceCharacteristics(real(f));
}
static int x_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
    return real(f)->pMethods->xShmMap(real(f), pg, pgsz, extend, pp);
}
static int x_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return real(f)->pMethods->xShmLock(real(f), off, n, flags);
}
static void x_shm_barrier(sqlite3_file *f) { real(f)->pMethods->xShmBarrier(real(f)); }
static int x_shm_unmap(sqlite3_file *f, int del)
{
    return real(f)->pMethods->xShmUnmap(real(f), del);
}
static int x_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
    return real(f)->pMethods->xFetch(real(f), off, n, pp);
}
static int x_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return real(f)->pMethods->xUnfetch(real(f), off, p);
}

/* One table per iVersion the real file may have (1 to 3). */
static sqlite3_io_methods shim_methods[3];

static void methods_init(void)
{
    for (int v = 1; v <= 3; v++) {
        sqlite3_io_methods *m = &shim_methods[v - 1];
        *m = (sqlite3_io_methods){v, x_close, x_read, x_write, x_truncate, x_sync, x_size,
                                  x_lock, x_unlock, x_check, x_control, x_sector, x_device,
                                  NULL, NULL, NULL, NULL, NULL, NULL};
        if (v >= 2) {
            m->xShmMap = x_shm_map;
            m->xShmLock = x_shm_lock;
            m->xShmBarrier = x_shm_barrier;
            m->xShmUnmap = x_shm_unmap;
        }
        if (v >= 3) {
            m->xFetch = x_fetch;
            m->xUnfetch = x_unfetch;
        }
    }
}

/* ---- the VFS ------------------------------------------------------------ */

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    struct shim_file *sf = (struct shim_file *)f;
    sf->real = (sqlite3_file *)(sf + 1);
    memset(sf->real, 0, (size_t)real_vfs->szOsFile);
    int rc = real_vfs->xOpen(real_vfs, name, sf->real, flags, out);
    const sqlite3_io_methods *rm = sf->real->pMethods;
    if (!rm) {
        f->pMethods = NULL;
        return rc;
    }
    int v = rm->iVersion < 1 ? 1 : rm->iVersion > 3 ? 3 : rm->iVersion;
    f->pMethods = &shim_methods[v - 1];
    return rc;
}

static int v_delete(sqlite3_vfs *v, const char *name, int sync)
{
    (void)v;
    return real_vfs->xDelete(real_vfs, name, sync);
}
static int v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    (void)v;
    return real_vfs->xAccess(real_vfs, name, flags, out);
}
static int v_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
    (void)v;
    return real_vfs->xFullPathname(real_vfs, name, n, out);
}
static void *v_dlopen(sqlite3_vfs *v, const char *name)
{
    (void)v;
    return real_vfs->xDlOpen(real_vfs, name);
}
static void v_dlerror(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    real_vfs->xDlError(real_vfs, n, out);
}
static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
    (void)v;
    return real_vfs->xDlSym(real_vfs, h, sym);
}
static void v_dlclose(sqlite3_vfs *v, void *h)
{
    (void)v;
    real_vfs->xDlClose(real_vfs, h);
}
static int v_random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return real_vfs->xRandomness(real_vfs, n, out);
}
static int v_sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return real_vfs->xSleep(real_vfs, us);
}
static int v_time(sqlite3_vfs *v, double *out)
{
    (void)v;
    return real_vfs->xCurrentTime(real_vfs, out);
}
static int v_lasterr(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, out) : 0;
}
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    (void)v;
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

int fault_vfs_install(char *err, size_t errlen)
{
    if (real_vfs)
        return 0;
    sqlite3_vfs *def = sqlite3_vfs_find(NULL);
    if (!def || def->iVersion < 2)
        return errf(err, errlen, "fault VFS: no default VFS of version 2 or later to wrap");
    methods_init();
    real_vfs = def;
    shim_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct shim_file) + def->szOsFile,
        .mxPathname = def->mxPathname,
        .zName = "gpuprobe-fault",
        .xOpen = v_open, .xDelete = v_delete, .xAccess = v_access,
        .xFullPathname = v_fullpath, .xDlOpen = v_dlopen, .xDlError = v_dlerror,
        .xDlSym = v_dlsym, .xDlClose = v_dlclose, .xRandomness = v_random,
        .xSleep = v_sleep, .xCurrentTime = v_time, .xGetLastError = v_lasterr,
        .xCurrentTimeInt64 = v_time64,
    };
    if (sqlite3_vfs_register(&shim_vfs, 1) != SQLITE_OK) {
        real_vfs = NULL;
        return errf(err, errlen, "fault VFS: registering it failed");
    }
    return 0;
}

void fault_vfs_arm(enum fault_op op, long n, const char *hold)
{
    pthread_mutex_lock(&arm_lock);
    snprintf(hold_path, sizeof hold_path, "%s", hold ? hold : "");
    pthread_mutex_unlock(&arm_lock);
    atomic_store(&fail_at, 0);
    atomic_store(&calls[FAULT_WRITE], 0);
    atomic_store(&calls[FAULT_SYNC], 0);
    atomic_store(&injected, 0);
    atomic_store(&fail_op, (int)op);
    atomic_store(&fail_at, n > 0 ? n : 1);
}

void fault_vfs_disarm(void) { atomic_store(&fail_at, 0); }

long fault_vfs_count(enum fault_op op) { return atomic_load(&calls[op]); }

long fault_vfs_injected(void) { return atomic_load(&injected); }

int fault_vfs_parse(const char *spec, enum fault_op *op, long *n, char *hold, size_t holdlen,
                    char *err, size_t errlen)
{
    const char *p = spec ? spec : "";
    if (strncmp(p, "write:", 6) == 0)
        *op = FAULT_WRITE, p += 6;
    else if (strncmp(p, "sync:", 5) == 0)
        *op = FAULT_SYNC, p += 5;
    else
        return errf(err, errlen, "fault spec '%.60s': write:N[:FILE] or sync:N[:FILE]", p);
    char *end = NULL;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno || end == p || v < 1 || (*end && *end != ':'))
        return errf(err, errlen, "fault spec: N must be a whole number from 1");
    *n = v;
    if ((size_t)snprintf(hold, holdlen, "%s", *end == ':' ? end + 1 : "") >= holdlen)
        return errf(err, errlen, "fault spec: FILE is too long");
    return 0;
}
