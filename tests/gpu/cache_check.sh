#!/usr/bin/env bash
# The cache model against the hardware, on a GPU machine with Nsight
# Compute, from the `make dist` bundle:
#   1. a synthesized trace equals the captured trace of the same kernel
#      (tests/gpu/kernels/synth/compare.sh) for the tiled and naive matrix
#      multiply, the transposes and the stream at sizes with partial tiles;
#   2. for each kernel of tests/gpu/kernels/synth/ (and the vector add and
#      matrix multiplies of tests/gpu/kernels/capture/): the trace captured
#      (gpuprobe trace capture), sorted for Hopper (trace sort --arch
#      hopper) with the blocks dealt to SMs in the order the memory probe
#      measured on this device (--device: placement dealt; round-robin when
#      it found none), its L1 and L2 hit rates predicted by both engines (trace
#      cache --json), and the same launch measured by ncu: the capture's
#      third launch is the original kernel (counting, recording, original),
#      profiled alone with caches flushed (ncu's default --cache-control all),
#      as the model starts cold.
# tests/gpu/check_cache.py writes the table (cache.md) and the mean absolute
# differences. Output in $OUT (default tests/gpu/results/latest-cache).
# CACHE_ARGS (default none): more options for every `trace cache`, for an
# experiment with the model's settings (e.g. "--merge 100000"); SORT_ARGS
# the same for every `trace sort` (e.g. "--placement rr").
#   tests/gpu/cache_check.sh [BUNDLE.tar.gz]
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle cache_check "${1:-}"
NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)}
[ -x "$NCU" ] || { echo "cache_check: no ncu" >&2; exit 2; }
out=${OUT:-tests/gpu/results/latest-cache}
mkdir -p "$out"
sx=tests/fixtures/ptx/synth
cx=tests/fixtures/ptx/capture
fail=0

metrics=l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sector_hit_rate.pct,lts__t_sector_op_read_hit_rate.pct,\
lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,gpc__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,\
lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum

nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.max.sm --format=csv,noheader \
    > "$out/gpu.csv" 2>/dev/null || true
"$bin" --version > "$out/version.txt"
# the L2's partitions, as the memory probe finds them on this device
parts=()
if "$bin" probe memory --device "${DEVICE:-0}" --db "$work/memory.db" --json > "$out/memory.json" \
        2> "$out/memory.err" &&
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["l2_partitions"].get("verdict") != "two partitions")' \
        "$out/memory.json"; then
    parts=(--l2-partitions "$out/memory.json")
    echo "L2 partitions: $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["l2_partitions"]; print(p["sms_per_partition"], "SMs, home bits", p["home"]["mask_bits"], "granule", p["home"]["granule_bytes"], "near/far cycles", p["cycles"]["near"], p["cycles"]["far"])' "$out/memory.json")"
else
    echo "L2 partitions: not found ($(tail -c 300 "$out/memory.err"); see memory.json): one L2"
fi
# the order the block scheduler deals blocks in, likewise
device=()
if python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["block_placement"].get("status") != "determined")' \
        "$out/memory.json" 2>/dev/null; then
    device=(--device "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["uuid"])' "$out/memory.json")"
            --db "$work/memory.db")
    echo "block placement: determined (trace sort --device: placement dealt)"
else
    echo "block placement: not determined (see memory.json): placement rr"
fi

