#!/usr/bin/env bash
# Proves `gpuprobe trace cache` end to end (and --device over the imported H100 reference result): the committed NVBit and Accel-Sim fixtures sorted (binary and CSV) and modelled, the same answer from both forms; the JSON's counts consistent (every L1 request a hit or one miss class, loads and stores adding up to the requests, the L2 fed by the L1's fetches and written-through stores); stores worked by hand (the L1 writes through and discards, the L2 allocates) and a synthetic naive transpose whose loads never hit the L1; a cyclic trace worked by hand (300 lines read three times: all hits after the first pass in 512 lines, none in 256 — LRU's cyclic pathology — with both engines equal on fully associative caches, the set-associative correction reported, and an L2 too small to track them counting them beyond its cap, in the JSON and on a terminal's table); --engine, --set-index (modulo, xor, masks that equal both, and hardware: the masks stored with a device's memory result), the L2 in two partitions (the device's stored search, the same map from a file, none, and a search that found one refused), --threads 2 giving the one-thread document, every SM's and the fabric's L2 figures within their requests and adding up to the level's (a small L2, one or two partitions), a sorted file made for another machine than the geometry's (trace sort's default fermi order on the default hopper geometry) refused with the fixes named, taken with a warning when a geometry is given, and refusals with one line and status 2 (usage) or 1 (input).
. "$(dirname "$0")/lib.sh"

# cache ARGS...: runs trace cache; BODY its stdout, RC its status, ERR its stderr.
cache() {
    RC=0
    timeout 60 "$GPUPROBE" trace cache "$@" >cache.out 2>cache.err || RC=$?
    BODY=$(cat cache.out) ERR=$(cat cache.err)
    REQ_METHOD=CLI REQ_PATH="trace cache $*" STATUS=$RC
}

# refused STATUS ARGS...: trace cache exits STATUS with one line on stderr.
refused() {
    local want=$1
    shift
    cache "$@"
    [ "$RC" -eq "$want" ] || fail "trace cache $*: exit $RC, expected $want; stderr: $ERR"
    [ -n "$ERR" ] && [ "$(wc -l <cache.err)" -eq 1 ] || fail "trace cache $*: expected one line on stderr, got: $ERR"
}

# consistent: in the last JSON, every engine's L1 requests are the records and split into hits and misses.
consistent() {
    assert_true '[.engines[] | .l1 | (.requests - .hits - (.misses | add)) | fabs < 1e-6] | all'
    assert_true '[.engines[] | .l1 | (.lookup_hit_rate - (.hits + .misses.latency) / .requests) | fabs < 1e-9] | all'
    assert_true '.records as $n | [.engines[] | .l1.requests == $n] | all'
    assert_true '.records as $n | .engines.exact.l1.sms | map(.requests) | add == $n'
    assert_true '.engines.exact.l2 == null or .engines.exact.l2.requests == .engines.exact.l1.to_next_level.requests'
    assert_true '[.engines[] | .l1 | (.loads.requests + .stores.requests - .requests) | fabs < 1e-6] | all'
    assert_true '.engines.exact.l2 == null or .engines.exact.l2.stores.requests == .engines.exact.l1.stores.requests'
}

# ---- the fixtures, sorted and modelled ---------------------------------------------------
for fx in nvbit_memtrace.txt kernel-1.trace; do
    "$GPUPROBE" trace sort "$REPO/tests/fixtures/traces/$fx" -o "$fx.bin" --out-format bin --arch hopper --quiet ||
        fail "trace sort $fx"
    "$GPUPROBE" trace sort "$REPO/tests/fixtures/traces/$fx" -o "$fx.csv" --arch hopper --quiet --summary-json "$fx.sum.json" ||
        fail "trace sort $fx (csv)"
    cache "$fx.bin"
    [ "$RC" -eq 0 ] || fail "trace cache $fx.bin: exit $RC: $ERR"
    consistent
    assert_json .records "$(jq .requests_out "$fx.sum.json")"
    assert_true '.engines.exact.l1.hit_rate >= 0 and .engines.reuse.l1.hit_rate <= 1'
    assert_true '(.difference.l1.hit_rate | type) == "number"'
    assert_json .geometry.l1.latency 200 # the sort's lat_min, from the binary header
    bin_engines=$(json .engines)
    # the CSV form has no parameters: give the same timing, expect the same counts
    cache "$fx.csv" --latency 200 --mshr 512
    [ "$RC" -eq 0 ] || fail "trace cache $fx.csv: exit $RC: $ERR"
    [ "$(json .engines)" = "$bin_engines" ] || fail "$fx: the CSV and binary forms give different results"
