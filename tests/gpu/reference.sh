#!/usr/bin/env bash
# Measures the reference data of the GPU this runs on (docs/reference-data.md):
# the whole suite and the model validation through a daemon of the `make dist`
# bundle, into a fresh database that is then copied to OUT_DIR as
# reference.db, with the daemon's log. Usage: reference.sh BUNDLE OUT_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"

unpack_bundle reference "$1"
out=$2
mkdir -p "$out"
echo tok > "$work/tokens"
"$bin" serve --listen 127.0.0.1:0 --db "$work/reference.db" --token-file "$work/tokens" --no-reference \
    2> "$work/daemon.log" &
daemon=$!
port=$(wait_ready "$work/daemon.log") || port=""
uuid=$(curl -fsS "http://127.0.0.1:$port/api/v1/devices" |
       python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["uuid"])')
status=0
python3 "$(dirname "$0")/reference.py" "http://127.0.0.1:$port" tok "$uuid" || status=$?
kill -TERM "$daemon"; wait "$daemon" || true; daemon=""
cp "$work/reference.db" "$work/daemon.log" "$out/"
exit "$status"
