# dumbbell.tcl: the ns-2.35 reference scenario that tfcc's simulator and TFRC are checked against.
#
# N TCP flows, M TFRC flows and an optional CBR flow share one bottleneck link r1 -> r2; each flow
# has its own access links (src_i -> r1 and r2 -> dst_i). Run as
#
#     ns dumbbell.tcl key=value ...
#
# with every quantity in plain SI units (bits/s, seconds, packets, bytes); see README.md for the
# parameter table and the JSON printed on stdout (or written to out=FILE). Measurement is done in
# Tcl from counters that ns-2 keeps anyway, with no trace files: tracing every packet would
# dominate ns-2's run time and make the timing baseline meaningless. `trace=FILE` writes the
# trace-all file of every link all the same, for comparing with `tfcc ns2-trace`.

# ---------------------------------------------------------------------------------------------
# Parameters

array set P {
    tcp            2
    tcp_variant    sack
    delack         0
    tfrc           0
    reverse_tcp    0
    cbr_rate       0
    cbr_packet_size 1000
    cbr_start      0
    cbr_stop       -1
    bottleneck_rate  15e6
    bottleneck_delay 0.02
    queue          droptail
    limit          100
    reverse_limit  -1
    red_bytes      0
    red_thresh     0
    red_maxthresh  0
    red_q_weight   -1
    red_linterm    10
    red_gentle     1
    access_rate    100e6
    access_delay   0.001
    access_limit   10000
    loss           0
    loss_position  before_queue
    duration       100
    measure_from   -1
    seed           1
    window         10000
    packet_size    1000
    start_max      1.0
    start_mode     random
    out            -
    trace          -
}

proc fail {msg} {
    puts stderr "dumbbell.tcl: $msg"
    exit 2
}

foreach arg $argv {
    set eq [string first = $arg]
    if {$eq < 1} { fail "argument '$arg' is not key=value" }
    set key [string range $arg 0 [expr {$eq - 1}]]
    set val [string range $arg [expr {$eq + 1}] end]
    if {![info exists P($key)]} {
        fail "unknown parameter '$key' (known: [lsort [array names P]])"
    }
    set P($key) $val
}

proc need_number {key {min ""} {strict 0}} {
    global P
    if {![string is double -strict $P($key)]} { fail "$key=$P($key) is not a number" }
    if {$min ne ""} {
        if {$strict && !($P($key) > $min)} { fail "$key=$P($key) must be > $min" }
        if {!$strict && !($P($key) >= $min)} { fail "$key=$P($key) must be >= $min" }
    }
}
proc need_int {key min} {
    global P
    if {![string is integer -strict $P($key)]} { fail "$key=$P($key) is not an integer" }
    if {$P($key) < $min} { fail "$key=$P($key) must be >= $min" }
}
proc need_choice {key choices} {
    global P
    if {[lsearch -exact $choices $P($key)] < 0} { fail "$key=$P($key) must be one of: $choices" }
}

need_int tcp 0
need_int tfrc 0
need_int reverse_tcp 0
need_choice tcp_variant {sack reno newreno}
need_choice delack {0 1}
need_number cbr_rate 0
need_int cbr_packet_size 1
need_number cbr_start 0
need_number cbr_stop
need_number bottleneck_rate 0 1
need_number bottleneck_delay 0
need_choice queue {droptail red}
need_int limit 1
need_int reverse_limit -1
if {$P(reverse_limit) < 0} { set P(reverse_limit) $P(limit) }
if {$P(reverse_limit) < 1} { fail "reverse_limit=$P(reverse_limit) must be >= 1 (or -1: limit)" }
need_choice red_bytes {0 1}
need_number red_thresh 0
need_number red_maxthresh 0
need_number red_q_weight
need_number red_linterm 0 1
need_choice red_gentle {0 1}
need_number access_rate 0 1
need_number access_delay 0
need_int access_limit 1
need_number loss 0
if {$P(loss) > 1} { fail "loss=$P(loss) must be a probability in \[0, 1\]" }
need_choice loss_position {before_queue after_link}
need_number duration 0 1
need_number measure_from
if {$P(measure_from) < 0} { set P(measure_from) [expr {$P(duration) / 5.0}] }
if {$P(measure_from) >= $P(duration)} {
    fail "measure_from=$P(measure_from) must be < duration=$P(duration)"
}
# Seed 0 asks ns-2's RNG for a heuristic (clock-based) seed, which would break reproducibility.
need_int seed 1
need_int window 1
need_int packet_size 1
need_number start_max 0
need_choice start_mode {random even}
if {$P(cbr_stop) < 0} { set P(cbr_stop) $P(duration) }
if {$P(tcp) + $P(tfrc) == 0 && $P(cbr_rate) == 0} { fail "no flows: set tcp, tfrc or cbr_rate" }

