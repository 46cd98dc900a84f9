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
    [[ -s $top/systemd/gpuprobe.conf.example ]] || missing+=(systemd/gpuprobe.conf.example)
    if ((${#missing[@]} == 0)); then
        pass "layout: bin/gpuprobe, lib/ ($(find "$top/lib" -type f | wc -l) libraries), README, VERSION, systemd/gpuprobe.conf.example"
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

# What serve --help points to for the settings is in the bundle, at that
# path, and is a configuration serve takes.
check_config_example() {
    local help named rc=0 out
    help=$(run_clean serve --help 2>&1) || true
    named=$(grep -o 'systemd/[A-Za-z0-9._-]*' <<<"$help" | head -n1)
    if [[ -z $named ]]; then
        fail "serve --help names no systemd/... configuration example: $(head -c 300 <<<"$help")"
    elif [[ ! -s $top/$named ]]; then
        fail "serve --help points to $named, which the bundle lacks"
    else
        # its db and token_file are a systemd install's: overridden here, as the
        # command line overrides the file
        printf 'x\n' >"$work/conf-token"
        out=$(cd "$work" && env -i PATH=/usr/bin:/bin timeout 5 "$top/bin/gpuprobe" serve \
            --config "$top/$named" --listen 127.0.0.1:99999 --db "$work/conf.db" \
            --token-file "$work/conf-token" 2>&1) || rc=$?
        # a bad port is refused after the file was read: a refusal that names
        # the file would be the file's fault
        if ((rc == 2)) && ! grep -q "$named" <<<"$out"; then
            pass "serve --help points to $named, which the bundle holds and serve --config takes"
        else
            fail "serve --config $named: exit $rc: $(head -c 300 <<<"$out")"
        fi
    fi
}

# The README's indented lines, followed literally in a fresh folder holding the
# tarball (only the daemon's port made 0, any free one): the unpack, the
# commands, making the token file, and serve, which must start listening and
# take a write with the token (DELETE of a job that does not exist: 404, where
# a refused token would be 401 or 403).
check_readme() {
    local dir line lines=() pid log addr code ran=0
    dir=$work/readme
    mkdir -p "$dir"
    cp "$tarball" "$dir/"
    mapfile -t lines < <(sed -n 's/^    \(.*\)$/\1/p' "$top/README")
    for line in "${lines[@]}"; do
        if [[ $line == *" serve "* ]]; then
            log=$dir/serve.log
            (cd "$dir" && exec env -i PATH=/usr/bin:/bin bash -c "exec ${line//127.0.0.1:8080/127.0.0.1:0}") \
                >/dev/null 2>"$log" &
            pid=$!
            addr=
            for _ in $(seq 100); do
                addr=$(grep -m1 -o 'msg=listening addr=[0-9.]*:[0-9]*' "$log" | cut -d= -f3) && [[ -n $addr ]] && break
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            if [[ -z $addr ]]; then
                fail "README: '$line' did not start listening: $(head -c 300 "$log")"
                kill "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                return
            fi
            code=
            if command -v curl >/dev/null; then
                code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE \
                    -H "Authorization: Bearer $(head -n1 "$dir/tokens")" "http://$addr/api/v1/jobs/999999") || true
            fi
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
            if [[ -n $code && $code != 404 ]]; then
                fail "README: the daemon answered a write with README's token $code, expected 404"
                return
            fi
        elif ! (cd "$dir" && env -i PATH=/usr/bin:/bin bash -c "$line") >"$dir/out" 2>&1; then
            fail "README: '$line' failed: $(head -c 300 "$dir/out")"
            return
        fi
        ran=$((ran + 1))
    done
    if ((ran == 0)); then
        fail "README: no indented command lines"
    elif [[ -z ${pid:-} ]]; then
        fail "README: no serve command among its ${ran} command lines"
    else
        pass "README: its $ran command lines work as written on a fresh unpack (serve listened${code:+, took a write with its token})"
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
    check_config_example
    check_readme
    check_no_test_kinds
    if ((failures == 0)); then
        echo "dist-check: PASS ($(basename "$tarball"))"
    else
        echo "dist-check: FAIL ($failures failed check(s))"
        exit 1
    fi
}

main
