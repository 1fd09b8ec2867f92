# E2.2's set-up (thesis 003 Sec. 2.4.2, Fig. 2.2) in ns-2.35 with ns-2.1b9's differing TCP
# defaults (minrto_ 1, precisionReduce_ false, rtxcur_init_ 6, maxrto_ 100000; the scenario's
# `tcp_defaults = "ns-2.1b9"`): n Agent/TCP/Sack1 flows against n GAIMD flows, which are the same
# agent with decrease_num_ and increase_num_ set (GAIMD β = 0.125, α = 0.2: 0.875 and 0.2),
# SACK sinks without delayed ACKs, 1000-byte packets, window_ = the maximum window (200).
# Bottleneck r1 → r2: 16 Mb/s DropTail, `bdelay` ms, `qlimit` packets. Each flow has its own
# 100 Mb/s access links on both sides (limit 10000) with one-way delay `dlo` + (`dhi` − `dlo`)·U,
# U uniform from the run's seed, as tfcc's `{ random = [lo, hi] }`; RTT = 2·(bdelay + 2·d).
# Starts uniform in [0, 2] s. Counts from 100 s to 600 s (the scenario's measure_from and
# duration). Prints one line per flow: id, 1 for GAIMD (0 for TCP), access delay (ms),
# goodput (kb/s, from the cumulative ACK), retransmitted packets (nrexmitpack_), timeouts
# (nrexmit_), cwnd_ at the end.
# Usage: ns e22_lowmux.tcl seed bdelay qlimit dlo dhi [maxwin] [decrease] [increase] [n]
# (the one-way reading of 003-e22-lowmux.toml: 1 40 300 5 5 at CV[RTT] = 0, 1 5 300 4.3 40.7
# at CV[RTT] = 0.42; the RTT reading: 1 20 150 2.5 2.5 and 1 1 150 2.9 21.1)
set seed [lindex $argv 0]
set bdelay [lindex $argv 1]
set qlimit [lindex $argv 2]
set dlo [lindex $argv 3]
set dhi [lindex $argv 4]
set maxwin [expr {[llength $argv] > 5 ? [lindex $argv 5] : 200}]
set decrease [expr {[llength $argv] > 6 ? [lindex $argv 6] : 0.875}]
set increase [expr {[llength $argv] > 7 ? [lindex $argv 7] : 0.2}]
set n [expr {[llength $argv] > 8 ? [lindex $argv 8] : 8}]
set duration 600.0
set from 100.0

global defaultRNG
$defaultRNG seed $seed
set ns [new Simulator]
Agent/TCP set minrto_ 1
Agent/TCP set precisionReduce_ false
Agent/TCP set rtxcur_init_ 6.0
Agent/TCP set maxrto_ 100000
Agent/TCP set window_ $maxwin
Agent/TCP set packetSize_ 1000

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 16Mb ${bdelay}ms DropTail
$ns queue-limit $r1 $r2 $qlimit
set delays [new RNG]
$delays seed $seed
set starts [new RNG]
$starts seed [expr {$seed + 1000}]
for {set i 0} {$i < 2 * $n} {incr i} {
    set d [expr {$dlo + ($dhi - $dlo) * [$delays uniform 0 1]}]
    set delay($i) $d
    set src($i) [$ns node]
    set dst($i) [$ns node]
    $ns duplex-link $src($i) $r1 100Mb ${d}ms DropTail
    $ns duplex-link $r2 $dst($i) 100Mb ${d}ms DropTail
    $ns queue-limit $src($i) $r1 10000
    set tcp($i) [new Agent/TCP/Sack1]
    if {$i >= $n} {
        $tcp($i) set decrease_num_ $decrease
        $tcp($i) set increase_num_ $increase
    }
    set sink($i) [new Agent/TCPSink/Sack1]
    $ns attach-agent $src($i) $tcp($i)
    $ns attach-agent $dst($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [$starts uniform 0 2] "$ftp($i) start"
}

proc mark {} {
    global tcp n ack0 rexmit0 timeouts0
    for {set i 0} {$i < 2 * $n} {incr i} {
        set ack0($i) [$tcp($i) set ack_]
        set rexmit0($i) [$tcp($i) set nrexmitpack_]
        set timeouts0($i) [$tcp($i) set nrexmit_]
    }
}

proc report {} {
    global tcp n ack0 rexmit0 timeouts0 delay duration from
    for {set i 0} {$i < 2 * $n} {incr i} {
        set acked [expr {[$tcp($i) set ack_] - $ack0($i)}]
        set rexmit [expr {[$tcp($i) set nrexmitpack_] - $rexmit0($i)}]
        set timeouts [expr {[$tcp($i) set nrexmit_] - $timeouts0($i)}]
        set kbps [expr {$acked * 8.0 / ($duration - $from)}]
        puts "$i [expr {$i >= $n}] [format %.2f $delay($i)] [format %.0f $kbps] $rexmit $timeouts [format %.1f [$tcp($i) set cwnd_]]"
    }
    exit 0
}

$ns at $from "mark"
$ns at $duration "report"
$ns run
