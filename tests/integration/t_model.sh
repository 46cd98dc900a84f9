#!/usr/bin/env bash
# Proves the kernel-time model's surface on a machine without a GPU: occupancy (its rules, curves) by compute
# capability over HTTP (a calculation: no token needed) and on the command line, refusals naming the
# field; a prediction refused with 409 naming the probe to run until the device has latency and
# memory measurements (seeded into the database as rows), then answered with the values used and
# the jobs that measured them; text that is not PTX refused, not predicted (command and API); the validation endpoint's 404 and the job kind's refusals.
. "$(dirname "$0")/lib.sh"

SEED=GPU-5eed0000-0000-0000-0000-00000000mode
KERNEL='{"grid":1024,"block":256,"regs":32,"per_warp":{"fp32":100,"int":10,"coalesced":2}}'

run_cli() {
    RC=0
    timeout 20 "$GPUPROBE" "$@" >cli.out 2>cli.err || RC=$?
    OUT=$(cat cli.out) ERR=$(cat cli.err)
}

sql() { sqlite3 -batch -bail -cmd ".timeout 5000" "$DB" "$1"; }

# A device the store has seen (not attached): what a daemon on another host recorded.
seed_device() {
    sql "INSERT INTO hosts (hostname, machine_id, first_seen_ms, last_seen_ms)
         VALUES ('elsewhere', '', 1, 1);
         INSERT INTO devices (uuid, host_id, name, compute_capability, info_json, present,
                              first_seen_ms, last_seen_ms)
         VALUES ('$SEED', last_insert_rowid(), 'Seeded H200', '9.0',
                 '{\"uuid\":\"$SEED\",\"name\":\"Seeded H200\",\"compute_capability\":\"9.0\",
                   \"sm_count\":132,\"warp_size\":32,\"memory_clock_khz\":3201000,
                   \"memory_bus_width_bits\":6016}', 0, 1, 1);"
}

# seed_run KIND MS: a succeeded job of KIND on the seeded device with its probe_runs row.
seed_run() {
    sql "INSERT INTO jobs (kind, device, params_json, state, attempt, max_attempts, timeout_s,
                           created_ms, started_ms, finished_ms, result_json)
         VALUES ('$1', '$SEED', '{}', 'succeeded', 1, 1, 600, $2, $2, $2, '{}');
         INSERT INTO probe_runs (job_id, probe, device, device_name, compute_capability,
                                 measured_ms, clock_mhz_before, clock_mhz_after, driver_version,
                                 repeats, wall_s)
         VALUES (last_insert_rowid(), '$1', '$SEED', 'Seeded H200', '9.0', $2, 1980.0, 1980.0,
                 '580.159.04', 5, 1.0);
         SELECT max(id) FROM jobs;"
}

