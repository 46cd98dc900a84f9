#!/usr/bin/env bash
# Proves the probe results surface on a machine without a GPU: the result endpoints answer 404 with
# what to run (and serve rows put in the database by other means), the probe kinds are listed with
# their parameters, a probe job is refused for want of a device, and `gpuprobe probe` fails with the reason.
. "$(dirname "$0")/lib.sh"

NO_DEV=GPU-00000000-0000-0000-0000-000000000000
SEED=GPU-5eed0000-0000-0000-0000-000000000001

# run_cli ARGS...: runs gpuprobe (at most 20 s); sets RC, OUT and ERR.
run_cli() {
    RC=0
    timeout 20 "$GPUPROBE" "$@" >cli.out 2>cli.err || RC=$?
    OUT=$(cat cli.out) ERR=$(cat cli.err)
}

# cli_refuses STATUS ARGS...: exits STATUS with exactly one line on stderr.
cli_refuses() {
    local want=$1
    shift
    run_cli "$@"
    [ "$RC" -eq "$want" ] || fail "gpuprobe $*: exit $RC, expected $want; stderr: $ERR"
    [ -n "$ERR" ] && [ "$(wc -l <cli.err)" -eq 1 ] || fail "gpuprobe $*: expected one line on stderr, got: $ERR"
}

# sql STATEMENTS: runs them on the daemon's database; prints what they print.
sql() { sqlite3 -batch -bail -cmd ".timeout 5000" "$DB" "$1"; }

# seed_job KIND MEASURED_MS: a succeeded job on $SEED with its probe_runs row; prints its id.
seed_job() {
    sql "INSERT INTO jobs (kind, device, params_json, state, attempt, max_attempts, timeout_s,
                           created_ms, started_ms, finished_ms, result_json)
         VALUES ('$1', '$SEED', '{}', 'succeeded', 1, 1, 600, $2, $2, $2, '{}');
         INSERT INTO probe_runs (job_id, probe, device, device_name, compute_capability,
                                 measured_ms, clock_mhz_before, clock_mhz_after, driver_version,
                                 repeats, wall_s)
         VALUES (last_insert_rowid(), '$1', '$SEED', 'Seeded GPU', '9.0', $2, 1980.0, NULL,
                 '580.95.05', 5, 41.5);
         SELECT max(id) FROM jobs;"
}

start_daemon
wait_ready

# ---- no result: 404 with the probe to run; a bad ?job is 400 ----------------------------
for probe in latency memory; do
    req GET "/api/v1/devices/$NO_DEV/$probe"
    assert_problem 404 not-found
    assert_match "$(json .detail)" "no $probe result for device $NO_DEV.*never seen" "the 404's detail"
    assert_match "$(json .detail)" "\"kind\":\"$probe\"" "the 404's detail"
    assert_match "$(json .detail)" "gpuprobe probe $probe --device" "the 404's detail"
    for bad in abc 0 -1 1.5; do
        req GET "/api/v1/devices/$NO_DEV/$probe?job=$bad"
        assert_problem 400 invalid-request
        assert_field job
    done
done
req POST "/api/v1/devices/$NO_DEV/latency" '{}'
assert_problem 405 method-not-allowed

# ---- the probe kinds and their parameters -----------------------------------------------
req GET /api/v1/job-kinds
assert_status 200
assert_true '[.kinds[].name] | index("latency") != null and index("memory") != null and index("suite") != null'
BODY=$(json '.kinds[] | select(.name == "latency")')
assert_json .needs_gpu true
assert_json .default_timeout_s 600
assert_json '.params.repeats | [.type, .minimum, .maximum, .default, .required]' '["integer",1,50,5,false]'
assert_json '.params.instructions | [.type, .default, .required]' '["string","all",false]'
req GET /api/v1/job-kinds
BODY=$(json '.kinds[] | select(.name == "memory")')
assert_json '[.needs_gpu, (.params | keys)]' '[true,["repeats"]]'
req GET /api/v1/job-kinds
BODY=$(json '.kinds[] | select(.name == "suite")')
assert_json .needs_gpu true

