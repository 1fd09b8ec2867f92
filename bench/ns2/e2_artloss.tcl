# E2.1 and E2.3 (thesis 003 Sec. 2.5.1, Figs. 2.1 and 2.3; scenarios/003-e21-nonperiodic.toml
# and scenarios/003-e23-twostate.toml) in stock ns-2.35: flows on a path with no congestion, each
# losing one packet per loss interval T on its own sender's access link. The network is the
# scenarios': a 1 Gb/s, 60 ms DropTail bottleneck (queue-limit 10000 both ways) and every host on
# its own 1 Gb/s, 5 ms access links (10000), RTT 140 ms. The flows share nothing but the links,
# which never queue, so each runs as it would alone.
#
# `flows` lists the flows by tfcc's flow index and protocol, e.g. `3:iiad,0:sack`: the index
# names the access link whose loss process the flow meets (tfcc's `access-src-N`, whose draws
# depend on N) and the protocol is one of
#   sack   Agent/TCP/Sack1 -> Agent/TCPSink/Sack1 (an ACK per segment)
#   gaimd  the same with decrease_num_ 0.875, increase_num_ 0.2 (β = 0.125, α = 3β/(2 − β))
#   iiad   the same with windowOption_ 6 (binomial), k_parameter_ 1, l_parameter_ 0,
#          increase_num_ 1, decrease_num_ 0.33: +1/w per RTT, −0.67 per loss (003 Table 2.1.2)
#   sqrt   the same with k_parameter_ 0.5, l_parameter_ 0.5: +1/√w per RTT, −0.67·√w per loss
#   tfrc   Agent/TFRC -> Agent/TFRCSink, ns-2.35's defaults with packetSize_ 1000 and
#          headersize_ 0 (1000 B on the wire, the scenarios' `preset = "ns2", header_size = 0`)
# The TCP agents carry the scenarios' `tcp_defaults = "ns-2.1b9"` (minrto_ 1, precisionReduce_
# false, rtxcur_init_ 6, maxrto_ 100000; `precise=1` sets precisionReduce_ true instead, a
# diagnostic), window_ 200 (003 Sec. 2.4's maximum window), packetSize_ 1000 (1040 B on the
# wire). Every flow starts at 0 s, as the scenarios' flows do.
#
# The loss: `schedule` is a comma list of `at:mean:cv` (seconds, seconds, CV[T]), the loss events
# of tfcc's scenario on every access-src link after the claims' `set` lines (e.g. E2.3's
# `0:1:0,1000:5:0,1700:1:0`). The k-th entry installs tfcc's `interval` model (crates/tfcc-sim/
# src/loss_model.rs) as that link's k-th loss change: drop instants from `at` on, spaced by
# T = mean·(1 − cv) + Exp(mean·cv), the first at `at` + T; the first data packet to arrive at the
# link at or after an instant is dropped, and instants that pass with no packet do not carry
# over. The draws are tfcc's own for `seed` and the link (tfcc_rng.tcl), so the instants are the
# very ones of tfcc's run, to the nanosecond. ns-2 has no time-based loss module; an
# ErrorModel/Trace, whose C++ code asks its Tcl `read` method what to do whenever its packet
# counts run out, is given counts of one packet, so `read` decides every packet at its arrival.
#
# Output on stdout, one line each: `drop FLOW T` at every loss (T in seconds), `s T B0 B1 ...`
# every `dt` seconds (payload bytes each flow delivered in order to its receiver in (T − dt, T],
# flows in the order of `flows`), `w T W0 W1 ...` with the TCP flows' cwnd_ at the same instants
# (`cwnd=1`; TFRC's rate in packets per RTT is not printed), and at the end one JSON line with per
# flow packets sent, retransmitted, timeouts (nrexmit_) and loss-model drops.
# Usage: ns e2_artloss.tcl key=value ... (keys: flows schedule seed duration dt precise cwnd)

