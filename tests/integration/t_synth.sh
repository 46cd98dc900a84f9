#!/usr/bin/env bash
# Proves `gpuprobe trace synth` end to end (docs/trace-synth.md): the help lists every pattern; a tiled matrix multiply with partial edge tiles synthesized as binary and as CSV agree, the format told from OUT's name (*.csv, *.bin) as trace sort and convert tell it when --out-format is not given, (through trace convert) and sort with the block size taken from the binary header (a CSV file's named on stderr, its sort with it equal to the binary's), the records counted and OUT's size printed before writing (the binary file's to the byte, a CSV file's at most), records in equal to the records written and, rows being 128-byte aligned, exactly one L1 request per 16 records (line128); the untiled kernels need more requests than the tiled one and A x B^T the most; a FIFO given as OUT is written in place, not replaced; bad patterns, sizes, tiles and blocks are refused with status 2, an OUT larger than the space free on its file system (256 TiB, 2^66 bytes, 6 MiB on a 64 KiB tmpfs) with status 2 before anything is written, and an unwritable OUT (a missing folder, /dev/full, a full tmpfs with --force) with status 1 and the reason, leaving no file; and tests/gpu/kernels/synth/compare.sh accepts the trace moved to other bases and PCs and shuffled, and rejects it with one address changed or one record dropped.
. "$(dirname "$0")/lib.sh"

COMPARE=$REPO/tests/gpu/kernels/synth/compare.sh

# synth ARGS...: gpuprobe trace synth ARGS; sets RC (stdout in synth.out, stderr in synth.err).
synth() {
    RC=0
    timeout 60 "$GPUPROBE" trace synth "$@" >synth.out 2>synth.err || RC=$?
}
synth_ok() {
    synth "$@"
    [ "$RC" -eq 0 ] || fail "gpuprobe trace synth $* exited $RC: $(head -c 400 synth.err)"
}
# refused STATUS ARGS...: exits STATUS with one line on stderr, and leaves no out.* file.
refused() {
    local want=$1
    shift
    synth "$@"
    [ "$RC" -eq "$want" ] || fail "gpuprobe trace synth $* exited $RC, expected $want: $(cat synth.err)"
    [ "$(wc -l <synth.err)" -eq 1 ] || fail "gpuprobe trace synth $*: expected one line on stderr: $(cat synth.err)"
    if ls out.* >/dev/null 2>&1; then fail "gpuprobe trace synth $* left $(ls out.*)"; fi
}
# sorted FILE ARGS...: sorts FILE; sets IN, OUT_REQ (records in, requests out).
sorted() {
    local f=$1
    shift
    timeout 60 "$GPUPROBE" trace sort "$f" -o sorted.bin --out-format bin --quiet --summary-json sum.json "$@" \
        2>sort.err || fail "trace sort $f $*: $(head -c 400 sort.err)"
    IN=$(jq -r .records_in sum.json)
    OUT_REQ=$(jq -r .requests_out sum.json)
}
# records, bytes: the record count and OUT's size trace synth printed before writing.
records() { sed -n 's/.*; \([0-9]*\) records, .*/\1/p' synth.err; }
bytes() { sed -n 's/.* records, \(up to \)\{0,1\}\([0-9]*\) bytes (.*/\2/p' synth.err; }

# ---- help ----
synth_ok --help
for p in matmul-naive matmul-naive-bt matmul-tiled matmul-tiled-bt transpose-naive transpose-tiled \
         stencil7 reduce stream strided; do
    grep -q "^  $p " synth.out || fail "trace synth --help does not list $p"
done
# (read whole first: grep -q leaves at the match, and the help's writer would
# then die of SIGPIPE, failing the pipeline under pipefail)
help=$(timeout 10 "$GPUPROBE" trace --help)
grep -q "trace synth" <<<"$help" || fail "trace --help does not mention trace synth"