# ---- a probe job needs a device this host has ---------------------------------------------
for dev in 0 "\"$NO_DEV\""; do
    for kind in latency memory suite; do
        req POST /api/v1/jobs "{\"kind\":\"$kind\",\"device\":$dev}"
        assert_problem 422 unknown-device
        assert_field device
    done
done
req POST /api/v1/jobs '{"kind":"latency"}'
assert_problem 400 invalid-request
assert_field device

# ---- rows put in the store are served from the tables --------------------------------------
old=$(seed_job latency 1700000000000)
new=$(seed_job latency 1700000500000)
for id in $old $new; do
    sql "INSERT INTO latency_results (job_id, seq, device, instr, grp, sass_opcode, per_step,
                                      verified, fixed_latency, compiler_stall, latency_median,
                                      latency_min, latency_max, tput_median, tput_min, tput_max)
         VALUES ($id, 0, '$SEED', 'ffma', 'fp32', 'FFMA', 1, 1, 1, 4, 4.0, 4.0, 4.5,
                 127.5, 127.0, 128.0);
         INSERT INTO latency_results (job_id, seq, device, instr, grp, sass_opcode, per_step,
                                      verified, error)
         VALUES ($id, 1, '$SEED', 'lds', 'shared', 'LDS', 1, 0, 'not what the probe times');"
done
sql "UPDATE latency_results SET latency_median = 5.0 WHERE job_id = $old AND instr = 'ffma'"

req GET "/api/v1/devices/$SEED/latency"
assert_status 200
assert_json .job_id "$new"
assert_json .job "/api/v1/jobs/$new"
assert_json .probe latency
assert_true '(.device) == {"compute_capability":"9.0","name":"Seeded GPU","uuid":"'"$SEED"'"}'
assert_json .measured_at 2023-11-14T22:21:40.000Z
assert_true '(.clock_mhz) == {"after":null,"before":1980}'
assert_json '[.driver_version, .repeats, .wall_s]' '["580.95.05",5,41.5]'
assert_json '[.history[].job_id]' "[$new,$old]"
assert_json '.entries | length' 2
assert_json '.entries[0] | [.name, .group, .sass_opcode, .per_step]' '["ffma","fp32","FFMA",1]'
assert_true '(.entries[0].sass) == {"compiler_stall":4,"fixed_latency":true,"verified":true}'
assert_true '(.entries[0].latency_cycles) == {"max":4.5,"median":4,"min":4}'
assert_json '.entries[0].throughput_per_clock_per_sm.median' 127.5
assert_json '.entries[0] | [.issue_cycles, .error]' '[null,null]'
assert_json '.entries[1] | [.name, .sass.verified, .latency_cycles, .error]' '["lds",false,null,"not what the probe times"]'

req GET "/api/v1/devices/$SEED/latency?job=$old"
assert_status 200
assert_json .job_id "$old"
assert_json .entries[0].latency_cycles.median 5
req GET "/api/v1/devices/$SEED/latency?job=999999"
assert_problem 404 not-found
assert_match "$(json .detail)" "in job 999999" "the 404's detail for ?job"

mem=$(seed_job memory 1700000600000)
sql "INSERT INTO memory_curve (job_id, device, load, bytes, median, min, max)
       VALUES ($mem, '$SEED', 'ca', 2048, 34.0, 33.0, 35.0), ($mem, '$SEED', 'ca', 1024, 33.0, 33.0, 33.5);
     INSERT INTO memory_levels (job_id, device, load, level, cycles, up_to_bytes)
       VALUES ($mem, '$SEED', 'ca', 1, 33.5, 196608);
     INSERT INTO memory_scalars (job_id, device, name, median, min, max, error)
       VALUES ($mem, '$SEED', 'shared', 30.0, 30.0, 31.0, NULL),
              ($mem, '$SEED', 'curve_cg', NULL, NULL, NULL, 'module build failed'),
              ($mem, '$SEED', 'levels_cg', NULL, NULL, NULL, 'module build failed'),
              ($mem, '$SEED', 'departure_coalesced', 2.0, 2.0, 2.5, NULL),
              ($mem, '$SEED', 'departure_uncoalesced', NULL, NULL, NULL, 'no module');"