# ---------------------------------------------------------------------------------------------
# Agent defaults (class-level, so they apply to every instance created below)

# ns-2's default window_ is 20 packets, which would cap each TCP at 20 packets per RTT (e.g.
# 20 * 1040 B / 44 ms = 3.8 Mb/s) instead of letting the network limit it; tfcc's TCP has no
# receiver-window limit by default, so the comparison needs the cap out of the way.
Agent/TCP set window_ $P(window)
Agent/TCP set packetSize_ $P(packet_size)
Agent/TFRC set packetSize_ $P(packet_size)

if {$P(queue) eq "red"} {
    # ns-2.35's RED defaults are byte mode with mean_pktsize_ 500, so a limit of L "packets"
    # holds L * 500 bytes: half the buffer for 1000-byte segments. Packet mode (red_bytes=0,
    # our default) keeps `limit` in packets as for DropTail; red_bytes=1 restores ns-2's mode.
    Queue/RED set queue_in_bytes_ $P(red_bytes)
    Queue/RED set bytes_ $P(red_bytes)
    # 0 thresholds and q_weight_ -1 are ns-2's "configure automatically from the link rate".
    Queue/RED set thresh_ $P(red_thresh)
    Queue/RED set maxthresh_ $P(red_maxthresh)
    Queue/RED set q_weight_ $P(red_q_weight)
    Queue/RED set linterm_ $P(red_linterm)
    Queue/RED set gentle_ $P(red_gentle)
}

# ---------------------------------------------------------------------------------------------
# Random streams

set ns [new Simulator]
set trace_fh ""
if {$P(trace) ne "-"} {
    # Before the first link: trace-all only instruments links created after it.
    if {[catch {set trace_fh [open $P(trace) w]} err]} { fail "cannot write trace=$P(trace): $err" }
    $ns trace-all $trace_fh
}
global defaultRNG
# RED's random drops draw from the default stream. Each `new RNG` below is a separate MRG32k3a
# stream derived from this seed, so the start times and the loss draws do not shift when RED (or
# the number of flows) changes.
$defaultRNG seed $P(seed)
set start_rng [new RNG]
set loss_rng [new RNG]

# ---------------------------------------------------------------------------------------------
# Topology

set r1 [$ns node]
set r2 [$ns node]
set qtype [expr {$P(queue) eq "red" ? "RED" : "DropTail"}]
$ns simplex-link $r1 $r2 $P(bottleneck_rate) $P(bottleneck_delay) $qtype
$ns queue-limit $r1 $r2 $P(limit)
# The reverse direction carries ACKs and TFRC feedback, and the data of the reverse_tcp flows:
# a DropTail queue of reverse_limit packets (default: the forward limit, which 40-byte packets
# alone never fill).
$ns simplex-link $r2 $r1 $P(bottleneck_rate) $P(bottleneck_delay) DropTail
$ns queue-limit $r2 $r1 $P(reverse_limit)
set rqmon [new QueueMonitor]
[$ns link $r2 $r1] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] \
    [new SnoopQueue/Drop] $rqmon
set rpkts_integ [new Integrator]
$rqmon set-pkts-integrator $rpkts_integ

