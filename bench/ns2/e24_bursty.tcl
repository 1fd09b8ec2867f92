# E2.4's set-up (thesis 003 Sec. 2.5.2, Fig. 2.4; scenarios/003-e24-bursty.toml) in stock
# ns-2.35: one test flow alone with an on/off CBR on a 15 Mb/s DropTail bottleneck of 60 ms
# one-way delay and queue-limit 340 (both directions, as tfcc copies the bottleneck's queue to
# its reverse direction). Every host has its own 100 Mb/s, 0.5 ms access links (limit 10000).
# The CBR is two Agent/UDP + Application/Traffic/CBR sources of 1000-byte packets: 9 Mb/s from
# 0 s on, and 5 Mb/s on at 0 s, off between 200 s and 350 s, on again from 350 s (tfcc's
# `on = "200s", off = "150s"` square wave starting with an on period).
#
# The test flow (`protocol=`):
#   tfrc   Agent/TFRC -> Agent/TFRCSink, ns-2.35's defaults with packetSize_ 1000 and
#          headersize_ `tfrc_header` (default 0: 1000 B on the wire, as the claims'
#          `params = { preset = "ns2", header_size = 0 }`; ns-2.35's own default is 32).
#   gaimd  Agent/TCP/Sack1 with decrease_num_ 0.875 and increase_num_ 0.2 (β = 0.125,
#          α = 3β/(2 − β) = 0.2), to Agent/TCPSink/Sack1 (an ACK per segment).
#   sack   Agent/TCP/Sack1 to Agent/TCPSink/Sack1 (TCP-SACK).
# The TCP agents carry the scenario's `tcp_defaults = "ns-2.1b9"` (minrto_ 1, precisionReduce_
# false, rtxcur_init_ 6, maxrto_ 100000), window_ 200 (003 Sec. 2.4's maximum window) and
# packetSize_ 1000 (1040 B on the wire); TFRC keeps its own RTO rules.
#
# The test flow starts at `start` seconds, or, with start < 0 (the default), at the start that
# tfcc's claims draw for `seed` (uniform in [0, 1] s, to the nanosecond; see below).
#
# Measured with a flow monitor on the bottleneck r1 -> r2 (packets that arrive, leave and are
# dropped there, per flow id) and the sender's own counters, read at each window's ends. Prints
# one JSON line: the test flow's packets sent (ndatapack_, retransmissions included) and lost
# (dropped at the bottleneck) in the claims' window [350, 370] s and in the 6 Mb/s phase
# [200, 350] s, the CBR's drops in the same windows, and the test flow's throughput (payload
# bits of its bottleneck departures per second) in [100, 200], [200, 350], [340, 350],
# [350, 370] s and [350, 355] s.
# Usage: ns e24_bursty.tcl key=value ... (keys: protocol seed start tfrc_header)

array set P {
    protocol    tfrc
    seed        1
    start       -1
    tfrc_header 0
}
source [file join [file dirname [info script]] kv_args.tcl]
kv_args e24_bursty.tcl $argv
if {[lsearch -exact {tfrc gaimd sack} $P(protocol)] < 0} {
    puts stderr "e24_bursty.tcl: protocol must be tfrc, gaimd or sack"
    exit 2
}
if {$P(seed) < 1} {
    puts stderr "e24_bursty.tcl: seed must be >= 1 (0 asks ns-2 for a clock-based seed)"
    exit 2
}

global defaultRNG
$defaultRNG seed $P(seed)
set ns [new Simulator]

# ns-2.1b9's TCP defaults where they differ from ns-2.35's (003 Sec. 5, [NS06]; the scenario's
# tcp_defaults = "ns-2.1b9"), the maximum window and the packet size (003 Sec. 2.4).
Agent/TCP set minrto_ 1
Agent/TCP set precisionReduce_ false
Agent/TCP set rtxcur_init_ 6.0
Agent/TCP set maxrto_ 100000
Agent/TCP set window_ 200
Agent/TCP set packetSize_ 1000
Agent/TFRC set packetSize_ 1000
Agent/TFRC set headersize_ $P(tfrc_header)

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 15Mb 60ms DropTail
$ns queue-limit $r1 $r2 340
$ns queue-limit $r2 $r1 340