seed_latency() {
    local id
    id=$(seed_run latency 1000)
    for e in ffma:120 dfma:64 iadd:64 rcp:16 f2i:16 lds:32; do
        sql "INSERT INTO latency_results (job_id, seq, device, instr, grp, sass_opcode, tput_median,
                                          tput_min, tput_max)
             VALUES ($id, 0, '$SEED', '${e%%:*}', 'g', 'OP', ${e#*:}, ${e#*:}, ${e#*:});"
    done
    echo "$id"
}

seed_memory() {
    local id
    id=$(seed_run memory 2000)
    for e in device_memory_cg:640 departure_coalesced:5.5 departure_uncoalesced:30; do
        sql "INSERT INTO memory_scalars (job_id, device, name, median, min, max)
             VALUES ($id, '$SEED', '${e%%:*}', ${e#*:}, ${e#*:}, ${e#*:});"
    done
    echo "$id"
}

start_daemon
wait_ready

# ---- occupancy: a calculation, answered without a token --------------------------------
req POST /api/v1/model/occupancy '{"compute_capability":"9.0","regs":40,"block":96}' ""
assert_status 200
req POST /api/v1/model/occupancy '{"compute_capability":"9.0","regs":40,"block":96}'
assert_status 200
assert_json .blocks_per_sm 16
assert_json .limiter registers
assert_json .registers.per_warp_allocated 1280
assert_json .limits.warps 21
assert_json .rules.register_allocation_unit 256
req POST /api/v1/model/occupancy '{"compute_capability":"8.6","regs":32,"block":1024}'
assert_status 200
assert_json .blocks_per_sm 1
assert_json .limiter warps
req POST /api/v1/model/occupancy '{"compute_capability":"9.0","block":96}'
assert_problem 400 invalid-request
assert_field regs
req POST /api/v1/model/occupancy '{"compute_capability":"9.0","regs":1,"block":1,"carveout":101}'
assert_problem 400 invalid-request
assert_field carveout
req POST /api/v1/model/occupancy '{"compute_capability":"6.1","regs":1,"block":32}'
assert_problem 422
assert_field compute_capability
req POST /api/v1/model/occupancy '{"compute_capability":"9.0","regs":1,"block":32,"warps":2}'
assert_problem 400 invalid-request
assert_field warps
req POST /api/v1/model/occupancy '{"device":0,"regs":1,"block":32}'
assert_problem 422 unknown-device
req POST /api/v1/model/occupancy '{"compute_capability":"9.0",'
assert_problem 400 invalid-json
req PUT /api/v1/model/occupancy '{}'
assert_problem 405 method-not-allowed
# The rules the calculator knows, one row per compute capability, without a token.
req GET /api/v1/model/occupancy "" ""
assert_status 200
assert_json '[.rules[].compute_capability] | join(",")' "7.0,7.5,8.0,8.6,8.9,9.0"
assert_json '.rules[] | select(.compute_capability == "9.0") | .max_warps_per_sm' 64
# The curves, asked for: each point the same as asking for that launch alone.
req POST /api/v1/model/occupancy '{"compute_capability":"9.0","regs":40,"block":96,"curves":true}' ""
assert_status 200
assert_json '.curves | keys | join(",")' "block,regs,smem"
assert_json '.curves.block.x | length' 32
assert_json '.curves.regs.x | length' 255
assert_json '.curves.block.active_warps[(.curves.block.x | index(96))]' 48
curve_regs_128=$(json '.curves.regs.active_warps[(.curves.regs.x | index(128))]')
req POST /api/v1/model/occupancy '{"compute_capability":"9.0","regs":128,"block":96}' ""
assert_json .active_warps "$curve_regs_128"
req POST /api/v1/model/occupancy '{"compute_capability":"9.0","regs":40,"block":96,"curves":"yes"}'
assert_problem 400 invalid-request
assert_field curves
req POST /api/v1/model/occupancy '{"compute_capability":"6.1","regs":1,"block":32}'
assert_match "$(json .detail)" "known: 7.0, 7.5, 8.0, 8.6, 8.9, 9.0" "the known capabilities"

run_cli model occupancy --cc 9.0 --regs 40 --block 96 --compact
[ "$RC" -eq 0 ] || fail "model occupancy: exit $RC: $ERR"
[ "$(printf '%s' "$OUT" | jq .blocks_per_sm)" = 16 ] || fail "model occupancy printed $OUT"
# On a terminal (script gives it one), a short table instead of JSON.
table=$(script -qec "'$GPUPROBE' model occupancy --cc 9.0 --regs 40 --block 96" /dev/null | tr -d '\r')
assert_match "$table" "^compute capability 9.0: 16 blocks per SM, 48 warps active of 64 \(occupancy 75%\)" \
    "the occupancy table's first line"
assert_match "$table" "registers +16  <- limiter" "the limiter in the table"
run_cli model occupancy --cc 9.0 --regs 40
[ "$RC" -eq 2 ] || fail "model occupancy without --block: exit $RC"
assert_match "$ERR" "--block: is required" "the usage error, in the option's name"
run_cli model occupancy --cc 9.0 --regs 64 --block 256 --smem 100000 --compact
[ "$RC" -eq 0 ] || fail "model occupancy over the dynamic maximum: exit $RC"
assert_match "$(printf '%s' "$OUT" | jq -r .refused)" "--max-dynamic-smem on the command line" \
    "the option that raises the dynamic maximum"
run_cli model occupancy --block 256 --regs 40
[ "$RC" -eq 2 ] || fail "model occupancy without --cc: exit $RC"
assert_match "$ERR" "--cc: is required" "the usage error, in the option's name"
run_cli model occupancy --cc 9.0 --regs x --block 32
[ "$RC" -eq 2 ] || fail "model occupancy --regs x: exit $RC"

# ---- predict: a device, then its measurements ----------------------------------------------
req POST /api/v1/model/predict "{\"device\":\"$SEED\",\"kernel\":$KERNEL}"
assert_problem 422 unknown-device
run_cli model predict --db "$DB" --device "$SEED" --kernel "$KERNEL"
[ "$RC" -eq 1 ] || fail "model predict for a device not in the database: exit $RC"
assert_match "$ERR" "device $SEED is not in .*; its devices: (none|GPU-)" "the unknown device's reason"
run_cli model predict --db "$DB" --device 7 --kernel "$KERNEL"
[ "$RC" -eq 1 ] || fail "model predict --device 7 (no such GPU here): exit $RC"
assert_match "$ERR" "no GPU with index 7 is attached here; name a device of .* by its UUID" \
    "the unknown index's reason"
seed_device
req POST /api/v1/model/predict "{\"device\":\"$SEED\",\"kernel\":$KERNEL}"
assert_problem 409 conflict
assert_field device
assert_match "$(json .detail)" 'run the latency probe.*"kind":"latency"' "the 409's detail"
run_cli model predict --db "$DB" --device "$SEED" --kernel "$KERNEL"
[ "$RC" -eq 1 ] || fail "model predict without measurements: exit $RC"
assert_match "$ERR" "run the latency probe" "the command's reason"
LAT=$(seed_latency)
req POST /api/v1/model/predict "{\"device\":\"$SEED\",\"kernel\":$KERNEL}"
assert_problem 409 conflict
assert_match "$(json .detail)" 'run the memory probe.*"kind":"memory"' "the 409's detail"
MEM=$(seed_memory)
req POST /api/v1/model/predict "{\"device\":\"$SEED\",\"kernel\":$KERNEL}"
assert_status 200
assert_true '.prediction.kernel_s > 0 and .prediction.total_s == .prediction.kernel_s'
assert_json .parameters.mem_latency.value 640
assert_json .parameters.mem_latency.job_id "$MEM"
assert_json .parameters.issue_fp32.job_id "$LAT"
assert_json .occupancy.blocks_per_sm 8
assert_true '.parameters.bandwidth.job_id == null and (.parameters.bandwidth.source | test("derived"))'
assert_json .device.uuid "$SEED"
req POST /api/v1/model/predict "{\"device\":\"$SEED\",\"kernel\":{\"grid\":4,\"block\":32,\"regs\":8,\"per_warp\":{\"fp33\":1}}}"
assert_problem 400 invalid-request
assert_field kernel.per_warp.fp33
req POST /api/v1/model/predict "{\"device\":\"$SEED\",\"kernel\":{\"grid\":4,\"block\":32,\"regs\":8,\"per_warp\":{},\"transfer_bytes\":1000}}"
assert_problem 400 invalid-request
assert_match "$(json .detail)" "link bandwidth" "the transfer refusal"
req POST /api/v1/model/predict "{\"kernel\":$KERNEL}"
assert_problem 400 invalid-request
assert_field device
run_cli model predict --db "$DB" --device "$SEED" --kernel "$KERNEL" --compact
[ "$RC" -eq 0 ] || fail "model predict: exit $RC: $ERR"
[ "$(printf '%s' "$OUT" | jq '.prediction.kernel_s > 0')" = true ] || fail "model predict printed $OUT"
run_cli model predict --db "$DB" --device "$SEED" --kernel '{"grid":1}'
[ "$RC" -eq 2 ] || fail "model predict --kernel without a block: exit $RC"
assert_match "$ERR" "--kernel: kernel.block: is required" "the JSON member named as given"
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 p_n)\n{\n.reg .u32 %%i, %%n, %%t;\n.reg .u64 %%a, %%o;\n.reg .f32 %%v;\n.reg .pred %%q;\nld.param.u64 %%a, [p];\nld.param.u32 %%n, [p_n];\nmov.u32 %%t, %%tid.x;\nmul.wide.u32 %%o, %%t, 4;\nadd.u64 %%a, %%a, %%o;\nmov.u32 %%i, 0;\n$L:\nld.global.f32 %%v, [%%a];\nadd.u32 %%i, %%i, 1;\nsetp.lt.u32 %%q, %%i, %%n;\n@%%q bra $L;\nret;\n}\n' >k.ptx
run_cli model predict --db "$DB" --device "$SEED" --ptx k.ptx --grid 64 --block 128 --regs 16 --param p_n=10 --compact
[ "$RC" -eq 0 ] || fail "model predict --ptx: exit $RC: $ERR"
[ "$(printf '%s' "$OUT" | jq .kernel.description.per_warp.coalesced)" = 10 ] || fail "derived description: $OUT"
run_cli model predict --db "$DB" --device "$SEED" --ptx k.ptx --grid 64 --block 128 --regs 16
[ "$RC" -eq 2 ] || fail "model predict --ptx without the trip count: exit $RC"
assert_match "$ERR" 'loop at label \$L' "the underivable loop"
# ... naming the parameter it needs and how to give it
assert_match "$ERR" 'parameter p_n \(index 1\) of k, whose value is not given: give it with --param p_n=VALUE \(or by index: --param 1=VALUE\)' \
    "the parameter the loop needs"
# a loop no parameter counts (its bound is loaded): the refusal names the file, not a JSON path
printf '.version 8.0\n.target sm_90\n.visible .entry k(.param .u64 p)\n{\n.reg .u32 %%i, %%w;\n.reg .u64 %%a;\n.reg .pred %%q;\nld.param.u64 %%a, [p];\nld.global.u32 %%w, [%%a];\nmov.u32 %%i, 0;\n$L:\nadd.u32 %%i, %%i, 1;\nsetp.lt.u32 %%q, %%i, %%w;\n@%%q bra $L;\nret;\n}\n' >loaded.ptx
run_cli model predict --db "$DB" --device "$SEED" --ptx loaded.ptx --grid 4 --block 32 --regs 8
[ "$RC" -eq 2 ] || fail "model predict --ptx loaded.ptx: exit $RC"
assert_match "$ERR" '^gpuprobe model predict: loaded\.ptx: loop at label \$L: its trip count cannot be derived' \
    "the file named"
# and an option is named as the option
run_cli model predict --db "$DB" --device "$SEED" --ptx k.ptx --grid 64 --block 2000 --regs 16 --param p_n=10
[ "$RC" -eq 2 ] || fail "model predict --block 2000: exit $RC"
assert_match "$ERR" '^gpuprobe model predict: --block: 2000 threads' "the option named"
# a parameter by its index from 0 (as trace capture takes it) is that parameter
run_cli model predict --db "$DB" --device "$SEED" --ptx k.ptx --grid 64 --block 128 --regs 16 --param 1=10 --compact
[ "$RC" -eq 0 ] || fail "model predict --ptx --param 1=10: exit $RC: $ERR"
[ "$(printf '%s' "$OUT" | jq .kernel.description.per_warp.coalesced)" = 10 ] || fail "p_n by index: $OUT"
# a name as long as nvcc's mangled ones (66 bytes) is given by name, on the command line and over HTTP
long=_Z20a_rather_long_kernel_nameILi128ELi64EEvPKfPfii_param_with_more_3
sed "s/p_n/$long/g" k.ptx >long.ptx
run_cli model predict --db "$DB" --device "$SEED" --ptx long.ptx --grid 64 --block 128 --regs 16 --param "$long=10" --compact
[ "$RC" -eq 0 ] || fail "model predict --param with a 66-byte name: exit $RC: $ERR"
[ "$(printf '%s' "$OUT" | jq .kernel.description.per_warp.coalesced)" = 10 ] || fail "the long name's value: $OUT"
req POST /api/v1/model/predict "$(jq -n --arg d "$SEED" --rawfile p long.ptx --arg n "$long" \
    '{device:$d, kernel:{ptx:$p, grid:64, block:128, regs:16, params:{($n):10}}}')"
assert_status 200
assert_json .kernel.description.per_warp.coalesced 10
# the longest name taken (127 bytes) still reaches the loop bound it is loaded into
longest=$long$(printf 'x%.0s' $(seq $((127 - ${#long}))))
sed "s/p_n/$longest/g" k.ptx >longest.ptx
run_cli model predict --db "$DB" --device "$SEED" --ptx longest.ptx --grid 64 --block 128 --regs 16 --param "$longest=10" --compact
[ "$RC" -eq 0 ] || fail "model predict --param with a 127-byte name: exit $RC: $ERR"
[ "$(printf '%s' "$OUT" | jq .kernel.description.per_warp.coalesced)" = 10 ] || fail "the 127-byte name's value: $OUT"
run_cli model predict --db "$DB" --device "$SEED" --ptx longest.ptx --grid 64 --block 128 --regs 16 --param 1=10 --compact
[ "$RC" -eq 0 ] || fail "model predict of the 127-byte name's PTX with --param 1=10: exit $RC: $ERR"
# one the entry does not have is refused, listing the entry's; so is one given twice
run_cli model predict --db "$DB" --device "$SEED" --ptx k.ptx --grid 64 --block 128 --regs 16 --param p_n=10 --param bogus=7
[ "$RC" -eq 2 ] || fail "model predict --param bogus=7: exit $RC"
assert_match "$ERR" "--param bogus: 'bogus' is not a parameter of k \(give one by name or by index from 0: 0 p, 1 p_n\)" \
    "the unknown parameter"
run_cli model predict --db "$DB" --device "$SEED" --ptx k.ptx --grid 64 --block 128 --regs 16 --param p_n=10 --param 1=10
[ "$RC" -eq 2 ] || fail "model predict --param p_n=10 --param 1=10: exit $RC"
assert_match "$ERR" "given twice" "p_n given twice"
# nvcc's tiled matmul: its K loop needs param_5 (K), not param_3 (M)
MATMUL=$REPO/tests/fixtures/ptx/synth/matmul-tiled.ptx
run_cli model predict --db "$DB" --device "$SEED" --ptx "$MATMUL" --grid 16,16 --block 16,16 --regs 32 --param 3=1024
[ "$RC" -eq 2 ] || fail "matmul-tiled without K: exit $RC"
assert_match "$ERR" 'loop at label \$L__BB0_2: its trip count depends on parameter matmul_tiled_param_5 \(index 5\)' \
    "matmul-tiled's K"
run_cli model predict --db "$DB" --device "$SEED" --ptx "$MATMUL" --grid 16,16 --block 16,16 --regs 32 --param 3=1024 --param 5=1024 --compact
[ "$RC" -eq 0 ] || fail "matmul-tiled with K by index: exit $RC: $ERR"
[ "$(printf '%s' "$OUT" | jq .kernel.description.per_warp.sync)" = 128 ] || fail "matmul-tiled's barriers: $OUT"
# its .shared tiles are its static shared memory: with two 20 KiB tiles, 5 blocks an SM fit
# (41 KiB each with the driver's 1 KiB), as with --static-smem 40960, where warps allow 8
sed 's/\[1024\];/[20480];/' "$MATMUL" >mm20k.ptx
for smem in "" "--static-smem 40960" "--static-smem 0"; do
    run_cli model predict --db "$DB" --device "$SEED" --ptx mm20k.ptx --grid 16,16 --block 16,16 --regs 32 --param 5=1024 $smem --compact
    [ "$RC" -eq 0 ] || fail "matmul-tiled with 20 KiB tiles $smem: exit $RC: $ERR"
    got=$(printf '%s' "$OUT" | jq -c '[.occupancy.blocks_per_sm, .occupancy.limiter, .occupancy.input.static_smem]')
    case $smem in
    *" 0") want='[8,"warps",0]' ;;
    *) want='[5,"shared_memory",40960]' ;;
    esac
    [ "$got" = "$want" ] || fail "matmul-tiled with 20 KiB tiles $smem: $got, want $want"
done
run_cli model predict --db "$DB" --device "$SEED" --ptx mm20k.ptx --grid 16,16 --block 16,16 --regs 32 --param 5=1024 --compact
assert_match "$(printf '%s' "$OUT" | jq -r '.kernel.description.notes | join(" / ")')" \
    "static_smem 40960 bytes a block: derived from the PTX's .shared declarations" "the note on static_smem"
# over HTTP the same: the member at fault is the field
for p in '{"1": 10}' '{"p_n": 10, "bogus": 7}' '{}'; do
    req POST /api/v1/model/predict "$(jq -n --rawfile t k.ptx --arg d "$SEED" --argjson p "$p" \
        '{device: $d, kernel: {grid: 64, block: 128, regs: 16, ptx: $t, params: $p}}')"
    case $p in
    *bogus*) assert_problem 400 invalid-request; assert_field kernel.params.bogus
        assert_match "$(json .detail)" "'bogus' is not a parameter of k .*0 p, 1 p_n" "the API's unknown parameter" ;;
    '{}') assert_problem 400 invalid-request; assert_field kernel.params.p_n
        assert_match "$(json .detail)" 'loop at label \$L.*p_n \(index 1\).*give its integer value in params' "the API's missing parameter" ;;
    *) assert_status 200; assert_json .kernel.description.per_warp.coalesced 10 ;;
    esac
done
# text that is not PTX (no .version and .target first) is refused, not predicted:
# on the command line (status 2, the reason) and over HTTP (400 naming kernel.ptx)
printf 'notes on the .entry k {\n  foo bar baz;\n}\n' >notes.txt
sed '/^\.version/d; /^\.target/d' k.ptx >headless.ptx
for f in notes.txt headless.ptx; do
    run_cli model predict --db "$DB" --device "$SEED" --ptx "$f" --grid 64 --block 128 --regs 16 --param p_n=10
    [ "$RC" -eq 2 ] || fail "model predict --ptx $f (not PTX): exit $RC, printed ${OUT:0:200}"
    assert_match "$ERR" 'not PTX: a PTX module begins with' "model predict --ptx $f"
    req POST /api/v1/model/predict "$(jq -n --rawfile p "$f" --arg d "$SEED" \
        '{device: $d, kernel: {grid: 64, block: 128, regs: 16, ptx: $p, params: {p_n: 10}}}')"
    assert_problem 400 invalid-request
    assert_field kernel.ptx
    assert_match "$(json .detail)" 'not PTX' "the API's refusal of $f"
done
# a folder or a device is no kernel file: refused before anything is allocated for it
for f in "--kernel @$WORK" "--ptx $WORK" "--kernel @/dev/zero"; do
    run_cli model predict --db "$DB" --device "$SEED" $f --grid 64 --block 128 --regs 16
    [ "$RC" -eq 2 ] || fail "model predict $f: exit $RC"
    assert_match "$ERR" 'not a regular file' "model predict $f"
done

# ---- validation ----------------------------------------------------------------------------
req GET "/api/v1/devices/$SEED/model-validation"
assert_problem 404 not-found
assert_match "$(json .detail)" '"kind":"model-validation"' "the 404's detail"
req GET "/api/v1/devices/$SEED/model-validation?job=abc"
assert_problem 400 invalid-request
assert_field job
req GET /api/v1/job-kinds
assert_true '[.kinds[] | select(.name == "model-validation" and .needs_gpu and .params.repeats.maximum == 50)] | length == 1'
req POST /api/v1/jobs '{"kind":"model-validation"}'
assert_problem 400 invalid-request
assert_field device
req POST /api/v1/jobs '{"kind":"model-validation","device":0}'
assert_problem 422 unknown-device

stop_daemon