# ---- 1. synthesized = captured ---------------------------------------------------------
# same PATTERN SIZE PTX GRID BLOCK PARAMS... [--ignore-pc]: capture, synthesize, compare
same() {
    local pattern=$1 size=$2 ptx=$3 grid=$4 block=$5 flags=
    shift 5
    [ "${!#}" = --ignore-pc ] && { flags=--ignore-pc; set -- "${@:1:$(($# - 1))}"; }
    local name=$pattern${TILE:+-t$TILE}
    local c=$work/same-$name
    if ! "$bin" trace capture --ptx "$ptx" --grid "$grid" --block "$block" "$@" -o "$c.trace" \
        > "$c.json" 2> "$c.err"; then
        echo "FAIL same $name: capture: $(tail -n2 "$c.err")"; fail=$((fail + 1)); return
    fi
    "$bin" trace convert "$c.trace" -o "$c.csv" --out-format csv
    local bases sbases tile=()
    bases=$(python3 -c "import json,sys; print(','.join(hex(b['address']) for b in json.load(open(sys.argv[1]))['buffers']))" "$c.json")
    case $pattern in *tiled*) tile=(--tile "${TILE:-16}") ;; esac
    "$bin" trace synth --pattern "$pattern" --size "$size" "${tile[@]}" --out-format csv \
        -o "$c.synth.csv" 2> "$c.synth.err"
    sbases=$(grep -o '@0x[0-9a-f]*' "$c.synth.err" | tr -d @ | paste -sd,)
    if sh tests/gpu/kernels/synth/compare.sh $flags "$c.synth.csv" "$sbases" "$c.csv" "$bases" \
        > "$out/same-$name.txt" 2>&1; then
        echo "PASS same $name ($size): $(($(wc -l < "$c.csv") - 1)) records equal"
    elif [ -z "$flags" ] && sh tests/gpu/kernels/synth/compare.sh --ignore-pc "$c.synth.csv" \
        "$sbases" "$c.csv" "$bases" > "$out/same-$name.nopc.txt" 2>&1; then
        # the compiler issued the loads in another order than the source's
        echo "PASS same $name ($size): $(($(wc -l < "$c.csv") - 1)) records equal as (array," \
            "offset, width) per thread; the PCs rank differently (see same-$name.txt)"
    else
        echo "FAIL same $name ($size): $(head -n3 "$out/same-$name.txt")"; fail=$((fail + 1))
    fi
}
m40=6400 # 40 x 40 floats
same matmul-tiled 40 $sx/matmul-tiled.ptx 3,3 16,16 --param 0=buf:$m40:randf:1 \
    --param 1=buf:$m40:randf:2 --param 2=buf:$m40 --param 3=40 --param 4=40 --param 5=40
same matmul-naive 40 $sx/matmul-naive.ptx 3,3 16,16 --param 0=buf:$m40:randf:1 \
    --param 1=buf:$m40:randf:2 --param 2=buf:$m40 --param 3=40 --param 4=40 --param 5=40
same matmul-naive-bt 40 $sx/matmul-naive-bt.ptx 3,3 16,16 --param 0=buf:$m40:randf:1 \
    --param 1=buf:$m40:randf:2 --param 2=buf:$m40 --param 3=40 --param 4=40 --param 5=40
same transpose-tiled 40,24 $sx/transpose-tiled.ptx 2,3 16,16 --param 0=buf:3840:randf:3 \
    --param 1=buf:3840 --param 2=40 --param 3=24
same stream 1000 $sx/stream.ptx 4 256 --param 0=buf:4000:randf:4 --param 1=buf:4000 --param 2=1000
# the tiled multiply at its other tile sizes (nvcc -DTILE=8 and 32: make.sh)
TILE=8 same matmul-tiled 40 $sx/matmul-tiled-t8.ptx 5,5 8,8 --param 0=buf:$m40:randf:1 \
    --param 1=buf:$m40:randf:2 --param 2=buf:$m40 --param 3=40 --param 4=40 --param 5=40
TILE=32 same matmul-tiled 40 $sx/matmul-tiled-t32.ptx 2,2 32,32 --param 0=buf:$m40:randf:1 \
    --param 1=buf:$m40:randf:2 --param 2=buf:$m40 --param 3=40 --param 4=40 --param 5=40

# ---- 2. predicted vs measured hit rates ----------------------------------------------------
# hits CASE PTX GRID BLOCK PARAMS...: capture under ncu, sort, cache
hits() {
    local case=$1 ptx=$2 grid=$3 block=$4
    shift 4
    local c=$work/$case
    if ! "$NCU" --csv --log-file "$out/$case.ncu.csv" --launch-skip 2 --launch-count 1 \
        --metrics "$metrics" "$bin" trace capture --ptx "$ptx" --grid "$grid" --block "$block" "$@" \
        -o "$c.trace" > "$out/$case.capture.json" 2> "$c.err"; then
        echo "FAIL $case: capture under ncu: $(tail -n2 "$c.err")"; fail=$((fail + 1)); return
    fi
    "$bin" trace sort "$c.trace" -o "$c.sorted" --out-format bin --arch hopper --quiet \
        --summary-json "$out/$case.sort.json" "${device[@]}" ${SORT_ARGS:-} &&
        "$bin" trace cache "$c.sorted" --arch hopper --json "${parts[@]}" ${CACHE_ARGS:-} > "$out/$case.cache.json" &&
        "$bin" trace cache "$c.sorted" --arch hopper --json --engine exact ${CACHE_ARGS:-} > "$out/$case.cache1.json" ||
        { echo "FAIL $case: sort or cache"; fail=$((fail + 1)); return; }
    echo "ran $case: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['records'])" "$out/$case.cache.json") records"
}
n=256; m=$((n * n * 4))
for p in matmul-naive matmul-naive-bt matmul-tiled matmul-tiled-bt; do
    hits $p-$n $sx/$p.ptx 16,16 16,16 --param 0=buf:$m:randf:1 --param 1=buf:$m:randf:2 \
        --param 2=buf:$m --param 3=$n --param 4=$n --param 5=$n
