#!/usr/bin/env bash
# Proves the fleet view end to end: a synthetic fleet of 30 GPUs of 3 models on 8 hosts (bench/fleet/synth.c: the reference H100 and H200 measurements with seeded noise, the H200's a second time under another model name, 4 planted faults) pushed into a daemon over POST /api/v1/import; GET /api/v1/fleet lists each model with its devices, hosts and drivers, every figure's distribution, and as outliers exactly the planted GPUs, each on the figure its fault moved; every device, outlier and distribution value names the driver its newest result was measured under; ?model= and ?host= restrict what is listed; GET /api/v1/fleet/distribution gives one figure's sorted values with the planted GPU marked and the bounds; a GPU pushed after a view shows in the next one, and one measured under another driver (whole, or as figures alone) splits its model's drivers; a restart answers the same; bad arguments (a bare "?k" too) are 400 naming them, an unknown figure 404.
. "$(dirname "$0")/lib.sh"

synth_fleet fleet
# the same fleet as a node with upstream_content = figures sends it, measured
# under a newer driver
synth_fleet figures 32 --figures --driver 590.48.01
# and whole, under that driver
synth_fleet newdriver 31 --driver 590.48.01
planted=$(cut -f1 fleet/planted.tsv | sort | paste -sd,)

start_daemon
wait_ready
# the first 30 now, the 31st after a view
for f in fleet/000[0-2]?.json; do
    REQ_BODY_FILE=$f req POST /api/v1/import
    assert_status 200
done

# every model, its devices and hosts, and exactly the planted GPUs as outliers
req GET /api/v1/fleet
assert_status 200
assert_json '[.models[] | [.model, .devices, .hosts]] | sort_by(.[0])' \
    '[["NVIDIA H100 80GB HBM3",10,8],["NVIDIA H200",10,8],["Synthetic GPU (H200 data)",10,8]]'
assert_json '.rule.k' 6
assert_json '[.models[].outliers[].uuid] | unique | join(",")' "$planted"
assert_json '.devices | length' 30
assert_json '[.devices[] | select(.outliers > 0) | .uuid] | sort | join(",")' "$planted"
# each planted GPU differs on the figure its fault moved, and only there
while IFS=$'\t' read -r uuid fault family; do
    assert_json "[.models[].outliers[] | select(.uuid == \"$uuid\") | .metric | split(\"{\")[0]] | unique" \
        "[\"$family\"]"
done <fleet/planted.tsv
# a number's outlier says how far off it is; a category names the norm
assert_true '[.models[].outliers[] | select(.metric | startswith("gpuprobe_memory_latency_cycles"))] | all(.relative > 0.1 and .deviation_mads > 6 and .job_id > 0)'
assert_true '[.models[].outliers[] | select(.metric == "gpuprobe_register_bank_map")] | length == 1 and all(.text != .mode)'
# the distributions: every figure of every model, within the planted ones too
assert_true '.models | all(.figures | length == 281)'
# the driver each GPU runs: one for the whole fleet so far
old_driver=580.159.04
assert_true ".models | all(.drivers == [{\"driver_version\": \"$old_driver\", \"devices\": 10}])"
assert_true ".devices | all(.driver_version == \"$old_driver\")"
assert_true "[.models[].outliers[].driver_version] | unique == [\"$old_driver\"]"
assert_true '[.models[].figures[] | select(.categorical | not)] | all(.n == 10 and .min <= .median and .median <= .max)'

# restricted by model and by host
req GET '/api/v1/fleet?model=NVIDIA%20H200'
assert_json '[.models[].model]' '["NVIDIA H200"]'
assert_json '[.devices[].model] | unique' '["NVIDIA H200"]'
host=$(jq -r '.devices[0].host' <fleet/00000.json)
req GET "/api/v1/fleet?host=$host"
assert_json '[.devices[].host] | unique' "[\"$host\"]"
assert_json '[.models[].outliers[].host] | unique' "[\"$host\"]"
assert_true '.models | all(.devices == 10)' # distributions stay the whole model's

