/*
 * The API's route table: every URL the daemon answers, in one place. The
 * transport dispatches through it (http_start is handed it) and the OpenAPI
 * unit test reads it, so a route missing from /openapi.json fails the tests.
 * A new endpoint is one line here and a handler in this folder.
 */
#ifndef GPUPROBE_SERVER_API_ROUTES_H
#define GPUPROBE_SERVER_API_ROUTES_H

#include <stddef.h>

#include "server/http/route.h"

extern const struct route routes[];
extern const size_t route_count;

#endif