array set P {
    flows    0:sack
    schedule 0:5:1
    seed     1
    duration 100
    dt       0.1
    precise  0
    cwnd     0
}
source [file join [file dirname [info script]] kv_args.tcl]
kv_args e2_artloss.tcl $argv
set flows {}
foreach f [split $P(flows) ,] {
    lassign [split $f :] idx proto
    if {![string is integer -strict $idx] || $idx < 0 ||
        [lsearch -exact {sack gaimd iiad sqrt tfrc} $proto] < 0} {
        puts stderr "e2_artloss.tcl: bad flow '$f' (INDEX:sack|gaimd|iiad|sqrt|tfrc)"
        exit 2
    }
    lappend flows [list $idx $proto]
}
set schedule {}
foreach e [split $P(schedule) ,] {
    lassign [split $e :] at mean cv
    if {![string is double -strict $at] || ![string is double -strict $mean] ||
        ![string is double -strict $cv] || $mean <= 0 || $cv < 0 || $cv > 1} {
        puts stderr "e2_artloss.tcl: bad schedule entry '$e' (AT:MEAN:CV, mean > 0, 0 <= cv <= 1)"
        exit 2
    }
    lappend schedule [list $at $mean $cv]
}

set ns [new Simulator]
source [file join [file dirname [info script]] tfcc_rng.tcl]

# ns-2.1b9's TCP defaults where they differ from ns-2.35's (003 Sec. 5, [NS06]; the scenarios'
# tcp_defaults = "ns-2.1b9"), the maximum window and the packet size (003 Sec. 2.4).
Agent/TCP set minrto_ 1
Agent/TCP set precisionReduce_ [expr {$P(precise) ? "true" : "false"}]
Agent/TCP set rtxcur_init_ 6.0
Agent/TCP set maxrto_ 100000
Agent/TCP set window_ 200
Agent/TCP set packetSize_ 1000
Agent/TFRC set packetSize_ 1000
Agent/TFRC set headersize_ 0

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 1Gb 60ms DropTail
$ns queue-limit $r1 $r2 10000
$ns queue-limit $r2 $r1 10000

# The time-based loss of one access link: `read` is called for every packet (good_ and loss_
# are left at one packet or none) and drops it when a drop instant has passed.
Class ErrorModel/Trace/Instants -superclass ErrorModel/Trace
ErrorModel/Trace/Instants instproc init {link fid} {
    $self next
    $self instvar link_ fid_ epoch_ next_ns_ mean_ cv_ rng_ drops_
    set link_ $link
    set fid_ $fid
    set epoch_ 0
    set next_ns_ -1
    set drops_ 0
    $self set good_ 0
    $self set loss_ 0
}
# Install `interval` loss with `mean` and `cv` at the current time (tfcc's `Link::set_loss`).
ErrorModel/Trace/Instants instproc change {mean cv} {
    global ns P
    $self instvar link_ epoch_ next_ns_ mean_ cv_ rng_
    incr epoch_
    set mean_ $mean
    set cv_ $cv
    set rng_ [tfcc_loss_stream $P(seed) $link_ $epoch_]
    set now_ns [expr {wide(round([$ns now] * 1e9))}]
    set next_ns_ [expr {$now_ns + [$self spacing_ns 0]}]
}
# One spacing T in nanoseconds (`general_exponential`, `Dur::from_secs_f64`); at least 1 ns
# after the first instant.
ErrorModel/Trace/Instants instproc spacing_ns {later} {
    $self instvar mean_ cv_ rng_
    set t [expr {$mean_ * (1.0 - $cv_)}]
    if {$cv_ != 0} {
        set t [expr {$t + [tfcc_exponential rng_ [expr {$mean_ * $cv_}]]}]
    }
    set d [expr {wide(round($t * 1e9))}]
    if {$later && $d < 1} { set d 1 }
    return $d
}
ErrorModel/Trace/Instants instproc read {} {
    global ns
    $self instvar next_ns_ fid_ drops_
    # ns-2's clock is a double in seconds; tfcc's, integer nanoseconds.
    set now_ns [expr {wide(round([$ns now] * 1e9))}]
    if {$next_ns_ < 0 || $now_ns < $next_ns_} {
        $self set good_ 1
        $self set loss_ 0
        return
    }
    while {$next_ns_ <= $now_ns} {
        set next_ns_ [expr {$next_ns_ + [$self spacing_ns 1]}]
    }
    incr drops_
    puts "drop $fid_ [$ns now]"
    $self set good_ 0
    $self set loss_ 1
}

