/*
 * Bounded clients (see conn_guard.h).
 *
 * DESIGN
 * One mutex guards everything: the connection lists, the per-address counts
 * and the counters. Each connection is on at most one list, by what it
 * waits for, and each list is in deadline order, so the reaper reads only
 * the heads that are due:
 *   - waiting: admitted connections waiting for headers, by when they began
 *     waiting (every one has the same allowance); its head is also the one
 *     a new connection evicts;
 *   - over: connections over a limit, waiting for the headers of the
 *     request that gets 503, by when they opened;
 *   - bodies: requests receiving a body, whose deadlines move with the bytes:
 *     this list is walked whole (it holds the uploads under way, few).
 * A connection being answered is on no list. Ending a connection (doom)
 * takes it off its list and out of the counts at once, so its slot is free
 * for the next connection even before libmicrohttpd has closed it.
 */
#include "server/http/conn_guard.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/log.h"
#include "util/clock.h"

/* How often, at most, the reaper logs what the guard did. */
#define GUARD_LOG_MS 60000

struct guard_conn {
    struct guard_conn *prev, *next;  /* on the list of what it waits for */
    struct guard_list *list;         /* that list, or NULL */
    struct ip_count *ip;             /* its address's count, while admitted */
    int fd;
    enum guard_verdict verdict;
    int doomed;                      /* shut down, waiting for its close */
    int64_t since_ms;                /* when its current wait began */
    unsigned long long body_bytes;   /* of the request under way */
};

struct guard_list {
    struct guard_conn *head, *tail;
};

/* Admitted connections from one address. */
struct ip_count {
    struct ip_count *next;           /* in its hash bucket */
    unsigned char addr[16];          /* IPv4 in the first 4 bytes */
    int family;
    int n;
};

struct conn_guard {
    struct conn_guard_limits lim;
    pthread_mutex_t mu;
    struct guard_list waiting, over, bodies;
    struct ip_count **buckets;       /* the per-address counts, hashed */
    size_t nbuckets;                 /* a power of two */
    struct guard_counts counts;
    pthread_t reaper;
    pthread_cond_t wake;             /* signalled to stop the reaper */
    int reaper_running, stopping;
};

static void list_push(struct guard_list *l, struct guard_conn *c)
{
    c->list = l;
    c->next = NULL;
    c->prev = l->tail;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
}

static void list_remove(struct guard_conn *c)
{
    struct guard_list *l = c->list;
    if (!l)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->prev = c->next = NULL;
    c->list = NULL;
}

/* ---- per-address counts ---- */

/* The address's bytes (IPv4 in 4, IPv6 in 16); 0 for any other family,
 * which is then not counted per address (a Unix socket's peers). */
