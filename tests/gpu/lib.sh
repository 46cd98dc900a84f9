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
