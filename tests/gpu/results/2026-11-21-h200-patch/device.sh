#!/usr/bin/env bash
# What was run on the GPU machine for this capture (from the repository root,
# with dist/*.tar.gz and build/test/gpuprobe carried over): the worker alone
# for each edit of test-bad-edit, then run.sh section 7's check through a
# test daemon. Everything lands in $OUT/r and is packed into one tarball.
set -u
r=$OUT/r; mkdir -p "$r"
work=$(mktemp -d); tar -C "$work" -xzf dist/gpuprobe-*.tar.gz
export LD_LIBRARY_PATH=$(echo "$work"/*/lib)
nvidia-smi -L > "$r/nvidia-smi.txt" 2>&1
bin=build/test/gpuprobe
for p in '{"edit":"none"}' '{"edit":"opcode"}' '{"edit":"opcode","opcode":4095}' '{"edit":"address"}'; do
    echo "params $p" >> "$r/worker.txt"
    timeout 25 "$bin" worker --kind test-bad-edit --params "$p" --device 0 >> "$r/worker.txt" 2>&1
    echo "exit $?" >> "$r/worker.txt"
done
echo tok > "$work/tokens"
"$bin" serve --listen 127.0.0.1:0 --db "$work/p.db" --token-file "$work/tokens" 2> "$work/d.log" &
d=$!
port=""
for _ in $(seq 200); do
    port=$(sed -n 's/.*msg=listening addr=[^ ]*:\([0-9]*\).*/\1/p' "$work/d.log" | head -n1)
    [ -n "$port" ] && curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
done
python3 tests/gpu/check_bad_edit.py "http://127.0.0.1:$port" tok "$r/bad-edit.json" > "$r/check.txt" 2>&1
echo "check exit $?" >> "$r/check.txt"
kill -TERM "$d"; wait "$d"; echo "daemon exit $?" >> "$r/check.txt"
cp "$work/d.log" "$r/patch-daemon.log"
tar -C "$OUT" -czf "$OUT/patch-results.tar.gz" r && rm -rf "$r"
cat "$OUT"/../r/worker.txt 2>/dev/null; tar -xzOf "$OUT/patch-results.tar.gz" r/worker.txt r/check.txt
