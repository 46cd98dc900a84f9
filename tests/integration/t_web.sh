#!/usr/bin/env bash
# The dashboard in a real browser: tests/web/dashboard.test.js drives Debian's
# headless chromium through playwright-core against this daemon, with the
# reference results its database holds, and holds every view to the daemon's
# own API: the overview (devices, the reason no GPU is attached, jobs shown
# succeeded, a job's deep link opening its parameters, events and result, the
# kinds offered), each device's six result views with their charts' series
# and points, the compare view (its side-by-side tables of the Hopper
# features held column by column to each device's documents, with planted
# figures on both reference devices and members one of them lacks), the occupancy calculator's answer against the
# API's, a trace sorted from the page, answered at once and as a job (per-SM
# summary, download equal to the API's output), a job submitted and cancelled from the page, a bad token's
# error, the fleet page before and after a synthetic fleet is pushed (as
# t_fleet.sh makes it: 31 GPUs of 3 models on 8 hosts, 4 planted faults) with
# its distributions, and no console errors. It prints each view's load time. Screenshots
# of every view go to GPUPROBE_SCREENSHOTS (default: this test's folder) and
# must come out as real images.
#
# GPUPROBE_WEB_DB=FILE serves a copy of that database instead of a new one.
# Chromium, node or the test's node_modules missing is a failure, not a skip:
# `make test` installs them (`make web-deps`).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
source "${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
WEB=$REPO/tests/web
[ -x "$CHROMIUM" ] || fail "chromium not found at $CHROMIUM: run 'make web-deps' (apt-get install chromium)"
command -v node >/dev/null || fail "node not found: run 'make web-deps'"
[ -f "$WEB/node_modules/playwright-core/package.json" ] ||
    fail "$WEB/node_modules lacks playwright-core: run 'make web-deps' (npm ci in tests/web)"

if [ -n "${GPUPROBE_WEB_DB-}" ]; then
    cp "$GPUPROBE_WEB_DB" "$DB"
    chmod u+w "$DB"
fi
SHOTS=${GPUPROBE_SCREENSHOTS:-$WORK/screenshots}

# The daemon imports the shipped reference bundles (an H100 and an H200,
# host "reference") into its new database: the device views are checked on
# both, and the compare view puts them side by side.
WITH_REFERENCE=1
# A trace of up to 2000 bytes is answered at once, a larger one becomes a
# job (202): the page is tried both ways (sample.csv, kernel-1.trace).
write_config trace_sync_limit=2000
start_daemon --config "$CONFIG"
wait_ready

# The synthetic fleet the browser test pushes (POST /api/v1/import) once it
# has seen the fleet page of the reference data alone.
synth_fleet fleet

# one memory result with an L2 partition search (the reference runs predate it),
# so the memory view's partition rows are checked against a stored search
mem_job=$(sqlite3 -batch "$DB" "SELECT job_id FROM probe_runs WHERE probe = 'memory' ORDER BY job_id LIMIT 1")
[ -n "$mem_job" ] || fail "no memory result in the reference data"
# plant_l2_search JOB NEAR FAR SECOND_READ HOME_NEAR HOME_FAR COPIES_KEPT SM_PARTITION MASK_BITS
plant_l2_search() {
    sqlite3 -batch "$DB" "INSERT INTO memory_l2_partitions (job_id, device, verdict, warmer_sm, lines,
        near_cycles, far_cycles, far_second_read_cycles, memory_home_near_cycles, memory_home_far_cycles,
        copies_kept, granule_bytes, sm_partition, home_mask_bits)
      SELECT job_id, device, 'two partitions', 0, 2048, $2, $3, $4, $5, $6, $7, 4096,
        '$8', '$9' FROM probe_runs WHERE job_id = $1 LIMIT 1"
}
plant_l2_search "$mem_job" 280 464 287 569 755 1 '[0,0,1,1,1,1,1,1,0,0]' '[12,13,16,17,19]'
# and distributed shared memory: two sizes that launched, one that did not
sqlite3 -batch "$DB" "INSERT INTO memory_dsmem (job_id, device, clock_mhz, chase_loads, wall_s)
  SELECT job_id, device, 1755, 2048, 0.4 FROM probe_runs WHERE job_id = $mem_job LIMIT 1;
  INSERT INTO memory_dsmem_sizes (job_id, asked, driver_width, ranks_seen, agrees, launched,
    lat_local_median, lat_local_min, lat_local_max, lat_neighbour_median, lat_neighbour_min,
    lat_neighbour_max, lat_farthest_median, lat_farthest_min, lat_farthest_max,
    bw_local_median, bw_local_min, bw_local_max, bw_remote_median, bw_remote_min, bw_remote_max,
    gb_s_local, gb_s_remote) VALUES
    ($mem_job, 2, 2, 2, 1, 1, 31.5, 31, 32, 201.25, 200, 203, 201.25, 200, 203, 120.5, 119, 121,
     30.125, 30, 31, 211.5, 52.9),
    ($mem_job, 8, 8, 8, 1, 1, 31.5, 31, 32, 205.75, 204, 207, 215.5, 214, 217, 120.5, 119, 121,
     28.75, 28, 29, 211.5, 50.5);
  INSERT INTO memory_dsmem_sizes (job_id, asked, driver_width, ranks_seen, agrees, launched, error)
  VALUES ($mem_job, 16, 16, 0, 0, 0, 'cuLaunchKernelEx: CUDA_ERROR_CLUSTER_OUT_OF_RESOURCES')"

