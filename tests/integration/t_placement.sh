#!/usr/bin/env bash
# Proves `gpuprobe trace sort --device` end to end: over the imported H100 reference result with an H200's measured dealing order stored as its memory result's block placement, every block of a synthesized 8-wide tiled multiply (1,024 blocks of 64 threads, one wave) lands on the SM the order gives it, and every block of a stream of 264 blocks of 1,024 threads (two an SM) on the SM the H200 ran it on (full SMs skipped), an order for another SM count than the sort's (--sms 64) keeps round-robin with the reason, the summary says placement dealt and the device's SM count, and the cache model then finds the L1 hits that blocks sharing tiles on one SM give (none under round-robin, as before); an explicit --placement wins over the device; a device with no order keeps round-robin with a warning, and --placement dealt then fails with the reason; usage errors (dealt without --device, --db alone, --device without --db, convert with --device) exit 2 with one line; an HTTP sort asking for placement dealt is refused with a problem+json naming the setting, and the trace-sort job kind's schema does not offer dealt.
. "$(dirname "$0")/lib.sh"

sql() { sqlite3 -batch -bail -cmd ".timeout 5000" ref.db "$1"; }
FIX=$REPO/tests/fixtures/placement/h200-1024x64.txt

# sort ARGS...: gpuprobe trace sort ARGS; RC its status, ERR its stderr.
sort_cli() {
    RC=0
    timeout 60 "$GPUPROBE" trace sort "$@" >sort.out 2>sort.err || RC=$?
    ERR=$(cat sort.err)
    REQ_METHOD=CLI REQ_PATH="trace sort $*" STATUS=$RC
}
refused() {
    local want=$1
    shift
    sort_cli "$@"
    [ "$RC" -eq "$want" ] || fail "trace sort $*: exit $RC, expected $want; stderr: $ERR"
    [ "$(wc -l <sort.err)" -eq 1 ] || fail "trace sort $*: expected one line on stderr, got: $ERR"
}
# l1_hits SORTED: the exact engine's L1 load lookup hit rate
l1_hits() {
    "$GPUPROBE" trace cache "$1" --arch hopper --engine exact --json | jq '.engines.exact.l1.loads.sector_lookup_hit_rate'
}

"$GPUPROBE" import "$REPO/data/reference/h100.json" --db ref.db >/dev/null || fail "import the H100 reference bundle"
uuid=$(jq -r '.devices[0].uuid' "$REPO/data/reference/h100.json")
job=$(sql "SELECT job_id FROM probe_runs WHERE probe = 'memory' AND device = '$uuid'")
"$GPUPROBE" trace synth --pattern matmul-tiled --size 256 --tile 8 -o t8.bin 2>/dev/null || fail "trace synth"

# ---- no order stored: round-robin, with a warning --------------------------------------------
sort_cli t8.bin -o rr.bin --arch hopper --quiet --summary-json rr.json --device "$uuid" --db ref.db
[ "$RC" -eq 0 ] || fail "trace sort --device without an order: exit $RC: $ERR"
assert_match "$ERR" 'no block placement' "the warning for a device without an order"
[ "$(jq -r .params.placement rr.json)" = rr ] || fail "a device without an order: placement $(jq -r .params.placement rr.json)"
refused 1 t8.bin -o x.bin --arch hopper --device "$uuid" --db ref.db --placement dealt
assert_match "$ERR" 'no block placement' "--placement dealt on a device without an order"
[ ! -e x.bin ] || fail "a refused sort left its output"
rr_hits=$(l1_hits rr.bin)
[ "$(jq -n "$rr_hits == 0")" = true ] || fail "round-robin: L1 hits $rr_hits, expected none (no SM runs two blocks of a row or column)"

# ---- the H200's order stored: dealt --------------------------------------------------------
order=$(awk 'NR > 1 { printf "%s%s", sep, $2; sep = "," }' "$FIX")
sql "INSERT INTO memory_block_placement (job_id, device, status, threads_per_block, blocks, blocks_per_sm,
     sms, one_wave, sm_order) VALUES ($job, '$uuid', 'determined', 64, 1024, 8, 132, 1, '[$order]')"
