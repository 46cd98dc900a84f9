/*
 * Median, minimum and maximum of repeated measurements (see stats.h).
 */
#include "probes/gpu/stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct spread spread_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    return (struct spread){med, v[0], v[n - 1]};
}

json_t *spread_json(const double *v, size_t n)
{
    double *copy = malloc(n * sizeof *copy);
    if (!copy || n == 0) {
        free(copy);
        return json_null();
    }
    memcpy(copy, v, n * sizeof *v);
    struct spread s = spread_of(copy, n);
    free(copy);
    json_t *runs = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(runs, json_real(v[i]));
    return json_pack("{s:f, s:f, s:f, s:o}", "median", s.median, "min", s.min, "max", s.max,
                     "runs", runs);
}