set bottleneck [$ns link $r1 $r2]
set qmon [new QueueMonitor]
$bottleneck attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] [new SnoopQueue/Drop] $qmon
set pkts_integ [new Integrator]
$qmon set-pkts-integrator $pkts_integ
set bytes_integ [new Integrator]
$qmon set-bytes-integrator $bytes_integ

# Attached after the monitors, so that the loss module sits in front of the monitor's input snoop:
# the monitor then sees only packets that survived the loss model, and its drop count is queue
# drops alone. Loss-model drops go to their own counter.
set loss_counter ""
if {$P(loss) > 0} {
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $P(loss)
    set loss_rv [new RandomVariable/Uniform]
    $loss_rv use-rng $loss_rng
    $em ranvar $loss_rv
    # Only matters for after_link placement, where ns-2 would otherwise hold the link for the
    # transmission time of a dropped packet at ErrorModel's own bandwidth_ default of 2 Mb/s.
    $em set bandwidth_ $P(bottleneck_rate)
    if {$P(loss_position) eq "before_queue"} {
        $ns lossmodel $em $r1 $r2
    } else {
        $ns link-lossmodel $em $r1 $r2
    }
    set loss_counter [new Agent/LossMonitor]
    $em drop-target $loss_counter
}

proc access_pair {} {
    global ns r1 r2 P
    set src [$ns node]
    set dst [$ns node]
    $ns duplex-link $src $r1 $P(access_rate) $P(access_delay) DropTail
    $ns duplex-link $r2 $dst $P(access_rate) $P(access_delay) DropTail
    # Large access buffers keep every drop at the bottleneck, where it is counted.
    $ns queue-limit $src $r1 $P(access_limit)
    $ns queue-limit $r1 $src $P(access_limit)
    $ns queue-limit $r2 $dst $P(access_limit)
    $ns queue-limit $dst $r2 $P(access_limit)
    return [list $src $dst]
}

# ---------------------------------------------------------------------------------------------
# Flows

set nflows [expr {$P(tcp) + $P(tfrc) + $P(reverse_tcp)}]
proc start_time {index} {
    global P nflows start_rng
    if {$P(start_mode) eq "even"} {
        if {$nflows <= 1} { return 0.0 }
        return [expr {$P(start_max) * $index / double($nflows)}]
    }
    return [$start_rng uniform 0 $P(start_max)]
}

switch $P(tcp_variant) {
    sack    { set tcp_class Agent/TCP/Sack1;   set sink_class Agent/TCPSink/Sack1 }
    reno    { set tcp_class Agent/TCP/Reno;    set sink_class Agent/TCPSink }
    newreno { set tcp_class Agent/TCP/Newreno; set sink_class Agent/TCPSink }
}
if {$P(delack)} { append sink_class /DelAck }

# A sender of class `snd_class` and a receiver of class `rcv_class` on a new pair of access
# nodes, flow id `fid`, connected; returns the two agents and the sender's access node. With
# `reverse` the sender sits on the receivers' side (r2) and its data crosses r2 -> r1.
proc agent_pair {snd_class rcv_class fid {reverse 0}} {
    global ns
    lassign [access_pair] src dst
    if {$reverse} { lassign [list $dst $src] src dst }
    set snd [new $snd_class]
    set rcv [new $rcv_class]
    $snd set fid_ $fid
    $ns attach-agent $src $snd
    $ns attach-agent $dst $rcv
    $ns connect $snd $rcv
    return [list $snd $rcv $src]
}

