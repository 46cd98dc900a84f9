/*
 * The cost of a durable submission (bench/store/run.sh builds and runs it).
 *
 *   bench DIR [JOBS [ROUNDS]]
 *       in fresh databases under DIR (the file system to measure: the one
 *       the daemon's database lives on), submits JOBS jobs one transaction
 *       each (store_job_insert, as POST /api/v1/jobs does) with the store
 *       durable (synchronous=FULL: every commit synced, the setting the
 *       daemon runs with) and fast (synchronous=NORMAL: the setting before),
 *       alternating the two ROUNDS times so both see the same machine, and
 *       prints per setting the submissions per second and the latency of
 *       one (median and 99th percentile over every submission), then the
 *       durable setting's figures as ratios to the fast one's (the baseline,
 *       measured in the same run).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/store.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct figures {
    double *lat;     /* seconds, one per submission */
    size_t n;
    double wall;
};

static void remove_db(const char *path)
{
    char p[1200];
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

/* One round: a fresh database, jobs submissions; latencies appended to f. */
static int round_once(const char *dir, enum store_durability d, int jobs, struct figures *f)
{
    char path[1100], err[256];
    store *s = NULL;
    snprintf(path, sizeof path, "%s/bench-%d.db", dir, (int)getpid());
    remove_db(path);
    if (store_open(&s, path, err, sizeof err) != 0 || store_set_durability(s, d) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        store_close(s);
        return -1;
    }
    double t0 = now();
    for (int i = 0; i < jobs; i++) {
        double a = now();
        int64_t id;
        if (store_job_insert(s, "test", NULL, "{\"echo\":\"bench\"}", 60, 3, &id, err,
                             sizeof err) != 0) {
            fprintf(stderr, "bench: %s\n", err);
            store_close(s);
            return -1;
        }
        f->lat[f->n++] = now() - a;
    }
    f->wall += now() - t0;
    store_close(s);
    remove_db(path);
    return 0;
}

static void summary(const char *name, struct figures *f, double *rate, double *p50,
                    double *p99)
{
    qsort(f->lat, f->n, sizeof *f->lat, cmp_double);
    *rate = (double)f->n / f->wall;
    *p50 = f->lat[f->n / 2] * 1e3;
    *p99 = f->lat[(size_t)((double)f->n * 0.99)] * 1e3;
    printf("%-28s %9.0f submissions/s   p50 %7.3f ms   p99 %7.3f ms   (%zu submissions)\n",
           name, *rate, *p50, *p99, f->n);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench DIR [JOBS [ROUNDS]]\n");
        return 2;
    }
    int jobs = argc > 2 ? atoi(argv[2]) : 500, rounds = argc > 3 ? atoi(argv[3]) : 4;
    if (jobs < 10 || rounds < 1)
        return 2;
    struct figures full = {calloc((size_t)jobs * rounds, sizeof(double)), 0, 0};
    struct figures normal = {calloc((size_t)jobs * rounds, sizeof(double)), 0, 0};
    if (!full.lat || !normal.lat)
        return 1;
    for (int r = 0; r < rounds; r++) /* alternating, so both see the same machine */
        if (round_once(argv[1], r % 2 ? STORE_FAST : STORE_DURABLE, jobs,
                       r % 2 ? &normal : &full) != 0 ||
            round_once(argv[1], r % 2 ? STORE_DURABLE : STORE_FAST, jobs,
                       r % 2 ? &full : &normal) != 0)
            return 1;
    double fr, f50, f99, nr, n50, n99;
    summary("synchronous=NORMAL (before)", &normal, &nr, &n50, &n99);
    summary("synchronous=FULL (now)", &full, &fr, &f50, &f99);
    printf("FULL / NORMAL: throughput x%.3f, p50 latency x%.2f, p99 latency x%.2f\n", fr / nr,
           f50 / n50, f99 / n99);
    free(full.lat);
    free(normal.lat);
    return 0;
}
