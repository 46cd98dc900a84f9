/*
 * The start-up sweep of upload_dir: what a crash or a stop left there and no
 * job will ever use.
 *
 * DESIGN
 * Only names the daemon itself makes are looked at (upload-*, the spool of
 * a request; trace-*, a sort's input and output; capture-*, a capture's
 * PTX); anything else in the folder is not ours and stays. Run after the
 * store has re-queued the jobs a crash left running and before HTTP starts,
 * so no request and no worker owns a file yet:
 *   - upload-* and *.part: always removed (a spooled body belongs to a
 *     request, a partial output to a worker, and neither outlives the
 *     process);
 *   - trace-<id>.out: kept while job <id> exists and is queued or
 *     succeeded (GET /api/v1/jobs/{id}/output serves it), else removed;
 *   - any other name: kept while a queued job names it in a parameter (its
 *     input), else removed.
 */
#ifndef GPUPROBE_SERVER_JOBS_UPLOAD_SWEEP_H
#define GPUPROBE_SERVER_JOBS_UPLOAD_SWEEP_H

#include <stddef.h>

#include "db/store.h"

/* Sweeps dir as above; *removed (may be NULL) counts the files removed. A
 * missing folder is empty (0). -1 with the reason when the folder or the
 * store cannot be read (nothing is removed then). */
int upload_sweep(store *db, const char *dir, size_t *removed, char *err, size_t errlen);

#endif
