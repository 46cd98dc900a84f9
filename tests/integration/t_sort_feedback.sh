#!/usr/bin/env bash
# Proves the sorter's cache feedback options end to end (docs/trace-sort.md, "Cache feedback"): with the options off, `trace sort` writes byte for byte what the sorter wrote before they existed (the committed fixtures and synthetic kernels against tests/fixtures/traces/sorted.sha256, taken at a6ffcdf); with --feedback the order changes, the summary counts the L1's hits, merges and fetches, and `trace cache` then finds more hits on a kernel with reuse; --mshr-merge removes duplicate fetches; bad values are refused with one line and status 2.
. "$(dirname "$0")/lib.sh"

FIX=$REPO/tests/fixtures/traces
GOLDEN=$FIX/sorted.sha256

# The inputs the golden checksums cover: the fixtures and a few synthetic kernels.
synth_inputs() {
    "$GPUPROBE" trace synth --quiet --pattern matmul-tiled --size 64 -o mmt.bin
    "$GPUPROBE" trace synth --quiet --pattern matmul-naive --size 64 -o mmn.bin
    "$GPUPROBE" trace synth --quiet --pattern transpose-naive --size 128 -o trn.bin
    "$GPUPROBE" trace synth --quiet --pattern stencil7 --size 24 -o st7.bin
    "$GPUPROBE" trace synth --quiet --pattern reduce --size 65536 -o red.bin
    "$GPUPROBE" trace synth --quiet --pattern strided --size 16384 -o strd.bin
}

# golden_cases: "name input sort-options..." lines.
golden_cases() {
    cat <<CASES
sample $FIX/sample.csv
sample-hopper $FIX/sample.csv --arch hopper
nvbit $FIX/nvbit_memtrace.txt --sms 2
accelsim $FIX/kernel-1.trace --arch hopper --sms 2
capture $FIX/capture-matmul-tiled-n16.bin
capture-gto $FIX/capture-matmul-tiled-n16.bin --arch hopper --schedule gto
CASES
    for k in mmt mmn trn st7 red strd; do
        echo "$k-fermi $k.bin"
        echo "$k-hopper $k.bin --arch hopper"
        echo "$k-hopper-gto $k.bin --arch hopper --schedule gto"
        echo "$k-hopper-fixed $k.bin --arch hopper --delay fixed --mshr 64"
    done
}

# ---- options off: byte for byte the output from before they existed ---------------------------
synth_inputs
golden_cases >cases.txt
: >sums.txt
while read -r name input opts; do
    # shellcheck disable=SC2086
    timeout 60 "$GPUPROBE" trace sort "$input" -o "$name.csv" --quiet $opts || fail "trace sort $input $opts"
    echo "$(sha256sum <"$name.csv" | cut -d' ' -f1)  $name" >>sums.txt
done <cases.txt
if [ -n "${GPUPROBE_UPDATE_GOLDEN:-}" ]; then
    cp sums.txt "$GOLDEN"
    echo "wrote $GOLDEN"
fi
diff -u "$GOLDEN" sums.txt >golden.diff || fail "sorted outputs differ from the golden checksums: $(cat golden.diff)"

# ---- --feedback: the same requests in another order, the L1's counts in the summary -----------
# sort NAME ARGS...: sorts mmn.bin (matmul-naive 64, hopper) into NAME.csv with its summary in NAME.json.
sort_mmn() {
    local name=$1
    shift
    timeout 60 "$GPUPROBE" trace sort mmn.bin -o "$name.csv" --arch hopper --quiet --summary-json "$name.json" "$@" \
        2>"$name.err" || fail "trace sort mmn.bin $*: $(head -c 400 "$name.err")"
}
# the requests of a sorted CSV without their place in the order
requests_of() { tail -n +2 "$1" | cut -d, -f1,3- | sort; }
sort_mmn off
sort_mmn fb --feedback
cmp -s off.csv fb.csv && fail "--feedback did not change the order of matmul-naive"
[ "$(requests_of off.csv)" = "$(requests_of fb.csv)" ] || fail "--feedback changed the requests, not only their order"
jq -e '.l1 == null' off.json >/dev/null || fail "a sort without feedback reports an L1: $(jq -c .l1 off.json)"
jq -e '.l1.feedback and (.l1.mshr_merge | not) and .l1.hits > 0 and .l1.merged == 0
       and .l1.hits + .l1.fetches == .requests_out
       and .l1.size == 229376 and .l1.assoc == 448 and .l1.line == 128 and .l1.sector == 32
       and .l1.hit_latency == 13 and .l1.max_merge == 0
       and ([.sms[].l1_hits] | add) == .l1.hits' fb.json >/dev/null ||
    fail "--feedback summary: $(jq -c .l1 fb.json)"