sort_cli t8.bin -o dealt.csv --arch hopper --quiet --summary-json dealt.json --device "$uuid" --db ref.db
[ "$RC" -eq 0 ] || fail "trace sort --device with an order: exit $RC: $ERR"
[ -z "$ERR" ] || fail "trace sort --device with an order warned: $ERR"
[ "$(jq -r '.params.placement + " " + (.params.sms | tostring)' dealt.json)" = "dealt 132" ] ||
    fail "summary params: $(jq -c .params dealt.json)"
# every record on its block's SM: block = tid / 64 (8 x 8 threads), SM = the order's entry
awk -F, -v order="$order" 'BEGIN { n = split(order, sm, ",") }
     NR > 1 { b = int($3 / 64); if ($1 != sm[b + 1]) { print "tid " $3 " (block " b ") on SM " $1 ", dealt to " sm[b + 1]; bad++ } }
     END { exit bad > 0 }' dealt.csv >misplaced.txt || fail "records off their dealt SM: $(head -3 misplaced.txt)"
# two 1024-thread blocks an SM: the order dealt with full SMs skipped gives
# the SM each block of the H200's measured 264-block launch ran on
"$GPUPROBE" trace synth --pattern stream --size $((264 * 1024)) --block 1024 -o big.bin 2>/dev/null ||
    fail "trace synth stream"
sort_cli big.bin -o big.csv --arch hopper --quiet --device "$uuid" --db ref.db
[ "$RC" -eq 0 ] || fail "trace sort --device of 1024-thread blocks: exit $RC: $ERR"
ran=$(awk 'NR > 1 { printf "%s%s", sep, $2; sep = "," }' "$REPO/tests/fixtures/placement/h200-264x1024.txt")
awk -F, -v ran="$ran" 'BEGIN { split(ran, sm, ",") }
     NR > 1 { b = int($3 / 1024); if ($1 != sm[b + 1]) { print "block " b " on SM " $1 ", ran on " sm[b + 1]; bad++ } }
     END { exit bad > 0 }' big.csv >misplaced.txt || fail "1024-thread blocks off the measured SMs: $(head -3 misplaced.txt)"
# an order for another SM count than the sort's: round-robin, with the reason
sort_cli t8.bin -o other.bin --arch hopper --quiet --summary-json other.json --device "$uuid" --db ref.db --sms 64
[ "$RC" -eq 0 ] && [ "$(jq -r .params.placement other.json)" = rr ] || fail "--sms 64 with a 132-SM order: exit $RC, $ERR"
assert_match "$ERR" 'names SM 1[0-9][0-9], and the sort has 64 SMs' "the warning for an order of other SMs"
sort_cli t8.bin -o dealt.bin --arch hopper --quiet --device "$uuid" --db ref.db
dealt_hits=$(l1_hits dealt.bin)
[ "$(jq -n "$dealt_hits > 0.05")" = true ] || fail "dealt: L1 hits $dealt_hits, expected those of tiles shared on one SM"
# an explicit placement wins over the device's
sort_cli t8.bin -o fill.bin --arch hopper --quiet --summary-json fill.json --device "$uuid" --db ref.db --placement fill
[ "$RC" -eq 0 ] && [ "$(jq -r .params.placement fill.json)" = fill ] || fail "--placement fill with --device: $ERR"

# ---- usage -------------------------------------------------------------------------------
refused 2 t8.bin -o x.bin --placement dealt
assert_match "$ERR" '--device' "dealt without --device"
refused 2 t8.bin -o x.bin --db ref.db
refused 2 t8.bin -o x.bin --device "$uuid"
RC=0
"$GPUPROBE" trace convert t8.bin -o x.csv --device "$uuid" --db ref.db 2>conv.err || RC=$?
[ "$RC" -eq 2 ] || fail "trace convert --device: exit $RC: $(cat conv.err)"

# ---- an HTTP sort (a trace-sort job) cannot carry an order -----------------------------------
start_daemon
REQ_BODY_FILE=$WORK/t8.bin req POST "/api/v1/traces/sort?placement=dealt&arch=hopper"
unset REQ_BODY_FILE
assert_problem 400
assert_field placement
assert_match "$BODY" 'must be one of: rr, fill' "the HTTP sort refused"
req GET /api/v1/job-kinds
assert_status 200
assert_true '[.. | objects | select(has("placement")) | .placement | select(type == "object") | .enum] | length > 0 and all(index("dealt") == null)'
assert_match "$BODY" 'dealt only from the command line' "the job kind's placement description"
stop_daemon
