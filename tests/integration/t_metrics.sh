#!/usr/bin/env bash
# Proves GET /metrics is Prometheus text that promtool accepts, serves this host's devices by default and every stored one with metrics_devices = all (the reference H200's figures with dcgm-exporter's labels), counts requests by route pattern and jobs by kind, state and worker failure, and that a real Prometheus scrapes it and answers PromQL for a probe figure, a job count and every query of the Grafana dashboard (docs/grafana/gpuprobe.json).
. "$(dirname "$0")/lib.sh"

H200=GPU-5e219d5e-f66e-5b08-5589-0382521f0c7e
H100=GPU-b7d8e50a-36cc-dc39-0734-d6531eb80b16
DASHBOARD=$REPO/docs/grafana/gpuprobe.json
for tool in promtool prometheus; do
    command -v "$tool" >/dev/null || fail "$tool is missing: make test installs Debian's prometheus package (make deps)"
done

# ---- Prometheus, stopped and removed however the test ends ------------------
PROM_PID=
PROM_DIR=$WORK/prometheus
PROM_URL=
stop_prometheus() {
    if [ -n "$PROM_PID" ] && kill -0 "$PROM_PID" 2>/dev/null; then
        kill -TERM "$PROM_PID" 2>/dev/null || true
        local deadline=$((SECONDS + 5))
        while pid_alive "$PROM_PID" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
        kill -KILL "$PROM_PID" 2>/dev/null || true
        wait "$PROM_PID" 2>/dev/null || true
    fi
    PROM_PID=
    rm -rf "$PROM_DIR"
}
trap 'stop_prometheus; cleanup' EXIT

# scrape NAME: GET /metrics into $WORK/NAME.prom; the answer must be 200 in
# the text format's content type.
scrape() {
    req GET /metrics "" ""
    assert_status 200
    [ "$(header content-type)" = "text/plain; version=0.0.4; charset=utf-8" ] ||
        fail "/metrics answered Content-Type '$(header content-type)'"
    printf '%s\n' "$BODY" >"$WORK/$1.prom"
}

# sample FILE SERIES: the value of the sample SERIES (its name and labels, as
# written) in FILE; "" when there is none.
sample() { awk -v s="$2" 'index($0, s " ") == 1 { print substr($0, length(s) + 2); exit }' "$1"; }

# lint FILE: promtool must find nothing to say about it.
lint() {
    local out rc=0
    out=$(promtool check metrics <"$1" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] && [ -z "$out" ] || fail "promtool check metrics on $1 (status $rc): ${out:0:1500}"
}

# ---- the default, local: this host's devices only -------------------------
WITH_REFERENCE=1 start_daemon
wait_ready
scrape local
lint "$WORK/local.prom"
grep -q '^gpuprobe_build_info{version="' "$WORK/local.prom" || fail "no gpuprobe_build_info"
grep -q "$H200" "$WORK/local.prom" && fail "metrics_devices = local served the reference H200 (host 'reference')"
grep -q '^# TYPE gpuprobe_memory_latency_cycles' "$WORK/local.prom" &&
    fail "a probe family with no local device to show"
# the reference data is in the store all the same: 2 suites, 2 validations
[ "$(sample "$WORK/local.prom" 'gpuprobe_jobs{kind="suite",state="succeeded"}')" = 2 ] ||
    fail "expected 2 succeeded suites (the reference data): $(grep 'kind="suite"' "$WORK/local.prom")"
stop_daemon

# ---- all: every stored device ------------------------------------------------
write_config metrics_devices=all
WITH_REFERENCE=1 start_daemon --config "$CONFIG"
wait_ready
scrape all
lint "$WORK/all.prom"

# the reference H200's L1 latency, labelled as dcgm-exporter labels GPUs
l1=$(sample "$WORK/all.prom" "gpuprobe_memory_latency_cycles{gpu=\"\",UUID=\"$H200\",model_name=\"NVIDIA H200\",Hostname=\"reference\",load=\"ca\",level=\"1\"}")
[ -n "$l1" ] || fail "no L1 latency of the H200 with dcgm labels: $(grep "memory_latency_cycles.*$H200" "$WORK/all.prom" | head -3)"
awk -v v="$l1" 'BEGIN { exit !(v > 30 && v < 34) }' || fail "H200 L1 latency $l1, expected about 32 cycles"
grep -q "^gpuprobe_register_bank_map{gpu=\"\",UUID=\"$H200\",model_name=\"NVIDIA H200\",Hostname=\"reference\",value=\"2 classes, map [0-9a-f]*\"} 1\$" "$WORK/all.prom" ||
    fail "the H200's register bank map is not a 1 with its category in \"value\": $(grep "register_bank_map" "$WORK/all.prom")"
