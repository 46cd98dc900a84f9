/*
 * The sort's --device and --db (see trace_sort_device.h).
 */
#include "server/cli/trace_sort_device.h"

#include <stdio.h>
#include <string.h>

#include "server/cli/cli.h"

#define CMD "trace sort"

const struct option trace_sort_device_options[TRACE_SORT_DEVICE_NOPTS] = {
    {"device", required_argument, NULL, TRACE_SORT_DEVICE_OPT},
    {"db", required_argument, NULL, TRACE_SORT_DEVICE_OPT + 1},
};

void trace_sort_device_take(struct trace_sort_device *d, int c, const char *arg)
{
    if (c == TRACE_SORT_DEVICE_OPT)
        d->uuid = arg;
    else
        d->db = arg;
}

/* A device figure of info into field (bit not set by the user); a figure
 * outside the setting's range is left to the preset. */
static void take_figure(struct trace_params *p, const json_t *info, const char *key,
                        const char *setting, uint32_t bit)
{
    const json_t *v = json_object_get(info, key);
    char text[32], msg[200];
    if ((p->set & bit) || !json_is_integer(v))
        return;
    snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
    if (trace_params_set(p, setting, text, msg, sizeof msg) != 0)
        fprintf(stderr, "gpuprobe %s: warning: the device's %s: %s; the preset's is used\n", CMD, key,
                msg);
}

/* The memory result's order into d->deal; 0, or -1 with why. */
static int take_order(struct trace_sort_device *d, const json_t *memory, char *why, size_t whylen)
{
    const json_t *bp = json_object_get(memory, "block_placement");
    const char *status = json_string_value(json_object_get(bp, "status"));
    const char *reason = json_string_value(json_object_get(bp, "reason"));
    if (!json_is_object(bp)) {
        snprintf(why, whylen, "its newest memory result has no block placement (run gpuprobe "
                              "probe memory with this gpuprobe)");
        return -1;
    }
    if (!status || strcmp(status, "determined") != 0) {
        const char *err = json_string_value(json_object_get(bp, "error"));
        snprintf(why, whylen, "its block placement was not determined: %s",
                 reason ? reason : err ? err : "no reason given");
        return -1;
    }
    return trace_deal_from_json(json_object_get(bp, "order"), &d->deal, why, whylen);
}

int trace_sort_device_setup(struct trace_sort_device *d, struct trace_params *p)
{
    json_t *info, *memory;
    char why[400];
    if (!d->uuid && d->db)
        return cli_fail(CMD, 2, "--db is for --device UUID (the device's results)");
    if (!d->uuid)
        return p->placement == TRACE_PLACEMENT_DEALT
                   ? cli_fail(CMD, 2, "--placement dealt needs --device UUID --db PATH: the order "
                                      "is the device's measurement")
                   : 0;
    int rc = cli_device_memory(CMD, d->db, d->uuid, &info, &memory);
    if (rc)
        return rc;
    take_figure(p, info, "sm_count", "sms", TRACE_P_SMS);
    take_figure(p, info, "max_threads_per_sm", "threads_per_sm", TRACE_P_THREADS_PER_SM);
    take_figure(p, info, "max_blocks_per_sm", "max_blocks_per_sm", TRACE_P_MAX_BLOCKS);
    rc = take_order(d, memory, why, sizeof why);
    json_decref(info);
    json_decref(memory);
    if (rc == 0 && trace_deal_check(&d->deal, p->sms, why, sizeof why) != 0) {
        trace_deal_free(&d->deal); /* an order for another machine than the sort's */
        rc = -1;
    }
    if (rc == 0) {
        p->deal = &d->deal;
        if (!(p->set & TRACE_P_PLACEMENT))
            p->placement = TRACE_PLACEMENT_DEALT;
        return 0;
    }
    if (p->placement == TRACE_PLACEMENT_DEALT)
        return cli_fail(CMD, 1, "%s: --placement dealt: %s", d->uuid, why);
    fprintf(stderr, "gpuprobe %s: warning: %s: %s; placement %s\n", CMD, d->uuid, why,
            trace_placement_name(p->placement));
    return 0;
}

void trace_sort_device_free(struct trace_sort_device *d)
{
    trace_deal_free(&d->deal);
}
