/*
 * What a bundle may name (see bundle.h): the texts that leave a bundle for
 * URL paths, response headers, file names, logs and the dashboard.
 */
#include <string.h>

#include "model/occupancy_json.h"
#include "server/bundles/bundle.h"
#include "util/text.h"

int bundle_uuid_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > BUNDLE_UUID_MAX)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("-_.:", *s)))
            return 0;
    return 1;
}

int bundle_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n > 0 && n <= BUNDLE_NAME_MAX && !text_has_control(s);
}

int bundle_cc_ok(const char *s)
{
    int major, minor;
    return occ_parse_cc(s, &major, &minor) == 0;
}