# flow records: id kind sender receiver start [app]
set flows {}
set fid 0
# The next flow: a TCP of kind `kind` fed by FTP from its start time, `reverse` as agent_pair.
proc tcp_flow {kind reverse} {
    global ns flows fid tcp_class sink_class
    lassign [agent_pair $tcp_class $sink_class $fid $reverse] snd rcv
    set ftp [new Application/FTP]
    $ftp attach-agent $snd
    set t [start_time $fid]
    $ns at $t "$ftp start"
    lappend flows [list $fid $kind $snd $rcv $t ""]
    incr fid
}
for {set i 0} {$i < $P(tcp)} {incr i} {
    tcp_flow tcp 0
}
for {set i 0} {$i < $P(tfrc)} {incr i} {
    lassign [agent_pair Agent/TFRC Agent/TFRCSink $fid] snd rcv
    set t [start_time $fid]
    $ns at $t "$snd start"
    lappend flows [list $fid tfrc $snd $rcv $t ""]
    incr fid
}
# Reverse-path TCP (002 Secs. 4.2, 4.4): the sender on the receivers' side, its data over
# r2 -> r1 beside the forward ACKs. Kind "tcp-reverse", left out of θ, Jain and the forward
# bottleneck's accounting.
for {set i 0} {$i < $P(reverse_tcp)} {incr i} {
    tcp_flow tcp-reverse 1
}
if {$P(cbr_rate) > 0} {
    lassign [agent_pair Agent/UDP Agent/LossMonitor $fid] snd rcv src
    set cbr [new Application/Traffic/CBR]
    $cbr set packetSize_ $P(cbr_packet_size)
    $cbr set rate_ $P(cbr_rate)
    $cbr set random_ 0
    $cbr attach-agent $snd
    $ns at $P(cbr_start) "$cbr start"
    $ns at $P(cbr_stop) "$cbr stop"
    # UDP agents count nothing they send; a monitor on the CBR's own first link counts it.
    set cbr_sent [new QueueMonitor]
    [$ns link $src $r1] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] \
        [new SnoopQueue/Drop] $cbr_sent
    lappend flows [list $fid cbr $snd $rcv $P(cbr_start) $cbr_sent]
    incr fid
}

# ---------------------------------------------------------------------------------------------
# Measurement: counters are read at measure_from and at duration; the report gives differences.

proc flow_counters {kind snd rcv extra} {
    # delivered: bytes the receiver counts (TCPSink: in-order bytes handed up, so duplicates are
    # not counted; TFRCSink and LossMonitor: every data packet that arrives). Sizes are ns-2's
    # on-wire sizes (payload + header). sent / sent_bytes / rexmit: sender's own counters
    # (TCP's ndatabytes_ counts payload only).
    switch $kind {
        tcp - tcp-reverse {
            return [list [$rcv set bytes_] [$snd set ndatapack_] [$snd set ndatabytes_] \
                        [$snd set nrexmitpack_]]
        }
        tfrc {
            return [list [$rcv set bytes_] [$snd set ndatapack_] [$snd set ndatabytes_] 0]
        }
        cbr {
            return [list [$rcv set bytes_] [$extra set parrivals_] [$extra set barrivals_] 0]
        }
    }
}

# Every cumulative counter, as a flat list of name value name value ...
proc read_counters {} {
    global qmon rqmon loss_counter flows
    set c {}
    foreach v {parrivals_ barrivals_ pdepartures_ bdepartures_ pdrops_ bdrops_} {
        lappend c $v [$qmon set $v]
    }
    foreach v {pdepartures_ bdepartures_ pdrops_} {
        lappend c rev_$v [$rqmon set $v]
    }
    if {$loss_counter ne ""} {
        lappend c loss_pkts [$loss_counter set npkts_] loss_bytes [$loss_counter set bytes_]
    } else {
        lappend c loss_pkts 0 loss_bytes 0
    }
    foreach f $flows {
        lassign $f id kind snd rcv t extra
        foreach name {delivered sent sent_bytes rexmit} x [flow_counters $kind $snd $rcv $extra] {
            lappend c flow$id,$name $x
        }
    }
    return $c
}

# ns-2 keeps these counters in C ints: the bottleneck's byte counters pass 2^31 after about
# 2 GB (17 s at 1 Gb/s) and go negative. Reading them more often than they can advance by 2^31
# and adding the differences modulo 2^32 into Tcl's unbounded integers undoes the wrap.
set counter_interval [expr {min(1.0, 8e9 / max($P(bottleneck_rate), $P(access_rate)))}]
array set ACC {}
array set LAST {}
foreach {k v} [read_counters] { set ACC($k) 0; set LAST($k) $v }

