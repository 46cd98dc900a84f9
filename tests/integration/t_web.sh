#!/usr/bin/env bash
# The dashboard in a real browser: tests/web/dashboard.test.js drives Debian's
# headless chromium through playwright-core against this daemon, with the
# reference results its database holds, and holds every view to the daemon's
# own API: the overview (devices, the reason no GPU is attached, jobs shown
# succeeded, a job's deep link opening its parameters, events and result, the
# kinds offered, a failed job's attempts, the jobs table at a phone's width,
# times with their zone), each device's six result views with their charts'
# series and points, the compare view (its devices told apart without
# colour; its side-by-side tables of the Hopper
# features held column by column to each device's documents, with planted
# figures on both reference devices and members one of them lacks), the occupancy calculator's answer against the
# API's, a trace sorted from the page, answered at once and as a job (per-SM
# summary, download equal to the API's output), a job submitted and cancelled from the page, a bad token's
# error, the fleet page before and after a synthetic fleet is pushed (as
# t_fleet.sh makes it: 31 GPUs of 3 models on 8 hosts, 4 planted faults, and
# a 32nd GPU on a newer driver, two of unknown driver) with each GPU's
# driver, the model split over drivers flagged and the one whose GPUs run one
# driver besides unknown not flagged, the reference data apart from the nodes
# and counted as no host ("No nodes yet" before the push), and
# its distributions, the kernel-time predictor (a PTX file's prediction with
# every intermediate and each parameter's job, a parameter by its index, the
# form's and openapi.json's words on static shared memory and parameters,
# the server's reason for a bad
# kernel, the 409 of a device imported without measurements; at 390 px),
# README.md's dashboard table holding a row for every view, and no console
# errors. It prints each view's load time. Screenshots
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
# has seen the fleet page of the reference data alone; with it, a 32nd GPU
# (an H200 of its own) measured under a newer driver, so that a model's GPUs
# run two drivers and the page must flag it (as t_fleet.sh splits one).
synth_fleet fleet
synth_fleet newdriver 32 --driver 590.48.01
cp newdriver/00031.json fleet/00031.json || fail "fleet-synth wrote no 32nd GPU"
# And two GPUs from nodes older than the driver field (figures alone, no
# driver: the API's null, "unknown"): a 33rd of the synthetic model, whose
# other GPUs all run one driver (no split: unknown is not a second driver),
# and a 35th, an H200 beside the two drivers above.
synth_fleet unknown 35 --figures --driver ''
cp unknown/00032.json unknown/00034.json fleet/ || fail "fleet-synth wrote no 33rd and 35th GPU"

# The reference results hold every probe's members (tests/gpu/results/
# 2026-11-24-h{100,200}-session5). The pages' rarer paths are made from
# them here: on the first device a cluster size that did not launch and an
# asynchronous-copy point that failed; on the second, a shared-memory figure
# and the .cg curve that failed, and what a result from before a probe looks like (no distributed shared memory, no asynchronous
# copies, one wgmma step fewer, no issue-order experiment, no reuse cache),
# so the compare view shows "not measured" / "—" in its column.
first() { # first PROBE [NOT_JOB]: the first reference job of that probe
    sqlite3 -batch "$DB" "SELECT job_id FROM probe_runs WHERE probe = '$1' AND job_id <> ${2:-0} ORDER BY job_id LIMIT 1"
}
mem_job=$(first memory); mem_job2=$(first memory "${mem_job:-0}")
lat1=$(first latency); lat2=$(first latency "${lat1:-0}")
cc_job2=$(first control-codes "$(first control-codes)")
banks_job2=$(first banks "$(first banks)")
for j in "$mem_job" "$mem_job2" "$lat1" "$lat2" "$cc_job2" "$banks_job2"; do
    [ -n "$j" ] || fail "the reference data lacks a result of each probe on both devices"