# ---- binary and CSV agree; the sorter reads the block size from the header ----
synth_ok --pattern matmul-tiled --size 40 --tile 16 -o tiled.bin
n_bin=$(records)
grep -q "grid 3x3 block 16x16" synth.err || fail "matmul-tiled 40: $(cat synth.err)"
# the size printed is the binary file's, to the byte
[ "$n_bin" = 11200 ] && [ "$(bytes)" = "$(stat -c %s tiled.bin)" ] || fail "matmul-tiled 40: $(cat synth.err) for $(stat -c %s tiled.bin) bytes"
synth_ok --pattern matmul-tiled --size 40 --tile 16 -o tiled.csv --out-format csv
[ "$(records)" = "$n_bin" ] || fail "bin and csv record counts differ: $n_bin, $(records)"
[ "$(($(wc -l <tiled.csv) - 1))" = "$n_bin" ] || fail "tiled.csv does not hold $n_bin records"
# a CSV file's at most: its lines' lengths vary with the numbers in them
grep -q "records, up to [0-9]* bytes" synth.err && [ "$(stat -c %s tiled.csv)" -le "$(bytes)" ] ||
    fail "tiled.csv: $(stat -c %s tiled.csv) bytes against $(cat synth.err)"
timeout 30 "$GPUPROBE" trace convert tiled.bin -o back.csv --out-format csv || fail "trace convert tiled.bin"
cmp -s back.csv tiled.csv || fail "trace convert of the binary synth differs from the CSV synth"
sorted tiled.bin
[ "$IN" = "$n_bin" ] || fail "sort read $IN records of $n_bin"
[ "$(jq -r .params.threads_per_block sum.json)" = 256 ] || fail "the sort did not take 256 threads per block from the header"
# a CSV file has no block size: stderr says which to give the sorter (even with --quiet), and
# sorting with it gives the binary's order
grep -q "threads-per-block" synth.err && fail "a 256-thread block needs no --threads-per-block: $(cat synth.err)"
synth_ok --pattern reduce --size 1000 --block 64 -o red.bin --quiet
synth_ok --pattern reduce --size 1000 --block 64 -o red.csv --out-format csv --quiet
grep -q -- "--threads-per-block 64" synth.err || fail "the CSV synth did not name its block size: $(cat synth.err)"
sorted red.bin
cp sorted.bin red.sorted
sorted red.csv --threads-per-block 64
cmp -s sorted.bin red.sorted || fail "the CSV reduce sorted with --threads-per-block 64 differs from the binary's sort"

# ---- with no --out-format the name says the format, as for trace sort and
# convert: *.csv is CSV, *.bin binary, any other name the default, binary ----
synth_ok --pattern matmul-tiled --size 40 --tile 16 -o named.csv
[ "$(head -n1 named.csv)" = "tid,pc,addr,width,dep,op" ] ||
    fail "trace synth -o named.csv did not write CSV: starts $(head -c 8 named.csv | od -An -c)"
cmp -s named.csv tiled.csv || fail "trace synth -o named.csv differs from --out-format csv"
synth_ok --pattern matmul-tiled --size 40 --tile 16 -o named.trace
cmp -s named.trace tiled.bin || fail "trace synth -o named.trace is not the binary file"
synth_ok --pattern matmul-tiled --size 40 --tile 16 -o forced.csv --out-format bin
cmp -s forced.csv tiled.bin || fail "--out-format bin -o forced.csv is not the binary file"
timeout 30 "$GPUPROBE" trace convert tiled.bin -o conv.csv || fail "trace convert tiled.bin -o conv.csv"
cmp -s conv.csv tiled.csv || fail "trace convert -o conv.csv differs from the CSV synth"

# ---- coalescing: 64 floats a row, 16x16 tiles: one 128-byte line per half-warp ----
synth_ok --pattern matmul-tiled --size 64 -o t.bin
sorted t.bin --arch fermi
tiled_out=$OUT_REQ
[ $((IN % 16)) -eq 0 ] && [ "$OUT_REQ" -eq $((IN / 16)) ] || fail "matmul-tiled 64: $IN records gave $OUT_REQ requests, expected $((IN / 16))"
synth_ok --pattern matmul-naive --size 64 -o n.bin
sorted n.bin --arch fermi
naive_out=$OUT_REQ
synth_ok --pattern matmul-naive-bt --size 64 -o bt.bin
sorted bt.bin --arch fermi
bt_out=$OUT_REQ
[ "$tiled_out" -lt "$naive_out" ] && [ "$naive_out" -lt "$bt_out" ] ||
    fail "requests out: tiled $tiled_out, naive $naive_out, naive-bt $bt_out: expected increasing"

