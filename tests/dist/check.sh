#!/usr/bin/env bash
# Checks a distribution tarball made by tests/dist/bundle.sh on this machine.
#
# Usage: tests/dist/check.sh TARBALL
#
# DESIGN
# The tarball is unpacked into a fresh temporary folder (a place it was never
# built for, which is the point) and the binary is run from there with an
# empty environment, so nothing from the build (LD_LIBRARY_PATH, PATH, the
# working directory) can help it. Each check prints one PASS or FAIL line;
# all of them run even after a failure, and the script exits 1 if any failed.
# ldd is the judge of where libraries come from: every library outside the
# C library's own set must resolve into the bundle's lib/, none from the host.
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 TARBALL" >&2; exit 2; }
tarball=$(readlink -f "$1")
[[ -f $tarball ]] || { echo "check.sh: $1: no such file" >&2; exit 2; }

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# shellcheck source=tests/dist/host_libs.sh
source "$(dirname "${BASH_SOURCE[0]}")/host_libs.sh"

# Runs the bundled binary from / with nothing inherited.
run_clean() {
    (cd / && env -i PATH=/usr/bin:/bin "$top/bin/gpuprobe" "$@")
}

check_layout() {
    local missing=()
    [[ -x $top/bin/gpuprobe ]] || missing+=(bin/gpuprobe)
    [[ -d $top/lib ]] || missing+=(lib/)
    [[ -s $top/README ]] || missing+=(README)
    [[ -s $top/VERSION ]] || missing+=(VERSION)
    if ((${#missing[@]} == 0)); then
        pass "layout: bin/gpuprobe, lib/ ($(find "$top/lib" -type f | wc -l) libraries), README, VERSION"
    else
        fail "layout: missing ${missing[*]}"
    fi
    if [[ -e $top/lib/libcuda.so.1 ]]; then
        fail "layout: lib/ holds libcuda.so.1, which must come from the node's driver"
    fi
}

check_version() {
    local out rc=0
    out=$(run_clean --version 2>&1) || rc=$?
    if ((rc == 0)) && [[ -n $out ]]; then
        pass "gpuprobe --version in an empty environment: $(head -n1 <<<"$out")"
    else
        fail "gpuprobe --version in an empty environment exited $rc: $(head -n3 <<<"$out")"
    fi
}

check_libraries() {
    local out line soname path libdir bad=0 bundled=0
    libdir=$(readlink -f "$top/lib")
    if ! out=$(cd / && env -i PATH=/usr/bin:/bin ldd "$top/bin/gpuprobe" 2>&1); then
        fail "ldd bin/gpuprobe failed: $out"
        return
    fi
    while IFS= read -r line; do
        if [[ $line == *"not found"* ]]; then
            fail "ldd: ${line#"${line%%[![:space:]]*}"}"
            bad=1
            continue
        fi
        [[ $line =~ ^[[:space:]]*([^[:space:]]+)[[:space:]]+=\>[[:space:]]+(/[^[:space:]]+) ]] || continue
        soname=${BASH_REMATCH[1]} path=${BASH_REMATCH[2]}
        is_host_library "$soname" && continue
        if [[ $(dirname "$(readlink -f "$path")") == "$libdir" ]]; then
            bundled=$((bundled + 1))
        else
            fail "ldd: $soname resolves to $path, outside the bundle's lib/"
            bad=1
        fi
    done <<<"$out"
    ((bad == 0)) && pass "ldd: all $bundled non-glibc libraries resolve from the bundle's lib/"
    return 0
}

check_devices() {
    local out rc=0 summary
    out=$(run_clean devices 2>/dev/null) || rc=$?
    if ((rc != 0)); then
        fail "gpuprobe devices exited $rc"
        return
    fi
    if command -v jq >/dev/null; then
        if summary=$(jq -er 'if (.devices | type) == "array"
                then "\(.devices | length) device(s), reason: \(.reason // "none")"
                else error("no devices array") end' <<<"$out" 2>&1); then
            pass "gpuprobe devices: JSON with a devices array: $summary"
        else
            fail "gpuprobe devices: output is not JSON with a devices array: $(head -c 300 <<<"$out")"
        fi
    elif grep -Eq '"devices"[[:space:]]*:[[:space:]]*\[' <<<"$out"; then
        pass "gpuprobe devices: output has a devices array (jq absent: not fully parsed)"
    else
        fail "gpuprobe devices: no devices array in: $(head -c 300 <<<"$out")"
    fi
}

# Pushing to a central (libcurl and what it pulls in) works from the bundle:
# libcurl is carried in lib/, and `gpuprobe push` sets it up and drains an
# empty outbox in an empty environment.
check_push() {
    local out rc=0
    if [[ ! -e $top/lib/libcurl.so.4 ]]; then
        fail "lib/ lacks libcurl.so.4 (gpuprobe push, upstream =)"
        return
    fi
    printf 'unused\n' >"$work/token"
    out=$(run_clean push --db "$work/push.db" --upstream http://127.0.0.1:9 \
        --token-file "$work/token" 2>&1) || rc=$?
    if ((rc == 0)) && grep -q '"left": 0' <<<"$out"; then
        pass "gpuprobe push from the bundle: libcurl loads, an empty outbox drains"
    else
        fail "gpuprobe push from the bundle exited $rc: $(head -c 300 <<<"$out")"
    fi
}

# The job kinds compiled into the test build (tests/kinds/) must not ship.
check_no_test_kinds() {
    local err rc kind
    for kind in test suite-standin; do
        rc=0
        err=$(run_clean worker --kind "$kind" 2>&1 >/dev/null) || rc=$?
        if ((rc != 0)) && grep -q "no job kind '$kind'" <<<"$err"; then
            pass "the shipped binary has no test job kind $kind"
        else
            fail "the shipped binary knows job kind '$kind' (exit $rc: $err)"
        fi
    done
}

main() {
    local work entries
    work=$(mktemp -d)
    # shellcheck disable=SC2064  # expand now: work is local
    trap "rm -rf '$work'" EXIT
    if ! tar -xzf "$tarball" -C "$work"; then
        fail "unpack $tarball"
        exit 1
    fi
    mapfile -t entries < <(find "$work" -mindepth 1 -maxdepth 1)
    if ((${#entries[@]} != 1)) || [[ ! -d ${entries[0]} ]]; then
        fail "unpack: expected one top-level folder, found ${#entries[@]} entries"
        exit 1
    fi
    top=${entries[0]}
    pass "unpack: $(basename "$top")/ from $(basename "$tarball")"
    check_layout
    check_version
    check_libraries
    check_devices
    check_push
    check_no_test_kinds
    if ((failures == 0)); then
        echo "dist-check: PASS ($(basename "$tarball"))"
    else
        echo "dist-check: FAIL ($failures failed check(s))"
        exit 1
    fi
}

main
