# Thesis 000's on/off-CBR responsiveness set-up (Sec. 5.1.1, after Bansal et al., SIGCOMM 2001)
# with two SACK TCP flows, in stock ns-2.35: the TCP baseline of the claims 511-idle-* as
# scenarios/000-onoff-cbr.toml builds it in tfcc's simulator with `flows.0.protocol=tcp-sack`.
#
# Why it exists: the claims divide TTFWC's idle-bandwidth use by SACK TCP's; this script checks
# that denominator against ns-2's own `Agent/TCP/Sack1` (docs/reproductions/log/ttfwc.md, "The
# on/off-CBR TCP baseline in stock ns-2.35").
#
# Network, value by value as tfcc builds the scenario (crates/tfcc-sim/src/topology.rs,
# `dumbbell_directed`; crates/tfcc-sim/src/scenario/build.rs):
# - bottleneck r1 -> r2: 15 Mb/s, 4 ms, DropTail `queue-limit` 16; its reverse r2 -> r1 (the
#   ACKs) a copy, 15 Mb/s, 4 ms, limit 16. tfcc's DropTail limit counts the packet on the wire
#   as ns-2's does, so the same number is set.
# - every flow, the CBR source included, has its own access link on each side, 100 Mb/s,
#   DropTail 10000 both ways. The TOML's `delay = ["0.1ms", "0.3ms"]` is a range spread evenly
#   over *all three* flows of the dumbbell (`DelaySpread::Uniform`, flow i of n at
#   lo + (hi - lo) i / (n - 1)): TCP 0 at 0.1 ms, TCP 1 at 0.2 ms, the CBR at 0.3 ms (base
#   RTTs 8.4 and 8.8 ms, 000 Sec. 5.1.1). Until 2026-11-26 the TOML had 0.1-0.2 ms, which put
#   TCP 1 at 0.15 ms (8.6 ms); the runs in docs/reproductions/log/ttfwc.md's onoffns2 section
#   used those delays (`'access_delays=0.0001 0.00015 0.0002'` reproduces them).
# - TCP: `Agent/TCP/Sack1` -> `Agent/TCPSink/Sack1`, FTP, `packetSize_ 1000` (1040 B on the
#   wire), `window_ 10000` (tfcc's `max_window` default; ns-2's 20 would cap the flows), every
#   other parameter ns-2.35's default, which is what tfcc's `TcpConfig::default()` models
#   (windowInit_ 2, syn_ with delay_growth_, singledup_ 1, precisionReduce_ true, bugFix_,
#   partial_ack_ false, maxSackBlocks_ 3, tcpTick_ 0.01, minrto_ 0.2, rtxcur_init_ 3, maxrto_
#   60, no delayed ACK). ns-2 draws each agent's tick phase `boot_time_` from its default RNG;
#   tfcc uses phase 0.
# - starts: tfcc draws flow i's start uniformly in [0, 1 s] in whole nanoseconds from the
#   stream "flow/i/start" of the seed; `starts=tfcc` (the default) computes those very draws
#   here (the proc below, as e24_bursty.tcl), `starts=ns2` draws them from an ns-2 RNG seeded
#   with the seed instead.
# - CBR: `Agent/UDP` -> `Agent/LossMonitor`, `Application/Traffic/CBR` with `packetSize_ 1000`
#   (1000 B on the wire, like tfcc's raw CBR packets), `rate_` 10 Mb/s, `random_ 0`; on for x s
#   from x, off for x s, and so on: on in [(2k+1)x, (2k+2)x).
#   ns-2's CBR sends a packet at once on `start` and then one every interval, its timer
#   accumulating the interval in floating point; the packet due at the very instant of `stop`
#   is sent whenever the rounded sum falls below the stop time (57 of 62 on phases of seed 5 at
#   x = 1.6 s: 2001 packets where tfcc, counting k with k·interval < x, sends 2000).
#   `cbr_exact=1` (a diagnostic) stops the CBR 1 us early, so that every on phase sends tfcc's
#   count; with it the two simulators' packet sequences at the bottleneck agree far longer
#   (docs/reproductions/log/ttfwc.md, "The lock gap on the on/off network").
# - measured over [measure_from, duration] = [5, 200] s.
#
#   ns onoff_cbr.tcl seed=1 x=0.05
#
# Output, one JSON line: the link's departures (wire bytes) and the CBR's delivered bytes over the
# window, `idle_use` = (U C - X_cbr) / (C - X_cbr) as tfcc's `metrics.idle_bandwidth_use`
# computes it (U from the wire bytes leaving the bottleneck queue, X_cbr the CBR's goodput), and
# per TCP flow its start, goodput (payload: in-order packets delivered x 1000 B), packets sent
# (`ndatapack_`), retransmitted (`nrexmitpack_`) and timeouts (`nrexmit_`) in the window, and
# its payload goodput in the CBR's on and off phases (bytes delivered while the CBR was on or
# off, over the time it was on or off inside the window; delivery lags a phase by about a round
# trip, which at x = 0.05 s is a fifth of the phase), and the longest stretch of whole phases
# in which it delivered nothing (`longest_stall_s`, a stall on its retransmission timer to
# within a phase).

