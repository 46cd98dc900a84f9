#!/usr/bin/env bash
# Proves the Slurm fan-out on a real single-node Slurm (Debian's slurmctld, slurmd and munge, configured here on loopback in this test's folder: its own slurm.conf, ports, state and spool, munge key and socket; proctrack/linuxproc, task/none, no cgroups): `gpuprobe fleet slurm --submit` writes and submits the job array against a real central daemon, the array's task runs the stand-in suite on the node's two stand-in GPUs from a bundle folder, and the central lists both GPUs with the node's host and their results, and its fleet view compares them; with --nodelist each task is pinned to its node, with --nodes the script asks for whole nodes. Every daemon is stopped and its files removed however the test ends; a Slurm daemon that does not start fails the test with its log.
. "$(dirname "$0")/lib.sh"

S=$WORK/slurm
NODE=gpunode
HOST=$(hostname)
PIDS=()

for tool in munged slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$tool" >/dev/null || fail "$tool is missing: make test-deps installs slurmctld, slurmd, slurm-client and munge"
done

# Stops what this test started, by pid, and removes the cluster's files.
slurm_cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$S"
    cleanup
}
trap slurm_cleanup EXIT

# slurm_fail WHAT: fails with the cluster's logs.
slurm_fail() {
    local f
    for f in "$S"/*.log "$S"/*.out; do
        [ -s "$f" ] && { echo "--- $f"; tail -n 20 "$f"; } >&2
    done
    fail "$1"
}

# A TCP port nobody on this machine listens on, below the kernel's ephemeral
# range (the other tests' daemons bind port 0, and every outgoing connection
# takes a port from that range: a free port there could be taken before
# slurmd binds it), and not one handed out before ($taken): into FREE_PORT.
taken=" "
free_port() {
    local p low
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range
    [ "$low" -gt 11000 ] || low=32768
    while :; do
        p=$((10000 + RANDOM % (low - 10000)))
        [[ $taken == *" $p "* ]] && continue
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { taken+="$p " FREE_PORT=$p; return; }
    done
}

# ---- a one-node cluster on loopback ----------------------------------------------------
mkdir -p "$S/munge" "$S/state" "$S/spool"
chmod 700 "$S" "$S/munge"
head -c 1024 /dev/urandom >"$S/munge/munge.key"
chmod 400 "$S/munge/munge.key"
MUNGE_SOCKET=$S/munge/munge.socket
# --force: munged runs as root here, as make test does
munged -F --force --socket="$MUNGE_SOCKET" --key-file="$S/munge/munge.key" \
    --pid-file="$S/munge/munged.pid" --log-file="$S/munged.log" --seed-file="$S/munge/seed" \
    >"$S/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$MUNGE_SOCKET" ] && break; sleep 0.05; done
[ -S "$MUNGE_SOCKET" ] || slurm_fail "munged did not make its socket"

free_port
ctld_port=$FREE_PORT
free_port
slurmd_port=$FREE_PORT
cat >"$S/slurm.conf" <<EOF
# written by t_slurm.sh: one node, this machine, on loopback
ClusterName=gpuprobetest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MailProg=/bin/true
SlurmdParameters=config_overrides
NodeName=$NODE NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$S/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$S/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$S/slurmd.out" 2>&1 &
PIDS+=($!)
deadline=$((SECONDS + 30))
until [ "$(sinfo -h -n "$NODE" -o %t 2>/dev/null)" = idle ]; do
    for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || slurm_fail "a Slurm daemon (pid $pid) exited"; done
    [ "$SECONDS" -ge "$deadline" ] && slurm_fail "node $NODE not idle within 30 s: $(sinfo 2>&1)"
    sleep 0.2
done

# ---- the central, and the bundle folder the nodes run from ------------------------------
start_daemon
wait_ready
CENTRAL=$BASE_URL
mkdir -p bundle/bin
ln -s "$GPUPROBE" bundle/bin/gpuprobe # the test build: it has the stand-in kind
printf '%s\n' "$TOKEN" >central-token

# wait_array JOBID: until the array's task 0 completed; fails with its output otherwise.
wait_array() {
    local deadline=$((SECONDS + 60)) state
    while :; do
        state=$(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n1 | cut -d= -f2)
        case "$state" in
            COMPLETED) return 0 ;;
            FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL)
                slurm_fail "array $1 ended $state: $(cat "gpuprobe-fleet-$1_0.out" 2>/dev/null)" ;;
        esac
        [ "$SECONDS" -ge "$deadline" ] && slurm_fail "array $1 still ${state:-unknown} after 60 s: $(scontrol show job "$1" 2>&1 | head -n 5)"
        sleep 0.2
    done
}

# central_standins COUNT_OF_RESULTS: the central lists the node's two stand-in GPUs
# with its host, holding that many suite results each.
central_standins() {
    BASE_URL=$CENTRAL
    req GET /api/v1/devices
    assert_status 200
    assert_json "[.devices[] | select(.host == \"$HOST\") | [.name, .attached]]" \
        '[["NVIDIA H200 (stand-in)",false],["NVIDIA H200 (stand-in)",false]]'
    local uuid
    for uuid in $(json "[.devices[] | select(.host == \"$HOST\") | .uuid] | join(\" \")"); do
        req GET "/api/v1/jobs?device=$uuid&kind=suite-standin&state=succeeded"
        assert_json '.jobs | length' "$1"
        req GET "/api/v1/devices/$uuid/memory"
        assert_status 200
    done
    # the fleet view compares them with the fleet figures of the replayed suite
    req GET "/api/v1/fleet?host=$HOST"
    assert_status 200
    assert_json '[.models[] | [.model, .devices, .hosts]]' '[["NVIDIA H200 (stand-in)",2,1]]'
    assert_true "[.devices[] | select(.host == \"$HOST\") | .figures > 100] == [true,true]"
}

# ---- --nodelist: submitted held, each task pinned to its node, released -------------------
RC=0
GPUPROBE_STANDIN_GPUS=2 "$GPUPROBE" fleet slurm --central "$CENTRAL" --token-file central-token \
    --nodelist "$NODE" --partition gpu --bundle bundle --probe suite-standin --submit \
    >submit.out 2>submit.err || RC=$?
[ "$RC" = 0 ] || slurm_fail "fleet slurm --submit exited $RC: $(cat submit.err)"
JID=$(cat submit.out)
[[ $JID =~ ^[0-9]+$ ]] || fail "fleet slurm --submit printed '$JID', not a job id"
wait_array "$JID"
job0=$(scontrol show job "${JID}_0")
grep -q "ReqNodeList=$NODE" <<<"$job0" || fail "task 0 was not pinned to $NODE"
out=gpuprobe-fleet-${JID}_0.out
grep -q "array task 0 on $NODE" "$out" || fail "the task's output: $(head -c 400 "$out")"
grep -q "2 result(s) acknowledged by $CENTRAL" "$out" || fail "the task's output: $(tail -n 3 "$out")"
central_standins 1

# ---- --nodes: the script, then submitted ---------------------------------------------------
"$GPUPROBE" fleet slurm --central "$CENTRAL" --token-file central-token --nodes 1 \
    --bundle bundle --probe suite-standin -o fleet.sbatch
for want in '^#SBATCH --array=0-0$' '^#SBATCH --nodes=1$' '^#SBATCH --ntasks=1$' '^#SBATCH --exclusive$' \
    "^exec '$WORK/bundle'/bin/gpuprobe probe 'suite-standin' --device all --compact --push '$CENTRAL' --token-file '$WORK/central-token'\$"; do
    grep -qE "$want" fleet.sbatch || fail "fleet.sbatch lacks /$want/: $(cat fleet.sbatch)"
done
bash -n fleet.sbatch || fail "fleet.sbatch is not valid bash"
RC=0
GPUPROBE_STANDIN_GPUS=2 "$GPUPROBE" fleet slurm --central "$CENTRAL" --token-file central-token \
    --nodes 1 --bundle bundle --probe suite-standin --submit >submit.out 2>submit.err || RC=$?
[ "$RC" = 0 ] || slurm_fail "fleet slurm --nodes 1 --submit exited $RC: $(cat submit.err)"
wait_array "$(cat submit.out)"
central_standins 2

# bad usage is refused before Slurm hears of it
RC=0
"$GPUPROBE" fleet slurm --central "$CENTRAL" --token-file central-token --nodes 1 --nodelist "$NODE" \
    >/dev/null 2>err.txt || RC=$?
[ "$RC" = 2 ] && grep -q 'one of --nodes N and --nodelist L' err.txt || fail "both --nodes and --nodelist: exit $RC, $(cat err.txt)"
stop_daemon
