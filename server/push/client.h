/*
 * The HTTP side of a push: one bundle POSTed to the upstream's
 * /api/v1/import with the node's bearer token (libcurl).
 *
 * DESIGN
 * Every request announces its length and asks `Expect: 100-continue`, so an
 * upstream that will not take the bundle (too large, wrong token) says so
 * before a byte of it is sent, and the answer arrives instead of a reset
 * connection. Redirects are not followed (the token would go along), only
 * http and https are spoken, a connection must be made within 10 s and a
 * transfer may not stall for a minute. What the upstream answered is kept
 * short: its status and, for a problem+json, "type: detail (field F)".
 * A TLS upstream's certificate is always verified, its name included:
 * against the CA certificates of the file push_ca names alone (a private
 * CA, such as the central's own self-signed certificate), else against the
 * system's; when the file libcurl was built to read is absent (the
 * `make dist` bundle on another distribution) the usual places are tried.
 */
#ifndef GPUPROBE_SERVER_PUSH_CLIENT_H
#define GPUPROBE_SERVER_PUSH_CLIENT_H

#include <stddef.h>

/* Sets libcurl up; once per process, before any other thread starts.
 * -1 with the reason. */
int push_client_init(char *err, size_t errlen);

struct push_answer {
    int status;                /* the HTTP status; 0 when no answer came */
    int imported;              /* the body is an import's answer: JSON with integer
                                  results_added and results_held */
    char detail[600];          /* what the answer (or the transport) said */
};

/* POSTs body (len bytes) to upstream + "/api/v1/import" with
 * `Authorization: Bearer token`, trusting the CAs in the PEM file ca_file
 * alone when it is not NULL or "". 0 with the answer in *a (whatever its
 * status); -1 when the request could not be made at all, with the reason
 * in a->detail (a certificate that does not verify is such a reason). A
 * nonzero *stop (may be NULL) aborts a transfer under way. */
int push_post(const char *upstream, const char *token, const char *ca_file, const char *body,
              size_t len, const volatile int *stop, struct push_answer *a);

#endif