done

# ---- a cyclic trace worked by hand -------------------------------------------------------
# SM 0 reads lines 0..299 (128 B apart) three times, then SM 1 reads line 0 once.
{
    echo "sm,seq,tid,pc,addr,width,dep"
    seq=0
    for pass in 1 2 3; do
        for ((l = 0; l < 300; l++)); do
            printf '0,%d,0,0x10,0x%x,4,0\n' "$seq" $((0x100000 + l * 128))
            seq=$((seq + 1))
        done
    done
    echo "1,0,32,0x10,0x100000,4,0"
} >cyclic.csv
cache cyclic.csv --l1 64K,full,128,32 --latency 0 --mshr 0
[ "$RC" -eq 0 ] || fail "cyclic: exit $RC: $ERR"
consistent
for e in exact reuse; do
    assert_true ".engines.$e.l1.hits == 600 and .engines.$e.l1.misses.compulsory == 301"
done
# the L2 sees SM 0's 300 first reads, and SM 1's line 0 (a hit: SM 0 fetched it in round 0)
assert_json .engines.exact.l2.requests 301
assert_json .engines.exact.l2.hits 1
assert_json '.engines.exact.l2.sms | map(select(.sm == 1)) | .[0].hits' 1
cache cyclic.csv --l1 32K,full,128,32 --latency 0 --engine both
assert_json .engines.exact.l1.hits 0
assert_json .engines.exact.l1.misses.capacity 600
assert_true '.engines.reuse.l1.misses.capacity == 600 and .engines.reuse.l1.hits == 0'
# a histogram: SM 0's reuses are all at distance 299 (bin 256-511)
assert_true '.engines.reuse.l1.histogram.bins | map(select(.from == 256)) | .[0].count == 600'
# an L2 of 128 lines tracks no deeper: SM 0's 600 reuses at 299 are counted beyond it, in the
# JSON and in the table a terminal gets (script(1) gives the command one)
cache cyclic.csv --l1 16K,full,128,32 --l2 16K,full,128,32 --latency 0 --engine reuse
assert_true '.engines.reuse.l2.histogram.beyond == {"from": 128, "count": 600}'
assert_true '.engines.reuse.l2.histogram.bins | all(.to < 128)'
script -qec "'$GPUPROBE' trace cache cyclic.csv --l1 16K,full,128,32 --l2 16K,full,128,32 --latency 0 --engine reuse" \
    /dev/null | tr -d '\r' >cache.tty
grep -Eq '^ +128 or more +600 \(deeper than the 128 lines tracked\)$' cache.tty ||
    fail "the table does not show the reuses past the L2's cap: $(tail -3 cache.tty)"