# A sender and a receiver of these classes, on access links of their own, flow id `fid`.
source [file join [file dirname [info script]] access_pair.tcl]
proc pair {snd_class rcv_class fid} {
    set snd [new $snd_class]
    set rcv [new $rcv_class]
    access_pair $snd $rcv 100Mb 0.5ms 10000 $fid
    return [list $snd $rcv]
}

set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r1 $r2] $fmon

# tfcc's draw of `flows.0.start = { random = ["0s", "1s"] }` for this seed, so that ns-2 runs
# the very start phase the claims' tfcc run has (tfcc_rng.tcl).
source [file join [file dirname [info script]] tfcc_rng.tcl]
if {$P(start) < 0} {
    set P(start) [expr {[tfcc_start_ns $P(seed) flow/0/start 0 1000000000] / 1e9}]
}
switch $P(protocol) {
    tfrc {
        lassign [pair Agent/TFRC Agent/TFRCSink 1] test sink
        $ns at $P(start) "$test start"
    }
    gaimd - sack {
        lassign [pair Agent/TCP/Sack1 Agent/TCPSink/Sack1 1] test sink
        if {$P(protocol) eq "gaimd"} {
            $test set decrease_num_ 0.875
            $test set increase_num_ 0.2
        }
        set ftp [new Application/FTP]
        $ftp attach-agent $test
        $ns at $P(start) "$ftp start"
    }
}

# fid 2: the constant 9 Mb/s; fid 3: the 5 Mb/s part, off in [200, 350) s.
foreach {fid rate} {2 9e6 3 5e6} {
    lassign [pair Agent/UDP Agent/LossMonitor $fid] udp lm
    set cbr($fid) [new Application/Traffic/CBR]
    $cbr($fid) set packetSize_ 1000
    $cbr($fid) set rate_ $rate
    $cbr($fid) set random_ 0
    $cbr($fid) attach-agent $udp
    $ns at 0 "$cbr($fid) start"
}
$ns at 200 "$cbr(3) stop"
$ns at 350 "$cbr(3) start"

# Counters of flow `fid` at the bottleneck: arrivals, departures, drops (packets); zeros before
# its first packet reaches the monitor.
proc fcount {fid} {
    global fmon
    foreach f [$fmon flows] {
        if {[$f set flowid_] == $fid} {
            return [list [$f set parrivals_] [$f set pdepartures_] [$f set pdrops_]]
        }
    }
    return {0 0 0}
}

# A snapshot at time t: the test flow's sender count and every flow's bottleneck counters.
proc snap {t} {
    global S test
    set S($t,sent) [$test set ndatapack_]
    foreach fid {1 2 3} { set S($t,$fid) [fcount $fid] }
}
foreach t {100 200 340 350 355} { $ns at $t "snap $t" }

proc diff {fid a b idx} {
    global S
    return [expr {[lindex $S($b,$fid) $idx] - [lindex $S($a,$fid) $idx]}]
}

proc report {} {
    global S P
    snap 370
    set o "{\"tool\": \"ns-2\", \"scenario\": \"e24_bursty\", \"protocol\": \"$P(protocol)\", "
    append o "\"seed\": $P(seed), \"start_s\": $P(start), \"tfrc_header\": $P(tfrc_header), "
    append o "\"sent_350_370\": [expr {$S(370,sent) - $S(350,sent)}], "
    append o "\"lost_350_370\": [diff 1 350 370 2], "
    append o "\"sent_200_350\": [expr {$S(350,sent) - $S(200,sent)}], "
    append o "\"lost_200_350\": [diff 1 200 350 2], "
    append o "\"cbr_lost_350_370\": [expr {[diff 2 350 370 2] + [diff 3 350 370 2]}], "
    append o "\"cbr_lost_200_350\": [expr {[diff 2 200 350 2] + [diff 3 200 350 2]}], "
    set tp {}
    foreach {a b} {100 200 200 350 340 350 350 370 350 355} {
        # payload bits: 1000 B per data packet, whatever the header on the wire
        set bps [expr {[diff 1 $a $b 1] * 8000.0 / ($b - $a)}]
        lappend tp "\"${a}_${b}\": [format %.0f $bps]"
    }
    append o "\"throughput_bps\": {[join $tp {, }]}}"
    puts $o
    exit 0
}
$ns at 370 "report"
$ns run
