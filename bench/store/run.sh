#!/usr/bin/env bash
# The cost of a durable submission: bench/store/run.sh [DIR [JOBS [ROUNDS]]]
#
#   1. Builds bench/store/bench.c with the store (db/*.c, util/*.c) at -O2
#      into a temporary directory.
#   2. Runs it on DIR (default: a fresh folder under /var/tmp, a disk and not
#      a tmpfs; point it at the file system of the daemon's database):
#      JOBS (500) submissions, one transaction each, with the store durable
#      (synchronous=FULL, the daemon's setting) and fast (synchronous=NORMAL,
#      the setting before), alternated ROUNDS (4) times, and prints each
#      setting's submissions/s and p50/p99 latency, and FULL's figures as
#      ratios to NORMAL's, measured in the same run.
# The file system is printed with the figures: on a tmpfs a sync costs
# nothing and the ratio says nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprobe-bench-store.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dir=${1:-}
if [ -z "$dir" ]; then
    dir=$(mktemp -d /var/tmp/gpuprobe-bench-store-db.XXXXXX)
    trap 'rm -rf "$tmp" "$dir"' EXIT
fi
cd "$repo"
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -I. -DGPUPROBE_VERSION='"bench"' -DGPUPROBE_GITREV='"bench"' \
    -o "$tmp/bench" bench/store/bench.c $(ls db/*.c util/*.c) \
    -lsqlite3 -ljansson -lpthread -lm
echo "file system of $dir: $(df -T "$dir" | awk 'NR == 2 { print $2 " on " $1 }')"
echo "sqlite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo '?'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/bench" "$dir" "${2:-500}" "${3:-4}"
