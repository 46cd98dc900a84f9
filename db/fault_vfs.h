/*
 * Fault injection for the store, SQLite's way: a shim sqlite3_vfs that passes
 * every call through to the default VFS and makes the Nth page write
 * (xWrite) or the Nth sync (xSync) fail, as a full or failing disk would.
 *
 * DESIGN
 * The shim is registered as the default VFS, so every connection the store
 * opens afterwards goes through it; the store's own code paths are the same
 * with and without it. Counting starts when the shim is armed (not when it
 * is installed), so a test aims at the writes of one stretch of work (a
 * job's life after the daemon is ready) and not at those of start-up. Two
 * ways to fail:
 *   - once: only the Nth call fails (a transient I/O error);
 *   - while a file exists: the Nth call and every later one fail for as
 *     long as `hold` names an existing file (the disk is full until the test
 *     removes the file: "space returns"; a file already gone by the Nth
 *     call means no fault).
 * A write fails with SQLITE_FULL ("database or disk is full"), a sync with
 * SQLITE_IOERR_FSYNC. The daemon installs it only in test builds, from the
 * environment variable GPUPROBE_FAULT_VFS (server/serve.c), armed when ready.
 * Thread-safe: the counters are atomics; arming is meant for a quiet moment.
 * Not done: faults in reads, in xTruncate or in shared-memory mapping.
 */
#ifndef GPUPROBE_DB_FAULT_VFS_H
#define GPUPROBE_DB_FAULT_VFS_H

#include <stddef.h>

enum fault_op { FAULT_WRITE, FAULT_SYNC };

/* Registers the shim as SQLite's default VFS (once; later calls do nothing).
 * 0, or -1 with the reason. Call before any store is opened. */
int fault_vfs_install(char *err, size_t errlen);

/* Arms the shim: counting of op starts from zero now and the nth call fails
 * (n >= 1); if hold is not NULL, the nth and every later one fail while the
 * file hold exists. The path is copied. Contract: installed first. */
void fault_vfs_arm(enum fault_op op, long n, const char *hold);
/* No more faults; the counters keep counting. */
void fault_vfs_disarm(void);
/* Calls of op since the last arm (or since install). */
long fault_vfs_count(enum fault_op op);
/* Faults injected since the last arm. */
long fault_vfs_injected(void);

/* Parses a spec "write:N[:FILE]" or "sync:N[:FILE]" into its parts (FILE
 * into hold, "" when absent). 0, or -1 with the reason. */
int fault_vfs_parse(const char *spec, enum fault_op *op, long *n, char *hold, size_t holdlen,
                    char *err, size_t errlen);

#endif
