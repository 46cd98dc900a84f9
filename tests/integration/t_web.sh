#!/usr/bin/env bash
# The dashboard in a real browser: tests/web/dashboard.test.js drives Debian's
# headless chromium through playwright-core against this daemon, with the
# reference results its database holds, and holds every view to the daemon's
# own API: the overview (devices, the reason no GPU is attached, jobs shown
# succeeded, a job's deep link opening its parameters, events and result, the
# kinds offered), each device's six result views with their charts' series
# and points, the compare view, the occupancy calculator's answer against the
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
sqlite3 -batch "$DB" "INSERT INTO memory_l2_partitions (job_id, device, verdict, warmer_sm, lines,
    near_cycles, far_cycles, far_second_read_cycles, memory_home_near_cycles, memory_home_far_cycles,
    copies_kept, granule_bytes, sm_partition, home_mask_bits)
  SELECT job_id, device, 'two partitions', 0, 2048, 280, 464, 287, 569, 755, 1, 4096,
    '[0,0,1,1,1,1,1,1,0,0]', '[12,13,16,17,19]' FROM probe_runs WHERE job_id = $mem_job LIMIT 1"
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
     UNION ALL SELECT 'bandwidth', 'ld', 16, 'dram', NULL, NULL, NULL, NULL, 21.5, NULL
     UNION ALL SELECT 'bandwidth', 'ld', 4, 'dram', NULL, NULL, NULL, NULL, 9.25, NULL
     UNION ALL SELECT 'bandwidth', 'bulk', 16384, 'dram', NULL, NULL, NULL, NULL, 30.0, NULL
     UNION ALL SELECT 'bandwidth', 'bulk', 1024, 'l2', NULL, NULL, NULL, NULL, 55.5, NULL)"

rc=0
BASE_URL=$BASE_URL TOKEN=$TOKEN FIXTURES=$REPO/tests/fixtures/traces CHROMIUM=$CHROMIUM \
    GPUPROBE_SCREENSHOTS=$SHOTS GPUPROBE_WEB_DEVICES=${GPUPROBE_WEB_DEVICES:-2} GPUPROBE_WEB_BOTH_SORTS=1 \
    GPUPROBE_WEB_FLEET=$WORK/fleet GPUPROBE_WEB_L2_PARTITIONS=1 GPUPROBE_WEB_DSMEM=1 \
        GPUPROBE_WEB_ASYNC_COPY=1 \
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
