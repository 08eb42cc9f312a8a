#!/usr/bin/env bash
# The Slurm recipe against a real Slurm (ctest `slurm`): wsisa installed into
# a prefix, a single-node Slurm brought up on this machine (munged, slurmctld
# and slurmd as root, with their own key, configuration, ports and state in a
# folder of their own), the installed job script (PREFIX/share/wsisa/
# wsisa.sbatch) submitted for a small study on 2 ranks of one CPU worker, and
# its metrics compared with those of one process. Exit 77 (skipped), with
# the reason, where Slurm cannot start: not root, a package missing, fewer
# than 2 cores, a daemon that does not come up. Every wait is bounded, and
# the daemons it started are stopped by their pids whatever happens.
#
#   tests/slurm_check.sh BUILD_DIR WORK_DIR SOURCE_DIR
set -uo pipefail
build=$1 work=$2 src=$3
skip() { echo "slurm: skipped: $*"; exit 77; }
fail() { echo "slurm: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "not root (slurmd and munged run as root here)"
for c in munged slurmctld slurmd sbatch squeue scancel sinfo mpirun; do
  command -v "$c" >/dev/null 2>&1 ||
    skip "$c not found (Debian: apt-get install slurmctld slurmd slurm-client munge openmpi-bin)"
done
[ "$(nproc)" -ge 2 ] || skip "one core here: the job asks for 2 ranks of one core"

rm -rf "$work"
if ! mkdir -p "$work"/{munge,state,spool,log,models} || ! chmod 700 "$work/munge"; then
  fail "$work: cannot create"
fi
work=$(cd "$work" && pwd)
pids=()
# Stop what this script started: the job first, then the daemons by pid.
cleanup() {
  if [ -n "${job:-}" ]; then
    scancel "$job" >/dev/null 2>&1
    for _ in $(seq 20); do
      [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$p" 2>/dev/null
  done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Each daemon under `timeout`: if this script is killed outright, they still end.
life=900
dd if=/dev/urandom of="$work/munge/key" bs=1024 count=1 2>/dev/null && chmod 400 "$work/munge/key"
timeout "$life" munged --foreground --force --socket="$work/munge/socket" \
  --key-file="$work/munge/key" --log-file="$work/log/munged.log" \
  --pid-file="$work/munge/pid" --seed-file="$work/munge/seed" >"$work/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 40); do [ -S "$work/munge/socket" ] && break; sleep 0.25; done
[ -S "$work/munge/socket" ] || skip "munged did not start: $(tail -3 "$work/log/munged.log" 2>/dev/null)"

# Free ports for this Slurm (another may run beside it).
port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    shuf -i 20000-60000 -n 1
}
ctld_port=$(port) d_port=$(port)
node=wsisa$$
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=wsisa$$
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=2 State=UNKNOWN
PartitionName=wsisa Nodes=$node Default=YES MaxTime=30 State=UP
EOF
timeout "$life" slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
timeout "$life" slurmd -D -f "$SLURM_CONF" -N "$node" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 60); do
  state=$(timeout 5 sinfo -h -n "$node" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] ||
  skip "Slurm did not come up (node state '${state:-none}'): $(tail -3 "$work"/log/slurm*.log 2>/dev/null | tr '\n' ' ')"
echo "slurm: a single-node Slurm up on localhost (node $node, ports $ctld_port/$d_port)"

# wsisa as a cluster gets it: installed into a prefix, the job script from there.
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/log/install.log" 2>&1 ||
  fail "cmake --install: $(tail -5 "$work/log/install.log")"
script=$prefix/share/wsisa/wsisa.sbatch
[ -x "$script" ] || fail "$script was not installed"
cat >"$work/study.json" <<EOF
{ "inputs": { "images": ["$src/tests/data/tile_256.png", "$src/tests/data/tile_256_b.png"] },
  "parameters": { "G1": {}, "G2": {}, "T1": {} },
  "method": { "name": "moat", "trajectories": 2, "levels": 4 },
  "sampler": { "name": "halton", "seed": 1 },
  "metric": ["dice", "jaccard"] }
EOF
STARPU_NCPU=1 STARPU_HOME=$work/models/single timeout 300 "$prefix/bin/wsisa" run \
  --study "$work/study.json" -o "$work/single" >"$work/log/single.log" 2>&1 ||
  fail "one process: $(tail -5 "$work/log/single.log")"

# The job: the script's placeholders given through sbatch's environment, its
# #SBATCH lines overridden on the command line for this node. Open MPI runs as
# root only when told so.
export WSISA_PREFIX=$prefix WSISA_STUDY=$work/study.json WSISA_RESULTS=$work/results \
  WSISA_NODE_KIND=testnode WSISA_MODELS=$work/models
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
job=$(timeout 30 sbatch --parsable --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 \
  --time=10 --output="$work/job.out" "$script") || fail "sbatch refused the job: $job"
echo "slurm: job $job submitted: $script"
end=$((SECONDS + 300))
while [ -n "$(timeout 10 squeue -h -j "$job" 2>/dev/null)" ]; do
  [ $SECONDS -lt $end ] || fail "job $job still queued or running after 300 s: $(cat "$work/job.out" 2>/dev/null)"
  sleep 1
done
job_done=$job
job=
cat "$work/job.out"
[ -f "$work/results/metrics.csv" ] || fail "job $job_done wrote no $work/results/metrics.csv"
grep -q '"ranks": 2,' "$work/results/run.json" || fail "the job did not run 2 ranks: $(grep -A2 '"mpi"' "$work/results/run.json")"
cmp -s "$work/single/metrics.csv" "$work/results/metrics.csv" ||
  fail "the job's metrics differ from one process's: $(diff "$work/single/metrics.csv" "$work/results/metrics.csv" | head)"
echo "slurm: job $job_done ran 2 ranks; its metrics are one process's ($(($(wc -l <"$work/results/metrics.csv") - 1)) runs)"
