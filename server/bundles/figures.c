/*
 * A bundle reduced to its fleet figures (see bundle.h).
 */
#include <stdio.h>
#include <string.h>

#include "fleet/metrics.h"
#include "server/bundles/bundle.h"

/* Replaces each result of dev by its figures document; those that yield no
 * figure leave the list. The number kept, or -1 when memory ran out. */
static long device_to_figures(json_t *dev)
{
    json_t *results = json_object_get(dev, "results");
    long kept = 0;
    for (size_t i = 0; i < json_array_size(results);) {
        json_t *res = json_array_get(results, i);
        const char *kind = json_string_value(json_object_get(res, "kind"));
        json_t *doc = kind ? fleet_figures_doc(kind, json_object_get(res, "result")) : NULL;
        if (!doc) {
            json_array_remove(results, i); /* nothing comparable in it */
            continue;
        }
        if (json_object_set_new(res, "result", doc) != 0 ||
            json_object_set_new(res, "kind", json_string(FLEET_FIGURES_KIND)) != 0)
            return -1;
        kept++;
        i++;
    }
    return kept;
}

long bundle_to_figures(json_t *bundle, char *err, size_t errlen)
{
    size_t i;
    json_t *dev;
    long kept = 0;
    json_array_foreach(json_object_get(bundle, "devices"), i, dev) {
        long n = device_to_figures(dev);
        if (n < 0)
            break;
        kept += n;
    }
    char hex[65];
    if (i < json_array_size(json_object_get(bundle, "devices")) || bundle_digest(bundle, hex) != 0 ||
        json_object_set_new(bundle, "sha256", json_string(hex)) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return kept;
}
