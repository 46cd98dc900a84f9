#!/usr/bin/env bash
# The merge experiment: how many requests for one sector in flight the
# hardware turns into one fetch, in an SM's L1 and below it, counted by
# Nsight Compute (a development tool: the daemon never uses it). Needs
# nvcc and ncu. tests/gpu/kernels/merge/merge.cu loads one sector from W
# warps of a block (one block per SM) at once, from B blocks on B SMs;
# for each launch ncu (caches flushed first, its default) counts the
# L1's global-load requests, its sector lookups that missed, the sectors
# it received from the crossbar and the L2's sectors read for the SMs.
# Writes merge-B-W-S.csv (ncu's) and .txt (the kernel's line) per launch,
# and summary.md, to $OUT (default tests/gpu/results/latest-merge).
# `merge.sh --summary DIR` writes DIR/summary.md again without a GPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# blocks warps spread [sm meet]: one SM, 1..32 warps on one sector, and 64
# (two blocks of 32 on SM 0, of 264 at two an SM); 1 warp a block on
# 1..132 SMs, one sector for all; the same 132 SMs, a sector each (control)
launches=("1 1 1" "1 2 1" "1 4 1" "1 8 1" "1 16 1" "1 32 1" "264 32 0 0 2"
          "2 1 0" "8 1 0" "33 1 0" "66 1 0" "132 1 0" "132 1 1" "132 32 0" "132 32 1")
metrics=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__m_xbar2l1tex_read_sectors.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum
if [ "${1:-}" = --summary ]; then
    out=${2:?usage: merge.sh --summary DIR}
else
    out=${OUT:-$here/results/latest-merge}
    mkdir -p "$out"
    export CUDA_VISIBLE_DEVICES=${DEVICE:-0}
    NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu)}
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    nvcc -O2 -arch=sm_90 -o "$tmp/merge" "$here/kernels/merge/merge.cu"
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv >"$out/nvidia-smi.txt" 2>&1 || true
    date -u '+%Y-%m-%d %H:%M UTC' >"$out/date.txt"
    for l in "${launches[@]}"; do
        f=$out/merge-${l// /-}
        "$NCU" --csv --log-file "$f.csv" --kernel-name merge --metrics "$metrics" "$tmp/merge" $l >"$f.txt"
    done
fi
python3 - "$out" "${launches[@]}" <<'PY' >"$out/summary.md"
import csv, os, sys
out, launches = sys.argv[1], sys.argv[2:]
names = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "L1 requests",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "L1 sectors",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum": "L1 lookup misses",
         "l1tex__m_xbar2l1tex_read_sectors.sum": "sectors into the L1s",
         "lts__t_sectors_srcunit_tex_op_read.sum": "L2 sectors read",
         "lts__t_requests_srcunit_tex_op_read.sum": "L2 requests"}
print("# Merging of requests for one sector in flight (ncu counters)\n")
try:
    print(open(f"{out}/nvidia-smi.txt").read().strip().splitlines()[-1] + ", " + open(f"{out}/date.txt").read().strip() + "\n")
except OSError:
    pass
print("| blocks (SMs) | warps a block | sector | blocks not at block 0's instant | " + " | ".join(names.values()) + " |")
print("|---:|---:|---|---:|" + "---:|" * len(names))
for l in launches:
    b, w, s, *on = l.split()
    f = f"{out}/merge-" + l.replace(" ", "-")
    if not os.path.exists(f + ".csv"):
        continue  # a launch this run did not make
    if on:
        b, w = f"{on[1]} on SM {on[0]}", f"{w}"
    vals = {}
    with open(f + ".csv") as fh:
        rows = [r for r in csv.reader(line for line in fh if not line.startswith("=="))]
    head = rows[0]
    for r in rows[1:]:
        d = dict(zip(head, r))
        if d.get("Metric Name") in names:
            vals[d["Metric Name"]] = d["Metric Value"].replace(",", "")
    txt = open(f + ".txt").read().split()
    late = txt[-1] if txt else "?"
    print(f"| {b} | {w} | {'own a block' if s == '1' else 'one for all'} | {late} | "
          + " | ".join(vals.get(k, "?") for k in names) + " |")
PY
cat "$out/summary.md"
