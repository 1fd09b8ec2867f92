# E3.1's set-up (thesis 003 Sec. 3.5.1 Case I) in ns-2.35 with TCP-SACK only: N Agent/TCP/Sack1
# flows (no delayed ACKs, 1000-byte packets, window 200) across a 1 Gb/s bottleneck whose
# forward direction drops every `period`-th packet of the aggregate (ErrorModel/Periodic in
# front of the queue; it carries only data), RTT 140 ms. Prints one line per flow: id,
# packets sent, retransmitted packets, timeouts (nrexmit_), segments acknowledged.
# An optional CBR flow (UDP, 1000-byte packets, `cbr` bit/s, 0 = none) stands in for a smooth,
# paced competitor such as WARC: it shares the loss counter but not the TCP's bursts.
# `precise` 0 sets precisionReduce_ false, the whole-segment decrease of ns-2 before 2006.
# `decrease` and `increase` set decrease_num_ and increase_num_ (GAIMD: 0.875 and 0.2).
# `wndopt`, `k` and `l` set windowOption_, k_parameter_ and l_parameter_: the binomial schemes
# are windowOption_ 6 with increase increase_num_/w^k per RTT and decrease
# (1 − decrease_num_)·w^l per loss (tcp.cc), so IIAD (α = 1, β = 0.67, k = 1, l = 0) is
# `0.33 1.0 6 1 0`.
# Usage: ns e31_countloss.tcl [flows] [period] [duration] [minrto] [tick] [cbr] [precise]
#        [decrease] [increase] [wndopt] [k] [l] [only]
set nflows [expr {[llength $argv] > 0 ? [lindex $argv 0] : 2}]
set period [expr {[llength $argv] > 1 ? [lindex $argv 1] : 20}]
set duration [expr {[llength $argv] > 2 ? [lindex $argv 2] : 2200}]
set minrto [expr {[llength $argv] > 3 ? [lindex $argv 3] : 0.2}]
set tick [expr {[llength $argv] > 4 ? [lindex $argv 4] : 0.01}]
set cbr [expr {[llength $argv] > 5 ? [lindex $argv 5] : 0}]
set precise [expr {[llength $argv] > 6 ? [lindex $argv 6] : 1}]

set ns [new Simulator]
Agent/TCP set packetSize_ 1000
Agent/TCP set window_ 200
Agent/TCP set minrto_ $minrto
Agent/TCP set tcpTick_ $tick
Agent/TCP set precisionReduce_ [expr {$precise ? "true" : "false"}]
# The scheme's keys: on every flow, or with `only` (>= 0) on that flow alone, the others
# staying TCP (E3.1 proper: one TCP and one scheme behind the same loss counter).
set only [expr {[llength $argv] > 12 ? [lindex $argv 12] : -1}]
set scheme {}
if {[llength $argv] > 8} {
    lappend scheme decrease_num_ [lindex $argv 7] increase_num_ [lindex $argv 8]
}
if {[llength $argv] > 11} {
    lappend scheme windowOption_ [lindex $argv 9] k_parameter_ [lindex $argv 10] \
        l_parameter_ [lindex $argv 11]
}
if {$only < 0} {
    foreach {key value} $scheme { Agent/TCP set $key $value }
}

set r1 [$ns node]
set r2 [$ns node]
$ns simplex-link $r1 $r2 1Gb 60ms DropTail
$ns simplex-link $r2 $r1 1Gb 60ms DropTail
$ns queue-limit $r1 $r2 10000
$ns queue-limit $r2 $r1 10000

set em [new ErrorModel/Periodic]
$em unit pkt
$em set period_ $period
$em set offset_ $period
$em set burstlen_ 0
$em drop-target [new Agent/Null]
$ns lossmodel $em $r1 $r2

for {set i 0} {$i < $nflows} {incr i} {
    set s($i) [$ns node]
    set d($i) [$ns node]
    $ns duplex-link $s($i) $r1 1Gb 5ms DropTail
    $ns duplex-link $r2 $d($i) 1Gb 5ms DropTail
    $ns queue-limit $s($i) $r1 10000
    $ns queue-limit $r1 $s($i) 10000
    $ns queue-limit $r2 $d($i) 10000
    $ns queue-limit $d($i) $r2 10000
    set tcp($i) [new Agent/TCP/Sack1]
    $tcp($i) set fid_ $i
    if {$i == $only} {
        foreach {key value} $scheme { $tcp($i) set $key $value }
    }
    set sink($i) [new Agent/TCPSink/Sack1]
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    # Staggered by 1 ms so the flows' packets interleave.
    $ns at [expr {0.001 * $i}] "$ftp($i) start"
}

if {$cbr > 0} {
    set cs [$ns node]
    set cd [$ns node]
    $ns duplex-link $cs $r1 1Gb 5ms DropTail
    $ns duplex-link $r2 $cd 1Gb 5ms DropTail
    set udp [new Agent/UDP]
    $udp set fid_ $nflows
    set lm [new Agent/LossMonitor]
    $ns attach-agent $cs $udp
    $ns attach-agent $cd $lm
    $ns connect $udp $lm
    set cbrapp [new Application/Traffic/CBR]
    $cbrapp set packetSize_ 1000
    $cbrapp set rate_ $cbr
    $cbrapp attach-agent $udp
    $ns at 0.0005 "$cbrapp start"
}

proc report {} {
    global nflows tcp
    for {set i 0} {$i < $nflows} {incr i} {
        puts "flow $i sent [$tcp($i) set ndatapack_] rexmit [$tcp($i) set nrexmitpack_] timeouts [$tcp($i) set nrexmit_] acked [$tcp($i) set ack_]"
    }
    exit 0
}
$ns at $duration "report"
$ns run
