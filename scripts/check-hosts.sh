#!/usr/bin/env bash
# make check-hosts: the mpi transport across real network hops. Makes 4 hosts on this machine, each a network
# namespace with its own address on a bridge (veth links, iproute2), so that ranks on different hosts talk over
# TCP through the kernel's network stack and share no memory (Open MPI's TCP transport only); Open MPI starts
# them through scripts/netns-agent as it would through ssh. Then runs tests/test_hosts (pplab run and pplab grade
# across the hosts against threads, and a host cut off mid-run), and removes the hosts whatever happened.
#   scripts/check-hosts.sh BUILD             as root (namespaces need CAP_NET_ADMIN)
#   scripts/check-hosts.sh --up | --down     only make the hosts (prints the environment to use), or remove them
set -euo pipefail
cd "$(dirname "$0")/.."
NET=10.231.0            # the hosts' subnet: host i is $NET.$((10 + i)), the bridge (where mpirun runs) $NET.1
BR=pp-br0
N=4
hosts() { for i in $(seq 0 $((N - 1))); do echo "pp-h$i"; done; }

down() {
    for h in $(hosts); do
        if ip netns list | grep -q "^$h\( \|$\)"; then
            # what still runs on a host (a run that was cut off) goes with it
            for p in $(ip netns pids "$h" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
            ip netns del "$h"
        fi
        ip link del "$h-br" 2>/dev/null || true
    done
    ip link del "$BR" 2>/dev/null || true
}

up() {
    down
    ip link add "$BR" type bridge
    ip addr add "$NET.1/24" dev "$BR"
    ip link set "$BR" up
    local i=0
    for h in $(hosts); do
        ip netns add "$h"
        ip link add "$h-br" type veth peer name eth0 netns "$h"
        ip link set "$h-br" master "$BR" up
        ip -n "$h" addr add "$NET.$((10 + i))/24" dev eth0
        ip -n "$h" link set eth0 up
        ip -n "$h" link set lo up
        i=$((i + 1))
    done
}

# What mpirun needs to use the hosts: the agent, TCP alone on their subnet, and keepalives short enough that
# mpirun gives up a lost host a few seconds after pplab has reported it.
environment() {
    cat <<EOF
export OMPI_MCA_plm_rsh_agent=$PWD/scripts/netns-agent
export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=$NET.0/24 OMPI_MCA_oob_tcp_if_include=$NET.0/24
export OMPI_MCA_oob_tcp_keepalive_time=4 OMPI_MCA_oob_tcp_keepalive_intvl=1 OMPI_MCA_oob_tcp_keepalive_probes=3
EOF
}

need() {
    [ "$(id -u)" = 0 ] || { echo "check-hosts: network namespaces need root (CAP_NET_ADMIN): run it as root" >&2; exit 1; }
    command -v ip >/dev/null || { echo "check-hosts: ip not found: apt-get install iproute2" >&2; exit 1; }
    command -v mpirun >/dev/null || { echo "check-hosts: mpirun not found: apt-get install openmpi-bin" >&2; exit 1; }
}

case "${1:-}" in
--up)
    need
    up
    environment
    echo "# hosts: $(hosts | tr '\n' ' ')(one mpirun slot each: printf 'pp-h%s slots=1\\n' 0 1 2 3 > hosts)"
    exit 0 ;;
--down)
    need
    down
    exit 0 ;;
esac

build=${1:?usage: scripts/check-hosts.sh BUILD}
need
tmp=$(mktemp -d)
trap 'down; rm -rf "$tmp"' EXIT
up
for h in $(hosts); do echo "$h slots=1"; done > "$tmp/hosts"
eval "$(environment)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PPLAB_TEST_HOSTFILE="$tmp/hosts" PPLAB_TEST_HOSTS="$(hosts | tr '\n' ' ')"
# the suite cuts the last host off and restores it with these; restored, it comes back empty, as a rebooted node
# would: what the cut-off run left there (its daemon and rank, which never heard that the job ended) is killed, so
# that the next test's mpirun meets nothing of the last one
last=pp-h$((N - 1))
export PPLAB_TEST_CUT="ip link set $last-br down"
export PPLAB_TEST_UNCUT="ip link set $last-br up && for p in \$(ip netns pids $last); do kill -9 \$p 2>/dev/null; done; true"
# and waits for this before it cuts: the ranks on the first and the last host are past MPI's start-up, which no
# deadline of pplab's covers, and their watch (a thread named pp-watch) is running
export PPLAB_TEST_STEPPING="for h in pp-h0 $last; do w=; for p in \$(ip netns pids \$h); do \
cat /proc/\$p/task/*/comm 2>/dev/null | grep -qx pp-watch && w=1; done; [ -n \"\$w\" ] || exit 1; done"
"$build/tests/test_hosts" --jobs 1 --verbose