done
sqlite3 -batch "$DB" "PRAGMA foreign_keys = ON;
  UPDATE memory_dsmem_sizes SET launched = 0, error = 'cuLaunchKernelEx: CUDA_ERROR_CLUSTER_OUT_OF_RESOURCES',
    lat_local_median = NULL, lat_local_min = NULL, lat_local_max = NULL,
    lat_neighbour_median = NULL, lat_neighbour_min = NULL, lat_neighbour_max = NULL,
    lat_farthest_median = NULL, lat_farthest_min = NULL, lat_farthest_max = NULL,
    bw_local_median = NULL, bw_local_min = NULL, bw_local_max = NULL,
    bw_remote_median = NULL, bw_remote_min = NULL, bw_remote_max = NULL,
    gb_s_local = NULL, gb_s_remote = NULL
    WHERE job_id = $mem_job AND asked = 16;
  UPDATE memory_async_copy_points SET error = 'no tensor map', median_cycles = NULL, min_cycles = NULL,
    max_cycles = NULL, runs = NULL
    WHERE job_id = $mem_job AND kind = 'latency' AND method = 'tensor' AND bytes = 128;
  DELETE FROM memory_dsmem WHERE job_id = $mem_job2;
  UPDATE memory_scalars SET median = NULL, min = NULL, max = NULL, error = 'cuLaunchKernel: timed out'
    WHERE job_id = $mem_job2 AND name = 'shared';
  DELETE FROM memory_curve WHERE job_id = $mem_job2 AND load = 'cg';
  INSERT INTO memory_scalars (job_id, device, name, error)
    SELECT job_id, device, 'curve_cg', 'module build failed: ptxas error' FROM memory_scalars
    WHERE job_id = $mem_job2 AND name = 'shared';
  DELETE FROM memory_async_copy WHERE job_id = $mem_job2;
  DELETE FROM latency_results WHERE job_id = $lat2 AND instr = 'wgmma_f16_ss_n64';
  DELETE FROM control_code_meanings WHERE job_id = $cc_job2 AND name = 'scheduler';
  UPDATE banks_runs SET reuse_cache_json = NULL WHERE job_id = $banks_job2;" ||
    fail "could not shape the reference results for the pages' rarer paths"
# The reference results are from before the block placement probe: the
# H200's gets the one another H200 measured in session 14
# (tests/gpu/results/2026-12-02-h200-session14/block_placement.json), the
# H100's stays without, as a result from before the probe.
bp=$REPO/tests/gpu/results/2026-12-02-h200-session14/block_placement.json
h200_mem=$(sqlite3 -batch "$DB" "SELECT p.job_id FROM probe_runs p JOIN devices d ON d.uuid = p.device
    WHERE p.probe = 'memory' AND d.name LIKE '%H200%' ORDER BY p.job_id LIMIT 1")
[ -n "$h200_mem" ] || fail "the reference data lacks an H200 memory result"
sqlite3 -batch "$DB" "INSERT INTO memory_block_placement (job_id, device, status, threads_per_block,
    blocks, blocks_per_sm, sms, spin_ns, launches, same_as_first, one_wave, deal_ns,
    check_threads_per_block, check_blocks, check_blocks_per_sm, check_one_wave, check_predicted, sm_order)
  SELECT job_id, device, 'determined', $(jq -r '[.threads_per_block, .blocks, .blocks_per_sm, .sms, .spin_ns,
    .launches, .same_as_first, (if .one_wave then 1 else 0 end), .deal_ns, .check.threads_per_block,
    .check.blocks, .check.blocks_per_sm, (if .check.one_wave then 1 else 0 end), .check.predicted] | join(", ")' "$bp"),
    '$(jq -c .order "$bp")' FROM probe_runs WHERE job_id = $h200_mem AND probe = 'memory' LIMIT 1" ||
    fail "could not add a block placement to the H200's memory result"

rc=0
BASE_URL=$BASE_URL TOKEN=$TOKEN FIXTURES=$REPO/tests/fixtures/traces CHROMIUM=$CHROMIUM \
    GPUPROBE_SCREENSHOTS=$SHOTS GPUPROBE_WEB_DEVICES=${GPUPROBE_WEB_DEVICES:-2} GPUPROBE_WEB_BOTH_SORTS=1 \
    GPUPROBE_WEB_FLEET=$WORK/fleet GPUPROBE_WEB_L2_PARTITIONS=1 GPUPROBE_WEB_DSMEM=1 \
        GPUPROBE_WEB_ASYNC_COPY=1 GPUPROBE_WEB_PLACEMENT=1 GPUPROBE_WEB_COMPARE_SIDE=1 GPUPROBE_WEB_FAILED_FIGURES=1 \
    GPUPROBE_WEB_DRIVER_SPLIT=1 GPUPROBE_WEB_DRIVER_UNKNOWN=1 \
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
