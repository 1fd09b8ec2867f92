# E2.2's set-up (thesis 003 Sec. 2.4.2, Fig. 2.2) in ns-2.35 with ns-2.1b9's differing TCP
# defaults (minrto_ 1, precisionReduce_ false, rtxcur_init_ 6, maxrto_ 100000; the scenario's
# `tcp_defaults = "ns-2.1b9"`): n Agent/TCP/Sack1 flows against n GAIMD flows, which are the same
# agent with decrease_num_ and increase_num_ set (GAIMD β = 0.125, α = 0.2: 0.875 and 0.2),
# SACK sinks without delayed ACKs, 1000-byte packets, window_ = the maximum window (200).
# Bottleneck r1 → r2: 16 Mb/s DropTail, `bdelay` ms, `qlimit` packets. Each flow has its own
# 100 Mb/s access links on both sides (limit 10000) with one-way delay `dlo` + (`dhi` − `dlo`)·U,
# U uniform from the run's seed, as tfcc's `{ random = [lo, hi] }`; RTT = 2·(bdelay + 2·d).
# Starts uniform in [0, 2] s. Counts from 100 s to 600 s (the scenario's measure_from and
# duration). Prints one line per flow: id, 1 for the scheme (0 for TCP), access delay (ms),
# goodput (kb/s), retransmitted packets (nrexmitpack_), timeouts (nrexmit_), cwnd_ at the end,
# then packets sent (the sender's ndatapack_, retransmissions included), packets dropped at the
# bottleneck (a Fid flow monitor on r1 → r2; the access queues never drop) and, for TFRC, the
# loss event rate its receiver last reported (`true_loss_rate_`, at 600 s; -1 for TCP flows).
# Columns 8 and 9 over the window are tfcc's `packets_sent` and `packets_lost`, what
# `normalized_loss_rate` divides.
# `scheme` (default gaimd) picks the scheme group: `gaimd` as above, or `tfrc`, ns-2.35's
# `Agent/TFRC` → `Agent/TFRCSink` with every ns-2 default but `packetSize_ 1000` and
# `headersize_ 0` (1000 B on the wire: the claims' `params = { preset = "ns2", header_size = 0 }`),
# started by `start` at the drawn time. TFRC's goodput is the sink's `bytes_` (every packet that
# arrives; TFRC never retransmits), TCP's and GAIMD's the cumulative ACK; TFRC's columns 5-7 are 0.
# `draws` (default seeded) says where the access delays and start times come from. `seeded`
# (h-e22's runs, kept so that its tables reproduce): two `new RNG`s seeded with `seed` and
# `seed` + 1000. MRG32k3a seeded with a small integer gives first draws that are nearly linear in
# the seed (flow 0's access delay is 4.31, 4.32, 4.34, ... ms for seeds 1, 2, 3, ... in 4.3-40.7,
# flow 2's 4.82, 5.33, 5.85, ...), so flow 0, a TCP flow, has the shortest RTT of all in every
# seed. `substream`: the two `new RNG`s as ns-2 creates them (independent streams), each advanced
# by `seed` - 1 substreams, so the draws of different seeds are independent.
# Usage: ns e22_lowmux.tcl seed bdelay qlimit dlo dhi [maxwin] [decrease] [increase] [n] [scheme]
#   [draws]
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
set scheme [expr {[llength $argv] > 9 ? [lindex $argv 9] : "gaimd"}]
set draws [expr {[llength $argv] > 10 ? [lindex $argv 10] : "seeded"}]
if {$draws ni {seeded substream}} {
    puts stderr "draws must be seeded or substream, not $draws"
    exit 2
}
if {$scheme ni {gaimd tfrc}} {
    puts stderr "scheme must be gaimd or tfrc, not $scheme"
    exit 2
}
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
Agent/TFRC set packetSize_ 1000
Agent/TFRC set headersize_ 0

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 16Mb ${bdelay}ms DropTail
$ns queue-limit $r1 $r2 $qlimit
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r1 $r2] $fmon
set delays [new RNG]
set starts [new RNG]
if {$draws eq "seeded"} {
    $delays seed $seed
    $starts seed [expr {$seed + 1000}]
} else {
    for {set k 1} {$k < $seed} {incr k} {
        $delays next-substream
        $starts next-substream
    }
}
for {set i 0} {$i < 2 * $n} {incr i} {
    set d [expr {$dlo + ($dhi - $dlo) * [$delays uniform 0 1]}]
    set delay($i) $d
    set src($i) [$ns node]
    set dst($i) [$ns node]
    $ns duplex-link $src($i) $r1 100Mb ${d}ms DropTail
    $ns duplex-link $r2 $dst($i) 100Mb ${d}ms DropTail
    $ns queue-limit $src($i) $r1 10000
    if {$i >= $n && $scheme eq "tfrc"} {
        set tcp($i) [new Agent/TFRC]
        set sink($i) [new Agent/TFRCSink]
    } else {
        set tcp($i) [new Agent/TCP/Sack1]
        if {$i >= $n} {
            $tcp($i) set decrease_num_ $decrease
            $tcp($i) set increase_num_ $increase
        }
        set sink($i) [new Agent/TCPSink/Sack1]
    }
    $tcp($i) set fid_ $i
    $ns attach-agent $src($i) $tcp($i)
    $ns attach-agent $dst($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    if {$i >= $n && $scheme eq "tfrc"} {
        $ns at [$starts uniform 0 2] "$tcp($i) start"
    } else {
        set ftp($i) [new Application/FTP]
        $ftp($i) attach-agent $tcp($i)
        $ns at [$starts uniform 0 2] "$ftp($i) start"
    }
}

# A flow's counters: delivered payload bytes, retransmissions, timeouts, packets sent, packets
# dropped at the bottleneck (0 until the flow monitor has seen the flow).
proc counters {i} {
    global tcp sink n scheme fmon
    set fl [[$fmon classifier] lookup auto 0 0 $i]
    set drops [expr {$fl eq "" ? 0 : [$fl set pdrops_]}]
    if {$i >= $n && $scheme eq "tfrc"} {
        # TFRCSink bytes_ counts wire bytes, here equal to the payload (headersize_ 0).
        return [list [$sink($i) set bytes_] 0 0 [$tcp($i) set ndatapack_] $drops]
    }
    return [list [expr {[$tcp($i) set ack_] * 1000}] [$tcp($i) set nrexmitpack_] \
                [$tcp($i) set nrexmit_] [$tcp($i) set ndatapack_] $drops]
}

proc mark {} {
    global n c0
    for {set i 0} {$i < 2 * $n} {incr i} {
        set c0($i) [counters $i]
    }
}

proc report {} {
    global tcp n c0 delay duration from scheme
    for {set i 0} {$i < 2 * $n} {incr i} {
        set d {}
        foreach a [counters $i] b $c0($i) { lappend d [expr {$a - $b}] }
        lassign $d bytes rexmit timeouts sent drops
        set kbps [expr {$bytes * 8.0 / 1000 / ($duration - $from)}]
        if {$i >= $n && $scheme eq "tfrc"} {
            set cwnd 0.0
            set p [$tcp($i) set true_loss_rate_]
        } else {
            set cwnd [$tcp($i) set cwnd_]
            set p -1
        }
        puts "$i [expr {$i >= $n}] [format %.2f $delay($i)] [format %.0f $kbps] $rexmit $timeouts [format %.1f $cwnd] $sent $drops [format %.6g $p]"
    }
    exit 0
}

$ns at $from "mark"
$ns at $duration "report"
$ns run