static size_t addr_key(const struct sockaddr *sa, unsigned char key[16], int *family)
{
    memset(key, 0, 16);
    *family = sa ? sa->sa_family : AF_UNSPEC;
    if (*family == AF_INET) {
        memcpy(key, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return 4;
    }
    if (*family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

/* FNV-1a over the address. */
static size_t bucket_of(const struct conn_guard *g, const unsigned char *key, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ key[i]) * 16777619u;
    return h & (g->nbuckets - 1);
}

/* The count of addr, made (at 0) when absent; NULL for an address not
 * counted or when out of memory. */
static struct ip_count *ip_find(struct conn_guard *g, const struct sockaddr *addr)
{
    unsigned char key[16];
    int family;
    size_t len = addr_key(addr, key, &family);
    if (!len)
        return NULL;
    struct ip_count **b = &g->buckets[bucket_of(g, key, len)];
    for (struct ip_count *p = *b; p; p = p->next)
        if (p->family == family && memcmp(p->addr, key, 16) == 0)
            return p;
    struct ip_count *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    memcpy(p->addr, key, 16);
    p->family = family;
    p->next = *b;
    *b = p;
    return p;
}

/* Takes ip out of its bucket and frees it. */
static void ip_unlink(struct conn_guard *g, struct ip_count *ip)
{
    struct ip_count **pp = &g->buckets[bucket_of(g, ip->addr, ip->family == AF_INET ? 4 : 16)];
    while (*pp != ip)
        pp = &(*pp)->next;
    *pp = ip->next;
    free(ip);
}

/* One admitted connection fewer from ip; the count goes at 0. */
static void ip_release(struct conn_guard *g, struct ip_count *ip)
{
    if (ip && --ip->n == 0)
        ip_unlink(g, ip);
}

/* ---- admission and ending ---- */

/* Takes c out of the admitted count (and its address's). */
static void unadmit(struct conn_guard *g, struct guard_conn *c)
{
    if (c->verdict != GUARD_ADMITTED)
        return;
    g->counts.admitted--;
    ip_release(g, c->ip);
    c->ip = NULL;
    c->verdict = GUARD_OVER_TOTAL; /* counted nowhere any more */
    g->counts.over++;              /* ... until its close, which uncounts "over" */
}

/* Ends c: its socket is shut down, so libmicrohttpd reads end-of-file and
 * closes it; its slot is free at once. */
static void doom(struct conn_guard *g, struct guard_conn *c)
{
    list_remove(c);
    unadmit(g, c);
    c->doomed = 1;
    shutdown(c->fd, SHUT_RDWR);
}

unsigned guard_reserve(const struct conn_guard_limits *l)
{
    return (unsigned)l->max_connections / 8 + 16;
}

unsigned guard_reserve_per_ip(const struct conn_guard_limits *l)
{
    return l->max_per_ip ? (unsigned)l->max_per_ip + 4 : 0;
}

struct conn_guard *guard_new(const struct conn_guard_limits *l)
{
    struct conn_guard *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->lim = *l;
    g->nbuckets = 64;
    while (g->nbuckets < (size_t)l->max_connections && g->nbuckets < 65536)
        g->nbuckets *= 2;
    g->buckets = calloc(g->nbuckets, sizeof *g->buckets);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&g->mu, NULL);
    if (!g->buckets) {
        guard_free(g);
        return NULL;
    }
    return g;
}

struct guard_conn *guard_open(struct conn_guard *g, int fd, const struct sockaddr *addr,
                              int64_t now_ms)
{
    struct guard_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    c->since_ms = now_ms;
    pthread_mutex_lock(&g->mu);
    struct ip_count *ip = ip_find(g, addr);
    struct guard_conn *oldest = g->waiting.head;
    if (ip && g->lim.max_per_ip && ip->n >= g->lim.max_per_ip) {
        c->verdict = GUARD_OVER_IP;
    } else if (g->counts.admitted >= (size_t)g->lim.max_connections) {
        c->verdict = GUARD_OVER_TOTAL;
        if (oldest && now_ms - oldest->since_ms >= GUARD_EVICT_MIN_MS) {
            doom(g, oldest);
            g->counts.evicted++;
            c->verdict = GUARD_ADMITTED;
            ip = ip_find(g, addr); /* the evicted one's may have been this address's last */
        }
    }
    if (c->verdict == GUARD_ADMITTED) {
        g->counts.admitted++;
        c->ip = ip;
        if (ip)
            ip->n++;
        list_push(&g->waiting, c);
    } else {
        g->counts.over++;
        g->counts.refused++;
        if (ip && !ip->n)
            ip_unlink(g, ip); /* made by this lookup alone */
        list_push(&g->over, c);
    }
    pthread_mutex_unlock(&g->mu);
    return c;
}

enum guard_verdict guard_verdict_of(struct conn_guard *g, const struct guard_conn *c)
{
    if (!c)
        return GUARD_ADMITTED;
    pthread_mutex_lock(&g->mu); /* the reaper may be ending it */
    enum guard_verdict v = c->verdict;
    pthread_mutex_unlock(&g->mu);
    return v;
}

void guard_close(struct conn_guard *g, struct guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    list_remove(c);
    if (c->verdict == GUARD_ADMITTED) {
        g->counts.admitted--;
        ip_release(g, c->ip);
    } else {
        g->counts.over--;
    }
    pthread_mutex_unlock(&g->mu);
    free(c);
}

/* ---- a request's steps ---- */

void guard_headers_in(struct conn_guard *g, struct guard_conn *c, int64_t now_ms)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    if (!c->doomed) {
        list_remove(c);
        c->since_ms = now_ms;
        c->body_bytes = 0;
        if (c->verdict == GUARD_ADMITTED && g->lim.body_min_rate)
            list_push(&g->bodies, c);
    }
    pthread_mutex_unlock(&g->mu);
}

void guard_body(struct conn_guard *g, struct guard_conn *c, size_t n)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    c->body_bytes += n;
    pthread_mutex_unlock(&g->mu);
}