# ---- a FIFO is written in place ----
mkfifo pipe
cat pipe >from_pipe &
reader=$!
synth_ok --pattern stream --size 1000 -o pipe --out-format csv --quiet
wait "$reader"
[ -p pipe ] || fail "the FIFO given as OUT was replaced"
synth_ok --pattern stream --size 1000 -o - --out-format csv --quiet
cmp -s synth.out from_pipe || fail "what went through the FIFO differs from standard output"

# ---- refusals ----
refused 2 --pattern nosuch --size 4 -o out.bin
refused 2 --pattern stream --size 4 -o ''
refused 2 --pattern matmul-naive -o out.bin
refused 2 --pattern matmul-naive --size 4,4 -o out.bin
refused 2 --pattern matmul-naive --size 4 --tile 16 -o out.bin
refused 2 --pattern matmul-tiled --size 4 --tile 64 -o out.bin
refused 2 --pattern matmul-tiled --size 4 --block 8x8 -o out.bin
refused 2 --pattern stream --size 4 --block 32x2 -o out.bin
refused 2 --pattern stream --size 0 -o out.bin
refused 2 --pattern stream --size 4 --elem-size 3 -o out.bin
refused 2 --pattern stream --size 4 --out-format json -o out.bin
refused 2 --pattern stream --size 4
refused 1 --pattern stream --size 4 -o nodir/out.bin
assert_match "$(cat synth.err)" "nodir/out\.bin.*No such file or directory" "the reason OUT in a missing folder is refused"

# ---- counted before writing, every pattern: the count is the records written ----
for p in matmul-naive matmul-naive-bt matmul-tiled matmul-tiled-bt transpose-naive transpose-tiled \
         stencil7 reduce stream strided; do
    synth_ok --pattern $p --size 37 -o count.bin
    n=$(records)
    [ -n "$n" ] && [ "$(bytes)" = "$(stat -c %s count.bin)" ] && [ $((128 + 32 * n)) = "$(stat -c %s count.bin)" ] ||
        fail "$p 37: $(cat synth.err) for $(stat -c %s count.bin) bytes"
done

# ---- an OUT larger than the space free on its file system: refused before writing ----
# (ulimit: should the refusal be missing, the attempt stops at 4 MiB, not a full disk)
(ulimit -f 4096 && refused 2 --pattern matmul-naive --size 16384 -o out.bin)
assert_match "$(cat synth.err)" "^gpuprobe trace synth: out\.bin would take $((128 + 32 * 16384 * 16384 * 32769)) bytes \($((16384 * 16384 * 32769)) records, 256 TiB\): more than the [0-9.]+ [KMGTPE]?i?B[a-z]* free on the file system of $WORK; give a smaller --size, or --force to write it anyway\$" \
    "the reason 256 TiB is refused"
(ulimit -f 4096 && refused 2 --pattern matmul-naive --size 1048576 -o out.csv)
assert_match "$(cat synth.err)" "out\.csv would take more than 2\^64 bytes: give a smaller --size" "the reason 2^66 bytes are refused"
if small_fs_usable; then
    on_small_fs 64 '"$GPUPROBE" trace synth --pattern stream --size 100000 -o out.bin 2>"$WORK/small.err"
        echo "status $?"; ls -A' >small.out || fail "on_small_fs: $(cat small.out)"
    [ "$(cat small.out)" = "status 2" ] || fail "synth of 6 MiB into 64 KiB: not status 2 with nothing left: $(cat small.out)"
    assert_match "$(cat small.err)" "^gpuprobe trace synth: out\.bin would take 6400128 bytes \(200000 records, 6\.1 MiB\): more than the [0-9.]+ KiB free on the file system of $WORK/small\.[A-Za-z0-9]+; give a smaller --size, or --force to write it anyway\$" \
        "the reason 6 MiB are refused on a 64 KiB tmpfs"
    on_small_fs 64 '"$GPUPROBE" trace synth --pattern stream --size 100 -o out.csv 2>"$WORK/small.err"
        echo "status $?"; ls -A' >small.out || fail "on_small_fs: $(cat small.out)"
    [ "$(tr '\n' ' ' <small.out)" = "status 0 out.csv " ] || fail "synth of 2 KiB into 64 KiB: $(cat small.out) $(cat small.err)"
