/*
 * Result bundles: a device's measurements, with the provenance of each, as
 * one JSON document that any gpuprobe can import (docs/bundles.md). They
 * carry results between nodes, to a central gpuprobe, and into the binary
 * as the shipped reference data.
 *
 * DESIGN
 * A bundle is built from the store (store_device_results): per device its
 * host, its description as discovery gave it, and every succeeded job whose
 * kind saves result rows, with the job's parameters, times, the gpuprobe
 * that stored it, where it was measured (host and job id there: the
 * result's origin, kept through any number of exports) and its result
 * document. Its "sha256" is the digest of its canonical form (every other
 * member, keys sorted, compact, reals to 17 digits), so any change to a
 * result is caught. Importing checks everything before anything is
 * written: format, version, digest, every member's type, and each result
 * by its kind's own check; then store_import writes the whole bundle in one
 * transaction through the kinds' savers, skipping what the store holds.
 * Guarantees: import(export(x)) into the store x came from changes nothing;
 * importing a bundle twice changes nothing; a refused bundle writes
 * nothing, and the refusal names the member at fault.
 */
#ifndef GPUPROBE_SERVER_BUNDLES_BUNDLE_H
#define GPUPROBE_SERVER_BUNDLES_BUNDLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

#define BUNDLE_FORMAT "gpuprobe-bundle"
#define BUNDLE_VERSION 1

/* The bundle of the devices named by UUID (n = 0: every device that has a
 * result). publish_host, when not NULL, is the host name the results of
 * this store go out under (the reference data goes out as "reference");
 * imported results keep their origin whatever it is. NULL with the reason
 * in err; *unknown is set when a named device is not in the store. */
json_t *bundle_build(store *s, const char *const *uuids, size_t n, const char *publish_host,
                     int *unknown, char *err, size_t errlen);

/* The bundle of one result: job_id's device with that job alone (what a
 * node pushes upstream), the results published under the device's host.
 * NULL with the reason in err; *gone is set when the job is no succeeded
 * result of a kind that bundles carry (or no longer exists). */
json_t *bundle_build_job(store *s, int64_t job_id, int *gone, char *err, size_t errlen);

/* Turns every result of bundle into its fleet figures (kind fleet-figures,
 * fleet/metrics.h: what a node with upstream_content = figures sends), drops
 * the results that yield none, and digests it again. The number of results
 * kept; -1 with the reason in err. */
long bundle_to_figures(json_t *bundle, char *err, size_t errlen);

/* The hex SHA-256 of bundle's canonical form, "sha256" left out. -1 when
 * out of memory. */
int bundle_digest(const json_t *bundle, char hex[65]);

/* What a bundle may name. A device's UUID: 1 to BUNDLE_UUID_MAX letters,
 * digits and "-_.:" (what CUDA and NVML print: "GPU-" and hex; nothing a
 * URL path, a response header or a file name would read differently). A
 * host or a device's name: 1 to BUNDLE_NAME_MAX bytes, no control
 * character. A compute capability: "X.Y" (occ_parse_cc). 1 if s is such. */
#define BUNDLE_UUID_MAX 80
#define BUNDLE_NAME_MAX 255
int bundle_uuid_ok(const char *s);
int bundle_name_ok(const char *s);
int bundle_cc_ok(const char *s);

struct bundle_counts {
    size_t devices, devices_added;
    size_t results, results_added, results_held;
};

/* The checks bundle_import makes before it writes, alone (no store): 0, or
 * -1 with the reason and the member at fault as bundle_import gives them.
 * A command checks its files with it before it makes a database. */
int bundle_check(const json_t *bundle, char *err, size_t errlen, char *field, size_t fieldlen);

/* Checks bundle and imports it into s (see DESIGN). 0 with the counts; -1
 * with the reason in err and the path of the member at fault in field
 * ("sha256", "devices[0].results[3].result.entries[2]"; "" when it is the
 * store that failed). */
int bundle_import(store *s, const json_t *bundle, struct bundle_counts *c, char *err,
                  size_t errlen, char *field, size_t fieldlen);

/* The counts as the API and the CLI answer them. */
json_t *bundle_counts_json(const struct bundle_counts *c);

#endif
