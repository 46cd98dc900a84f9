#!/usr/bin/env bash
# Runs the integration tests against one binary: run.sh BINARY [t_name ...]
# Each t_*.sh runs in a fresh temporary directory with GPUPROBE set to the
# binary's absolute path and a time limit (TEST_TIMEOUT, default 120 s).
# The last line is always "N passed, N failed"; the status is 1 if any failed.
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 BINARY [t_name ...]" >&2
    exit 2
fi
[ -x "$1" ] || { echo "$0: $1 is not an executable file" >&2; exit 2; }
bin=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
limit=${TEST_TIMEOUT:-120}

tests=()
if [ $# -gt 0 ]; then
    for name in "$@"; do tests+=("$here/${name%.sh}.sh"); done
else
    tests=("$here"/t_*.sh)
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/gpuprobe-it.XXXXXX")
passed=0
failed=0

# Kills daemons a test left behind (only those it started, by pid).
reap_leftovers() {
    local pid
    [ -f "$1/daemon.pids" ] || return 0
    while read -r pid; do
        if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin" ]; then
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done <"$1/daemon.pids"
}

for t in "${tests[@]}"; do
    name=$(basename "$t" .sh)
    dir=$root/$name
    mkdir -p "$dir"
    start=$SECONDS
    rc=0
    (cd "$dir" && GPUPROBE=$bin REPO=$repo WORK=$dir \
        timeout -k 5 "$limit" bash "$t") >"$dir/output" 2>&1 || rc=$?
    reap_leftovers "$dir"
    took=$((SECONDS - start))
    if [ "$rc" -eq 0 ]; then
        echo "PASS $name (${took} s)"
        passed=$((passed + 1))
    else
        why="exit status $rc"
        [ "$rc" -eq 124 ] && why="timed out after $limit s"
        echo "FAIL $name ($why, ${took} s; files in $dir)"
        sed 's/^/    /' "$dir/output" | tail -n 30
        failed=$((failed + 1))
    fi
done

if [ "$failed" -eq 0 ] && [ -z "${KEEP_TEST_DIRS-}" ]; then
    rm -rf "$root"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
