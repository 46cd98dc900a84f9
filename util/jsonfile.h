/*
 * A JSON document read from a file in one piece: jansson's own file readers
 * take it a character at a time through stdio, which costs more than the
 * parse itself on the bundles a central takes by the thousand.
 */
#ifndef GPUPROBE_UTIL_JSONFILE_H
#define GPUPROBE_UTIL_JSONFILE_H

#include <jansson.h>
#include <stddef.h>

/* As json_load_file(path, flags, e), but from the mapped file. */
json_t *json_load_path(const char *path, size_t flags, json_error_t *e);

#endif