proc accumulate {} {
    global ACC LAST
    foreach {k v} [read_counters] {
        set d [expr {$v - $LAST($k)}]
        if {$d < 0} { set d [expr {$d + 4294967296}] }
        set ACC($k) [expr {$ACC($k) + $d}]
        set LAST($k) $v
    }
}

proc tick {} {
    global ns counter_interval
    accumulate
    $ns at [expr {[$ns now] + $counter_interval}] tick
}

proc snapshot {tag} {
    global ns qmon pkts_integ bytes_integ rpkts_integ flows S ACC
    accumulate
    set now [$ns now]
    # The integrators only advance on queue events; close the last segment at `now`.
    $pkts_integ newpoint $now [$pkts_integ set lasty_]
    $bytes_integ newpoint $now [$bytes_integ set lasty_]
    $rpkts_integ newpoint $now [$rpkts_integ set lasty_]
    set S($tag,rqsum_pkts) [$rpkts_integ set sum_]
    set S($tag,time) $now
    foreach k [array names ACC] { set S($tag,$k) $ACC($k) }
    set S($tag,pkts_) [$qmon set pkts_]
    set S($tag,qsum_pkts) [$pkts_integ set sum_]
    set S($tag,qsum_bytes) [$bytes_integ set sum_]
    foreach f $flows {
        lassign $f id
        set S($tag,flow,$id) [list $ACC(flow$id,delivered) $ACC(flow$id,sent) \
                                  $ACC(flow$id,sent_bytes) $ACC(flow$id,rexmit)]
    }
}

proc num {x} {
    # Tcl prints doubles such as 1e+20 or 0.1 that JSON accepts; integers stay integers.
    if {[string is integer -strict $x]} { return $x }
    return [expr {double($x)}]
}

proc json_str {s} { return "\"[string map {\\ \\\\ \" \\\"} $s]\"" }

