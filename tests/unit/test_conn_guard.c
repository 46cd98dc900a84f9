/*
 * Unit tests of server/http/conn_guard.c, on a clock the test sets (the
 * reaper is not started; guard_expire is called at chosen times) and
 * connections that are socket pairs, so that a connection the guard ends
 * is seen as end-of-file on the peer: the headers' deadline in total time,
 * moved by a finished answer; the body's grace plus its bytes at the least
 * rate; no deadline while answering; the per-address and total limits'
 * verdicts and their counts; eviction of the longest-waiting connection
 * when full, only after GUARD_EVICT_MIN_MS, and its slot given to the
 * newcomer (from the evicted one's address too); connections over a limit
 * ended after GUARD_OVER_MS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/http/conn_guard.h"

#define MAXC 8

/* A connection under test: the guard holds one end, the test reads the other. */
struct end {
    int fd, peer;
    struct guard_conn *c;
};

static struct sockaddr_in addr_of(const char *ip)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    return sa;
}

static struct end open_at(struct conn_guard *g, const char *ip, int64_t now)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    struct sockaddr_in sa = addr_of(ip);
    struct end e = {sv[0], sv[1], guard_open(g, sv[0], (struct sockaddr *)&sa, now)};
    assert_non_null(e.c);
    return e;
}

/* 1 when the guard shut the connection down (the peer reads end-of-file). */
static int ended(const struct end *e)
{
    char b;
    return recv(e->peer, &b, 1, 0) == 0;
}

static void close_end(struct conn_guard *g, struct end *e)
{
    guard_close(g, e->c);
    close(e->fd);
    close(e->peer);
}

static struct conn_guard *guard(int max, int per_ip)
{
    struct conn_guard_limits l = {.max_connections = max, .max_per_ip = per_ip,
                                  .request_ms = 3000, .body_min_rate = 1000};
    struct conn_guard *g = guard_new(&l);
    assert_non_null(g);
    return g;
}

static void test_headers_deadline_is_total_time(void **state)
{
    (void)state;
    struct conn_guard *g = guard(MAXC, 0);
    struct end e = open_at(g, "10.0.0.1", 1000);
    assert_int_equal(guard_verdict_of(g, e.c), GUARD_ADMITTED);
    assert_int_equal(guard_expire(g, 3999), 0); /* bytes arriving move nothing */
    assert_false(ended(&e));
    assert_int_equal(guard_expire(g, 4000), 1);
    assert_true(ended(&e));
    struct guard_counts n;
    guard_counts(g, &n);
    assert_int_equal(n.expired, 1);
    assert_int_equal(n.admitted, 0); /* its slot is free before its close */
    close_end(g, &e);
    guard_free(g);
}

static void test_answer_has_no_deadline_and_next_request_a_new_one(void **state)
{
    (void)state;
    struct conn_guard *g = guard(MAXC, 0);
    struct end e = open_at(g, "10.0.0.1", 0);
    guard_headers_in(g, e.c, 100);
    guard_answering(g, e.c);
    assert_int_equal(guard_expire(g, 60000), 0); /* a long handler is left alone */
    guard_next_request(g, e.c, 60000);
    assert_int_equal(guard_expire(g, 62999), 0);
    assert_int_equal(guard_expire(g, 63000), 1);
    assert_true(ended(&e));
    close_end(g, &e);
    guard_free(g);
}

static void test_body_grace_plus_bytes_at_least_rate(void **state)
{
    (void)state;
    struct conn_guard *g = guard(MAXC, 0);
    struct end e = open_at(g, "10.0.0.1", 0);
    guard_headers_in(g, e.c, 1000);
    guard_body(g, e.c, 2000); /* earns 2 s at 1000 B/s: deadline 1000 + 3000 + 2000 */
    assert_int_equal(guard_expire(g, 6000), 0);
    assert_false(ended(&e));
    guard_body(g, e.c, 500); /* half a second more */
    assert_int_equal(guard_expire(g, 6500), 0);
    assert_int_equal(guard_expire(g, 6501), 1);
    assert_true(ended(&e));
    close_end(g, &e);
    guard_free(g);
}