array set P {
    seed 1 x 1.6 duration 200 measure_from 5 rate 15e6 delay 0.004 limit 16
    access_rate 100e6 access_delays {0.0001 0.0002 0.0003} access_limit 10000
    cbr_rate 10e6 packet_size 1000 window 10000 starts tfcc minrto 0.2 cbr_exact 0
}
source [file join [file dirname [info script]] kv_args.tcl]
kv_args onoff_cbr.tcl $argv
foreach k {seed x duration measure_from rate delay limit access_rate access_limit cbr_rate packet_size window minrto} {
    if {![string is double -strict $P($k)] || $P($k) <= 0} {
        puts stderr "onoff_cbr.tcl: $k must be a positive number, got '$P($k)'"
        exit 2
    }
}
if {![string is integer -strict $P(seed)]} {
    puts stderr "onoff_cbr.tcl: seed must be a positive integer, got '$P(seed)'"
    exit 2
}
if {$P(measure_from) >= $P(duration)} {
    puts stderr "onoff_cbr.tcl: measure_from ($P(measure_from)) must lie before duration ($P(duration))"
    exit 2
}
if {[llength $P(access_delays)] != 3} {
    puts stderr "onoff_cbr.tcl: access_delays needs three delays (TCP 0, TCP 1, CBR), got '$P(access_delays)'"
    exit 2
}
if {$P(cbr_exact) ni {0 1}} {
    puts stderr "onoff_cbr.tcl: cbr_exact must be 0 or 1, got '$P(cbr_exact)'"
    exit 2
}
if {$P(starts) ni {tfcc ns2}} {
    puts stderr "onoff_cbr.tcl: starts must be tfcc or ns2, got '$P(starts)'"
    exit 2
}

set ns [new Simulator]
ns-random $P(seed)

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 $P(rate) $P(delay) DropTail
$ns queue-limit $r1 $r2 $P(limit)
$ns queue-limit $r2 $r1 $P(limit)
set qmon [new QueueMonitor]
[$ns link $r1 $r2] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] \
    [new SnoopQueue/Drop] $qmon

# A sender node behind r1 and a receiver node behind r2, each on its own duplex access link.
source [file join [file dirname [info script]] access_pair.tcl]
proc pair {snd rcv delay fid} {
    global P
    access_pair $snd $rcv $P(access_rate) $delay $P(access_limit) $fid
}

# tfcc's draw of `start = { random = ["0s", "1s"] }` for each flow's stream (tfcc_rng.tcl).
source [file join [file dirname [info script]] tfcc_rng.tcl]

Agent/TCP set packetSize_ $P(packet_size)
Agent/TCP set window_ $P(window)
# ns-2.35's default; a diagnostic knob only (an RTO backed off from 0.2 s is a multiple of the
# CBR's period 2x for x = 0.05 and 0.4 s, see the driver).
Agent/TCP set minrto_ $P(minrto)
set rng [new RNG]
$rng seed $P(seed)
set tcps {}
for {set i 0} {$i < 2} {incr i} {
    set tcp [new Agent/TCP/Sack1]
    set sink [new Agent/TCPSink/Sack1]
    pair $tcp $sink [lindex $P(access_delays) $i] $i
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    if {$P(starts) eq "tfcc"} {
        set start [expr {[tfcc_start_ns $P(seed) flow/$i/start 0 1000000000] / 1e9}]
    } else {
        set start [$rng uniform 0 1]
    }
    $ns at $start "$ftp start"
    lappend tcps [list $tcp $sink $start]
}

set udp [new Agent/UDP]
set lm [new Agent/LossMonitor]
pair $udp $lm [lindex $P(access_delays) 2] 2
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ $P(packet_size)
$cbr set rate_ $P(cbr_rate)
$cbr set random_ 0
$cbr attach-agent $udp
for {set k 0} {[expr {(2 * $k + 1) * $P(x)}] < $P(duration)} {incr k} {
    $ns at [expr {(2 * $k + 1) * $P(x)}] "$cbr start"
    $ns at [expr {(2 * $k + 2) * $P(x) - ($P(cbr_exact) ? 1e-6 : 0)}] "$cbr stop"
}

# Counters are C ints; at these rates none comes near 2^31 in 200 s (the link's byte count
# reaches 3.8e8), so plain differences do.
proc counters {} {
    global tcps lm qmon
    set c [list [$qmon set bdepartures_] [$qmon set pdrops_] [$lm set bytes_]]
    foreach f $tcps {
        lassign $f tcp sink
        # TCPSink bytes_ counts wire bytes of in-order data; ack_ (its highest in-order
        # sequence number) turns it into packets, hence payload.
        lappend c [$tcp set ndatapack_] [$tcp set nrexmitpack_] [$tcp set nrexmit_] \
            [$sink set bytes_]
    }
    return $c
}

