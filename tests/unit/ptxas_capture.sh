#!/usr/bin/env bash
# The capture rewriter against NVIDIA's assembler: every PTX fixture of
# tests/fixtures/ptx/capture/ (nvcc's and the project's own), each kernel of
# it, rewritten in both modes by `gpuprobe trace capture --emit-ptx`, must
# assemble with `ptxas -arch=` its own .target (sm_90, sm_90a); so must the recording rewrite of every
# other kernel the project commits as PTX (tests/fixtures/ptx/*.ptx and
# tests/fixtures/cubins/*/*.ptx: the probes' generated kernels). Skipped (exit 0, "SKIP") when ptxas is
# not installed: the GPU nodes and CI need no toolkit.
# usage: tests/unit/ptxas_capture.sh [GPUPROBE]   (default build/test/gpuprobe)
set -uo pipefail
bin=${1:-build/test/gpuprobe}
ptxas=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ ! -x "$ptxas" ]; then echo "SKIP ptxas_capture: no ptxas"; exit 0; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
pass=0 fail=0
for f in tests/fixtures/ptx/capture/*.ptx tests/fixtures/ptx/*.ptx tests/fixtures/cubins/*/*.ptx; do
    [ -f "$f" ] || continue
    modes=record; case $f in */capture/*) modes="record count" ;; esac
    arch=$(sed -n 's/^\.target \(sm_[0-9a-z]*\).*/\1/p' "$f" | head -n1) # sm_90a stays sm_90a
    entries=$(sed -n 's/^[.a-z ]*\.entry \([A-Za-z_$][A-Za-z0-9_$]*\).*/\1/p' "$f")
    for e in $entries; do
        for mode in $modes; do
            flag=""; [ $mode = count ] && flag=--emit-count
            out="$work/$(basename "$f" .ptx).$e.$mode.ptx"
            if "$bin" trace capture --ptx "$f" --entry "$e" --emit-ptx "$out" $flag > /dev/null &&
                "$ptxas" -arch="${arch:-sm_90}" "$out" -o "$work/x.cubin" 2> "$work/err" &&
                ! grep -qi error "$work/err"; then
                pass=$((pass + 1))
            else
                echo "FAIL $f $e $mode: $(head -3 "$work/err" 2>/dev/null)"; fail=$((fail + 1))
            fi
        done
    done
done
echo "ptxas_capture: $pass assembled, $fail failed ($("$ptxas" --version | tail -1))"
[ "$fail" = 0 ]