# one figure's distribution, sorted, with the planted GPU marked
slow=$(awk -F'\t' '$2 == "slow-l2" {print $1}' fleet/planted.tsv)
model=$(jq -r '.devices[0].name' <"$(grep -l "$slow" fleet/000*.json | head -n1)")
metric='gpuprobe_memory_latency_cycles{load="ca",level="2"}'
dist() { req GET "/api/v1/fleet/distribution?model=$(jq -rn --arg v "$1" '$v|@uri')&metric=$(jq -rn --arg v "$2" '$v|@uri')${3:-}"; }
dist "$model" "$metric"
assert_status 200
assert_json '.values | length' 10
assert_json '[.values[].value] == ([.values[].value] | sort)' true
assert_json "[.values[] | select(.outlier) | .uuid]" "[\"$slow\"]"
assert_true ".values | all(.driver_version == \"$old_driver\")"
assert_true ".values[-1].uuid == \"$slow\" and .values[-1].value > .high and .low < .median and .median < .high"
# fewer GPUs than min_devices: nothing is compared, so there are no bounds (not a band of width 0)
dist "$model" "$metric" '&min_devices=11'
assert_status 200
assert_json '[.low, .high, ([.values[] | select(.outlier)] | length)]' '[null,null,0]'
dist "$model" 'gpuprobe_no_such_figure'
assert_problem 404 not-found
dist "No such GPU" "$metric"
assert_problem 404 not-found
req GET "/api/v1/fleet/distribution?metric=x"
assert_problem 400 invalid-request
assert_field model
req GET '/api/v1/fleet?k=0'
assert_problem 400 invalid-request
assert_field k
req GET '/api/v1/fleet?min_devices=2.5'
assert_problem 400 invalid-request
assert_field min_devices
assert_match "$(json .detail)" "min_devices must be a whole number from 2 to 1000000" "the range, written out"
req GET '/api/v1/fleet?min_devices=1'
assert_problem 400 invalid-request
assert_match "$(json .detail)" "from 2 to 1000000" "the range, written out"
# a number is written one way: not hexadecimal, not with blanks or a sign before it
for q in k=0x10 min_devices=%205 min_devices=+5 min_relative=inf; do
    req GET "/api/v1/fleet?$q"
    assert_problem 400 invalid-request
    assert_field "${q%%=*}"
done
req GET '/api/v1/fleet?colour=red'
assert_problem 400 invalid-request
assert_field colour
# an argument without a value is refused too, not read as absent
for q in k host 'model=x&host' 'min_devices=5&k'; do
    req GET "/api/v1/fleet?$q"
    assert_problem 400 invalid-request
    assert_field "${q##*&}"
done
req GET '/api/v1/fleet/distribution?model=x&metric'
assert_problem 400 invalid-request
assert_field metric
# a looser rule flags more, a stricter one fewer
req GET '/api/v1/fleet?min_devices=11'
assert_json '[.models[].outliers[]] | length' 0

# a GPU pushed after a view is in the next one; measured under another
# driver, it splits its model's drivers (the driver may be what moved a figure)
REQ_BODY_FILE=newdriver/00030.json req POST /api/v1/import
assert_status 200
req GET /api/v1/fleet
assert_json '.devices | length' 31
assert_json '[.models[].outliers[].uuid] | unique | join(",")' "$planted"
new30=$(jq -r '.devices[0].uuid' <newdriver/00030.json)
new30_model=$(jq -r '.devices[0].name' <newdriver/00030.json)
assert_json "[.devices[] | select(.uuid == \"$new30\") | .driver_version]" '["590.48.01"]'
assert_json "[.models[] | select(.model == \"$new30_model\") | .drivers[] | [.driver_version, .devices]]" \
    "[[\"$old_driver\",10],[\"590.48.01\",1]]"
# the device list names it too (the driver its record was last seen with)
req GET /api/v1/devices
assert_json "[.devices[] | select(.uuid == \"$new30\") | .driver_version]" '["590.48.01"]'

# a GPU whose results came as figures alone (kind fleet-figures) is compared like the others
REQ_BODY_FILE=figures/00031.json req POST /api/v1/import
assert_status 200
assert_json .results_added 2
req GET /api/v1/fleet
assert_json '.devices | length' 32
assert_json '[.devices[] | select(.uuid | endswith("00000000001f")) | [.figures, .driver_version]]' '[[281,"590.48.01"]]'
assert_json '[.models[].outliers[].uuid] | unique | join(",")' "$planted"
# figures of a result the central holds whole are the same measurement: held, not added
REQ_BODY_FILE=figures/00030.json req POST /api/v1/import
assert_status 200
assert_json '[.results_added, .results_held]' '[0,2]'
req GET /api/v1/fleet
before=$(printf '%s' "$BODY" | jq -S '.models')

# a restart loads the same fleet from the store
stop_daemon
start_daemon
wait_ready
req GET /api/v1/fleet
[ "$(printf '%s' "$BODY" | jq -S '.models')" = "$before" ] || fail "the fleet differs after a restart"
stop_daemon
