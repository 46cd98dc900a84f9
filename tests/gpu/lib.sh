# Shared by the GPU scripts (run.sh, reference.sh, capture.sh, l1map.sh, dsmem.sh, async_copy.sh, banks.sh,
# sched.sh, tensor.sh, regs_limit.sh): sourced, not run.

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

# run_probe KIND NAME: `gpuprobe probe KIND` on $DEVICE (default 0), stored
# in $work/NAME.db (copied to $out/NAME.db), its document in $out/KIND.json,
# its PTX and cubins under $out/cubins; prints the wall time. Returns 1 with
# a FAIL line (the probe's stderr) when the probe fails.
run_probe() {
    local t0
    t0=$(date +%s.%N)
    if ! "$bin" probe "$1" --device "${DEVICE:-0}" --db "$work/$2.db" --json \
            --keep-cubins "$out/cubins" >"$out/$1.json" 2>"$out/$1.err"; then
        echo "FAIL gpuprobe probe $1: $(cat "$out/$1.err")"
        return 1
    fi
    echo "probe $1: $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s wall"
    cp "$work/$2.db" "$out/$2.db"
}
