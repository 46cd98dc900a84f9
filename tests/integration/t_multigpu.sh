#!/usr/bin/env bash
# Proves several GPUs of one host are measured side by side, each in its own
# process, without a GPU: GPUPROBE_STANDIN_GPUS=N lists N stand-in GPUs
# (tests/kinds/standin.c), and the test kind test-gpu holds one for
# "seconds" and answers its worker's pid and wall-clock start and end.
# 1. `gpuprobe probe test-gpu --device all`: one child per GPU, overlapping,
#    printed in device order; a GPU whose worker crashes fails alone;
#    `probe suite-standin --device all --db` stores every GPU's result, one
#    job each, in device order.
# 2. The daemon's scheduler over HTTP: jobs on different GPUs overlap in
#    distinct workers, two jobs on one GPU never do, cancelling one GPU's job
#    and one GPU's deadline leave the others to run their full length.
# 3. Devices carry their PCI bus id and NUMA node, in the CLI and the API.
. "$(dirname "$0")/lib.sh"

N=3
export GPUPROBE_STANDIN_GPUS=$N
HOLD=2          # seconds each test-gpu job holds its GPU

# ---- helpers --------------------------------------------------------------

# overlap A_START A_END B_START B_END: true when the intervals share time.
overlap() { [ "$1" -lt "$4" ] && [ "$3" -lt "$2" ]; }

# UUIDS: the stand-ins, in index order, from `gpuprobe devices`.
"$GPUPROBE" devices --compact >devices.json
mapfile -t UUIDS < <(jq -r '.devices[].uuid' devices.json)
[ "${#UUIDS[@]}" -eq "$N" ] || fail "gpuprobe devices lists ${#UUIDS[@]} GPUs, expected $N"

# ---- 3 (first, it is quick): bus ids and NUMA nodes -----------------------

jq -e '[.devices[] | .pci_bus_id | test("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$")] | all' \
    devices.json >/dev/null || fail "a device's pci_bus_id is not DOMAIN:BUS:DEVICE.FUNCTION: $(cat devices.json)"
jq -e '[.devices[].pci_bus_id] | unique | length == '"$N" devices.json >/dev/null ||
    fail "the stand-ins share a PCI bus id"
jq -e '[.devices[] | .numa_node | type == "number" and . >= -1] | all' devices.json >/dev/null ||
    fail "a device's numa_node is not an integer >= -1: $(cat devices.json)"

# ---- 1. the CLI: --device all ----------------------------------------------

t0=$(now_ms)
"$GPUPROBE" probe test-gpu --device all --seconds "$HOLD" --compact >all.out 2>all.err ||
    fail "probe test-gpu --device all failed: $(cat all.err)"
t1=$(now_ms)
[ "$(wc -l <all.out)" -eq "$N" ] || fail "expected $N results, got: $(cat all.out)"
# device order, whatever order the children ended in
mapfile -t got < <(jq -r .device all.out)
[ "${got[*]}" = "${UUIDS[*]}" ] || fail "results not in device order: ${got[*]} vs ${UUIDS[*]}"
# each in its own process, none of them the CLI's
[ "$(jq -s '[.[].pid] | unique | length' all.out)" -eq "$N" ] || fail "workers share a pid: $(cat all.out)"
# all at once: the latest start comes before the earliest end, and the
# whole took less than two holds (one after the other would take N)
jq -se '(map(.started_ms) | max) < (map(.ended_ms) | min)' all.out >/dev/null ||
    fail "the GPUs' runs did not overlap: $(cat all.out)"
jq -se "all(.ended_ms - .started_ms >= $HOLD * 1000)" all.out >/dev/null ||
    fail "a worker did not hold its GPU $HOLD s: $(cat all.out)"
[ $((t1 - t0)) -lt $((2 * HOLD * 1000)) ] || fail "--device all took $((t1 - t0)) ms for $N GPUs of $HOLD s each"
echo "  probe --device all: $N GPUs of $HOLD s each in $((t1 - t0)) ms"

# one GPU's worker crashes: the others still answer, the status says so
RC=0
"$GPUPROBE" probe test-gpu --device all --seconds 1 --crash-on "${UUIDS[1]}" --compact \
    >crash.out 2>crash.err || RC=$?
[ "$RC" -eq 1 ] || fail "a crashed GPU should give status 1, got $RC"
mapfile -t got < <(jq -r .device crash.out)
[ "${got[*]}" = "${UUIDS[0]} ${UUIDS[2]}" ] || fail "the other GPUs' results are missing: $(cat crash.out)"
grep -q "${UUIDS[1]}: worker killed by signal 11" crash.err || fail "the crash is not reported: $(cat crash.err)"
[ "$(grep -c . crash.err)" -eq 1 ] || fail "one failure, one line expected: $(cat crash.err)"