req GET "/api/v1/devices/$SEED/memory"
assert_status 200
assert_json .job_id "$mem"
assert_json '[.curves.ca[].bytes]' '[1024,2048]'
assert_true '(.curves.ca[0].cycles) == {"max":33.5,"median":33,"min":33}'
assert_true '(.curves.cg) == {"error":"module build failed"}'
assert_true '.levels.ca == [{"cycles":33.5,"level":1,"up_to_bytes":196608}]'
assert_json .levels.cg.error 'module build failed'
assert_json .shared_cycles.median 30
assert_true '(.departure) == {"coalesced_cycles":{"max":2.5,"median":2,"min":2},"uncoalesced_cycles":{"error":"no module"}}'
assert_json '[.history[].job_id]' "[$mem]"
# the latency view of the same device is unchanged
req GET "/api/v1/devices/$SEED/latency"
assert_json .job_id "$new"
stop_daemon

# ---- the command line -------------------------------------------------------------------------
run_cli --help
assert_match "$OUT" "probe" "gpuprobe --help"
run_cli probe --help
[ "$RC" -eq 0 ] || fail "gpuprobe probe --help exited $RC: $ERR"
assert_match "$OUT" "--device" "probe --help"
assert_match "$OUT" "--instructions" "probe --help"
assert_match "$OUT" "terminal" "probe --help"

cli_refuses 1 probe latency --device 0
assert_match "$ERR" "^gpuprobe probe: .*(no GPU|driver|libcuda)" "the reason with no GPU"
cli_refuses 1 probe memory --device 0
assert_match "$ERR" "(no GPU|driver|libcuda)" "the reason with no GPU"
cli_refuses 1 probe suite --device "$NO_DEV" --json
assert_match "$ERR" "latency: .*(no GPU|driver|libcuda)" "the suite's reason"
[ -z "$OUT" ] || fail "a probe that could not run printed: $OUT"

cli_refuses 2 probe latency
assert_match "$ERR" "--device" "the reason without --device"
cli_refuses 2 probe nosuch --device 0
cli_refuses 2 probe --device 0
cli_refuses 2 probe latency --device 0 --bogus
cli_refuses 2 probe latency --device 0 --instructions ffma,nosuch
assert_match "$ERR" "--instructions: unknown instruction 'nosuch' \(known: all, .*ffma" "the reason for an unknown instruction"
cli_refuses 2 probe latency --device 0 --repeats 0
assert_match "$ERR" "--repeats: must be an integer from 1 to 50" "the reason for --repeats 0"
cli_refuses 2 probe latency --device 0 --repeats many
cli_refuses 2 probe memory --device 0 --instructions ffma
cli_refuses 2 probe latency extra --device 0

# --db: the database is opened before the probe runs, and a probe that cannot run stores nothing.
cli_refuses 1 probe latency --device 0 --db /proc/x/y.db
assert_match "$ERR" "/proc/x/y\.db" "the reason for an unusable database"
cli_refuses 1 probe latency --device 0 --db "$WORK/cli.db"
[ "$(sqlite3 "$WORK/cli.db" 'SELECT count(*) FROM jobs')" = 0 ] || fail "a failed probe left a job in cli.db"

# The worker refuses an unknown instruction before it touches a GPU, and reports no GPU as a result.
cli_refuses 2 worker --kind latency --device 0 --params '{"instructions":"nope"}'
assert_match "$ERR" "params.instructions: unknown instruction 'nope'" "the worker's reason"
run_cli worker --kind latency --device 0 --params '{"instructions":"ffma","repeats":1}'
[ "$RC" -eq 0 ] || fail "worker exited $RC: $ERR"
BODY=$OUT STATUS=cli REQ_METHOD=gpuprobe REQ_PATH=worker
assert_json .ok false
assert_match "$(json .error)" "(no GPU|driver|libcuda)" "the worker's error"
