#!/usr/bin/env bash
# The capture's record ordering against qsort (bench/capture/order.c), at the
# size of the largest capture measured on the H100 (33.6 M records, a 256 x 256
# naive matmul: 513 accesses per thread) and a tenth of it. Builds at -O2 into
# a temporary directory; prints times and ratios measured in this run.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
gcc -std=c11 -D_GNU_SOURCE -O2 -I. -o "$tmp/order" bench/capture/order.c probes/capture_order.c
"$tmp/order" 3361996 513
"$tmp/order" 33619968 513
