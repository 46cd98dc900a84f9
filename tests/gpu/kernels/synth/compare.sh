#!/bin/sh
# Compares a synthesized trace with a captured one of the same kernel and
# launch (README.md here): per thread, the records as multisets of
# (instruction, array, offset in the array, width), where a record's array
# is the one whose base is the largest at or below its address and its
# instruction is the rank of its PC among the file's distinct PCs
# (instruction order). --ignore-pc leaves the instruction out (for kernels
# whose compiler reorders a run of loads, e.g. stencil7).
#   compare.sh [--ignore-pc] SYNTH.csv SYNTH_BASES CAPTURED.csv CAPTURED_BASES
# The traces are CSV requests (tid,pc,addr,width,dep; `gpuprobe trace convert`
# writes any trace so); BASES are the arrays' addresses, comma-separated, in
# the kernel's argument order (trace synth prints its own). Exit 0: equal;
# 1: they differ (the first differences are printed); 2: bad usage.
set -eu
ignore_pc=0
if [ "${1-}" = --ignore-pc ]; then ignore_pc=1; shift; fi
[ $# -eq 4 ] || { sed -n '2,14p' "$0" >&2; exit 2; }

# normalize FILE BASES: one line per record, tid,insn,array,offset,width, sorted.
normalize() {
    awk -F, -v bases="$2" -v ignore_pc=$ignore_pc '
    function hex(s,   v, i, c) {
        s = tolower(s); sub(/^0x/, "", s); v = 0
        for (i = 1; i <= length(s); i++) {
            c = index("0123456789abcdef", substr(s, i, 1))
            if (c == 0) { print "not a hex number: " s > "/dev/stderr"; exit 2 }
            v = v * 16 + c - 1
        }
        return v
    }
    BEGIN { nb = split(bases, b, ","); for (i = 1; i <= nb; i++) base[i] = hex(b[i]) }
    FNR == 1 { next }                       # the header
    NR == FNR { if (!($2 in seen)) { seen[$2] = 1; pcs[++np] = hex($2); name[np] = $2 } next }
    FNR == 2 {                              # second pass: rank the PCs once
        for (i = 2; i <= np; i++)
            for (j = i; j > 1 && pcs[j - 1] > pcs[j]; j--) {
                t = pcs[j]; pcs[j] = pcs[j - 1]; pcs[j - 1] = t
                t = name[j]; name[j] = name[j - 1]; name[j - 1] = t
            }
        for (i = 1; i <= np; i++) rank[name[i]] = i - 1
    }
    {
        a = hex($3); arr = 0
        for (i = 1; i <= nb; i++) if (base[i] <= a && (arr == 0 || base[i] > base[arr])) arr = i
        if (arr == 0) { print "address below every base: " $3 > "/dev/stderr"; exit 2 }
        printf "%s,%s,%d,%.0f,%s\n", $1, ignore_pc ? "-" : rank[$2], arr - 1, a - base[arr], $4
    }' "$1" "$1" | LC_ALL=C sort
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
normalize "$1" "$2" >"$tmp/synth"
normalize "$3" "$4" >"$tmp/captured"
if cmp -s "$tmp/synth" "$tmp/captured"; then
    echo "equal: $(wc -l <"$tmp/synth") records"
    exit 0
fi
echo "differ (< synthesized, > captured; tid,instruction,array,offset,width):"
diff "$tmp/synth" "$tmp/captured" | grep '^[<>]' | head -20
exit 1
