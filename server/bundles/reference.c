/*
 * Importing the reference data linked into the binary, and taking it back
 * out (see reference.h).
 */
#include "server/bundles/reference.h"

#include <stdio.h>

int reference_import(store *s, struct bundle_counts *total, char *err, size_t errlen)
{
    char why[1024], field[200];
    *total = (struct bundle_counts){0};
    for (const struct embedded_bundle *e = reference_bundles; e->name; e++) {
        json_error_t je;
        struct bundle_counts c;
        json_t *b = json_loadb((const char *)e->start, (size_t)(e->end - e->start), 0, &je);
        int rc = b ? bundle_import(s, b, &c, why, sizeof why, field, sizeof field) : -1;
        json_decref(b);
        if (rc != 0) {
            snprintf(err, errlen, "reference bundle %s: %s", e->name, b ? why : je.text);
            return -1;
        }
        total->devices += c.devices, total->devices_added += c.devices_added;
        total->results += c.results, total->results_added += c.results_added;
        total->results_held += c.results_held;
    }
    return 0;
}

int reference_remove(store *s, size_t *devices, size_t *results, char *err, size_t errlen)
{
    char why[512];
    *devices = *results = 0;
    for (const struct embedded_bundle *e = reference_bundles; e->name; e++) {
        json_error_t je;
        json_t *b = json_loadb((const char *)e->start, (size_t)(e->end - e->start), 0, &je), *d;
        size_t i;
        if (!b) {
            snprintf(err, errlen, "reference bundle %s: %s", e->name, je.text);
            return -1;
        }
        json_array_foreach(json_object_get(b, "devices"), i, d) {
            const char *host = json_string_value(json_object_get(d, "host"));
            const char *uuid = json_string_value(json_object_get(d, "uuid"));
            if (!host || !uuid) /* bundle_import refuses such a bundle: nothing of it is stored */
                continue;
            if (store_remove_imported(s, host, uuid, devices, results, why, sizeof why) != 0) {
                snprintf(err, errlen, "reference bundle %s: %s", e->name, why);
                json_decref(b);
                return -1;
            }
        }
        json_decref(b);
    }
    return 0;
}
