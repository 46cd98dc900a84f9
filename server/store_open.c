/*
 * The store, opened with gpuprobe's result hook (see store_open.h).
 */
#include "server/store_open.h"

#include "db/fleet_store.h"
#include "fleet/record.h"
#include "server/push/push.h"

static int on_result_saved(void *ctx, struct store_tx *tx, int64_t job_id, const json_t *result,
                           char *err, size_t errlen)
{
    struct fleet_index *fleet = ctx;
    if (fleet_record_result(tx, job_id, result, fleet, err, errlen) != 0)
        return -1;
    return push_enqueue(tx, job_id, err, errlen);
}

int gpuprobe_store_open(store **out, const char *path, struct fleet_index *fleet,
                        size_t *rederived, char *err, size_t errlen)
{
    size_t n = 0;
    if (store_open(out, path, err, errlen) != 0)
        return -1;
    store_set_result_hook(*out, on_result_saved, fleet);
    if (fleet_record_refresh(*out, &n, err, errlen) != 0) {
        store_close(*out);
        *out = NULL;
        return -1;
    }
    if (rederived)
        *rederived = n;
    return 0;
}
