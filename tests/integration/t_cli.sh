#!/usr/bin/env bash
# Proves the command line: --version, --help everywhere, and one-line errors with a non-zero status for bad use.
. "$(dirname "$0")/lib.sh"

# run_cli ARGS...: runs gpuprobe (CLI_TIMEOUT s, default 10, at most); sets RC, OUT and ERR.
run_cli() {
    RC=0
    timeout "${CLI_TIMEOUT:-10}" "$GPUPROBE" "$@" >cli.out 2>cli.err || RC=$?
    OUT=$(cat cli.out) ERR=$(cat cli.err)
}

# quick_failure WHAT: the last run failed by itself (not by the 10 s timeout).
quick_failure() {
    if [ "$RC" -eq 0 ] || [ "$RC" -eq 124 ]; then
        fail "$1 exited $RC (124: still running when stopped), expected a quick failure; stderr: $(head -c 300 cli.err)"
    fi
}

# refuses ARGS...: non-zero status and exactly one non-empty line on stderr.
refuses() {
    run_cli "$@"
    quick_failure "gpuprobe $*"
    if [ -z "$ERR" ] || [ "$(wc -l <cli.err)" -gt 1 ]; then
        fail "gpuprobe $*: expected one line on stderr, got: $ERR"
    fi
}

run_cli --version
[ "$RC" -eq 0 ] || fail "--version exited $RC"
assert_match "$OUT" "$(tr -d '[:space:]' <"$REPO/VERSION" | sed 's/\./\\./g')" "--version output"

for args in --help "serve --help" "devices --help"; do
    # shellcheck disable=SC2086
    run_cli $args
    [ "$RC" -eq 0 ] || fail "gpuprobe $args exited $RC: $ERR"
    [ -n "$OUT$ERR" ] || fail "gpuprobe $args printed nothing"
done
run_cli --help
assert_match "$OUT$ERR" "serve" "--help"
assert_match "$OUT$ERR" "devices" "--help"
run_cli serve --help
assert_match "$OUT$ERR" "--listen" "serve --help"
assert_match "$OUT$ERR" "--token-file" "serve --help"

refuses nosuch

# The register-limit experiment: its variants listed (the controls first),
# bad use refused, and a variant that cannot run (no such name; no GPU here)
# a one-line reason with status 1.
run_cli regs-limit --list
[ "$RC" -eq 0 ] || fail "regs-limit --list exited $RC: $ERR"
[ "$(head -n2 cli.out | tr '\n' ' ')" = "wide.none small.none " ] || fail "regs-limit --list: controls not first: $(head -n2 cli.out)"
[ "$(sort -u cli.out | wc -l)" -eq "$(wc -l <cli.out)" ] || fail "regs-limit --list repeats a name"
assert_match "$OUT" "small-c255\.iadd3\.rd\.count-2" "regs-limit --list"
refuses regs-limit --device 0
refuses regs-limit --variant wide.none --bogus
refuses regs-limit --device 0 --variant nosuch
[ "$RC" -eq 1 ] || fail "regs-limit with an unknown variant exited $RC, expected 1"
assert_match "$ERR" "no variant nosuch" "the reason for an unknown variant"
# Its summary names the hypothesis of the world that made the outcomes
# (tests/gpu/regs_limit_worlds.py), and exits 1 when a variant is missing.
"$GPUPROBE" regs-limit --list >names.txt
n=$(wc -l <names.txt)
for w in a b; do
    python3 "$REPO/tests/gpu/regs_limit_worlds.py" $w <names.txt >world-$w.jsonl
    python3 "$REPO/tests/gpu/regs_limit_summary.py" world-$w.jsonl "$n" >summary-$w.md ||
        fail "regs_limit_summary.py on world $w exited non-zero"
done
assert_match "$(cat summary-a.md)" "\(a\) SUPPORTED" "the summary of world a"
assert_match "$(cat summary-a.md)" "\(b\) not needed" "the summary of world a"
assert_match "$(cat summary-b.md)" "\(a\) REJECTED" "the summary of world b"
assert_match "$(cat summary-b.md)" "\(b\) SUPPORTED.*the register numbers themselves" "the summary of world b"
assert_match "$(cat summary-b.md)" "declared count honoured" "the summary of world b"
head -n 10 world-a.jsonl >short.jsonl
python3 "$REPO/tests/gpu/regs_limit_summary.py" short.jsonl "$n" >/dev/null &&
    fail "regs_limit_summary.py accepted 10 of $n variants"