static void test_per_address_limit(void **state)
{
    (void)state;
    struct conn_guard *g = guard(MAXC, 2);
    struct end a = open_at(g, "10.0.0.1", 0), b = open_at(g, "10.0.0.1", 0);
    struct end c = open_at(g, "10.0.0.1", 0), d = open_at(g, "10.0.0.2", 0);
    assert_int_equal(guard_verdict_of(g, a.c), GUARD_ADMITTED);
    assert_int_equal(guard_verdict_of(g, b.c), GUARD_ADMITTED);
    assert_int_equal(guard_verdict_of(g, c.c), GUARD_OVER_IP);
    assert_int_equal(guard_verdict_of(g, d.c), GUARD_ADMITTED);
    struct guard_counts n;
    guard_counts(g, &n);
    assert_int_equal(n.admitted, 3);
    assert_int_equal(n.over, 1);
    assert_int_equal(n.refused, 1);
    /* one of the address's closes: the next from it is admitted */
    close_end(g, &a);
    struct end e = open_at(g, "10.0.0.1", 10);
    assert_int_equal(guard_verdict_of(g, e.c), GUARD_ADMITTED);
    /* the one over the limit has GUARD_OVER_MS for its request */
    assert_int_equal(guard_expire(g, GUARD_OVER_MS - 1), 0);
    assert_int_equal(guard_expire(g, GUARD_OVER_MS), 1);
    assert_true(ended(&c));
    assert_false(ended(&b));
    close_end(g, &b);
    close_end(g, &c);
    close_end(g, &d);
    close_end(g, &e);
    guard_counts(g, &n);
    assert_int_equal(n.admitted, 0);
    assert_int_equal(n.over, 0);
    guard_free(g);
}

static void test_full_evicts_the_longest_waiting_after_a_second(void **state)
{
    (void)state;
    struct conn_guard *g = guard(2, 0);
    struct end a = open_at(g, "10.0.0.1", 0), b = open_at(g, "10.0.0.2", 500);
    /* both young: the newcomer is over the limit */
    struct end c = open_at(g, "10.0.0.3", GUARD_EVICT_MIN_MS - 1);
    assert_int_equal(guard_verdict_of(g, c.c), GUARD_OVER_TOTAL);
    assert_false(ended(&a));
    /* a, waiting longest and long enough, loses its slot to d */
    struct end d = open_at(g, "10.0.0.4", GUARD_EVICT_MIN_MS);
    assert_int_equal(guard_verdict_of(g, d.c), GUARD_ADMITTED);
    assert_true(ended(&a));
    assert_false(ended(&b));
    struct guard_counts n;
    guard_counts(g, &n);
    assert_int_equal(n.evicted, 1);
    assert_int_equal(n.admitted, 2);
    /* b is being answered: not evictable; d is too young */
    guard_headers_in(g, b.c, 1100);
    guard_answering(g, b.c);
    struct end e = open_at(g, "10.0.0.5", 1500);
    assert_int_equal(guard_verdict_of(g, e.c), GUARD_OVER_TOTAL);
    assert_false(ended(&b));
    assert_false(ended(&d));
    close_end(g, &a);
    close_end(g, &b);
    close_end(g, &c);
    close_end(g, &d);
    close_end(g, &e);
    guard_free(g);
}

/* The evicted connection was its address's only one, and the newcomer comes
 * from that address: the newcomer is counted under it (the address's count
 * went with the evicted connection and is made anew). */
static void test_evicting_the_same_address(void **state)
{
    (void)state;
    struct conn_guard *g = guard(2, 2);
    struct end a = open_at(g, "10.0.0.1", 0), x = open_at(g, "10.0.0.2", 500);
    struct end b = open_at(g, "10.0.0.1", GUARD_EVICT_MIN_MS); /* a, the oldest, goes */
    assert_int_equal(guard_verdict_of(g, b.c), GUARD_ADMITTED);
    assert_true(ended(&a));
    close_end(g, &a);
    close_end(g, &x);
    struct end d = open_at(g, "10.0.0.1", 1100);
    assert_int_equal(guard_verdict_of(g, d.c), GUARD_ADMITTED);
    /* b and d count under 10.0.0.1: the third from it is over that limit */
    struct end e = open_at(g, "10.0.0.1", 1100);
    assert_int_equal(guard_verdict_of(g, e.c), GUARD_OVER_IP);
    close_end(g, &b);
    close_end(g, &d);
    close_end(g, &e);
    guard_free(g);
}

static void test_reserve_figures(void **state)
{
    (void)state;
    struct conn_guard_limits l = {.max_connections = 1024, .max_per_ip = 256};
    assert_int_equal(guard_reserve(&l), 1024 / 8 + 16);
    assert_int_equal(guard_reserve_per_ip(&l), 260);
    l.max_per_ip = 0;
    assert_int_equal(guard_reserve_per_ip(&l), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headers_deadline_is_total_time),
        cmocka_unit_test(test_answer_has_no_deadline_and_next_request_a_new_one),
        cmocka_unit_test(test_body_grace_plus_bytes_at_least_rate),
        cmocka_unit_test(test_per_address_limit),
        cmocka_unit_test(test_full_evicts_the_longest_waiting_after_a_second),
        cmocka_unit_test(test_evicting_the_same_address),
        cmocka_unit_test(test_reserve_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
