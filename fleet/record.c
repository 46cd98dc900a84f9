/*
 * Fleet figures kept with the results (see record.h).
 */
#include "fleet/record.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/index.h"
#include "fleet/metrics.h"
#include "util/errf.h"

int fleet_record_result(struct store_tx *tx, int64_t job_id, const json_t *result,
                        struct fleet_index *ix, char *err, size_t errlen)
{
    struct store_job_brief job;
    if (store_job_brief_tx(tx, job_id, &job, err, errlen) != 0)
        return -1;
    if (!job.device[0])
        return 0; /* a CPU job: no GPU to compare */
    struct fleet_metrics m;
    fleet_metrics_init(&m);
    int rc = fleet_metrics_from_result(job.kind, result, &m);
    struct store_metric *rows = m.n ? calloc(m.n, sizeof *rows) : NULL;
    if (rc != 0 || (m.n && !rows)) {
        free(rows);
        fleet_metrics_free(&m);
        return errf(err, errlen, "the fleet figures of job %lld: out of memory",
                    (long long)job_id);
    }
    for (size_t i = 0; i < m.n; i++)
        rows[i] = (struct store_metric){m.v[i].name, m.v[i].value,
                                        m.v[i].text[0] ? m.v[i].text : NULL};
    /* figures alone stand for a result of the kind they came from: a device's
     * suite and validation figures are two rows, as when they came whole */
    const char *kind = strcmp(job.kind, FLEET_FIGURES_KIND) == 0
                           ? json_string_value(json_object_get(result, "kind"))
                           : job.kind;
    rc = store_device_metrics_put(tx, job.device, kind ? kind : job.kind, job_id,
                                  fleet_driver_of(result), rows, m.n, err, errlen);
    if (rc == 0 && ix)
        fleet_index_touch(ix, job.device, store_tx_generation(tx));
    free(rows);
    fleet_metrics_free(&m);
    return rc;
}

static int record_hook(void *ctx, struct store_tx *tx, int64_t job_id, const json_t *result,
                       char *err, size_t errlen)
{
    (void)ctx;
    return fleet_record_result(tx, job_id, result, NULL, err, errlen);
}

int fleet_record_refresh(store *s, size_t *results, char *err, size_t errlen)
{
    return store_device_metrics_rebuild(s, "fleet_metrics_version", FLEET_METRICS_VERSION,
                                        record_hook, NULL, results, err, errlen);
}