# set-associative: 4 ways, the exact engine and the corrected estimate both report associativity misses
cache cyclic.csv --l1 64K,4,128,32 --latency 0
assert_true '.engines.exact.l1.misses.associativity + .engines.exact.l1.misses.capacity + .engines.exact.l1.hits == 600'
assert_true '.engines.reuse.l1.misses.associativity > 0'
cache cyclic.csv --l1 64K,4,128,32 --latency 0 --set-index xor --engine exact
assert_json '.engines | keys' '["exact"]'
assert_json .geometry.l1.set_index xor
cache cyclic.csv --l2 none --engine reuse --json
assert_json '.engines.reuse.l2' null
assert_json '.geometry.l2' null
# masks: over address bits 7..8 they are modulo 4 sets, over 7,9,11 / 8,10,12 the model's own
# xor of 4 sets (the L1 only; no L2 here, so the whole answer must match). 200 lines 512 B apart,
# read three times: modulo piles them into one set of 128 ways (no hits), xor spreads them.
{
    echo "sm,seq,tid,pc,addr,width,dep"
    for ((i = 0; i < 600; i++)); do printf '0,%d,0,0x10,0x%x,4,0\n' "$i" $((0x100000 + (i % 200) * 512)); done
} >stride.csv
cache stride.csv --l1 64K,128,128,32 --l2 none --latency 0 --engine exact
modulo4=$(json .engines)
assert_json .engines.exact.l1.hits 0
cache stride.csv --l1 64K,4,128,32 --l2 none --latency 0 --engine exact --set-index mask:0x80,0x100
[ "$RC" -eq 0 ] || fail "--set-index mask: exit $RC: $ERR"
assert_json .geometry.l1.set_index mask:0x80,0x100
assert_true '.geometry.l1.sets == 4 and .geometry.l1.assoc == 128'
[ "$(json .engines)" = "$modulo4" ] || fail "masks over bits 7..8 differ from modulo 4 sets"
cache stride.csv --l1 64K,128,128,32 --l2 none --latency 0 --engine exact --set-index xor
xor4=$(json .engines)
assert_json .engines.exact.l1.hits 400
cache stride.csv --l1 64K,128,128,32 --l2 none --latency 0 --engine exact --set-index mask:0xa80,0x1500
[ "$(json .engines)" = "$xor4" ] || fail "masks 0xa80,0x1500 differ from the 4-set xor"

# ---- stores, worked by hand ----------------------------------------------------------------
# SM 0: load A, store A (a hit: written through, A discarded), load A (an
# invalidated miss), store B (never loaded: not allocated), load B (so
# compulsory). Every store reaches the L2, which allocates: load B hits there.
{
    echo "sm,seq,tid,pc,addr,width,dep,op"
    echo "0,0,0,0x10,0x1000,4,0,ld"
    echo "0,1,0,0x20,0x1000,4,0,st"
    echo "0,2,0,0x10,0x1000,4,0,ld"
    echo "0,3,0,0x20,0x2000,4,0,st"
    echo "0,4,0,0x10,0x2000,4,0,ld"
} >stores.csv
cache stores.csv --latency 0 --mshr 0
[ "$RC" -eq 0 ] || fail "stores: exit $RC: $ERR"
consistent
assert_json .geometry.l1.write through-no-allocate
assert_json .geometry.l2.write back-allocate
for e in exact reuse; do
    assert_true ".engines.$e.l1 | .hits == 1 and .invalidations == 1 and .misses.invalidated == 1 and .misses.compulsory == 3"
    assert_true ".engines.$e.l1.stores | .requests == 2 and .hits == 1 and .hit_rate == 0.5"
    assert_true ".engines.$e.l1.loads | .requests == 3 and .hits == 0 and .sector_lookup_hit_rate == 0"
    assert_true ".engines.$e.l1.to_next_level.requests == 5"
    assert_true ".engines.$e.l2 | .stores.requests == 2 and .loads.hits == 2 and .misses.compulsory == 2"
done
# the same lines without the op column are all loads: the second load of A and of B hit
sed 's/,ld$//; s/,st$//; 1s/,op$//' stores.csv >loads.csv
cache loads.csv --latency 0 --mshr 0
assert_true '.engines.exact.l1 | .hits == 3 and .stores.requests == 0 and .invalidations == 0'

# ---- a naive transpose: coalesced reads never reused, strided writes ---------------------------
"$GPUPROBE" trace synth --pattern transpose-naive --size 256 -o tn.bin --quiet || fail "trace synth"
"$GPUPROBE" trace sort tn.bin -o tn.sorted --out-format bin --arch hopper --quiet || fail "trace sort tn.bin"
cache tn.sorted
[ "$RC" -eq 0 ] || fail "transpose: exit $RC: $ERR"
consistent
# 256 x 256 floats, 16x16 blocks: a warp reads 2 rows of 16 (4 sectors) and
# writes 16 columns of 2 (16 sectors): 8192 load and 32768 store requests
assert_json .records 40960
for e in exact reuse; do
    assert_true ".engines.$e.l1.loads | .sector_lookup_hit_rate < 0.01 and .hits == 0"
    assert_true ".engines.$e.l1.stores.requests == 32768"
done

