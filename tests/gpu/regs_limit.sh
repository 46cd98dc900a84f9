#!/usr/bin/env bash
# The register-limit experiment (probes/regs_limit.h) on a GPU, from the
# relocatable bundle that `make dist` built elsewhere: every variant of
# `gpuprobe regs-limit --list` in its own process (a variant may fault, which
# ends its CUDA context and logs an Xid on the node), 60 s at most each, then
# tests/gpu/regs_limit_summary.py decides the hypotheses.
# Writes to $OUT (default tests/gpu/results/latest-regs-limit):
# variants.jsonl (one outcome a line), <variant>.err for a variant that
# could not run, summary.md, nvidia-smi.txt, cubins/ (each variant's PTX and
# compiled cubin, before the edit). DEVICE picks the GPU (default 0).
# Exit status 0 when the controls ran and every variant gave an outcome,
# 1 otherwise (the summary says which).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle regs-limit "${1:-}"
out=${OUT:-tests/gpu/results/latest-regs-limit}
mkdir -p "$out/cubins"
: >"$out/variants.jsonl"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv >"$out/nvidia-smi.txt" 2>&1 || true
t0=$(date +%s.%N)
n=0
for v in $("$bin" regs-limit --list); do
    n=$((n + 1))
    if timeout 60 "$bin" regs-limit --device "${DEVICE:-0}" --variant "$v" \
            --keep-cubins "$out/cubins/$v" >>"$out/variants.jsonl" 2>"$out/$v.err"; then
        rm -f "$out/$v.err"
    else
        echo "regs-limit $v: did not run: $(cat "$out/$v.err")"
    fi
done
echo "regs-limit: $n variants, $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s wall"
python3 "$(dirname "$0")/regs_limit_summary.py" "$out/variants.jsonl" "$n" >"$out/summary.md"
rc=$?
cat "$out/summary.md"
exit $rc
