/*
 * The fleet-figures kind (see kind_fleet.h).
 */
#include "server/jobs/kind_fleet.h"

#include "fleet/metrics.h"

/* Its rows are the figures, which the result hook stores. */
static int keep_figures(struct store_tx *tx, int64_t job_id, const json_t *result, char *err,
                        size_t errlen)
{
    (void)tx, (void)job_id, (void)result, (void)err, (void)errlen;
    return 0;
}

const struct job_kind kind_fleet_figures = {
    .name = FLEET_FIGURES_KIND,
    .summary = "The fleet figures of a probe result measured on another node, sent alone "
               "(upstream_content = figures); internal: created by POST /api/v1/import",
    .needs_gpu = 1,
    .internal = 1,
    .created_by = "POST /api/v1/import",
    .default_timeout_s = 1,
    .check_result = fleet_figures_check,
    .save = keep_figures,
};
