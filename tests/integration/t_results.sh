#!/usr/bin/env bash
# Proves the probe results surface on a machine without a GPU: the result endpoints answer 404 with
# what to run (and serve rows put in the database by other means, or result documents stored
# through the daemon by the test build's test-result kind), the probe kinds are listed with
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
# endpoint:probe (the dual-issue probe is served at /dual-issue, and at /issue, its old path)
for pair in latency:latency memory:memory banks:banks control-codes:control-codes dual-issue:dual-issue \
            issue:dual-issue; do
    path=${pair%%:*} probe=${pair#*:}
    req GET "/api/v1/devices/$NO_DEV/$path"
    assert_problem 404 not-found
    assert_match "$(json .detail)" "no $probe result for device $NO_DEV.*never seen" "the 404's detail"
    assert_match "$(json .detail)" "\"kind\":\"$probe\"" "the 404's detail"
    assert_match "$(json .detail)" "gpuprobe probe $probe --device" "the 404's detail"
    for bad in abc 0 -1 1.5; do
        req GET "/api/v1/devices/$NO_DEV/$path?job=$bad"
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
req GET /api/v1/job-kinds
BODY=$(json '.kinds[] | select(.name == "banks")')
assert_json '[.needs_gpu, (.params | keys)]' '[true,["repeats","sample"]]'
assert_json '.params.sample | [.type, .minimum, .maximum, .default]' '["integer",0,10000,64]'
assert_json '.params.repeats | [.minimum, .maximum, .default]' '[1,50,3]'
for kind in control-codes dual-issue; do
    req GET /api/v1/job-kinds
    BODY=$(json ".kinds[] | select(.name == \"$kind\")")
    assert_json '[.needs_gpu, (.params | keys), .params.repeats.default]' '[true,["repeats"],3]'
done

# ---- a probe job needs a device this host has ---------------------------------------------
for dev in 0 "\"$NO_DEV\""; do
    for kind in latency memory banks control-codes dual-issue suite; do
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

# ---- documents stored through the daemon (test-result jobs) are served ------------------------
# The three documents of the probes that edit machine code are synthetic (see the fixtures'
# README); all four are on the latency capture's device.
FIX=$REPO/tests/fixtures/results
DEV=$(jq -r .device.uuid "$FIX/latency-h200.json")
# store FILE: a test-result job that answers with FILE; waits for it; sets JOB_ID.
store() {
    submit "{\"kind\":\"test-result\",\"params\":{\"file\":\"$1\"}}"
    wait_job_state "$JOB_ID" succeeded 20
}
store "$FIX/latency-h200.json"
lat_job=$JOB_ID
req GET "/api/v1/devices/$DEV/latency"
assert_status 200
assert_json '[.entries[] | .min_safe_stall] | unique' '[null]'
store "$FIX/banks-example.json"
banks_job=$JOB_ID
store "$FIX/control-codes-example.json"
cc_job=$JOB_ID
store "$FIX/dual-issue-example.json"
dual_job=$JOB_ID

req GET "/api/v1/devices/$DEV/banks"
assert_status 200
assert_json '[.job_id, .job, .probe]' "[$banks_job,\"/api/v1/jobs/$banks_job\",\"banks\"]"
assert_match "$(json .measured_at)" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$' "measured_at"
assert_json '[.bank_count, (.map | length), .classes[0][1], .classes[1][0]]' '[2,252,2,1]'
assert_json '.costs.two_same_bank_a_b | [.sources, .reuse, .conflict]' '[[0,2,"RZ"],0,true]'
assert_true '.costs.two_same_bank_a_b.ffma_per_sm_clock.median < 2'
assert_json '[.untested_registers[].register]' '[252,253,254]'
assert_json '[.confirmation.agree, .runs.total, .sass_check.verified]' '[64,482,true]'
req GET "/api/v1/devices/$DEV/banks?job=$banks_job"
assert_json .job_id "$banks_job"
req GET "/api/v1/devices/$DEV/banks?job=$cc_job"
assert_problem 404 not-found
# a job named that is another probe's: said so, not "run the probe"
assert_match "$(json .detail)" "in job $cc_job: that job measured another device or another probe" \
    "the 404's detail for another probe's job"
case "$(json .detail)" in *"run the banks probe"*) fail "the 404 for ?job advises running the probe" ;; esac

req GET "/api/v1/devices/$DEV/control-codes"
assert_status 200
assert_json '[.job_id, .probe, (.instructions | length)]' "[$cc_job,\"control-codes\",8]"
assert_json '.instructions[0] | [.name, .compiler_stall, .min_safe_stall, (.sweep | length)]' '["ffma",4,4,32]'
assert_json '.instructions[3] | [.name, .min_safe_stall, (.sweep | length)]' '["hfma2",null,0]'
assert_match "$(json .instructions[3].error)" "not what the probe times" "the unmeasured instruction's error"
assert_json '.instructions[0].fit.chain | [.from_stall, .to_stall]' '[4,15]'
assert_json '.meanings | keys' '["dual_issue","reuse","stall","wait_mask","yield"]'
assert_json .meanings.dual_issue.observed false

