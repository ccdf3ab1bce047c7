#!/usr/bin/env bash
# make check-slurm: pplab under a real Slurm. Starts munge and a one-node Slurm cluster on this machine (Debian's
# slurm-wlm: slurmctld and slurmd on loopback, every file in a folder of its own), then runs tests/test_slurm,
# which launches pplab the ways a course does (srun, salloc + mpirun, an sbatch script) against the threads run,
# and stops the cluster whatever happened.
#   scripts/check-slurm.sh BUILD              as root (slurmd runs jobs as their users)
#   scripts/check-slurm.sh --up DIR | --down DIR    only start the cluster in DIR (prints SLURM_CONF), or stop it
#                                                    and remove what --up made in DIR (DIR too, once empty)
set -euo pipefail
cd "$(dirname "$0")/.."

need() {
    [ "$(id -u)" = 0 ] || { echo "check-slurm: slurmd must run as root: run it as root" >&2; exit 1; }
    for c in slurmctld slurmd srun sbatch salloc munged mpirun; do
        command -v "$c" >/dev/null || {
            echo "check-slurm: $c not found: apt-get install slurm-wlm munge openmpi-bin (make check-slurm installs them: scripts/deps.sh --cluster)" >&2; exit 1; }
    done
}

# The cluster: this machine as its one node; no cgroups (a container may not have them to give). The node says
# it has 16 CPUs whatever it has (config_overrides), so that a 2-core machine can run the 8 tasks of a lab 07 test.
up() {
    local dir=$1 host cpus mem
    host=$(hostname -s)
    cpus=16
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
    mkdir -p "$dir/state" "$dir/spool" "$dir/log"
    # munge: a key of this run's own, a socket in the folder
    dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
    chmod 0400 "$dir/munge.key"
    mkdir -p "$dir/munge"
    munged --key-file="$dir/munge.key" --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" --force
    cat > "$dir/slurm.conf" <<EOF
ClusterName=pplab
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SlurmdParameters=config_overrides
ReturnToService=2
# a job that asks for more than the partition has (srun -N 2 on this one node) is refused at once, not queued forever
EnforcePartLimits=ALL
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -f "$SLURM_CONF"
    slurmd -f "$SLURM_CONF"
    # the node is up once slurmctld has heard from slurmd
    for _ in $(seq 1 100); do
        sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && return 0
        sleep 0.2
    done
    echo "check-slurm: the node did not come up; slurmctld's and slurmd's logs:" >&2
    tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    return 1
}

down() {
    local dir=$1
    for f in slurmd slurmctld munge/munged; do
        [ -f "$dir/$f.pid" ] && kill "$(cat "$dir/$f.pid")" 2>/dev/null || true
    done
    sleep 0.5
    for f in slurmd slurmctld munge/munged; do
        [ -f "$dir/$f.pid" ] && kill -9 "$(cat "$dir/$f.pid")" 2>/dev/null || true
    done
    # then what up made there, the munge key first; the folder goes too once nothing else is in it
    if [ -f "$dir/slurm.conf" ]; then
        rm -rf "$dir/munge.key" "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" "$dir"/*.pid "$dir/slurm.conf"
        rmdir "$dir" 2>/dev/null || true
    fi
    return 0
}

case "${1:-}" in
--up)
    [ -n "${2:-}" ] || { echo "check-slurm: --up needs a folder for the cluster's files: scripts/check-slurm.sh --up DIR" >&2; exit 1; }
    need
    up "$2"
    echo "export SLURM_CONF=$2/slurm.conf"
    exit 0 ;;
--down)
    [ -n "${2:-}" ] || { echo "check-slurm: --down needs the folder that --up was given: scripts/check-slurm.sh --down DIR" >&2; exit 1; }
    down "$2"
    exit 0 ;;
esac

build=${1:?usage: scripts/check-slurm.sh BUILD}
need
dir=$(mktemp -d /tmp/pplab-slurm-XXXXXX)
chmod 0755 "$dir"
trap 'down "$dir"; rm -rf "$dir"' EXIT
up "$dir"
export SLURM_CONF="$dir/slurm.conf"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$build/tests/test_slurm" --jobs 1 --verbose
