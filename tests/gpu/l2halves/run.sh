#!/usr/bin/env bash
# The L2 partitions, exploratory (l2halves.cu says what and why), on the GPU
# machine: builds the probe with nvcc, keeps its SASS, runs it, and profiles
# a few of the cache check's kernels with ncu's L2 counters split by source
# unit (the SMs' own requests against those arriving from the other
# partition over the L2 fabric), from the `make dist` bundle.
#   tests/gpu/l2halves/run.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../../.."
. tests/gpu/lib.sh
out=${1:?OUTDIR}
mkdir -p "$out"
unpack_bundle l2halves
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.max.sm --format=csv,noheader > "$out/gpu.csv"
"$NVCC" -arch=sm_90 -O2 -o "$work/l2halves" tests/gpu/l2halves/l2halves.cu || exit 1
"${NVCC%/nvcc}/cuobjdump" -sass -fun probe "$work/l2halves" > "$out/probe.sass" 2>&1
"$work/l2halves" "$out" "${WARMER:-0}" > "$out/probe.txt" 2>&1; echo "probe rc $?"
tail -n 3 "$out/probe.txt"

# ncu's L2 counters by source unit, where this ncu has them
"$NCU" --query-metrics --chip gh100 > "$work/metrics.txt" 2>&1
want="lts__t_sectors_op_read lts__t_sectors_op_read_lookup_hit lts__t_sectors_op_read_lookup_miss
lts__t_sectors_srcunit_tex_op_read lts__t_sectors_srcunit_tex_op_read_lookup_hit lts__t_sectors_srcunit_tex_op_read_lookup_miss
lts__t_sectors_srcunit_ltcfabric_op_read lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit lts__t_sectors_srcunit_ltcfabric_op_read_lookup_miss
lts__t_sectors_srcunit_ltcfabric lts__t_sectors_srcnode_gpc_op_read lts__t_sectors_srcnode_gpc_op_read_lookup_hit
lts__t_requests_srcunit_ltcfabric lts__ltcfabric2lts_cycles_active dram__sectors_read lts__t_sector_op_read_hit_rate lts__t_sector_hit_rate"
grep -o '^lts__[a-z0-9_]*fabric[a-z0-9_]*\|^lts__t_sectors_srcunit_[a-z0-9_]*' "$work/metrics.txt" | sort -u > "$out/ncu-fabric-metrics.txt"
m=
for w in $want; do
    if grep -q "^$w " "$work/metrics.txt"; then
        case $w in *rate) m=$m,$w.pct ;; *cycles_active) m=$m,$w.avg ;; *) m=$m,$w.sum ;; esac
    fi
done
m=${m#,}
echo "metrics: $m"
sx=tests/fixtures/ptx/synth
prof() {
    local case=$1 ptx=$2 grid=$3 block=$4
    shift 4
    "$NCU" --csv --log-file "$out/$case.ncu.csv" --launch-skip 2 --launch-count 1 --metrics "$m" \
        "$bin" trace capture --ptx "$ptx" --grid "$grid" --block "$block" "$@" -o "$work/$case.trace" \
        > /dev/null 2> "$work/$case.err" || echo "FAIL $case: $(tail -n2 "$work/$case.err")"
}
n=128; mm=$((n * n * 4))
prof matmul-tiled-128 $sx/matmul-tiled.ptx 8,8 16,16 --param 0=buf:$mm:randf:1 --param 1=buf:$mm:randf:2 \
    --param 2=buf:$mm --param 3=$n --param 4=$n --param 5=$n
prof matmul-naive-128 $sx/matmul-naive.ptx 8,8 16,16 --param 0=buf:$mm:randf:1 --param 1=buf:$mm:randf:2 \
    --param 2=buf:$mm --param 3=$n --param 4=$n --param 5=$n
n=256; mm=$((n * n * 4))
prof matmul-tiled-256 $sx/matmul-tiled.ptx 16,16 16,16 --param 0=buf:$mm:randf:1 --param 1=buf:$mm:randf:2 \
    --param 2=buf:$mm --param 3=$n --param 4=$n --param 5=$n
s=$((64 * 64 * 64 * 4))
prof stencil7-64 $sx/stencil7.ptx 4,4 16,16 --param 0=buf:$s:randf:5 --param 1=buf:$s --param 2=64 --param 3=64 --param 4=64
prof stream-1M $sx/stream.ptx 4096 256 --param 0=buf:4194304:randf:7 --param 1=buf:4194304 --param 2=1048576
for f in "$out"/*.ncu.csv; do
    echo "== $(basename "$f" .ncu.csv)"
    grep '^"' "$f" | python3 -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    print("  %-60s %s" % (r["Metric Name"], r["Metric Value"]))'
done