# ... and asynchronous copies: two latency points (one failed) and the
# bandwidth of two methods at two sizes, one of them from the L2
sqlite3 -batch "$DB" "INSERT INTO memory_async_copy (job_id, device, tensor_map, chunk_bytes, l2_passes)
  SELECT job_id, device, 'ok', 16384, 8 FROM probe_runs WHERE job_id = $mem_job LIMIT 1;
INSERT INTO memory_async_copy_points (job_id, device, kind, method, bytes, level, bytes_per_copy,
    median_cycles, min_cycles, max_cycles, bytes_per_clk_per_sm, error)
  SELECT job_id, device, k, m, b, l, pc, med, lo, hi, r, e FROM
    (SELECT job_id, device FROM probe_runs WHERE job_id = $mem_job LIMIT 1),
    (SELECT 'latency' k, 'bulk' m, 1024 b, 'l2' l, 1024 pc, 731.0 med, 700.0 lo, 790.0 hi, NULL r, NULL e
     UNION ALL SELECT 'latency', 'tensor', 128, 'l2', NULL, NULL, NULL, NULL, NULL, 'no tensor map'
     UNION ALL SELECT 'latency', 'ld', 16, 'l2', 512, 602.0, 590.0, 640.0, NULL, NULL
     UNION ALL SELECT 'latency', 'bulk', 512, 'l2', 512, 488.5, 480.0, 501.0, NULL, NULL
     UNION ALL SELECT 'bandwidth', 'ld', 16, 'dram', NULL, NULL, NULL, NULL, 21.5, NULL
     UNION ALL SELECT 'bandwidth', 'ld', 4, 'dram', NULL, NULL, NULL, NULL, 9.25, NULL
     UNION ALL SELECT 'bandwidth', 'bulk', 16384, 'dram', NULL, NULL, NULL, NULL, 30.0, NULL
     UNION ALL SELECT 'bandwidth', 'bulk', 1024, 'l2', NULL, NULL, NULL, NULL, 55.5, NULL)"
# the summary the probe makes of these points (probes/async_copy_analysis.c:
# best per method and level, the ratio to ld's best, latencies at a size two
# methods share), which the compare view shows
sqlite3 -batch "$DB" "UPDATE memory_async_copy SET summary = '{\"dram\":{\"ld\":{\"best\":21.5,\"at_bytes\":16,\"vs_ld\":1.0},
    \"bulk\":{\"best\":30.0,\"at_bytes\":16384,\"vs_ld\":1.3953}},\"l2\":{\"bulk\":{\"best\":55.5,\"at_bytes\":1024,\"vs_ld\":null}},
    \"latency_by_bytes\":{\"512\":{\"ld\":602.0,\"bulk\":488.5}}}' WHERE job_id = $mem_job"

# The compare view's side-by-side tables need figures on both devices, and
# one device lacking a member: the other reference device's memory result
# gets an L2 partition search of its own (other figures), so each column
# must hold its own device's; distributed shared memory and the
# asynchronous copies stay on the first, so the second shows "not measured".
mem_job2=$(sqlite3 -batch "$DB" "SELECT job_id FROM probe_runs WHERE probe = 'memory' AND job_id <> $mem_job ORDER BY job_id LIMIT 1")
[ -n "$mem_job2" ] || fail "no second memory result in the reference data"
plant_l2_search "$mem_job2" 271.6 452.4 280 603 781 0 '[0,1,1,0,0,1,1,0]' '[12,14,16,17,20]'

# Tensor-core steps in both latency results (mma.sync on both, as measured
# on the two GPUs in tests/gpu/results/2026-11-24-tensor; a wgmma step on
# the first only), so the compare table's TFLOP/s columns hold figures, and
# "—" where a device lacks the step.
lat_jobs=$(sqlite3 -batch "$DB" "SELECT job_id FROM probe_runs WHERE probe = 'latency' ORDER BY job_id LIMIT 2")
[ "$(echo "$lat_jobs" | wc -l)" -eq 2 ] || fail "the reference data lacks two latency results"
lat1=$(echo "$lat_jobs" | head -n1)
lat2=$(echo "$lat_jobs" | tail -n1)
plant_tensor() { # JOB INSTR SASS LATENCY TPUT TFLOPS TPUT_1WG|NULL
    sqlite3 -batch "$DB" "INSERT INTO latency_results (job_id, seq, device, instr, grp, sass_opcode,
        per_step, verified, fixed_latency, latency_median, latency_min, latency_max,
        tput_median, tput_min, tput_max, tflops_median, tflops_min, tflops_max,
        tput_1wg_median, tput_1wg_min, tput_1wg_max)
      SELECT $1, (SELECT max(seq) + 1 FROM latency_results WHERE job_id = $1), device, '$2', 'tensor', '$3',
        1, 1, 0, $4, $4, $4, $5, $5 * 0.999, $5, $6, $6 * 0.999, $6, $7, $7, $7
      FROM probe_runs WHERE job_id = $1 AND probe = 'latency'"
}
plant_tensor "$lat1" hmma_f16_f32 HMMA 24.0 0.6545 642.3 NULL
plant_tensor "$lat1" wgmma_f16_f32 HGMMA 128.5 0.9812 958.75 0.4931
plant_tensor "$lat2" hmma_f16_f32 HMMA 24.0 0.6534 636.1 NULL