proc report {} {
    global ns P S flows bottleneck tcp_class sink_class wall_start
    snapshot end
    set win [expr {$S(end,time) - $S(start,time)}]
    set o "\{"
    append o "\"tool\": \"ns-2\", \"ns_version\": [json_str [ns-version]], "
    append o "\"scenario\": \"dumbbell\", "
    set plist {}
    foreach k [lsort [array names P]] {
        if {$k eq "out"} continue
        if {[string is double -strict $P($k)]} {
            lappend plist "[json_str $k]: [num $P($k)]"
        } else {
            lappend plist "[json_str $k]: [json_str $P($k)]"
        }
    }
    append o "\"params\": \{[join $plist {, }]\}, "
    append o "\"tcp_agent\": [json_str $tcp_class], \"tcp_sink\": [json_str $sink_class], "
    append o "\"sim_seconds\": [num $S(end,time)], "
    append o "\"measure_from\": [num $S(start,time)], \"window_seconds\": [num $win], "

    # Bottleneck, measurement window
    set dep_b [expr {$S(end,bdepartures_) - $S(start,bdepartures_)}]
    set util [expr {8.0 * $dep_b / ($P(bottleneck_rate) * $win)}]
    set bl {}
    lappend bl "\"rate_bps\": [num $P(bottleneck_rate)]" "\"delay_s\": [num $P(bottleneck_delay)]"
    lappend bl "\"queue\": [json_str $P(queue)]" "\"limit_pkts\": $P(limit)"
    foreach {name v} {arrivals_pkts parrivals_ arrivals_bytes barrivals_
                      departures_pkts pdepartures_ departures_bytes bdepartures_
                      drops_pkts pdrops_ drops_bytes bdrops_} {
        lappend bl "\"$name\": [expr {$S(end,$v) - $S(start,$v)}]"
    }
    lappend bl "\"loss_model_drops_pkts\": [expr {$S(end,loss_pkts) - $S(start,loss_pkts)}]"
    lappend bl "\"loss_model_drops_bytes\": [expr {$S(end,loss_bytes) - $S(start,loss_bytes)}]"
    lappend bl "\"utilization\": [num $util]"
    lappend bl "\"mean_queue_pkts\": [num [expr {($S(end,qsum_pkts) - $S(start,qsum_pkts)) / $win}]]"
    lappend bl "\"mean_queue_bytes\": [num [expr {($S(end,qsum_bytes) - $S(start,qsum_bytes)) / $win}]]"
    lappend bl "\"queue_pkts_at_start\": $S(start,pkts_)" "\"queue_pkts_at_end\": $S(end,pkts_)"
    if {$P(queue) eq "red"} {
        set q [$bottleneck queue]
        set red {}
        foreach v {thresh_ maxthresh_ q_weight_ linterm_ gentle_ queue_in_bytes_ mean_pktsize_} {
            set x [$q set $v]
            if {$x eq "true"} { set x 1 } elseif {$x eq "false"} { set x 0 }
            lappend red "[json_str $v]: [num $x]"
        }
        lappend bl "\"red\": \{[join $red {, }]\}"
    }
    append o "\"bottleneck\": \{[join $bl {, }]\}, "

    # The reverse direction r2 -> r1, measurement window.
    set rdep [expr {$S(end,rev_bdepartures_) - $S(start,rev_bdepartures_)}]
    set rl {}
    lappend rl "\"limit_pkts\": $P(reverse_limit)"
    lappend rl "\"departures_pkts\": [expr {$S(end,rev_pdepartures_) - $S(start,rev_pdepartures_)}]"
    lappend rl "\"departures_bytes\": $rdep"
    lappend rl "\"drops_pkts\": [expr {$S(end,rev_pdrops_) - $S(start,rev_pdrops_)}]"
    lappend rl "\"utilization\": [num [expr {8.0 * $rdep / ($P(bottleneck_rate) * $win)}]]"
    lappend rl "\"mean_queue_pkts\": [num [expr {($S(end,rqsum_pkts) - $S(start,rqsum_pkts)) / $win}]]"
    append o "\"bottleneck_reverse\": \{[join $rl {, }]\}, "

    # Whole run, for conservation checks (sent = arrivals + loss-model drops + in flight).
    set tl {}
    foreach {name v} {arrivals_pkts parrivals_ departures_pkts pdepartures_ drops_pkts pdrops_} {
        lappend tl "\"$name\": $S(end,$v)"
    }
    lappend tl "\"loss_model_drops_pkts\": $S(end,loss_pkts)"
    append o "\"bottleneck_totals\": \{[join $tl {, }]\}, "

    set fl {}
    foreach f $flows {
        lassign $f id kind snd rcv t
        lassign $S(start,flow,$id) d0 s0 sb0 r0
        lassign $S(end,flow,$id) d1 s1 sb1 r1
        set bytes [expr {$d1 - $d0}]
        set e "\"id\": $id, \"kind\": [json_str $kind], \"start_s\": [num $t], "
        append e "\"bytes_delivered\": $bytes, "
        append e "\"throughput_bps\": [num [expr {8.0 * $bytes / $win}]], "
        append e "\"packets_sent\": [expr {$s1 - $s0}], \"bytes_sent\": [expr {$sb1 - $sb0}], "
        append e "\"packets_retransmitted\": [expr {$r1 - $r0}], "
        append e "\"total_bytes_delivered\": $d1, \"total_packets_sent\": $s1, "
        append e "\"total_packets_retransmitted\": $r1"
        lappend fl "\{$e\}"
    }
    append o "\"flows\": \[[join $fl {, }]\], "
    append o "\"sim_wall_seconds\": [num [expr {([clock milliseconds] - $wall_start) / 1000.0}]]"
    append o "\}"
    if {$P(out) eq "-"} {
        puts $o
    } else {
        if {[catch {set fh [open $P(out) w]} err]} { fail "cannot write out=$P(out): $err" }
        puts $fh $o
        close $fh
    }
    global trace_fh
    if {$trace_fh ne ""} {
        $ns flush-trace
        close $trace_fh
    }
    exit 0
}

set wall_start [clock milliseconds]
$ns at $counter_interval tick
$ns at $P(measure_from) "snapshot start"
$ns at $P(duration) "report"
$ns run
