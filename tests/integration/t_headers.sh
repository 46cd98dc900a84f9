#!/usr/bin/env bash
# Security headers (server/http/http.c): every HTML answer carries the
# dashboard's Content-Security-Policy as a header, holding what the page's
# own <meta> policy says plus frame-ancestors 'none' (which a <meta> cannot
# say), X-Frame-Options DENY and a Referrer-Policy, so the submit and cancel
# forms cannot be framed; every answer, HTML or not, carries
# X-Content-Type-Options: nosniff.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
source "${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"

start_daemon
wait_ready

for path in / /index.html; do
    req GET "$path"
    assert_status 200
    [[ "$(header content-type)" == text/html* ]] || fail "GET $path: content-type $(header content-type)"
    csp=$(header content-security-policy)
    [ -n "$csp" ] || fail "GET $path: no Content-Security-Policy header"
    # the page's <meta> policy, every directive of it, is in the header's
    meta=$(printf '%s' "$BODY" | tr '\n' ' ' |
        sed -n 's/.*http-equiv="Content-Security-Policy"[[:space:]]*content="\([^"]*\)".*/\1/p')
    [ -n "$meta" ] || fail "GET $path: the page has no <meta> Content-Security-Policy to compare"
    IFS=';' read -ra directives <<<"$meta"
    for d in "${directives[@]}"; do
        d=$(echo "$d" | sed 's/^ *//; s/ *$//')
        [[ "; $csp;" == *"; $d;"* ]] || fail "GET $path: the header's policy lacks the page's '$d': $csp"
    done
    [[ "; $csp;" == *"; frame-ancestors 'none';"* ]] || fail "GET $path: no frame-ancestors 'none' in: $csp"
    [ "$(header x-frame-options)" = DENY ] || fail "GET $path: X-Frame-Options '$(header x-frame-options)'"
    [ "$(header referrer-policy)" = no-referrer ] || fail "GET $path: Referrer-Policy '$(header referrer-policy)'"
    [ "$(header x-content-type-options)" = nosniff ] || fail "GET $path: X-Content-Type-Options '$(header x-content-type-options)'"
done

# Not HTML: nosniff on each (JSON, a problem, the script, the style sheet),
# and no page policy where there is no page.
for path in /healthz /api/v1/devices /no/such/path /app.js /style.css; do
    req GET "$path"
    [ "$(header x-content-type-options)" = nosniff ] || fail "GET $path ($STATUS): X-Content-Type-Options '$(header x-content-type-options)'"
    [ -z "$(header x-frame-options)" ] || fail "GET $path: X-Frame-Options on a non-HTML answer"
done
stop_daemon
echo "PASS t_headers"