# The issue-order experiment in the first control-code result and the reuse
# cache in the first banks result; the second device has neither.
cc_job=$(sqlite3 -batch "$DB" "SELECT job_id FROM probe_runs WHERE probe = 'control-codes' ORDER BY job_id LIMIT 1")
banks_job=$(sqlite3 -batch "$DB" "SELECT job_id FROM probe_runs WHERE probe = 'banks' ORDER BY job_id LIMIT 1")
{ [ -n "$cc_job" ] && [ -n "$banks_job" ]; } || fail "no control-code or banks result in the reference data"
sqlite3 -batch "$DB" "INSERT INTO control_code_meanings (job_id, device, seq, name, text, json)
  SELECT job_id, device, (SELECT max(seq) + 1 FROM control_code_meanings WHERE job_id = $cc_job), 'scheduler',
    'Issue order: greedy, then youngest.',
    '{\"text\":\"Issue order: greedy, then youngest.\",\"rule\":\"greedy, then youngest\",\"greedy\":true,
      \"data\":{\"by_experiment\":{
        \"stall_ends\":{\"decisions\":24,\"hits\":{\"youngest\":23,\"oldest\":1,\"round-robin\":9,\"lowest-id\":1},\"rule\":[\"youngest\"],\"pairs\":40,\"overlapped\":2},
        \"yield1_ends\":{\"decisions\":5,\"hits\":{\"youngest\":3,\"oldest\":2,\"round-robin\":1,\"lowest-id\":2},\"rule\":null}}}}'
  FROM probe_runs WHERE job_id = $cc_job AND probe = 'control-codes'"
sqlite3 -batch "$DB" "UPDATE banks_runs SET reuse_cache_json =
  '{\"questions\":[{\"question\":\"next\",\"asks\":\"Does the next instruction hit the cached operand?\",
     \"ratios\":{\"test\":0.998,\"free\":1.0,\"cleared\":0.51},\"position\":0.9959,\"outcome\":\"hit\",\"rule\":\"a flagged operand serves the next instruction\"},
    {\"question\":\"skip\",\"asks\":\"Does it survive one instruction between?\",
     \"ratios\":{\"test\":0.52,\"free\":1.0,\"cleared\":0.51},\"position\":0.0204,\"outcome\":\"miss\",\"why\":\"the slot was overwritten\"}],
   \"rules\":[\"A reuse flag keeps the operand for the next instruction.\",\"An instruction between clears it.\"],
   \"determined\":2,\"registers\":{\"a\":2,\"c\":4},\"patterns\":{},\"runs\":6}'
  WHERE job_id = $banks_job"

rc=0
BASE_URL=$BASE_URL TOKEN=$TOKEN FIXTURES=$REPO/tests/fixtures/traces CHROMIUM=$CHROMIUM \
    GPUPROBE_SCREENSHOTS=$SHOTS GPUPROBE_WEB_DEVICES=${GPUPROBE_WEB_DEVICES:-2} GPUPROBE_WEB_BOTH_SORTS=1 \
    GPUPROBE_WEB_FLEET=$WORK/fleet GPUPROBE_WEB_L2_PARTITIONS=1 GPUPROBE_WEB_DSMEM=1 \
        GPUPROBE_WEB_ASYNC_COPY=1 GPUPROBE_WEB_COMPARE_SIDE=1 \
    timeout -k 5 100 node "$WEB/dashboard.test.js" || rc=$?
[ "$rc" -eq 0 ] || fail "the browser test failed (status $rc)"

# The screenshots: PNGs of whole pages, far bigger than a blank page.
shopt -s nullglob
pngs=("$SHOTS"/*.png)
[ "${#pngs[@]}" -ge 3 ] || fail "only ${#pngs[@]} screenshots in $SHOTS"
for png in "${pngs[@]}"; do
    [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
    size=$(stat -c %s "$png")
    [ "$size" -gt 20000 ] || fail "$png is only $size bytes: the page looks blank"
done

stop_daemon
echo "ok: ${#pngs[@]} screenshots in $SHOTS"
