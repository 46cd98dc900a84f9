/*
 * A request body pre-scanned, then parsed (see json_body.h).
 */
#include "server/http/json_body.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "server/http/problem.h"
#include "util/jsonfile.h"
#include "util/jsonscan.h"

/* Scans the spooled body through a small buffer (never mapped or read
 * whole: a refused body costs no memory). 0, 1 when the scan stopped (too
 * deep), -1 with errno when the file cannot be read. */
static int scan_file(const char *path, struct json_scan *s)
{
    char buf[16 * 1024];
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
    if (fd < 0)
        return -1;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = -1;
        else if (n > 0 && json_scan_feed(s, buf, (size_t)n) < 0)
            rc = 1;
        if (n <= 0 || rc)
            break;
    }
    int err = errno;
    close(fd);
    errno = err;
    return rc;
}

/* 0 when the scan allows parsing, else -1 after answering. */
static int check_scan(const struct http_req *rq, struct http_resp *rs, const struct json_scan *s,
                      int stopped, long long limit, const char *limit_name)
{
    if (stopped) {
        json_t *at = json_pack("{s:I}", "offset", (json_int_t)s->deep_at);
        problem_members(rq, rs, 400, "invalid-json", at,
                        "the body nests deeper than %d levels at byte %zu: nothing this "
                        "endpoint takes nests that deep",
                        JSON_BODY_DEPTH_MAX, s->deep_at);
        return -1;
    }
    unsigned long long cost = json_scan_cost(s);
    unsigned long long most = (unsigned long long)limit * JSON_BODY_MEMORY_FACTOR;
    if (cost <= most)
        return 0;
    problem(rq, rs, 413, "payload-too-large",
            "parsing the body would take about %llu MiB of memory (%llu JSON values in %zu "
            "bytes), more than this endpoint allows: %d times %s (%lld bytes), %llu MiB. "
            "Raise %s to take it",
            cost >> 20, s->values, s->offset, JSON_BODY_MEMORY_FACTOR, limit_name, limit,
            most >> 20, limit_name);
    return -1;
}

json_t *json_body(const struct http_req *rq, struct http_resp *rs, long long limit,
                  const char *limit_name, size_t flags)
{
    struct json_scan s;
    json_error_t je;
    int stopped = 0;
    json_scan_init(&s, JSON_BODY_DEPTH_MAX);
    if (rq->body_file) {
        stopped = scan_file(rq->body_file, &s);
        if (stopped < 0) {
            problem(rq, rs, 500, "internal", "the body could not be read back: %s",
                    strerror(errno));
            return NULL;
        }
    } else {
        stopped = json_scan_feed(&s, rq->body ? rq->body : "", rq->body_len) < 0;
    }
    if (check_scan(rq, rs, &s, stopped, limit, limit_name) < 0)
        return NULL;
    json_t *doc = rq->body_file ? json_load_path(rq->body_file, flags, &je)
                                : json_loadb(rq->body ? rq->body : "", rq->body_len, flags, &je);
    if (!doc)
        problem_json(rq, rs, &je);
    return doc;
}
