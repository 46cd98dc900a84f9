# Shared by the GPU scripts (run.sh, reference.sh, capture.sh): sourced, not run.

# wait_ready LOG: waits (up to 30 s) until the daemon logging to LOG answers
# /readyz; prints its port, or returns 1.
wait_ready() {
    local p=""
    for _ in $(seq 300); do
        p=$(sed -n 's/.*msg=listening addr=[^ ]*:\([0-9]*\).*/\1/p' "$1" | head -n1)
        [ -n "$p" ] && curl -fsS "http://127.0.0.1:$p/readyz" >/dev/null 2>&1 && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}

# unpack_bundle NAME [TARBALL]: the `make dist` bundle (default: the one in
# dist/) unpacked into a new folder $work, removed on exit with any $daemon
# left running; sets bin to its gpuprobe. NAME is for the message.
unpack_bundle() {
    local tarball=${2:-$(ls dist/gpuprobe-*.tar.gz 2>/dev/null | head -n1)}
    [ -f "$tarball" ] || { echo "$1: no bundle; run 'make dist' first" >&2; exit 2; }
    work=$(mktemp -d)
    trap '[ -z "${daemon:-}" ] || kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT
    tar -C "$work" -xzf "$tarball"
    bin=$(echo "$work"/*/bin/gpuprobe)
}

# probe_memory OUT [ARGS...]: `gpuprobe probe memory` of the unpacked bundle
# on $DEVICE (default 0) into OUT/memory.json, its PTX and cubins under
# OUT/cubins, with ARGS (e.g. --db FILE); prints its wall time, or FAIL and
# the reason (OUT/memory.err) and returns 1.
probe_memory() {
    local out=$1 t0
    shift
    t0=$(date +%s.%N)
    if ! "$bin" probe memory --device "${DEVICE:-0}" "$@" --json --keep-cubins "$out/cubins" \
            >"$out/memory.json" 2>"$out/memory.err"; then
        echo "FAIL gpuprobe probe memory: $(cat "$out/memory.err")"
        return 1
    fi
    echo "probe memory: $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s wall"
}