refuses serve --bogus
refuses devices --bogus
refuses serve --listen
refuses serve --listen 127.0.0.1:99999 --db "$DB"
refuses serve --listen not-an-address --db "$DB"

# Bad configuration files are named in the reason.
refuses serve --config "$WORK/missing.conf" --db "$DB"
printf 'cpu_workers = lots\n' >bad.conf
refuses serve --config bad.conf --db "$DB"
assert_match "$ERR" "bad.conf" "the reason for a bad config value"
printf 'no_such_key = 1\n' >unknown.conf
refuses serve --config unknown.conf --db "$DB"
assert_match "$ERR" "no_such_key" "the reason for an unknown config key"

# A database that cannot be opened stops serve with a reason.
run_cli serve --listen 127.0.0.1:0 --db /proc/x/y.db --token-file "$TOKEN_FILE"
quick_failure "serve with --db /proc/x/y.db"
assert_match "$ERR" "/proc/x/y\.db" "the reason for an unusable database"

# A port already taken stops the second daemon with a reason.
start_daemon
port=${BASE_URL##*:}
CLI_TIMEOUT=4 run_cli serve --listen "127.0.0.1:$port" --db "$WORK/other.db" --token-file "$TOKEN_FILE"
quick_failure "a second daemon on port $port"
[ -n "$ERR" ] || fail "a second daemon on port $port gave no reason"
# the address asked for and the system's reason, not libmicrohttpd's "port 0"
assert_match "$ERR" "cannot listen on 127\.0\.0\.1:$port: Address already in use" "the reason for a port in use"
[[ $ERR != *"port 0"* ]] || fail "a second daemon on port $port: $ERR"
# and it leaves nothing behind: the database it made, its lock
if ls "$WORK"/other.db* >/dev/null 2>&1; then fail "a daemon that could not listen left $(ls "$WORK"/other.db*)"; fi
# one that was there already stays
sqlite3 "$WORK/kept.db" 'CREATE TABLE mine(x); INSERT INTO mine VALUES (42)'
CLI_TIMEOUT=4 run_cli serve --listen "127.0.0.1:$port" --db "$WORK/kept.db" --token-file "$TOKEN_FILE"
quick_failure "a second daemon on port $port with an existing database"
[ "$(sqlite3 "$WORK/kept.db" 'SELECT x FROM mine')" = 42 ] || fail "a daemon that could not listen lost kept.db"

# A database already served by a daemon stops the second one with a reason
# (it would otherwise re-run the first one's jobs as interrupted).
CLI_TIMEOUT=4 run_cli serve --listen 127.0.0.1:0 --db "$DB" --token-file "$TOKEN_FILE"
quick_failure "a second daemon on the same database"
assert_match "$ERR" "in use by another gpuprobe serve \(pid $DAEMON_PID\)" "the reason for a database in use"
# started twice as it was, on the same port too: the port fails first, and
# the database's holder is named with it
CLI_TIMEOUT=4 run_cli serve --listen "${BASE_URL#http://}" --db "$DB" --token-file "$TOKEN_FILE"
quick_failure "a second daemon on the same port and database"
assert_match "$ERR" "in use by another gpuprobe serve \(pid $DAEMON_PID\)" "the holder named when the port is taken too"
stop_daemon

# A probe that stores nothing (no such GPU) leaves no database it made.
run_cli probe latency --device 99 --db "$WORK/probe.db"
quick_failure "probe latency --device 99"
if ls "$WORK"/probe.db* >/dev/null 2>&1; then fail "a probe that stored nothing left $(ls "$WORK"/probe.db*)"; fi

# fleet slurm runs DIR/bin/gpuprobe on every node: a folder that lacks it is
# refused when the script is written, not found missing on the nodes. This
# binary runs from a build tree (build/VARIANT/gpuprobe), not from a bundle.
printf '%s\n' "$TOKEN" >central-token
refuses fleet slurm --central http://127.0.0.1:1 --token-file central-token --nodes 2 -o job.sh
[ "$RC" -eq 2 ] || fail "fleet slurm from a build tree exited $RC, expected 2"
assert_match "$ERR" "bin/gpuprobe is not an executable file.*make dist bundle.*--bundle DIR" \
    "the reason fleet slurm refuses a build tree"
[ ! -e job.sh ] || fail "fleet slurm from a build tree wrote job.sh: $(grep exec job.sh)"
mkdir -p notbundle/bin bundle/bin
refuses fleet slurm --central http://127.0.0.1:1 --token-file central-token --nodes 2 --bundle notbundle
[ "$RC" -eq 2 ] || fail "fleet slurm --bundle of a folder without bin/gpuprobe exited $RC, expected 2"
assert_match "$ERR" "--bundle: .*/notbundle/bin/gpuprobe is not an executable file" "the reason for --bundle notbundle"
printf '#!/bin/sh\n' >notbundle/bin/gpuprobe # a file, not executable
refuses fleet slurm --central http://127.0.0.1:1 --token-file central-token --nodes 2 --bundle notbundle
[ "$RC" -eq 2 ] || fail "fleet slurm --bundle with a bin/gpuprobe not executable exited $RC, expected 2"
ln -s "$GPUPROBE" bundle/bin/gpuprobe
run_cli fleet slurm --central http://127.0.0.1:1 --token-file central-token --nodes 2 --bundle bundle -o job.sh
[ "$RC" -eq 0 ] || fail "fleet slurm --bundle of a bundle exited $RC: $ERR"
grep -q "^exec '$WORK/bundle'/bin/gpuprobe probe" job.sh || fail "job.sh does not run the bundle: $(grep exec job.sh)"
# a Slurm tool that fails is named with its status and words, not as a worker
mkdir -p fakeslurm
printf '#!/bin/sh\necho "scontrol: error: Unable to contact slurm controller" >&2\nexit 1\n' >fakeslurm/scontrol
chmod +x fakeslurm/scontrol
PATH="$WORK/fakeslurm:$PATH" refuses fleet slurm --central http://127.0.0.1:1 --token-file central-token \
    --nodelist 'gpu[01-02]' --bundle bundle -o job2.sh
assert_match "$ERR" "scontrol failed: exited with status 1: scontrol: error: Unable to contact slurm controller" \
    "the failing Slurm tool's status and words"
[[ "$ERR" != *worker* ]] || fail "a Slurm tool called a worker: $ERR"
# a sorting-thread setting that means nothing stops the commands that sort
# when they start (exit 2, bad usage), before a daemon serves a request it
# would then fail or a sort writes anything; 0 lets the sorter choose
GPUPROBE_TRACE_THREADS=4 refuses trace sort "$REPO/tests/fixtures/traces/sample.csv" -o bad-env.csv
[ "$RC" -eq 2 ] || fail "trace sort with GPUPROBE_TRACE_THREADS=4 exited $RC, expected 2"
assert_match "$ERR" "GPUPROBE_TRACE_THREADS must be 1 or 2, not '4'" "the reason for GPUPROBE_TRACE_THREADS=4"
[ ! -e bad-env.csv ] || fail "trace sort wrote its output with GPUPROBE_TRACE_THREADS=4"
GPUPROBE_TRACE_THREADS=two refuses serve --listen 127.0.0.1:0 --db bad-env.db --token-file central-token
[ "$RC" -eq 2 ] || fail "serve with GPUPROBE_TRACE_THREADS=two exited $RC, expected 2"
[ ! -e bad-env.db ] && [ ! -e bad-env.db.lock ] || fail "serve with a bad GPUPROBE_TRACE_THREADS left a database"
GPUPROBE_TRACE_THREADS=0 run_cli trace sort "$REPO/tests/fixtures/traces/sample.csv" -o zero-env.csv
[ "$RC" -eq 0 ] || fail "trace sort with GPUPROBE_TRACE_THREADS=0 exited $RC: $ERR"
GPUPROBE_TRACE_THREADS=4 run_cli devices --help
[ "$RC" -eq 0 ] || fail "devices --help with GPUPROBE_TRACE_THREADS=4 exited $RC: the setting concerns sorting only"