req GET "/api/v1/devices/$DEV/issue"
assert_status 200
old_path=$BODY
req GET "/api/v1/devices/$DEV/dual-issue"
assert_status 200
[ "$BODY" = "$old_path" ] || fail "/dual-issue and its old path /issue answer differently"
assert_json '[.job_id, .probe, .dual_issue_observed, (.results | length)]' "[$dual_job,\"dual-issue\",false,60]"
assert_match "$(json .verdict)" "^No dual issue" "the verdict"
assert_json '.results[4] | [.pattern, .operands, .warps_per_scheduler, .nominal_ffma_per_sm_clock]' '["1-1-2-2","conflict_free",1,192]'
assert_json '[.peak_ffma_per_sm_clock, .banks.bank_count, (.operands | keys)]' '[128,2,["conflict_free","naive"]]'

# the smallest safe stall stands beside the latency, with the run that found it
req GET "/api/v1/devices/$DEV/latency"
assert_json .job_id "$lat_job"
assert_true '(.entries[] | select(.name == "ffma") | .min_safe_stall) == {"stall":4,"job_id":'"$cc_job"'}'
assert_json '.entries[] | select(.name == "dadd") | .min_safe_stall' null
assert_json '.entries[] | select(.name == "lds") | .min_safe_stall' null
stop_daemon

# ---- the command line -------------------------------------------------------------------------
run_cli --help
assert_match "$OUT" "probe" "gpuprobe --help"
run_cli probe --help
[ "$RC" -eq 0 ] || fail "gpuprobe probe --help exited $RC: $ERR"
assert_match "$OUT" "--device" "probe --help"
assert_match "$OUT" "--instructions" "probe --help"
assert_match "$OUT" "--sample" "probe --help"
assert_match "$OUT" "control-codes" "probe --help"
assert_match "$OUT" "terminal" "probe --help"

cli_refuses 1 probe latency --device 0
assert_match "$ERR" "^gpuprobe probe: .*(no GPU|driver|libcuda)" "the reason with no GPU"
cli_refuses 1 probe memory --device 0
assert_match "$ERR" "(no GPU|driver|libcuda)" "the reason with no GPU"
cli_refuses 1 probe suite --device "$NO_DEV" --json
assert_match "$ERR" "latency: .*(no GPU|driver|libcuda)" "the suite's reason"
[ -z "$OUT" ] || fail "a probe that could not run printed: $OUT"

for probe in banks control-codes dual-issue; do
    cli_refuses 1 probe "$probe" --device 0
    assert_match "$ERR" "^gpuprobe probe: .*(no GPU|driver|libcuda)" "the reason with no GPU"
done
cli_refuses 2 probe banks --device 0 --sample many
assert_match "$ERR" "--sample must be an integer" "the reason for --sample many"
cli_refuses 2 probe banks --device 0 --sample 10001
assert_match "$ERR" "--sample: must be an integer from 0 to 10000" "the reason for --sample 10001"
cli_refuses 2 probe latency --device 0 --sample 5
cli_refuses 2 probe dual-issue --device 0 --repeats 51

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

# --db: the database is opened before the probe runs, and a probe that cannot run stores
# nothing: a database it made goes again, one that was there gets no job.
cli_refuses 1 probe latency --device 0 --db /proc/x/y.db
assert_match "$ERR" "/proc/x/y\.db" "the reason for an unusable database"
cli_refuses 1 probe latency --device 0 --db "$WORK/cli.db"
if ls "$WORK"/cli.db* >/dev/null 2>&1; then fail "a failed probe left the database it made: $(ls "$WORK"/cli.db*)"; fi
"$GPUPROBE" import "$REPO/data/reference/h200.json" --db "$WORK/cli.db" >/dev/null || fail "importing into cli.db"
cli_refuses 1 probe latency --device 0 --db "$WORK/cli.db"
[ "$(sqlite3 "$WORK/cli.db" "SELECT count(*) FROM jobs WHERE kind = 'latency'")" = 0 ] || fail "a failed probe left a job in cli.db"
# where the results would go is settled before the GPU is asked for, so a
# place they cannot be kept is named rather than found after the measuring:
# an empty --db, a link to a folder that is not there, a TMPDIR for --push
# that is not there
cli_refuses 2 probe latency --device 0 --db ""
assert_match "$ERR" "--db: a database file path is needed" "the reason for an empty --db"
ln -s /nonexistent/z.db "$WORK/dangling.db"
cli_refuses 1 probe latency --device 0 --db "$WORK/dangling.db"
assert_match "$ERR" "cannot make the database .*dangling\.db \(a link to /nonexistent/z\.db\): /nonexistent" \
    "the reason for a --db that links to a missing folder"
printf '%s\n' "$TOKEN" >"$WORK/push-token"
TMPDIR=/nonexistent cli_refuses 1 probe latency --device 0 --push http://127.0.0.1:1 --token-file "$WORK/push-token"
assert_match "$ERR" "cannot make a temporary folder /nonexistent/gpuprobe-push-" "the reason for a TMPDIR that is not there"

# The worker refuses an unknown instruction before it touches a GPU, and reports no GPU as a result.
cli_refuses 2 worker --kind latency --device 0 --params '{"instructions":"nope"}'
assert_match "$ERR" "params.instructions: unknown instruction 'nope'" "the worker's reason"
run_cli worker --kind latency --device 0 --params '{"instructions":"ffma","repeats":1}'
[ "$RC" -eq 0 ] || fail "worker exited $RC: $ERR"
BODY=$OUT STATUS=cli REQ_METHOD=gpuprobe REQ_PATH=worker
assert_json .ok false
assert_match "$(json .error)" "(no GPU|driver|libcuda)" "the worker's error"