void guard_answering(struct conn_guard *g, struct guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    list_remove(c);
    pthread_mutex_unlock(&g->mu);
}

void guard_next_request(struct conn_guard *g, struct guard_conn *c, int64_t now_ms)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    if (!c->doomed && c->verdict == GUARD_ADMITTED) {
        list_remove(c);
        c->since_ms = now_ms;
        list_push(&g->waiting, c);
    }
    pthread_mutex_unlock(&g->mu);
}

/* ---- deadlines ---- */

/* Dooms the connections at the head of l that waited allowance_ms or more. */
static size_t expire_head(struct conn_guard *g, struct guard_list *l, int64_t allowance_ms,
                          int64_t now_ms)
{
    size_t n = 0;
    while (l->head && now_ms - l->head->since_ms >= allowance_ms) {
        doom(g, l->head);
        n++;
    }
    return n;
}

/* A body's deadline: the grace, plus its bytes at the least rate. */
static int body_late(const struct conn_guard *g, const struct guard_conn *c, int64_t now_ms)
{
    double earned_ms = (double)c->body_bytes * 1e3 / (double)g->lim.body_min_rate;
    return (double)(now_ms - c->since_ms) > (double)g->lim.request_ms + earned_ms;
}

size_t guard_expire(struct conn_guard *g, int64_t now_ms)
{
    pthread_mutex_lock(&g->mu);
    size_t n = expire_head(g, &g->waiting, g->lim.request_ms, now_ms);
    n += expire_head(g, &g->over, GUARD_OVER_MS, now_ms);
    for (struct guard_conn *c = g->bodies.head, *next; c; c = next) {
        next = c->next;
        if (body_late(g, c, now_ms)) {
            doom(g, c);
            n++;
        }
    }
    g->counts.expired += n;
    pthread_mutex_unlock(&g->mu);
    return n;
}

void guard_counts(struct conn_guard *g, struct guard_counts *out)
{
    pthread_mutex_lock(&g->mu);
    *out = g->counts;
    pthread_mutex_unlock(&g->mu);
}

/* ---- the reaper ---- */

/* One line when clients were refused, evicted or ended since the last one,
 * at most every GUARD_LOG_MS: under a flood, a line a minute, not one per
 * connection. The counts are totals since start. */
static void log_counts(struct conn_guard *g, struct guard_counts *logged, int64_t *logged_ms)
{
    struct guard_counts n;
    int64_t now = mono_ms();
    if (now - *logged_ms < GUARD_LOG_MS)
        return;
    guard_counts(g, &n);
    if (n.refused == logged->refused && n.evicted == logged->evicted && n.expired == logged->expired)
        return;
    log_kv(LOG_WARN, "slow_or_excess_clients", "refused=%llu evicted=%llu expired=%llu open=%zu",
           n.refused, n.evicted, n.expired, n.admitted + n.over);
    *logged = n;
    *logged_ms = now;
}

static void *reap(void *arg)
{
    struct conn_guard *g = arg;
    struct timespec next;
    struct guard_counts logged = {0};
    int64_t logged_ms = INT64_MIN / 2;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&g->mu);
    while (!g->stopping) {
        next.tv_nsec += GUARD_REAP_MS * 1000000L;
        next.tv_sec += next.tv_nsec / 1000000000L;
        next.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&g->wake, &g->mu, &next);
        if (g->stopping)
            break;
        pthread_mutex_unlock(&g->mu);
        guard_expire(g, mono_ms());
        log_counts(g, &logged, &logged_ms);
        pthread_mutex_lock(&g->mu);
        clock_gettime(CLOCK_MONOTONIC, &next);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int guard_start(struct conn_guard *g)
{
    if (pthread_create(&g->reaper, NULL, reap, g) != 0)
        return -1;
    g->reaper_running = 1;
    return 0;
}

void guard_free(struct conn_guard *g)
{
    if (!g)
        return;
    if (g->reaper_running) {
        pthread_mutex_lock(&g->mu);
        g->stopping = 1;
        pthread_cond_signal(&g->wake);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->reaper, NULL);
    }
    for (size_t i = 0; g->buckets && i < g->nbuckets; i++)
        while (g->buckets[i]) {
            struct ip_count *p = g->buckets[i];
            g->buckets[i] = p->next;
            free(p);
        }
    free(g->buckets);
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->mu);
    free(g);
}
