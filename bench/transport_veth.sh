#!/bin/bash
# The TFRC transport's cost and pacing error (bench/RESULTS.md, issue 11): `tfcc-net send` in
# namespace A to `tfcc-net recv` in B over one veth, tbf + pfifo on A's egress at RATE Mb/s
# ("none": unshaped). Needs root and `cargo build --release -p tfcc-net --bin tfcc-net` (or
# TFCC_NET=path of another build, e.g. the `ci` profile's, which optimises as release does).
# Both ends run under SCHED_FIFO (REALTIME=PRIO, default 10; REALTIME= for normal priority).
# Usage: bench/transport_veth.sh RATE|none
set -u
RATE=$1; B=${TFCC_NET:-${CARGO_TARGET_DIR:-target}/release/tfcc-net}
RT=${REALTIME-10}; RTFLAG=${RT:+--realtime $RT}
# The testbed's prefix and this shell's pid: a set left by a killed run is removed by the next
# testbed start (tfcc_net::testbed::remove_stale), and by the trap on a normal exit.
P=tfcc-$$
trap 'ip netns del $P-a 2>/dev/null; ip netns del $P-b 2>/dev/null' EXIT
ip netns add $P-a; ip netns add $P-b
ip -n $P-a link add va type veth peer name vb netns $P-b
ip -n $P-a addr add 10.79.0.1/24 dev va; ip -n $P-b addr add 10.79.0.2/24 dev vb
ip -n $P-a link set va up; ip -n $P-b link set vb up; ip -n $P-a link set lo up; ip -n $P-b link set lo up
if [ "$RATE" != "none" ]; then
  BURST=$(( ${RATE} * 1000000 / 8 / 160 )); [ $BURST -lt 15000 ] && BURST=15000
  tc -n $P-a qdisc add dev va root handle 1: tbf rate ${RATE}mbit burst $BURST latency 1s
  tc -n $P-a qdisc add dev va parent 1:1 handle 10: pfifo limit 1000
fi
ip netns exec $P-b $B recv --listen 10.79.0.2:5000 --duration 14s $RTFLAG > /tmp/tfcc-tx-recv.log 2>&1 &
sleep 0.5
ip netns exec $P-a /usr/bin/time -f "CPU %U user %S sys %e wall" $B send 10.79.0.2:5000 --duration 12s $RTFLAG > /tmp/tfcc-tx-send.log 2>&1
wait
tail -4 /tmp/tfcc-tx-send.log; tail -1 /tmp/tfcc-tx-recv.log
