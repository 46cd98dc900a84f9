#!/usr/bin/env bash
# Installs gpuprobe as a systemd service: `make install` runs it.
#   systemd/install.sh BINARY
# Environment: DESTDIR (a staging root; default /), PREFIX (default
# /usr/local: the binary goes to PREFIX/bin/gpuprobe).
#
# What it does, each step safe to repeat (a second run changes nothing that
# the first one made, and never replaces the configuration or the tokens):
#   - the system user and group gpuprobe (no home, no shell), unless DESTDIR
#     is set (a staging tree has no user database to add to);
#   - PREFIX/bin/gpuprobe, replaced by BINARY;
#   - /etc/gpuprobe/gpuprobe.conf from systemd/gpuprobe.conf.example, when
#     absent; /etc/gpuprobe/tokens with one random token, mode 0600 owned by
#     gpuprobe, when absent;
#   - /etc/systemd/system/gpuprobe.service, replaced (ExecStart pointed at
#     PREFIX), and its drop-in gpuprobe.service.d/network.conf: written with
#     IPAddressAllow=any when the configuration listens beyond loopback or
#     pushes to an upstream (the unit itself allows loopback alone), removed
#     when it does neither;
#   - systemctl daemon-reload, when systemd runs and DESTDIR is not set.
# The database's folder, /var/lib/gpuprobe, is the unit's StateDirectory=:
# systemd makes it, owned by the user, at the first start.
set -euo pipefail

die() { echo "install.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: $0 BINARY"
binary=$1
[ -x "$binary" ] || die "$binary is not an executable file (make build first)"
here=$(cd "$(dirname "$0")" && pwd)
root=${DESTDIR:-}
prefix=${PREFIX:-/usr/local}
etc=$root/etc/gpuprobe
unitdir=$root/etc/systemd/system
user=gpuprobe

say() { echo "install.sh: $*"; }

# ---- the user ------------------------------------------------------------
if [ -z "$root" ]; then
    if ! getent passwd "$user" >/dev/null; then
        useradd --system --user-group --no-create-home --home-dir /var/lib/gpuprobe \
            --shell /usr/sbin/nologin "$user"
        say "made the system user $user"
    fi
else
    say "DESTDIR is set: no user made, files left owned by $(id -un)"
fi
owner=()
[ -z "$root" ] && owner=(-o "$user" -g "$user")

# ---- the binary ----------------------------------------------------------
install -D -m 0755 "$binary" "$root$prefix/bin/gpuprobe"

# ---- the configuration and the tokens ------------------------------------
install -d -m 0755 "$etc"
if [ ! -e "$etc/gpuprobe.conf" ]; then
    install -m 0644 "$here/gpuprobe.conf.example" "$etc/gpuprobe.conf"
    say "wrote $etc/gpuprobe.conf (edit it, then restart the service)"
fi
if [ ! -e "$etc/tokens" ]; then
    umask 077
    token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s\n' "$token" >"$etc/tokens.new"
    install -m 0600 "${owner[@]}" "$etc/tokens.new" "$etc/tokens"
    rm -f "$etc/tokens.new"
    say "wrote a write token to $etc/tokens"
fi

# ---- the unit and its network drop-in ------------------------------------
install -d -m 0755 "$unitdir"
sed "s#^ExecStart=/usr/local/bin/gpuprobe #ExecStart=$prefix/bin/gpuprobe #" \
    "$here/gpuprobe.service" >"$unitdir/gpuprobe.service.new"
chmod 0644 "$unitdir/gpuprobe.service.new"
mv "$unitdir/gpuprobe.service.new" "$unitdir/gpuprobe.service"

# The configuration's value of KEY (the last line setting it), or "".
conf_value() {
    sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\([^#[:space:]]*\).*/\1/p" \
        "$etc/gpuprobe.conf" | tail -n 1
}
listen=$(conf_value listen)
upstream=$(conf_value upstream)
host=${listen%:*}
dropin=$unitdir/gpuprobe.service.d/network.conf
case $host in
    "" | 127.* | "[::1]" | localhost) beyond_loopback= ;;
    *) beyond_loopback=1 ;;
esac
if [ -n "$beyond_loopback" ] || [ -n "$upstream" ]; then
    install -d -m 0755 "$(dirname "$dropin")"
    {
        echo "# Written by systemd/install.sh from /etc/gpuprobe/gpuprobe.conf"
        echo "# (listen = ${listen:-default}, upstream = ${upstream:-none}): the daemon"
        echo "# talks beyond loopback. Narrow this to the networks of its clients and"
        echo "# its upstream, e.g. IPAddressAllow=localhost 10.0.0.0/8"
        echo "[Service]"
        echo "IPAddressAllow=any"
    } >"$dropin.new"
    chmod 0644 "$dropin.new"
    mv "$dropin.new" "$dropin"
    say "wrote $dropin (the configuration talks beyond loopback)"
elif [ -e "$dropin" ]; then
    rm -f "$dropin"
    rmdir "$(dirname "$dropin")" 2>/dev/null || true
    say "removed $dropin (the configuration stays on loopback)"
fi

if [ -z "$root" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    say "installed; start it with: systemctl enable --now gpuprobe"
else
    say "installed under ${root:-/}"
fi
