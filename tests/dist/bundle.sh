#!/usr/bin/env bash
# Builds the relocatable distribution tarball of gpuprobe.
#
# Usage: tests/dist/bundle.sh BINARY NAME OUTDIR
#   -> OUTDIR/NAME.tar.gz holding
#        NAME/bin/gpuprobe   the binary, linked with DT_RPATH $ORIGIN/../lib
#        NAME/lib/           every shared library it needs, except the C
#                            library's own (glibc: libc, libm, ld-linux, ...)
#                            and libcuda, which must come from the node's driver
#        NAME/README         how to run it, and to make the daemon's token file
#        NAME/systemd/gpuprobe.conf.example  every daemon setting (serve --config)
#        NAME/VERSION        the version and the commit it was built from
#
# DESIGN
# ldd already lists the transitive closure of the binary's dependencies, so
# one ldd pass names every library to copy; each is copied (following links)
# under the name the dynamic linker looks for (its soname, the left side of
# "=>"). The binary must carry DT_RPATH (not DT_RUNPATH) $ORIGIN/../lib:
# RUNPATH applies only to the binary's direct dependencies, so the bundled
# libraries' own dependencies would be looked up on the host. Anything ldd
# cannot resolve fails the bundle, as does a missing rpath. The tarball is
# reproducible: sorted names, owner 0, one mtime, gzip without a timestamp.
set -euo pipefail

die() { echo "bundle.sh: error: $*" >&2; exit 1; }

[[ $# -eq 3 ]] || die "usage: $0 BINARY NAME OUTDIR"
binary=$1 name=$2 outdir=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

[[ -f $binary && -x $binary ]] || die "$binary is not an executable file"
[[ $name =~ ^[A-Za-z0-9._+-]+$ ]] || die "NAME '$name' must be a plain file name"
for tool in ldd readelf tar gzip; do
    command -v "$tool" >/dev/null || die "$tool is needed"
done

# shellcheck source=tests/dist/host_libs.sh
source "$(dirname "${BASH_SOURCE[0]}")/host_libs.sh"

check_rpath() {
    local dyn rpath entry
    local -a entries=()
    dyn=$(readelf -d "$binary") || die "readelf -d $binary failed"
    rpath=$(sed -n 's/.*(RPATH).*\[\(.*\)\]$/\1/p' <<<"$dyn")
    IFS=: read -r -a entries <<<"$rpath"
    for entry in "${entries[@]}"; do
        [[ $entry == "\$ORIGIN/../lib" || $entry == "\${ORIGIN}/../lib" ]] && return 0
    done
    grep -E '\((RPATH|RUNPATH)\)' <<<"$dyn" >&2 || echo "  (no RPATH or RUNPATH at all)" >&2
    die "$binary lacks DT_RPATH \$ORIGIN/../lib; link it with" \
        "-Wl,--disable-new-dtags -Wl,-rpath,'\$ORIGIN/../lib' (make dist does)"
}

# Prints "soname<TAB>path" for every library to bundle.
bundled_libraries() {
    local out line soname path
    out=$(ldd "$binary") || die "ldd $binary failed"
    if grep -q 'not found' <<<"$out"; then
        grep 'not found' <<<"$out" >&2
        die "ldd cannot resolve every library of $binary"
    fi
    while IFS= read -r line; do
        [[ $line =~ ^[[:space:]]*([^[:space:]]+)[[:space:]]+=\>[[:space:]]+(/[^[:space:]]+) ]] || continue
        soname=${BASH_REMATCH[1]} path=${BASH_REMATCH[2]}
        is_host_library "$soname" && continue
        printf '%s\t%s\n' "$soname" "$path"
    done <<<"$out"
}

version_text() {
    local version rev
    version=$(cat "$repo/VERSION" 2>/dev/null) || die "$repo/VERSION is missing"
    rev=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
    printf '%s\ncommit %s\n' "$version" "$rev"
}

# The newest glibc symbol version that the binary or a bundled library needs.
glibc_needed() {
    local f
    for f in "$@"; do readelf -V "$f"; done |
        sed -n 's/.*Name: GLIBC_\([0-9.]*\).*/\1/p' | sort -uV | tail -n1
}

# The README's indented lines are commands, run in order from the folder the
# tarball is in: tests/dist/check.sh follows them literally on a fresh unpack.
write_readme() {
    local glibc
    glibc="glibc $(glibc_needed "$stage/$name/bin/gpuprobe" "$stage/$name"/lib/*)"
    cat <<TXT
$name: gpuprobe with the shared libraries it needs.

Run it from anywhere, without installing; it finds its libraries in ../lib
relative to the binary:
    tar -xzf $name.tar.gz
    $name/bin/gpuprobe --version
    $name/bin/gpuprobe devices

The daemon (the HTTP API, and the dashboard at http://127.0.0.1:8080/) takes
writes (POST, DELETE: submitting jobs, importing results) only with a bearer
token from its token file; reads need none. Make the file first: one token a
line, at most 255 bytes and no spaces; blank lines and lines starting with '#'
are skipped. Keep it readable by you alone (mode 0600). Then serve:
    (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >tokens; echo >>tokens)
    $name/bin/gpuprobe serve --listen 127.0.0.1:8080 --db gpuprobe.db --token-file tokens

A client presents a token as the header "Authorization: Bearer TOKEN", e.g.
curl -H "Authorization: Bearer \$(head -n1 tokens)" -X DELETE URL.

Every setting of the daemon, with its default and what it does, is in
systemd/gpuprobe.conf.example of this folder; serve --config FILE reads such
a file (options on the command line win over it).

lib/ holds every library the binary links except the C library ($glibc or
newer on the host) and libcuda.so.1: that one belongs to the node's NVIDIA
driver and is loaded at run time. Without a driver gpuprobe still runs and
reports no GPUs, with the reason.
TXT
}

# The newest commit's time, so that rebuilding one commit gives the same bytes.
mtime() {
    if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then echo "$SOURCE_DATE_EPOCH"
    else git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0
    fi
}

main() {
    local stage soname path count=0
    check_rpath
    stage=$(mktemp -d)
    # shellcheck disable=SC2064  # expand now: stage is local
    trap "rm -rf '$stage'" EXIT
    mkdir -p "$stage/$name/bin" "$stage/$name/lib" "$stage/$name/systemd"
    install -m 0755 "$binary" "$stage/$name/bin/gpuprobe"
    # at the path serve --help names, relative to the bundle as to the source tree
    install -m 0644 "$repo/systemd/gpuprobe.conf.example" "$stage/$name/systemd/gpuprobe.conf.example"
    while IFS=$'\t' read -r soname path; do
        install -m 0644 "$(readlink -f "$path")" "$stage/$name/lib/$soname"
        count=$((count + 1))
    done < <(bundled_libraries)
    write_readme >"$stage/$name/README"
    version_text >"$stage/$name/VERSION"
    chmod 0644 "$stage/$name/README" "$stage/$name/VERSION"
    mkdir -p "$outdir"
    tar --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
        --mtime="@$(mtime)" --mode='u+rwX,go+rX,go-w' \
        -C "$stage" -cf - "$name" | gzip -n -9 >"$outdir/$name.tar.gz.tmp"
    mv "$outdir/$name.tar.gz.tmp" "$outdir/$name.tar.gz"
    echo "bundle.sh: $outdir/$name.tar.gz ($count libraries)"
}

main
