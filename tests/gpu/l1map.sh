#!/usr/bin/env bash
# The L1 set search (probes/l1_sets.h) on a GPU, from the relocatable
# bundle that `make dist` built elsewhere: `gpuprobe probe memory` once
# (its curves, about 3 s on an H100, then the search: a few hundred
# chases of a few thousand loads, seconds at most), stored
# in a database, then the cache model run with the mapping found
# (`trace cache --set-index hardware`, CPU only) on a trace of 1000 lines
# 512 B apart, read three times: more lines than the ways, so modulo piles
# them into one set (no hits) and a mapping that spreads them shows it. Writes to $OUT (default
# tests/gpu/results/latest-l1map): memory.json (the whole document),
# l1_sets.json (its l1_sets member), summary.md (tests/gpu/check_l1map.py),
# l1map.db (the store, for --set-index hardware elsewhere), cache-*.json,
# the kernels' PTX and cubins under cubins/. DEVICE picks the GPU (default 0).
# Exit status 0 when the search ran (determined or not: the summary says),
# 1 when the probe or the search failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle l1map "${1:-}"
out=${OUT:-tests/gpu/results/latest-l1map}
mkdir -p "$out"
probe_memory "$out" --db "$work/l1map.db" || exit 1
cp "$work/l1map.db" "$out/l1map.db"
python3 tests/gpu/check_l1map.py "$out/memory.json" "$out" || exit 1

# The cache model with the mapping found: 1000 lines 512 B apart, read three times.
uuid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["uuid"])' "$out/memory.json")
{
    echo "sm,seq,tid,pc,addr,width,dep"
    for ((i = 0; i < 3000; i++)); do printf '0,%d,0,0x10,0x%x,4,0\n' "$i" $((0x100000 + (i % 1000) * 512)); done
} >"$work/stride.csv"
for f in modulo hardware; do
    if "$bin" trace cache "$work/stride.csv" --device "$uuid" --db "$work/l1map.db" --set-index "$f" \
            --l2 none --latency 0 --engine exact --json >"$out/cache-$f.json" 2>"$work/cache.err"; then
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g=d["geometry"]["l1"]
print("trace cache --set-index %s: L1 %d B, %d sets x %d ways, %s: hit rate %.3f" % (sys.argv[2],
      g["size"], g["sets"], g["assoc"], g["set_index"], d["engines"]["exact"]["l1"]["hit_rate"]))' \
            "$out/cache-$f.json" "$f"
    else
        echo "trace cache --set-index $f: $(cat "$work/cache.err")"
    fi
done
