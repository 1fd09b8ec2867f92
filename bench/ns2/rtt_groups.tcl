# Two groups of bulk TCP-SACK flows with different round-trip times through one DropTail
# bottleneck, in stock ns-2.35: thesis 000's testbed set-up (Sec. 5.2, Fig. 5.10), as
# scenarios/000-testbed.toml builds it in tfcc's simulator, with ns-2's own agents.
#
# Why it exists: on that set-up tfcc gives the 32 ms group about the 120 ms group's throughput
# (claim 521a-10m-inverse-rtt-rtt32, docs/reproductions/ttfwc.md), not the 120/32 the thesis
# reads from Fig. 5.11, because the short-RTT flows lose a much larger share of their packets.
# This script asks whether ns-2 does the same on the same network.
#
# Network (as 000-testbed.toml): senders A and C on 1 Gb/s links to router L (link delay
# `delay_a` and `delay_c` seconds each way), a 10 Mb/s, 0.1 ms bottleneck L -> R with a DropTail
# queue of `limit` packets in both directions, receivers B and D on 1 Gb/s, 0.1 ms links behind R;
# every other queue 10000 packets. `n` flows A -> B and `n` flows C -> D, 1460-byte segments,
# ns-2's per-packet ACKs, window_ large, each started at a uniform time in [0, 1) s.
#
#   ns rtt_groups.tcl seed=1 delay_c=0.0158        # 120 ms against 32 ms round trips
#
# Output, one JSON line: per flow (A's first) the goodput in Mb/s over [from, duration] and the
# share of its data packets that were retransmissions (`nrexmitpack_ / ndatapack_`).

array set P {seed 1 n 3 delay_a 0.0598 delay_c 0.0598 limit 50 rate 10e6 duration 200 from 20}
foreach arg $argv {
    set kv [split $arg =]
    if {[llength $kv] != 2 || ![info exists P([lindex $kv 0])]} {
        puts stderr "rtt_groups.tcl: bad argument '$arg' (known keys: [lsort [array names P]])"
        exit 2
    }
    set P([lindex $kv 0]) [lindex $kv 1]
}

set ns [new Simulator]
ns-random $P(seed)
set starts [new RNG]
$starts seed $P(seed)

foreach name {a c l r b d} { set node($name) [$ns node] }
$ns duplex-link $node(a) $node(l) 1Gb $P(delay_a) DropTail
$ns duplex-link $node(c) $node(l) 1Gb $P(delay_c) DropTail
$ns duplex-link $node(r) $node(b) 1Gb 0.0001 DropTail
$ns duplex-link $node(r) $node(d) 1Gb 0.0001 DropTail
$ns simplex-link $node(l) $node(r) $P(rate) 0.0001 DropTail
$ns simplex-link $node(r) $node(l) $P(rate) 0.0001 DropTail
$ns queue-limit $node(l) $node(r) $P(limit)
$ns queue-limit $node(r) $node(l) $P(limit)
foreach {x y} {a l c l r b r d} {
    $ns queue-limit $node($x) $node($y) 10000
    $ns queue-limit $node($y) $node($x) 10000
}

Agent/TCP set packetSize_ 1460
Agent/TCP set window_ 100000
set flows {}
for {set i 0} {$i < 2 * $P(n)} {incr i} {
    set from [expr {$i < $P(n) ? "a" : "c"}]
    set to [expr {$i < $P(n) ? "b" : "d"}]
    set tcp [new Agent/TCP/Sack1]
    $tcp set fid_ $i
    set sink [new Agent/TCPSink/Sack1]
    $ns attach-agent $node($from) $tcp
    $ns attach-agent $node($to) $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at [$starts uniform 0 1] "$ftp start"
    lappend flows [list $tcp $sink]
}

proc mark {} {
    global flows base
    set base {}
    foreach f $flows { lappend base [[lindex $f 1] set bytes_] }
}
proc report {} {
    global flows base P
    set span [expr {$P(duration) - $P(from)}]
    set rates {}
    set rexmit {}
    foreach f $flows b $base {
        lassign $f tcp sink
        lappend rates [expr {([$sink set bytes_] - $b) * 8.0 / $span / 1e6}]
        lappend rexmit [expr {double([$tcp set nrexmitpack_]) / max(1, [$tcp set ndatapack_])}]
    }
    puts "{\"goodput_mbps\": \[[join $rates ", "]\], \"rexmit_share\": \[[join $rexmit ", "]\]}"
    exit 0
}
$ns at $P(from) mark
$ns at $P(duration) report
$ns run