set n 0
foreach f $flows {
    lassign $f idx proto
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 1Gb 5ms DropTail
    $ns duplex-link $r2 $d 1Gb 5ms DropTail
    foreach {a b} [list $s $r1 $r1 $s $r2 $d $d $r2] { $ns queue-limit $a $b 10000 }
    set em($n) [new ErrorModel/Trace/Instants access-src-$idx $n]
    $em($n) drop-target [new Agent/Null]
    $ns lossmodel $em($n) $s $r1
    foreach e $schedule {
        lassign $e at mean cv
        $ns at $at "$em($n) change $mean $cv"
    }
    if {$proto eq "tfrc"} {
        set snd($n) [new Agent/TFRC]
        set rcv($n) [new Agent/TFRCSink]
    } else {
        set snd($n) [new Agent/TCP/Sack1]
        set rcv($n) [new Agent/TCPSink/Sack1]
        switch $proto {
            gaimd {
                $snd($n) set decrease_num_ 0.875
                $snd($n) set increase_num_ 0.2
            }
            iiad - sqrt {
                set kl [expr {$proto eq "iiad" ? {1 0} : {0.5 0.5}}]
                $snd($n) set windowOption_ 6
                $snd($n) set k_parameter_ [lindex $kl 0]
                $snd($n) set l_parameter_ [lindex $kl 1]
                $snd($n) set increase_num_ 1.0
                $snd($n) set decrease_num_ 0.33
            }
        }
    }
    $snd($n) set fid_ $n
    $ns attach-agent $s $snd($n)
    $ns attach-agent $d $rcv($n)
    $ns connect $snd($n) $rcv($n)
    if {$proto eq "tfrc"} {
        $ns at 0 "$snd($n) start"
        # TFRCSink's bytes_ counts every data packet that arrives (TFRC never retransmits), at
        # its wire size, here the payload.
        set scale($n) 1.0
    } else {
        set ftp($n) [new Application/FTP]
        $ftp($n) attach-agent $snd($n)
        $ns at 0 "$ftp($n) start"
        # TCPSink's bytes_ counts the in-order segments at their wire size (1040 B).
        set scale($n) [expr {1000.0 / 1040.0}]
    }
    set last($n) 0
    incr n
}

# Every dt: each flow's in-order bytes since the last sample. bytes_ is a C int that wraps
# (README quirk 5), so differences are taken modulo 2^32.
set k 0
proc sample {} {
    global ns P n rcv snd last scale flows k
    incr k
    set now [expr {$k * $P(dt)}]
    set line "s [format %.6g $now]"
    set wl "w [format %.6g $now]"
    for {set i 0} {$i < $n} {incr i} {
        set b [$rcv($i) set bytes_]
        set db [expr {($b - $last($i)) & 0xFFFFFFFF}]
        set last($i) $b
        append line " [format %.0f [expr {$db * $scale($i)}]]"
        if {[lindex $flows $i 1] ne "tfrc"} {
            append wl " [$snd($i) set cwnd_]"
        } else {
            append wl " -"
        }
    }
    puts $line
    if {$P(cwnd)} { puts $wl }
    set next [expr {($k + 1) * $P(dt)}]
    if {$next <= $P(duration) + 1e-9} { $ns at $next "sample" }
}
$ns at $P(dt) "sample"

proc report {} {
    global ns P n snd em flows
    set fl {}
    for {set i 0} {$i < $n} {incr i} {
        lassign [lindex $flows $i] idx proto
        set o "{\"index\": $idx, \"protocol\": \"$proto\", "
        append o "\"packets_sent\": [$snd($i) set ndatapack_], "
        if {$proto ne "tfrc"} {
            append o "\"packets_retransmitted\": [$snd($i) set nrexmitpack_], "
            append o "\"timeouts\": [$snd($i) set nrexmit_], "
        }
        append o "\"loss_model_drops\": [$em($i) set drops_]}"
        lappend fl $o
    }
    puts "{\"tool\": \"ns-2\", \"scenario\": \"e2_artloss\", \"seed\": $P(seed), \"duration\": $P(duration), \"flows\": \[[join $fl {, }]\]}"
    exit 0
}
$ns at [expr {$P(duration) + $P(dt) / 2}] "report"
$ns run