# --db: every GPU's result stored by the parent, one job each, in device order
"$GPUPROBE" probe suite-standin --device all --db cli.db --compact >suite.out 2>suite.err ||
    fail "probe suite-standin --device all --db failed: $(cat suite.err)"
[ "$(grep -c 'stored as job' suite.err)" -eq "$N" ] || fail "expected $N stored jobs: $(cat suite.err)"
rows=$(sqlite3 cli.db "SELECT device FROM jobs WHERE state = 'succeeded' ORDER BY id" | tr '\n' ' ')
[ "$rows" = "${UUIDS[*]} " ] || fail "stored jobs are not one per GPU in device order: $rows"

# ---- 2. the daemon ---------------------------------------------------------

DAEMON_PREFIX=(env GPUPROBE_STANDIN_GPUS=$N)
start_daemon
wait_ready
req GET /api/v1/devices
assert_status 200
assert_true "[.devices[] | select(.attached)] | length == $N"
assert_true '[.devices[] | select(.attached) | (.pci_bus_id | length > 0) and (.numa_node | type == "number")] | all'

# job_on GPU_INDEX SECONDS [EXTRA_JSON]: submits test-gpu; sets JOB_ID.
job_on() {
    submit "{\"kind\":\"test-gpu\",\"device\":\"${UUIDS[$1]}\",\"params\":{\"seconds\":$2}${3:-}}"
}
# result_of ID: sets R to "pid started_ms ended_ms" of a succeeded job.
result_of() {
    wait_job_state "$1" succeeded 30
    R=$(json '"\(.result.pid) \(.result.started_ms) \(.result.ended_ms)"')
}

# a job on each GPU, and a second one on GPU 0 behind the first
ids=()
for i in $(seq 0 $((N - 1))); do job_on "$i" "$HOLD"; ids+=("$JOB_ID"); done
job_on 0 1
second=$JOB_ID
declare -A P S E
for i in $(seq 0 $((N - 1))); do
    result_of "${ids[$i]}"
    read -r "P[$i]" "S[$i]" "E[$i]" <<<"$R"
done
result_of "$second"
read -r p2 s2 e2 <<<"$R"
for i in $(seq 0 $((N - 1))); do
    for j in $(seq $((i + 1)) $((N - 1))); do
        overlap "${S[$i]}" "${E[$i]}" "${S[$j]}" "${E[$j]}" ||
            fail "jobs on GPU $i and GPU $j did not overlap: ${S[$i]}-${E[$i]} vs ${S[$j]}-${E[$j]}"
        [ "${P[$i]}" != "${P[$j]}" ] || fail "jobs on GPU $i and GPU $j ran in one process ${P[$i]}"
    done
    [ "${P[$i]}" != "$DAEMON_PID" ] || fail "a job ran in the daemon's own process"
done
[ "$s2" -ge "${E[0]}" ] || fail "two jobs on GPU 0 overlapped: ${S[0]}-${E[0]} and $s2-$e2"
[ "$p2" != "${P[0]}" ] || fail "the second job on GPU 0 reused the first one's process"
echo "  scheduler: $N GPUs overlapped; GPU 0's second job began $((s2 - E[0])) ms after its first ended"

# cancelling one GPU's job leaves the others running to their end
ids=()
for i in $(seq 0 $((N - 1))); do job_on "$i" 4; ids+=("$JOB_ID"); done
for id in "${ids[@]}"; do wait_job_state "$id" running 10; done
req DELETE "/api/v1/jobs/${ids[1]}"
assert_status 202
wait_job_state "${ids[1]}" cancelled 5
for i in 0 2; do
    req GET "/api/v1/jobs/${ids[$i]}"
    assert_json .state running
done
for i in 0 2; do
    result_of "${ids[$i]}"
    read -r _ s e <<<"$R"
    [ $((e - s)) -ge 4000 ] || fail "GPU $i's job was cut short by GPU 1's cancellation ($((e - s)) ms)"
done

# a deadline on one GPU kills that job alone; the GPU then takes the next
ids=()
job_on 0 60 ',"timeout_s":1'
ids+=("$JOB_ID")
for i in $(seq 1 $((N - 1))); do job_on "$i" 3; ids+=("$JOB_ID"); done
job_on 0 0
after=$JOB_ID
wait_job_state "${ids[0]}" failed 15
assert_match "$(json .error)" 'deadline of 1 s exceeded' "the overdue job's error"
for i in $(seq 1 $((N - 1))); do
    result_of "${ids[$i]}"
    read -r _ s e <<<"$R"
    [ $((e - s)) -ge 3000 ] || fail "GPU $i's job was cut short by GPU 0's deadline ($((e - s)) ms)"
done
result_of "$after"
stop_daemon