# one sample per stored figure of each device (the fleet view counts them)
req GET /api/v1/fleet
assert_status 200
for uuid in "$H200" "$H100"; do
    stored=$(printf '%s' "$BODY" | jq --arg u "$uuid" '.devices[] | select(.uuid == $u) | .figures')
    served=$(grep -v '^#' "$WORK/all.prom" | grep -c "UUID=\"$uuid\"" || true)
    [ "$stored" -gt 150 ] && [ "$served" = "$stored" ] || fail "$uuid: $served samples for $stored stored figures"
done

# HTTP: counted by route pattern and status code, never by the raw path
route='method="GET",route="/api/v1/devices/{uuid}"'
before=$(sample "$WORK/all.prom" "gpuprobe_http_requests_total{$route,code=\"200\"}")
before_404=$(sample "$WORK/all.prom" 'gpuprobe_http_requests_total{method="",route="",code="404"}')
before_count=$(sample "$WORK/all.prom" "gpuprobe_http_request_duration_seconds_count{$route}")
for _ in 1 2 3; do req GET "/api/v1/devices/$H200"; assert_status 200; done
req GET /no/such/path
assert_status 404
scrape after
lint "$WORK/after.prom"
[ "$(sample "$WORK/after.prom" "gpuprobe_http_requests_total{$route,code=\"200\"}")" = $((${before:-0} + 3)) ] ||
    fail "requests of $route went from '${before}' to '$(sample "$WORK/after.prom" "gpuprobe_http_requests_total{$route,code=\"200\"}")' after 3"
[ "$(sample "$WORK/after.prom" 'gpuprobe_http_requests_total{method="",route="",code="404"}')" = $((${before_404:-0} + 1)) ] ||
    fail "a request no route took was not counted under route=\"\""
[ "$(sample "$WORK/after.prom" "gpuprobe_http_request_duration_seconds_count{$route}")" = $((${before_count:-0} + 3)) ] ||
    fail "the duration histogram of $route did not count 3 more"
[ "$(sample "$WORK/after.prom" "gpuprobe_http_request_duration_seconds_bucket{$route,le=\"+Inf\"}")" = \
  "$(sample "$WORK/after.prom" "gpuprobe_http_request_duration_seconds_count{$route}")" ] ||
    fail "the +Inf bucket of $route is not its count"
grep -q 'route="/api/v1/devices/GPU-\|route="/no/' "$WORK/after.prom" && fail "a raw path became a route label"

# jobs by kind and state; worker failures by kind and reason
submit '{"kind":"test","params":{"echo":"fine"}}'
ok=$JOB_ID
submit '{"kind":"test","params":{"mode":"crash"}}'
crash=$JOB_ID
submit '{"kind":"test","params":{"mode":"exit","exit_code":3}}'
exit3=$JOB_ID
submit '{"kind":"test","params":{"mode":"garbage"}}'
garbage=$JOB_ID
submit '{"kind":"test","params":{"mode":"hang"},"timeout_s":1}'
hang=$JOB_ID
wait_job_state "$ok" succeeded 15
for id in "$crash" "$exit3" "$garbage" "$hang"; do wait_job_state "$id" failed 15; done
scrape jobs
lint "$WORK/jobs.prom"
for want in 'gpuprobe_jobs{kind="test",state="succeeded"} 1' 'gpuprobe_jobs{kind="test",state="failed"} 4' \
            'gpuprobe_jobs{kind="test",state="queued"} 0' 'gpuprobe_job_queue_length 0' \
            'gpuprobe_worker_failures_total{kind="test",reason="crash"} 1' \
            'gpuprobe_worker_failures_total{kind="test",reason="exit_status"} 1' \
            'gpuprobe_worker_failures_total{kind="test",reason="invalid_document"} 1' \
            'gpuprobe_worker_failures_total{kind="test",reason="timeout"} 1' \
            'gpuprobe_worker_failures_total{kind="suite",reason="crash"} 0'; do
    grep -qxF "$want" "$WORK/jobs.prom" || fail "expected '$want'; got: $(grep -F "${want%% *}" "$WORK/jobs.prom")"
done

# ---- a real Prometheus scraping the daemon -----------------------------------
daemon_addr=${BASE_URL#http://}
mkdir -p "$PROM_DIR"
cat >"$PROM_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpuprobe
    static_configs:
      - targets: ['$daemon_addr']
EOF
promtool check config "$PROM_DIR/prometheus.yml" >/dev/null || fail "promtool refuses the test's Prometheus configuration"

# A free loopback port: one nothing answers on; if another process takes it
# first, Prometheus exits and the next port is tried.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 40000))
    port_in_use "$port" && continue
    prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
        --web.listen-address="127.0.0.1:$port" --log.level=warn >"$PROM_DIR/log" 2>&1 &
    PROM_PID=$!
    PROM_URL=http://127.0.0.1:$port
    deadline=$((SECONDS + 20))
    until curl -sf "$PROM_URL/-/ready" >/dev/null 2>&1; do
        pid_alive "$PROM_PID" || break
        [ "$SECONDS" -lt "$deadline" ] || fail "Prometheus not ready after 20 s: $(tail -n 5 "$PROM_DIR/log")"
        sleep 0.2
    done
    pid_alive "$PROM_PID" && break
    wait "$PROM_PID" 2>/dev/null || true
    PROM_PID=
done
[ -n "$PROM_PID" ] || fail "Prometheus did not start on a free port: $(tail -n 5 "$PROM_DIR/log")"

# promql QUERY: runs an instant query; PROM holds the answer (JSON).
promql() {
    PROM=$(curl -sS -G --max-time 10 --data-urlencode "query=$1" "$PROM_URL/api/v1/query") ||
        fail "Prometheus did not answer the query $1"
    [ "$(jq -r .status <<<"$PROM")" = success ] || fail "Prometheus refused $1: ${PROM:0:500}"
}

# Until the third scrape: rate() and increase() need two samples in their window.
deadline=$((SECONDS + 30))
while :; do
    promql 'count_over_time(gpuprobe_build_info{job="gpuprobe"}[1m])'
    [ "$(jq -r '.data.result[0].value[1] // 0' <<<"$PROM")" -ge 3 ] && break
    [ "$SECONDS" -lt "$deadline" ] || fail "Prometheus has not scraped gpuprobe 3 times in 30 s: $(curl -s "$PROM_URL/api/v1/targets" | jq -c '.data.activeTargets[] | {health, lastError}')"
    sleep 0.5
done
promql 'up{job="gpuprobe"}'
[ "$(jq -r '.data.result[0].value[1]' <<<"$PROM")" = 1 ] || fail "the gpuprobe target is not up: ${PROM:0:300}"

promql "gpuprobe_memory_latency_cycles{UUID=\"$H200\",load=\"ca\",level=\"1\"}"
jq -e --arg u "$H200" '.data.result | length == 1 and (.[0].metric | .model_name == "NVIDIA H200" and .Hostname == "reference" and .UUID == $u and .job == "gpuprobe") and ((.[0].value[1] | tonumber) > 30 and (.[0].value[1] | tonumber) < 34)' <<<"$PROM" >/dev/null ||
    fail "Prometheus's answer for the H200's L1 latency: ${PROM:0:600}"
promql 'gpuprobe_jobs{kind="suite",state="succeeded"}'
jq -e '.data.result | length == 1 and .[0].value[1] == "2"' <<<"$PROM" >/dev/null ||
    fail "Prometheus's answer for the succeeded suites: ${PROM:0:600}"
promql 'sum(gpuprobe_worker_failures_total{kind="test"})'
jq -e '.data.result[0].value[1] == "4"' <<<"$PROM" >/dev/null || fail "worker failures of kind test in Prometheus: ${PROM:0:300}"

# ---- the Grafana dashboard asks only for what /metrics has --------------------
scrape final
names=$(grep -v '^#' "$WORK/final.prom" | sed 's/[{ ].*//' | sort -u)
used=$(jq -r '.. | strings' "$DASHBOARD" | grep -o 'gpuprobe_[A-Za-z0-9_]*' | sort -u)
[ "$(wc -l <<<"$used")" -ge 10 ] || fail "found only these metric names in $DASHBOARD: $used"
for name in $used; do
    grep -qxF "$name" <<<"$names" || fail "the dashboard uses $name, which /metrics does not expose"
done
# every panel's query, with Grafana's variables given values, is PromQL that
# Prometheus answers with data
nexpr=0
while IFS= read -r expr; do
    q=${expr//\$__rate_interval/1m}
    q=$(sed -E 's/\$\{?[A-Za-z_]+\}?/.*/g' <<<"$q")
    promql "$q"
    [ "$(jq '.data.result | length' <<<"$PROM")" -gt 0 ] || fail "the dashboard's query $q gives no data"
    nexpr=$((nexpr + 1))
done < <(jq -r '.. | objects | select(has("expr")) | .expr' "$DASHBOARD")
[ "$nexpr" -ge 10 ] || fail "expected at least 10 panel queries in $DASHBOARD, found $nexpr"

stop_prometheus
stop_daemon