# per_sm_bounded: in the last JSON, every SM's (and the fabric's) L2 figures of both engines lie
# within [0, its requests], loads and stores apart, and add up to the level's.
per_sm_bounded() {
    assert_true '[.engines[] | .l2 | (.sms + [.partitions.fabric // empty])[] | (., .loads, .stores) |
                  .hits >= -1e-9 and .hits <= .requests + 1e-9 and
                  .sector_hits >= -1e-9 and .sector_hits <= .sectors + 1e-9] | all'
    assert_true '[.engines[] | .l2 | (.sms + [.partitions.fabric // empty])[] | .misses[] >= -1e-9] | all'
    assert_true '[.engines[] | .l2 | (.hits - ([.sms[].hits] | add) - (.partitions.fabric.hits // 0)) | fabs < 1e-6] | all'
    assert_true '[.engines[] | .l2 | (.misses.capacity - ([.sms[].misses.capacity] | add) -
                  (.partitions.fabric.misses.capacity // 0)) | fabs < 1e-6] | all'
}
# A small L2 whose correction wins back hits for SMs that had none of their own: each SM's
# share of the reuse engine's correction follows its own hits and capacity misses.
cache tn.sorted --l1 16K,4,128,32 --l2 128K,4,128,32
[ "$RC" -eq 0 ] || fail "transpose, small caches: exit $RC: $ERR"
assert_true '.engines.reuse.l2.misses.associativity > 0'
per_sm_bounded
cache tn.sorted --engine reuse --l2 64K,4,128,32
per_sm_bounded

# ---- --device: the capacities of the H100 reference result ---------------------------------
"$GPUPROBE" import "$REPO/data/reference/h100.json" --db ref.db >/dev/null || fail "import the H100 reference bundle"
uuid=$(jq -r '.devices[0].uuid' "$REPO/data/reference/h100.json")
cache cyclic.csv --device "$uuid" --db ref.db
[ "$RC" -eq 0 ] || fail "trace cache --device: exit $RC: $ERR"
# the L1 plateau holds up to 220416 bytes: 430 ways of 4 sets of 128 B; the L2 the 50 MiB l2_bytes
assert_json .geometry.l1.size 220160
assert_json .geometry.l1.sets 4
assert_json .geometry.l2.size 52428800
refused 1 cyclic.csv --device GPU-00000000-0000-0000-0000-000000000000 --db ref.db
refused 2 cyclic.csv --device "$uuid"
refused 1 cyclic.csv --device "$uuid" --db typo.db # a missing database is not made
refused 1 . # a folder
assert_match "$ERR" 'is a folder' "trace cache of a folder"
[ ! -e typo.db ] || fail "trace cache --db typo.db created a database"

# ---- --set-index hardware: the L1 set mapping stored with the memory result ----------------
# The reference result holds the device's L1 set search and L2 partition
# search; taken out, it is a result from before them (what an older
# database holds), and each case below is then stored in turn.
sql() { sqlite3 -batch -bail -cmd ".timeout 5000" ref.db "$1"; }
job=$(sql "SELECT job_id FROM probe_runs WHERE probe = 'memory' AND device = '$uuid'")
sql "DELETE FROM memory_l1_set_masks WHERE job_id = $job; DELETE FROM memory_l1_sets WHERE job_id = $job;
     DELETE FROM memory_l2_partitions WHERE job_id = $job"
refused 1 cyclic.csv --device "$uuid" --db ref.db --set-index hardware   # none stored
assert_match "$ERR" "no L1 set search" "hardware without a stored mapping"
refused 2 cyclic.csv --set-index hardware                                 # no device
sql "INSERT INTO memory_l1_sets (job_id, device, status, reason, fill_bytes)
     VALUES ($job, '$uuid', 'not determined', 'no floor of one set', 32)"
refused 1 cyclic.csv --device "$uuid" --db ref.db --set-index hardware
assert_match "$ERR" "no floor of one set" "hardware with an undetermined mapping"
sql "UPDATE memory_l1_sets SET status = 'determined', reason = NULL, line_bytes = 128, sets = 4,
       ways = 430, function = 'xor' WHERE job_id = $job;
     INSERT INTO memory_l1_set_masks (job_id, bit, mask) VALUES ($job, 0, 2688), ($job, 1, 5376)"
