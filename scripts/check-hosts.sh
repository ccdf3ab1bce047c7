#!/usr/bin/env bash
# make check-hosts: the mpi transport across real network hops. Makes 4 hosts on this machine, each a network
# namespace with its own address on a bridge (veth links, iproute2), so that ranks on different hosts talk over
# TCP through the kernel's network stack and share no memory (Open MPI's TCP transport only); Open MPI starts
# them through scripts/netns-agent as it would through ssh. Then runs tests/test_hosts (pplab run and pplab grade
# across the hosts against threads, and a host cut off mid-run), and removes the hosts whatever happened.
#   scripts/check-hosts.sh BUILD             as root (namespaces need CAP_NET_ADMIN)
#   scripts/check-hosts.sh --up              only make the hosts, in a slot no other run holds, and print the
#                                            environment that uses them (eval it)
#   scripts/check-hosts.sh --down [SLOT]     remove the hosts of that slot (default: $PPLAB_HOSTS_SLOT, which
#                                            --up's environment sets), and only those
set -euo pipefail
cd "$(dirname "$0")/.."
N=4
# Each run takes a slot of its own, so that runs on one machine never meet: slot S names its hosts ppS-h0..ppS-h3
# and its bridge ppS-br0, and uses the subnet 10.231.S.0/24 (host i is .10+i; the bridge, where mpirun runs, .1).
# A slot is taken while its bridge exists; a lock makes finding a free one and taking it one step.
SLOTS=64
LOCK=/run/lock/pplab-hosts.lock
slot=${PPLAB_HOSTS_SLOT:-}
names() { NET=10.231.$slot BR=pp$slot-br0; }
hosts() { for i in $(seq 0 $((N - 1))); do echo "pp$slot-h$i"; done; }

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

# Takes the first free slot (its bridge made under the lock), then makes its hosts.
up() {
    mkdir -p "$(dirname "$LOCK")"
    exec 9>"$LOCK"
    flock 9
    local s free=
    for s in $(seq 0 $((SLOTS - 1))); do
        ip link show "pp$s-br0" >/dev/null 2>&1 || { free=$s; break; }
    done
    [ -n "$free" ] || { echo "check-hosts: all $SLOTS slots are taken (bridges pp0-br0 to pp$((SLOTS - 1))-br0): remove a stale one with scripts/check-hosts.sh --down SLOT" >&2; exit 1; }
    slot=$free
    names
    ip link add "$BR" type bridge
    exec 9>&-
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

# What mpirun needs to use the hosts: the agent, TCP alone on their subnet, Open MPI's leave to run as root when
# this is root, and OOB keepalives that give a lost host up 6 to 10 s after it was cut off. pplab's watch reads
# them and calls a silent rank lost a second before the soonest of those (docs/multinode.md, "Semantics and
# failures"), so its report comes first whatever --deadline says.
environment() {
    echo "export PPLAB_HOSTS_SLOT=$slot PPLAB_HOSTS=\"$(hosts | tr '\n' ' ' | sed 's/ $//')\""
    echo "export OMPI_MCA_plm_rsh_agent=$PWD/scripts/netns-agent"
    echo "export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=$NET.0/24 OMPI_MCA_oob_tcp_if_include=$NET.0/24"
    echo "export OMPI_MCA_oob_tcp_keepalive_time=4 OMPI_MCA_oob_tcp_keepalive_intvl=2 OMPI_MCA_oob_tcp_keepalive_probes=3"
    if [ "$(id -u)" = 0 ]; then echo "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"; fi
    echo "# hosts: \$PPLAB_HOSTS, one mpirun slot each: printf '%s slots=1\\n' \$PPLAB_HOSTS > hosts"
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
    exit 0 ;;
--down)
    need
    slot=${2:-$slot}
    case $slot in
    '') echo "check-hosts: --down removes the hosts of one slot: run it in the shell that ran eval \"\$(scripts/check-hosts.sh --up)\" (it sets PPLAB_HOSTS_SLOT), or name the slot: --down SLOT" >&2; exit 1 ;;
    *[!0-9]* | ???*) echo "check-hosts: --down $slot: a slot is a number from 0 to $((SLOTS - 1))" >&2; exit 1 ;;
    esac
    names
    down
    exit 0 ;;
esac

build=${1:?usage: scripts/check-hosts.sh BUILD}
need
tmp=$(mktemp -d)
trap 'if [ -n "$slot" ]; then down; fi; rm -rf "$tmp"' EXIT
slot=
up
for h in $(hosts); do echo "$h slots=1"; done > "$tmp/hosts"
eval "$(environment)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PPLAB_TEST_HOSTFILE="$tmp/hosts" PPLAB_TEST_HOSTS="$PPLAB_HOSTS"
# the suite cuts the last host off and restores it with these; restored, it comes back empty, as a rebooted node
# would: what the cut-off run left there (its daemon and rank, which never heard that the job ended) is killed, so
# that the next test's mpirun meets nothing of the last one
first=pp$slot-h0 last=pp$slot-h$((N - 1))
export PPLAB_TEST_CUT="ip link set $last-br down"
export PPLAB_TEST_UNCUT="ip link set $last-br up && for p in \$(ip netns pids $last); do kill -9 \$p 2>/dev/null; done; true"
# and waits for this before it cuts: the ranks on the first and the last host are past MPI's start-up, which no
# deadline of pplab's covers, and their watch (a thread named pp-watch) is running
export PPLAB_TEST_STEPPING="for h in $first $last; do w=; for p in \$(ip netns pids \$h); do \
cat /proc/\$p/task/*/comm 2>/dev/null | grep -qx pp-watch && w=1; done; [ -n \"\$w\" ] || exit 1; done"
"$build/tests/test_hosts" --jobs 1 --verbose
