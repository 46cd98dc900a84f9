#!/bin/sh
# Builds and runs the libFuzzer targets of the trace readers, then keeps a
# minimized corpus. See tests/fuzz/README.md.
#
#   tests/fuzz/run.sh [NAME...]      NAME: csv nvbit accelsim pcflags (default: all)
#
# Environment:
#   FUZZ_SECONDS   how long each target runs (default 300)
#   FUZZ_PARALLEL  targets run at once, 1 or 2 (default 1)
#   FUZZ_MAX_LEN   largest input libFuzzer makes (default 8192)
#   FUZZ_CC        the compiler (default clang; needs -fsanitize=fuzzer)
#
# Each target is built with clang -fsanitize=fuzzer,address,undefined against
# the trace/*.c sources it needs, into build/fuzz/. It runs over its corpus
# tests/fuzz/corpus/NAME/ (seeded from tests/fixtures/traces/ when empty),
# writing new inputs to build/fuzz/work/NAME/ and any crash to
# build/fuzz/artifacts/. Afterwards the corpus, the new inputs and the seeds
# are merged (-merge=1) into a minimized tests/fuzz/corpus/NAME/. One line per
# target reports seconds, executions, corpus size and the verdict; the exit
# status is non-zero if any target failed to build or found a crash.
set -eu

cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-300}
PARALLEL=${FUZZ_PARALLEL:-1}
MAX_LEN=${FUZZ_MAX_LEN:-8192}
CC_FUZZ=${FUZZ_CC:-clang}
OUT=build/fuzz
FIX=tests/fixtures/traces
CFLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -I. -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"

case $PARALLEL in 1 | 2) ;; *) echo "FUZZ_PARALLEL must be 1 or 2" >&2; exit 2 ;; esac

# The library sources and the seed fixtures of each target.
sources() {
    case $1 in
    csv) echo "trace/record.c trace/scan.c trace/csv.c trace/pcflags.c" ;;
    pcflags) echo "trace/record.c trace/scan.c trace/pcflags.c" ;;
    nvbit) echo "trace/record.c trace/scan.c trace/nvbit.c trace/pcflags.c" ;;
    accelsim) echo "trace/record.c trace/scan.c trace/accelsim.c trace/nvbit.c trace/pcflags.c" ;;
    *) return 1 ;;
    esac
}

seeds() {
    case $1 in
    csv) echo "$FIX/sample.csv" ;;
    pcflags) echo "$FIX/pcflags.csv" ;;
    nvbit) echo "$FIX/nvbit_memtrace.txt" ;;
    accelsim) echo "$FIX/kernel-1.trace $FIX/kernel-1.traceg" ;;
    esac
}

build() {
    name=$1
    mkdir -p "$OUT"
    # shellcheck disable=SC2046
    "$CC_FUZZ" $CFLAGS -o "$OUT/fuzz_trace_$name" "tests/fuzz/fuzz_trace_$name.c" $(sources "$name")
}

count_files() { find "$1" -type f | wc -l | tr -d ' '; }
count_bytes() { du -sb "$1" | cut -f1; }

# Runs one target; its summary goes to $OUT/NAME.summary.
run_one() {
    name=$1
    bin=$OUT/fuzz_trace_$name
    corpus=tests/fuzz/corpus/$name
    work=$OUT/work/$name
    seed=$OUT/seeds/$name
    log=$OUT/$name.log
    mkdir -p "$corpus" "$work" "$seed" "$OUT/artifacts"
    # shellcheck disable=SC2046
    cp $(seeds "$name") "$seed/"
    verdict=ok
    start=$(date +%s)
    if ! "$bin" -max_total_time="$SECONDS_EACH" -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 \
        -dict="tests/fuzz/dict/$name.dict" -artifact_prefix="$OUT/artifacts/$name-" \
        -print_final_stats=1 "$work" "$corpus" "$seed" >"$log" 2>&1; then
        verdict="CRASH (see $log and $OUT/artifacts/$name-*)"
    fi
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    merged=$OUT/merged/$name
    rm -rf "$merged"
    mkdir -p "$merged"
    if "$bin" -merge=1 -max_len="$MAX_LEN" "$merged" "$corpus" "$work" "$seed" >"$OUT/$name.merge.log" 2>&1; then
        find "$corpus" -type f -delete
        cp "$merged"/* "$corpus"/ 2>/dev/null || true
    else
        verdict="$verdict; merge failed (see $OUT/$name.merge.log)"
    fi
    printf '%-9s %5ss  %12s execs  corpus %4s files %8s bytes  %s\n' "$name" "$took" "${execs:-?}" \
        "$(count_files "$corpus")" "$(count_bytes "$corpus")" "$verdict" >"$OUT/$name.summary"
    case $verdict in ok) return 0 ;; *) return 1 ;; esac
}

names=${*:-csv nvbit accelsim pcflags}
for n in $names; do
    sources "$n" >/dev/null || { echo "unknown target $n" >&2; exit 2; }
    build "$n" || { echo "building fuzz_trace_$n failed" >&2; exit 1; }
done

status=0
running=0
for n in $names; do
    if [ "$PARALLEL" = 2 ]; then
        run_one "$n" &
        running=$((running + 1))
        if [ "$running" = 2 ]; then
            wait || status=1
            running=0
        fi
    else
        run_one "$n" || status=1
    fi
done
wait || status=1

echo "== fuzz (${SECONDS_EACH}s each)"
for n in $names; do
    cat "$OUT/$n.summary"
    grep -q ' ok$' "$OUT/$n.summary" || status=1
done
exit $status