cache stride.csv --device "$uuid" --db ref.db --set-index hardware --l2 none --latency 0 --engine exact
[ "$RC" -eq 0 ] || fail "--set-index hardware: exit $RC: $ERR"
assert_json .geometry.l1.set_index mask:0xa80,0x1500
assert_true '.geometry.l1.size == 220160 and .geometry.l1.sets == 4 and .geometry.l1.assoc == 430'
hardware=$(json .engines)
assert_json .engines.exact.l1.hits 400
cache stride.csv --l1 220160,430,128,32 --set-index mask:0xa80,0x1500 --l2 none --latency 0 --engine exact
[ "$(json .engines)" = "$hardware" ] || fail "hardware and the same masks given differ"
refused 2 cyclic.csv --device "$uuid" --db ref.db --set-index hardware --l1 224K,448,64,32

# ---- the L2's partitions: the device's stored search, a file, or none ------------------------
cache cyclic.csv --device "$uuid" --db ref.db --engine exact
[ "$RC" -eq 0 ] || fail "--device without a partition search: exit $RC: $ERR"
assert_true '.geometry.l2.partitions == null and .engines.exact.l2.partitions == null'
one_l2=$(json .engines.exact.l2.requests)
sql "INSERT INTO memory_l2_partitions (job_id, device, verdict, sm_partition, home_mask_bits)
     VALUES ($job, '$uuid', 'two partitions', '[0,1,1,0]', '[12]')"
cache cyclic.csv --device "$uuid" --db ref.db --engine exact
[ "$RC" -eq 0 ] || fail "--device with two partitions: exit $RC: $ERR"
assert_true '.geometry.l2.partitions.count == 2 and .geometry.l2.partitions.home_mask_bits == [12]'
# every lookup counted: the SMs' own partitions' and the fabric's
assert_true '.engines.exact.l2 | .requests == ([.sms[].requests] | add) + .partitions.fabric.requests'
assert_true ".engines.exact.l2.partitions.fabric.requests > 0 and .engines.exact.l2.requests > $one_l2"
jq -n '{l2_partitions: {verdict: "two partitions", sm_partition: [0,1,1,0], home: {mask_bits: [12]}}}' >parts.json
cache cyclic.csv --device "$uuid" --db ref.db --engine exact --l2-partitions parts.json
[ "$(json .engines)" = "$(cache cyclic.csv --device "$uuid" --db ref.db --engine exact; json .engines)" ] ||
    fail "the stored search and the same map in a file differ"
cache cyclic.csv --device "$uuid" --db ref.db --engine exact --l2-partitions none
assert_true ".geometry.l2.partitions == null and .engines.exact.l2.requests == $one_l2"
# both engines over two partitions: the fabric takes its share of the reuse engine's correction
jq -n '{l2_partitions: {verdict: "two partitions", sm_partition: [range(132) | . % 2], home: {mask_bits: [12]}}}' >parts132.json
cache tn.sorted --l1 16K,4,128,32 --l2 128K,4,128,32 --l2-partitions parts132.json
[ "$RC" -eq 0 ] || fail "transpose over two partitions: exit $RC: $ERR"
assert_true '.engines.reuse.l2.partitions.fabric.requests > 0'
per_sm_bounded
jq -n '{l2_partitions: {verdict: "one partition", cycles: {near: 280}}}' >one.json
refused 1 cyclic.csv --l2-partitions one.json
assert_match "$ERR" "one partition" "a search that found one partition"
refused 1 cyclic.csv --l2-partitions missing.json
refused 2 cyclic.csv --l2 none --l2-partitions parts.json

# ---- two threads: the engines' L2 passes side by side, the same document ------------------
cache cyclic.csv --l2 64K,16,128,32 --json
one=$BODY
cache cyclic.csv --l2 64K,16,128,32 --threads 2 --json
[ "$RC" -eq 0 ] || fail "--threads 2: exit $RC: $ERR"
[ "$BODY" = "$one" ] || fail "--threads 2 gave another document than one thread"
refused 2 cyclic.csv --threads 3
assert_match "$ERR" "1 or 2" "--threads names what it takes"