fi

# ---- a full disk: the reason, and nothing left behind ----
# (a device is not checked for room: what it takes is its own affair) without
# --quiet the count is on stderr before writing starts, then the reason
synth --pattern stream --size 100000 -o /dev/full
[ "$RC" = 1 ] && [ "$(wc -l <synth.err)" = 2 ] && [ "$(records)" = 200000 ] &&
    grep -q "^gpuprobe trace synth: cannot write /dev/full" <(sed -n 2p synth.err) ||
    fail "synth to /dev/full: exit $RC, stderr: $(cat synth.err)"
for f in bin csv; do
    refused 1 --pattern stream --size 100000 -o /dev/full --out-format $f --quiet
    assert_match "$(cat synth.err)" "cannot write /dev/full: .*No space left on device" "synth --out-format $f to /dev/full"
done
if small_fs_usable; then
    for f in bin csv; do
        # prints the status, then the files left
        F=$f on_small_fs 64 '"$GPUPROBE" trace synth --pattern stream --size 100000 -o "out.$F" --quiet \
            --force 2>"$WORK/small.err"; echo "status $?"; ls -A' >small.out || fail "on_small_fs: $(cat small.out)"
        [ "$(cat small.out)" = "status 1" ] || fail "synth to a full tmpfs ($f): not status 1 with nothing left: $(cat small.out)"
        [ "$(wc -l <small.err)" -eq 1 ] || fail "synth to a full tmpfs ($f): not one line on stderr: $(cat small.err)"
        assert_match "$(cat small.err)" "^gpuprobe trace synth: cannot write out\.$f: .*No space left on device\$" "synth to a full tmpfs ($f)"
    done
fi

# ---- compare.sh: the comparison a captured trace will get ----
synth_ok --pattern matmul-tiled --size 20 --tile 16 -o small.csv --out-format csv
bases=$(sed -n 's/.*; A@\(0x[0-9a-f]*\), B@\(0x[0-9a-f]*\), C@\(0x[0-9a-f]*\);.*/\1,\2,\3/p' synth.err)
[ -n "$bases" ] || fail "no array bases in: $(cat synth.err)"
IFS=, read -r a b c <<<"$bases"
# "captured": arrays at other addresses, PCs at 0x2000 + 3 x pc, records shuffled.
moved=0x7f0000000000,0x7f0000100000,0x7f0000300000
{
    head -1 small.csv
    tail -n +2 small.csv | while IFS=, read -r tid pc addr width dep; do
        if ((addr >= c)); then na=$((addr - c + 0x7f0000300000))
        elif ((addr >= b)); then na=$((addr - b + 0x7f0000100000))
        else na=$((addr - a + 0x7f0000000000)); fi
        printf '%s,0x%x,0x%x,%s,%s\n' "$tid" $((0x2000 + 3 * pc)) "$na" "$width" "$dep"
    done | shuf
} >captured.csv
"$COMPARE" small.csv "$bases" captured.csv "$moved" >cmp.out || fail "compare.sh: $(cat cmp.out)"
grep -q "^equal: $(($(wc -l <small.csv) - 1)) records" cmp.out || fail "compare.sh: $(cat cmp.out)"
# one address changed (by one element), then one record dropped
line=$(sed -n 40p captured.csv)
IFS=, read -r tid pc addr width dep <<<"$line"
sed "40s/.*/$tid,$pc,$(printf '0x%x' $((addr + 4))),$width,$dep/" captured.csv >bad_addr.csv
RC=0; "$COMPARE" small.csv "$bases" bad_addr.csv "$moved" >cmp.out || RC=$?
[ "$RC" -eq 1 ] || fail "compare.sh accepted a changed address (exit $RC): $(cat cmp.out)"
sed 40d captured.csv >dropped.csv
RC=0; "$COMPARE" small.csv "$bases" dropped.csv "$moved" >cmp.out || RC=$?
[ "$RC" -eq 1 ] || fail "compare.sh accepted a dropped record (exit $RC): $(cat cmp.out)"
RC=0; "$COMPARE" small.csv "$bases" >cmp.out 2>&1 || RC=$?
[ "$RC" -eq 2 ] || fail "compare.sh with two arguments exited $RC"
