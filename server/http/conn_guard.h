/*
 * Bounded clients: which connections the HTTP server admits, and how long a
 * request may take to arrive, whatever pace the client keeps.
 *
 * DESIGN
 * libmicrohttpd's own bounds do not hold against a slow client: its
 * connection timeout is an idle timeout (a byte a second keeps a connection
 * forever), and over its connection limits it closes new connections without
 * a word. The guard replaces both. It sees every connection open and close
 * (the transport reports them) and every step of every request on it, and
 * gives each request a deadline in total time:
 *   - the headers: request_ms from the connection's open, or from the end of
 *     the previous answer on a kept-alive connection;
 *   - the body: request_ms from the end of the headers, plus the time the
 *     bytes received so far take at body_min_rate (0: no body deadline), so
 *     a large upload at a fair pace is never cut and a trickle is;
 *   - the answer: none here (the handler may work long, a big download to a
 *     slow reader is bounded by the idle timeout).
 * A reaper thread ends connections past their deadline every REAP_MS by
 * shutdown(2) of their socket: libmicrohttpd then reads end-of-file and
 * closes the connection itself, through its ordinary path. The guard's
 * mutex is held across the shutdown and across the close report, which
 * libmicrohttpd makes before it closes the descriptor, so a descriptor the
 * guard shuts down is always still that connection's.
 *
 * Admission: at most max_connections admitted connections, at most
 * max_per_ip of them from one address. A connection over either limit is not
 * closed unanswered: the transport keeps a reserve of slots beyond
 * max_connections (guard_reserve), answers its request 503 with Retry-After
 * and closes it; such a connection gets OVER_MS for its headers. When every
 * admitted slot is taken, a new connection takes the slot of the admitted
 * connection that has waited longest for its headers, when that one has
 * waited EVICT_MIN_MS or more: a client that sends its request at once is
 * served even while slow clients hold every slot, and a client that has not
 * sent its headers in a second is the one that loses its place.
 * The reaper also logs, at most once a minute and only when they moved, the
 * totals of connections refused, evicted and ended (event
 * slow_or_excess_clients).
 * What it does not do: bound the answer's pace, or the number of addresses
 * one attacker can use (each address is bounded by max_per_ip).
 */
#ifndef GPUPROBE_SERVER_HTTP_CONN_GUARD_H
#define GPUPROBE_SERVER_HTTP_CONN_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* How often the reaper looks for connections past their deadline. */
#define GUARD_REAP_MS 100
/* The time a connection over a limit has to send the headers of the request
 * that is answered 503. */
#define GUARD_OVER_MS 1000
/* The least time an admitted connection waiting for headers has waited
 * before a new connection may take its slot. */
#define GUARD_EVICT_MIN_MS 1000

struct conn_guard_limits {
    int max_connections;         /* admitted connections at once; >= 1 */
    int max_per_ip;              /* admitted connections from one address; 0: no limit */
    int64_t request_ms;          /* the headers' deadline, and the body's grace */
    long long body_min_rate;     /* bytes a second a body must average; 0: no deadline */
};

enum guard_verdict {
    GUARD_ADMITTED,
    GUARD_OVER_TOTAL,            /* max_connections admitted already */
    GUARD_OVER_IP,               /* max_per_ip admitted from its address already */
};

/* What the guard did, since it was made. */
struct guard_counts {
    size_t admitted, over;       /* connections open now, by verdict */
    unsigned long long refused;  /* connections found over a limit */
    unsigned long long evicted;  /* admitted connections whose slot a new one took */
    unsigned long long expired;  /* connections ended past their deadline */
};

struct conn_guard;
struct guard_conn;

/* A guard with these limits, its reaper not started; NULL when out of memory. */
struct conn_guard *guard_new(const struct conn_guard_limits *l);
/* Starts the reaper thread; -1 when it cannot. */
int guard_start(struct conn_guard *g);
/* Stops the reaper and frees the guard; every connection must be closed
 * (guard_close) before. NULL is ignored. */
void guard_free(struct conn_guard *g);
/* The slots the transport must allow beyond max_connections, so that
 * connections over a limit can be answered 503. */
unsigned guard_reserve(const struct conn_guard_limits *l);
/* The most connections the transport should accept from one address: over
 * max_per_ip by a few, for the same reason; 0 when max_per_ip is 0. */
unsigned guard_reserve_per_ip(const struct conn_guard_limits *l);

/* A connection opened on socket fd from addr at now_ms: its verdict is
 * taken now (an admission may end another connection, see DESIGN). NULL
 * when out of memory (the connection is then left alone). */
struct guard_conn *guard_open(struct conn_guard *g, int fd, const struct sockaddr *addr,
                              int64_t now_ms);
/* c's verdict now: an admitted connection the guard has ended since reads
 * GUARD_OVER_TOTAL. NULL c reads GUARD_ADMITTED. */
enum guard_verdict guard_verdict_of(struct conn_guard *g, const struct guard_conn *c);
/* The connection closed (whatever closed it); frees c. NULL is ignored. */
void guard_close(struct conn_guard *g, struct guard_conn *c);

/* A request's steps, each of which moves its deadline (NULL c is ignored):
 * its headers are in; n more bytes of its body; its answer is under way (no
 * deadline); the answer is done and the connection waits for the next
 * request. */
void guard_headers_in(struct conn_guard *g, struct guard_conn *c, int64_t now_ms);
void guard_body(struct conn_guard *g, struct guard_conn *c, size_t n);
void guard_answering(struct conn_guard *g, struct guard_conn *c);
void guard_next_request(struct conn_guard *g, struct guard_conn *c, int64_t now_ms);

/* Ends every connection past its deadline at now_ms; how many it ended.
 * The reaper calls it every GUARD_REAP_MS. */
size_t guard_expire(struct conn_guard *g, int64_t now_ms);
void guard_counts(struct conn_guard *g, struct guard_counts *out);

#endif