# ---- which machine the order is for -------------------------------------------------------
# trace sort's default is the fermi preset (15 SMs); trace cache's geometry, Hopper's (132):
# with no geometry given, a binary file sorted for another machine is refused, naming both and
# the fixes; a geometry given takes it, with a warning (stderr only); a matching sort, silently
k1=$REPO/tests/fixtures/traces/kernel-1.trace
"$GPUPROBE" trace sort "$k1" -o fermi.bin --out-format bin --quiet || fail "trace sort (default arch)"
refused 2 fermi.bin
assert_match "$ERR" "fermi.bin: sorted for 15 SMs, 128-byte lines \(trace sort's fermi preset\); the hopper geometry is for 132 SMs, 128-byte lines \(the default\)" \
    "the mismatch named"
assert_match "$ERR" "trace sort TRACE -o OUT --out-format bin --arch hopper.*--arch fermi, the preset it was sorted with" \
    "the fixes"
cache fermi.bin --arch fermi
[ "$RC" -eq 0 ] && [ -z "$ERR" ] || fail "fermi.bin --arch fermi: exit $RC: $ERR"
assert_json .records 16
cache fermi.bin --arch hopper
[ "$RC" -eq 0 ] || fail "fermi.bin --arch hopper: exit $RC: $ERR"
assert_match "$ERR" "warning: fermi.bin: sorted for 15 SMs" "the warning for a geometry given"
cache fermi.bin --l1 16K,4,128,32
assert_match "$ERR" "warning: fermi.bin" "the warning with --l1"
"$GPUPROBE" trace sort "$k1" -o h114.bin --out-format bin --arch hopper --sms 114 --quiet || fail "trace sort --sms 114"
refused 2 h114.bin
assert_match "$ERR" "sorted for 114 SMs.*--arch hopper takes it as it is" "another SM count"
cache kernel-1.trace.bin # sorted --arch hopper above
[ "$RC" -eq 0 ] && [ -z "$ERR" ] || fail "a hopper sort: exit $RC, stderr: $ERR"
# with --device, the file is held against the device's own SM count, not the preset's
cache kernel-1.trace.bin --device "$uuid" --db ref.db --engine exact
[ "$RC" -eq 0 ] && [ -z "$ERR" ] || fail "a hopper sort on the H100 (132 SMs): exit $RC, stderr: $ERR"
sql "UPDATE devices SET info_json = json_set(info_json, '\$.sm_count', 114) WHERE uuid = '$uuid'"
cache h114.bin --device "$uuid" --db ref.db --engine exact
[ "$RC" -eq 0 ] && [ -z "$ERR" ] || fail "a 114-SM sort on a 114-SM device: exit $RC, stderr: $ERR"
cache kernel-1.trace.bin --device "$uuid" --db ref.db --engine exact
[ "$RC" -eq 0 ] || fail "a 132-SM sort on a 114-SM device: exit $RC: $ERR"
assert_match "$ERR" "warning: kernel-1.trace.bin: sorted for 132 SMs, 128-byte lines; device $uuid has 114 SMs" \
    "the device's SM count named"

# ---- refusals ----------------------------------------------------------------------------
refused 2 cyclic.csv --l1 100,4,128,32
refused 2 cyclic.csv --set-index hash
refused 2 cyclic.csv --engine fast
refused 2 cyclic.csv --arch volta
refused 2 cyclic.csv --l2 1M,16,64,32
assert_match "$ERR" "the --l2 L2 has 64 and 32" "the L2 that does not match named"
refused 2 cyclic.csv --l1 224K,448,64,32 # the preset's L2 keeps its 128-byte lines
assert_match "$ERR" "the preset's L2 has 128 and 32: give --l2 SIZE,ASSOC,64,32, or --l2 none" \
    "the preset's L2 named, with the fixes"
refused 2 cyclic.csv --latency -1
refused 2
refused 1 "$REPO/tests/fixtures/traces/sample.csv" # requests, not a sorted trace
assert_match "$ERR" "trace sort" "the hint to sort first"
printf 'sm,seq,tid,pc,addr,width,dep\n0,0,0,0x10,0x1000,4,0\n0,2,0,0x10,0x1000,4,0\n' >gap.csv
refused 1 gap.csv
assert_match "$ERR" "line 3" "the line of the bad record"
refused 1 absent.bin
cache --help
[ "$RC" -eq 0 ] || fail "trace cache --help exited $RC"
assert_match "$BODY" "--set-index" "trace cache --help"
echo "t_cache: ok"