done
for t in 8 32; do
    hits matmul-tiled-t$t-$n $sx/matmul-tiled-t$t.ptx $((n / t)),$((n / t)) $t,$t \
        --param 0=buf:$m:randf:1 --param 1=buf:$m:randf:2 --param 2=buf:$m --param 3=$n \
        --param 4=$n --param 5=$n
done
n=128; m=$((n * n * 4))
hits matmul-naive-$n $sx/matmul-naive.ptx 8,8 16,16 --param 0=buf:$m:randf:1 \
    --param 1=buf:$m:randf:2 --param 2=buf:$m --param 3=$n --param 4=$n --param 5=$n
hits matmul-tiled-$n $sx/matmul-tiled.ptx 8,8 16,16 --param 0=buf:$m:randf:1 \
    --param 1=buf:$m:randf:2 --param 2=buf:$m --param 3=$n --param 4=$n --param 5=$n
t=$((1024 * 1024 * 4))
hits transpose-naive-1024 $sx/transpose-naive.ptx 64,64 16,16 --param 0=buf:$t:randf:3 \
    --param 1=buf:$t --param 2=1024 --param 3=1024
hits transpose-tiled-1024 $sx/transpose-tiled.ptx 64,64 16,16 --param 0=buf:$t:randf:3 \
    --param 1=buf:$t --param 2=1024 --param 3=1024
s=$((64 * 64 * 64 * 4))
hits stencil7-64 $sx/stencil7.ptx 4,4 16,16 --param 0=buf:$s:randf:5 --param 1=buf:$s \
    --param 2=64 --param 3=64 --param 4=64
hits reduce-1M $sx/reduce.ptx 2048 256 --shared 1024 --param 0=buf:4194304:randf:6 \
    --param 1=buf:8192 --param 2=1048576
hits stream-1M $sx/stream.ptx 4096 256 --param 0=buf:4194304:randf:7 --param 1=buf:4194304 \
    --param 2=1048576
hits strided-256k-s8 $sx/strided.ptx 1024 256 --param 0=buf:8388608:randf:8 \
    --param 1=buf:1048576 --param 2=262144 --param 3=8
hits strided-64k-s33 $sx/strided.ptx 256 256 --param 0=buf:8650752:randf:9 \
    --param 1=buf:262144 --param 2=65536 --param 3=33
# three of the model's validation kernels (probes/validation_ptx.c) at smaller
# launches: gather reads in[idx[i]] with idx a random permutation of 2^24
# words, so 2^20 threads read at random over 64 MiB (an H100's L2 holds 50,
# an H200's 60); histogram streams 16 MiB of bytes into shared-memory bins
# (its shared atomics and the final red.global are not global loads: the
# capture records its loads); sgemv, a warp a row, re-reads x from every row.
mb=$((1024 * 1024))
hits gather-1M $cx/validation_gather.ptx 4096 256 --param 0=buf:$((4 * mb)) \
    --param 1=buf:$((64 * mb)):randf:10 --param 2=buf:$((64 * mb)):perm:11
hits histogram-16M $cx/validation_histogram.ptx 256 256 --param 0=buf:1024 \
    --param 1=buf:$((16 * mb)):rand:12 --param 2=64
hits sgemv-1024 $cx/validation_sgemv.ptx 128 32,8 --param 0=buf:4096 \
    --param 1=buf:$((4 * mb)):randf:13 --param 2=buf:4096:randf:14 --param 3=1024
[ -f $cx/vecadd.ptx ] && hits vecadd-1M $cx/vecadd.ptx 4096 256 --param 0=buf:4194304:randf:1 \
    --param 1=buf:4194304:randf:2 --param 2=buf:4194304 --param 3=1048576

python3 tests/gpu/check_cache.py "$out" | tee "$out/cache.md"
echo "cache_check: $fail failures"
[ "$fail" = 0 ]