# Phase accounting: at every CBR switch inside the window, the bytes each sink delivered since
# the last switch go to the phase that just ended.
set last_t $P(measure_from)
set last_bytes {}
array set phase {on,0 0 on,1 0 off,0 0 off,1 0 on,t 0 off,t 0 run,0 0 run,1 0 stall,0 0 stall,1 0}
proc cbr_on_at {t} {
    # Whether the CBR is on in [t, next switch): on in [(2k+1)x, (2k+2)x).
    global P
    set k [expr {int(floor($t / $P(x) + 1e-9))}]
    return [expr {$k % 2 == 1}]
}
proc sink_bytes {} {
    global tcps
    set b {}
    foreach f $tcps { lappend b [[lindex $f 1] set bytes_] }
    return $b
}
proc phase_switch {} {
    global ns last_t last_bytes phase P
    set now [$ns now]
    # The phase that ends now began at last_t.
    set which [expr {[cbr_on_at [expr {($last_t + $now) / 2}]] ? "on" : "off"}]
    set b [sink_bytes]
    for {set i 0} {$i < 2} {incr i} {
        set got [expr {[lindex $b $i] - [lindex $last_bytes $i]}]
        set phase($which,$i) [expr {$phase($which,$i) + $got}]
        # The longest run of phases in which the flow delivered nothing (a stall on its
        # retransmission timer, to within a phase).
        set phase(run,$i) [expr {$got == 0 ? $phase(run,$i) + $now - $last_t : 0}]
        set phase(stall,$i) [expr {max($phase(stall,$i), $phase(run,$i))}]
    }
    set phase($which,t) [expr {$phase($which,t) + $now - $last_t}]
    set last_t $now
    set last_bytes $b
}
proc mark {} {
    global base last_bytes
    set base [counters]
    set last_bytes [sink_bytes]
}
$ns at $P(measure_from) mark
for {set k 1} {[expr {$k * $P(x)}] < $P(duration)} {incr k} {
    set t [expr {$k * $P(x)}]
    if {$t > $P(measure_from)} { $ns at $t phase_switch }
}

proc report {} {
    global P base tcps phase
    phase_switch
    set end [counters]
    set d {}
    foreach a $base b $end { lappend d [expr {$b - $a}] }
    set span [expr {$P(duration) - $P(measure_from)}]
    set wire [expr {$P(packet_size) + 40}]
    lassign $d dep drops cbr_bytes
    set u [expr {8.0 * $dep / ($P(rate) * $span)}]
    set x_cbr [expr {8.0 * $cbr_bytes / $span}]
    set idle [expr {($u * $P(rate) - $x_cbr) / ($P(rate) - $x_cbr)}]
    set o "{\"tool\": \"ns-2\", \"scenario\": \"onoff_cbr\", \"seed\": $P(seed), \"x\": $P(x), "
    append o "\"starts\": \"$P(starts)\", \"window_s\": \[$P(measure_from), $P(duration)\], "
    append o "\"utilization\": [format %.6f $u], \"cbr_bps\": [format %.1f $x_cbr], "
    append o "\"idle_use\": [format %.6f $idle], \"bottleneck_drops\": $drops, "
    append o "\"on_s\": [format %.6f $phase(on,t)], \"off_s\": [format %.6f $phase(off,t)], "
    set fl {}
    for {set i 0} {$i < 2} {incr i} {
        lassign [lrange $d [expr {3 + 4 * $i}] [expr {6 + 4 * $i}]] sent rexmit rto bytes
        # Payload bits per second: the sink counts the wire size of each in-order packet.
        set pay [expr {$P(packet_size) / double($wire)}]
        set g [expr {8.0 * $bytes * $pay / $span}]
        set on [expr {$phase(on,t) > 0 ? 8.0 * $phase(on,$i) * $pay / $phase(on,t) : 0}]
        set off [expr {$phase(off,t) > 0 ? 8.0 * $phase(off,$i) * $pay / $phase(off,t) : 0}]
        lappend fl [format {{"id": %d, "start_s": %.9f, "goodput_bps": %.1f, "on_goodput_bps": %.1f, "off_goodput_bps": %.1f, "packets_sent": %d, "packets_retransmitted": %d, "timeouts": %d, "longest_stall_s": %.3f}} \
            $i [lindex [lindex $tcps $i] 2] $g $on $off $sent $rexmit $rto $phase(stall,$i)]
    }
    append o "\"flows\": \[[join $fl {, }]\]}"
    puts $o
    exit 0
}
$ns at $P(duration) report
$ns run