# deterministic, and the same with one sorting thread or two
GPUPROBE_TRACE_THREADS=1 sort_mmn fb1 --feedback
GPUPROBE_TRACE_THREADS=2 sort_mmn fb2 --feedback
cmp -s fb1.csv fb2.csv || fail "--feedback: one and two sorting threads differ"
cmp -s fb.csv fb1.csv || fail "--feedback: two runs differ"
# the geometry and hit latency as given
sort_mmn fbx --feedback --l1 32K,8,128,32 --set-index xor --hit-latency 0
jq -e '.l1.size == 32768 and .l1.assoc == 8 and .l1.sets == 32 and .l1.set_index == "xor" and .l1.hit_latency == 0' \
    fbx.json >/dev/null || fail "--l1/--set-index/--hit-latency: $(jq -c .l1 fbx.json)"
cmp -s fb.csv fbx.csv && fail "another L1 gave the same order"
# an architecture the cache model has no L1 for needs --l1
sort_mmn volta --feedback --arch volta --l1 128K,4,128,32
jq -e '.params.arch == "volta" and .l1.size == 131072' volta.json >/dev/null || fail "--arch volta --l1: $(jq -c .l1 volta.json)"

# ---- --mshr-merge: fewer fetches, no hits; with --feedback, both -----------------------------
sort_mmn mg --mshr-merge
jq -e '.l1.mshr_merge and (.l1.feedback | not) and .l1.hits == 0 and .l1.merged > 0 and .l1.max_merge == 64
       and .l1.fetches < .requests_out' mg.json >/dev/null || fail "--mshr-merge summary: $(jq -c .l1 mg.json)"
[ "$(requests_of off.csv)" = "$(requests_of mg.csv)" ] || fail "--mshr-merge changed the requests"
sort_mmn mg2 --mshr-merge --merge 2
jq -e --slurpfile mg mg.json '.l1.max_merge == 2 and .l1.merged < $mg[0].l1.merged' mg2.json >/dev/null ||
    fail "--merge 2 merged no fewer than 8: $(jq -c .l1 mg2.json)"
sort_mmn both --feedback --mshr-merge
jq -e --slurpfile fb fb.json '.l1.hits > 0 and .l1.merged > 0 and .l1.fetches < $fb[0].l1.fetches' both.json >/dev/null ||
    fail "--feedback --mshr-merge: $(jq -c .l1 both.json)"
# the summary on stderr says so
timeout 60 "$GPUPROBE" trace sort mmn.bin -o /dev/null --arch hopper --feedback 2>both.err || fail "trace sort --feedback"
grep -q "^L1 during the ordering: [0-9]* hits" both.err || fail "no L1 line in the summary: $(cat both.err)"

# `trace cache` reads the feedback order as any other
timeout 60 "$GPUPROBE" trace sort mmn.bin -o fb.bin --out-format bin --arch hopper --quiet --feedback || fail "sort to bin"
timeout 60 "$GPUPROBE" trace cache fb.bin --json >cache.json || fail "trace cache of a feedback order"
jq -e --slurpfile fb fb.json '.records == $fb[0].requests_out and .engines.exact.l1.hit_rate > 0' cache.json >/dev/null ||
    fail "trace cache: $(jq -c '.engines.exact.l1 | {requests, hit_rate}' cache.json)"

# ---- refusals: status 2, one line, nothing written ------------------------------------------
refused() {
    local rc=0
    timeout 30 "$GPUPROBE" trace "$@" 2>refused.err >/dev/null || rc=$?
    [ "$rc" -eq 2 ] || fail "trace $*: exit $rc, expected 2: $(cat refused.err)"
    [ "$(wc -l <refused.err)" -eq 1 ] || fail "trace $*: expected one line on stderr: $(cat refused.err)"
    [ -e refused.csv ] && fail "trace $*: left refused.csv"
    return 0
}
refused sort mmn.bin -o refused.csv --l1 16K,4,128,32
refused sort mmn.bin -o refused.csv --merge 4 --feedback
refused sort mmn.bin -o refused.csv --hit-latency 3 --mshr-merge
refused sort mmn.bin -o refused.csv --feedback --arch volta
refused sort mmn.bin -o refused.csv --feedback --l1 16K,3,128,32
refused sort mmn.bin -o refused.csv --feedback --set-index diagonal
refused sort mmn.bin -o refused.csv --mshr-merge --merge 0
refused sort mmn.bin -o refused.csv --feedback --hit-latency -1
refused convert mmn.bin -o refused.csv --feedback
