/*
 * The JSON pre-scan (see jsonscan.h): one pass, a byte at a time, with the
 * little state that lets a text be fed in pieces split anywhere.
 */
#include "util/jsonscan.h"

#include <string.h>

void json_scan_init(struct json_scan *s, int depth_limit)
{
    memset(s, 0, sizeof *s);
    if (depth_limit < 1)
        depth_limit = 1;
    if (depth_limit > JSON_SCAN_DEPTH_MAX)
        depth_limit = JSON_SCAN_DEPTH_MAX;
    s->depth_limit = depth_limit;
}

/* A byte that ends a scalar's run of characters. */
static int ends_scalar(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':' ||
           c == '[' || c == ']' || c == '{' || c == '}' || c == '"';
}

static unsigned long long max_ull(unsigned long long a, unsigned long long b)
{
    return a > b ? a : b;
}

/* The token being read has ended. */
static void end_token(struct json_scan *s)
{
    s->longest = max_ull(s->longest, s->token);
    s->token = 0;
}

/* A value (not a key) begins: its array counts it. */
static void value_begins(struct json_scan *s)
{
    s->values++;
    if (s->depth > 0 && !s->object[s->depth])
        s->count[s->depth]++;
}

/* One byte inside a string (after its opening quote). */
static void string_byte(struct json_scan *s, unsigned char c)
{
    s->token++;
    if (s->escaped) {
        s->escaped = 0;
    } else if (c == '\\') {
        s->escaped = 1;
    } else if (c == '"') {
        s->in_string = s->in_key = 0;
        end_token(s);
        return;
    }
    s->text++;
    s->key_text += s->in_key;
}

/* A string's opening quote: a key where an object's member begins. */
static void string_begins(struct json_scan *s)
{
    s->in_string = 1;
    s->token = 1;
    if (s->key_next) {
        s->in_key = 1;
        s->key_next = 0;
        s->members++;
        s->count[s->depth]++;
    } else {
        s->strings++;
        value_begins(s);
    }
}

/* A bracket that opens a container; -1 past the depth limit. */
static int open_container(struct json_scan *s, int is_object)
{
    if (s->depth >= s->depth_limit) {
        s->deep_at = s->offset;
        s->too_deep = 1;
        return -1;
    }
    value_begins(s);
    if (is_object)
        s->objects++;
    else
        s->arrays++;
    s->depth++;
    if (s->depth > s->max_depth)
        s->max_depth = s->depth;
    s->object[s->depth] = (unsigned char)is_object;
    s->count[s->depth] = 0;
    s->key_next = (unsigned char)is_object;
    return 0;
}

static void close_container(struct json_scan *s)
{
    if (s->depth > 0) { /* more closed than opened: jansson refuses it */
        int o = s->object[s->depth];
        s->largest[o] = max_ull(s->largest[o], s->count[s->depth]);
        s->depth--;
    }
    s->key_next = 0;
}

int json_scan_feed(struct json_scan *s, const void *p, size_t n)
{
    const unsigned char *b = p;
    if (s->too_deep)
        return -1;
    for (size_t i = 0; i < n; i++, s->offset++) {
        unsigned char c = b[i];
        if (s->in_string) {
            string_byte(s, c);
            continue;
        }
        if (s->in_scalar) {
            if (!ends_scalar(c)) {
                s->token++;
                continue;
            }
            s->in_scalar = 0;
            end_token(s);
        }
        switch (c) {
        case ' ': case '\t': case '\n': case '\r':
            break;
        case '{':
        case '[':
            if (open_container(s, c == '{') < 0)
                return -1;
            break;
        case '}':
        case ']':
            close_container(s);
            break;
        case ',':
            s->key_next = s->object[s->depth];
            break;
        case ':':
            s->key_next = 0;
            break;
        case '"':
            string_begins(s);
            break;
        default:
            s->in_scalar = 1;
            s->token = 1;
            s->scalars++;
            value_begins(s);
        }
    }
    return 0;
}

/* a + b * w, saturating */
static unsigned long long add_cost(unsigned long long a, unsigned long long b,
                                   unsigned long long w)
{
    if (b && w > (~0ULL - a) / b)
        return ~0ULL;
    return a + b * w;
}

unsigned long long json_scan_cost(const struct json_scan *s)
{
    /* a token or container still open counts as it stands */
    unsigned long long longest = max_ull(s->longest, s->token);
    unsigned long long largest[2] = {s->largest[0], s->largest[1]};
    for (int d = 1; d <= s->depth; d++)
        largest[s->object[d]] = max_ull(largest[s->object[d]], s->count[d]);
    unsigned long long c = add_cost(JSON_SCAN_COST_PARSE, s->text, 1);
    c = add_cost(c, s->key_text, 1);
    c = add_cost(c, longest, JSON_SCAN_COST_TOKEN);
    c = add_cost(c, largest[0], JSON_SCAN_COST_GROWTH_ARRAY);
    c = add_cost(c, largest[1], JSON_SCAN_COST_GROWTH_OBJECT);
    c = add_cost(c, (unsigned long long)s->max_depth, JSON_SCAN_COST_LEVEL);
    c = add_cost(c, s->scalars, JSON_SCAN_COST_SCALAR);
    c = add_cost(c, s->strings, JSON_SCAN_COST_STRING);
    c = add_cost(c, s->arrays, JSON_SCAN_COST_ARRAY);
    c = add_cost(c, s->objects, JSON_SCAN_COST_OBJECT);
    return add_cost(c, s->members, JSON_SCAN_COST_MEMBER);
}
