#!/usr/bin/env bash
# The issue-order experiment (probes/issue_order.h) on a GPU, from the
# relocatable bundle that `make dist` built elsewhere: `gpuprobe probe
# control-codes` once (its sweeps and experiments, the issue order among
# them: about 2 s on an H100/H200), stored in a database, then the
# experiment checked and summarised by tests/gpu/check_sched.py. Writes to
# $OUT (default tests/gpu/results/latest-sched): control-codes.json (the
# whole document), sched.json (the experiment and its meaning),
# sched-summary.md, sched.db (the store), the kernels' PTX and cubins under
# cubins/ (issue_order.cubin is the one the experiment edited). DEVICE picks
# the GPU (default 0). Exit status 0 when the checks pass (the rule may be
# "not determined": the summary says so), 1 otherwise.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle sched "${1:-}"
out=${OUT:-tests/gpu/results/latest-sched}
mkdir -p "$out"
run_probe control-codes sched || exit 1
python3 tests/gpu/check_sched.py --doc "$out/control-codes.json" "$out"
