# Thesis 001's PTCP (predictable-throughput TCP) on stock ns-2.35's TCP: E1, E2 and E3 of
# scenarios/001-e1-load-steps.toml and 001-e2-load.toml (001 Sec. 3, Fig. 5): one PTCP flow from
# its own sender against N TCP Reno flows, each on its own 1 Gb/s, 2.5 ms access links (DropTail
# 10000), through a 100 Mb/s, 5 ms DropTail bottleneck of 100 packets (both ways); 1000 B
# segments (1040 B on the wire), ns-2.35's TCP defaults, an ACK per segment (TCPSink).
#
# The PTCP flow is `Agent/TCP/Sack1` -> `Agent/TCPSink/Sack1` (tfcc's `ptcp` protocol recovers
# with SACK) with `windowOption_ 1`, whose congestion-avoidance increase is
# `cwnd_ += increase_num_ / cwnd_` per ACK (tcp.cc `TcpAgent::opencwnd`): `increase_num_` is
# Eq. 1's `k` (001 Sec. 2.2). Slow start, fast recovery and timeouts are the agent's own. The
# controller below is the thesis' (001 Sec. 2.1-2.2.3, spec 001 §2) with the readings tfcc's
# crates/tfcc-core/src/tcp/ptcp.rs documents and defaults to; it runs from a scheduler tick of
# `tick` seconds (1 ms), not per ACK:
#   - slots (Sec. 2.1): an evaluation slot of `e` sRTTs (sRTT at its start), cut into control
#     slots of `s` sRTTs, each frozen at its start's sRTT `srtt_i`; the last one ends with its
#     evaluation slot (tfcc `eval_end = "time"`). Slots start on the first tick that sees an
#     ACK and a non-zero `srtt_` (ns-2 keeps t_srtt_ << 3 in ticks of tcpTick_ 10 ms, as tfcc's
#     estimator); a slot ends on the first tick at or after its nominal end on which an ACK
#     (a new cumulative ACK or a duplicate) has arrived, as tfcc ends it on the first ACK.
#   - target (Sec. 2.1): g_0 = bw, g_i = bw + (g_{i-1} - tput_{i-1}), reset at each evaluation
#     slot; throughput = payload segments cumulatively acknowledged / the slot's actual length.
#   - Eq. 2: k_bw = 2 (g_i srtt_i s - a_j - m cwnd) / (m (m + 1)), m = s - n_j - 2 rounds
#     (n_j = floor(time into the slot / srtt_i), the prose's (s - 2) RTT horizon; s is the
#     slot's planned length in srtt_i, ctrl_len / srtt_i for a slot its evaluation slot cuts
#     short, tfcc's `s_plan` since 2026-11-26), a_j = new
#     segments sent in the slot (maxseq_ advance); for m < 1 k_bw = +inf while packets are
#     still needed, else the m = 1 value (tfcc's `eq2_guard = "k_max"`).
#   - Eq. 3 / Eq. 4: k_max = A srtt_i - cwnd while every earlier control slot of the evaluation
#     slot (and the previous control slot) met its target, else
#     min(A + g_i - tput_{i-1}, max(P, A)) srtt_i - cwnd; before the first oracle value k_max =
#     k_min. A and P from the oracle: P = 100 Mb/s, A = P minus the bytes every other flow
#     offered to the bottleneck (arrivals, drops included) over the last `oracle_window`
#     (40 ms), fed every `oracle_tick` (5 ms), in 1040 B packets, at least 0 (tfcc's sim.rs
#     `OracleFeed` and path.rs `PathOracle::set`; before 2026-11-27 the harness let A go
#     negative).
#     The PTCP flow's own arrivals come from a Fid flow monitor on the bottleneck.
#   - k = max(k_min, min(k_bw, k_max)) with k_min = 1 (`kmin=1`, Sec. 2.2.2); `kmin=0` leaves
#     k unbounded below and keeps cwnd_ >= 2 (tfcc's `cwnd_floor`).
#   - s (Sec. 2.2.3): a control slot that missed its target under Eq. 4 halves s (>= s_min 2);
#     an evaluation slot whose every control slot met under Eq. 3 and that ends with
#     cwnd >= bw srtt doubles it (<= e).
#   - after a timeout (nrexmit_ grows) k = 1 until the cumulative ACK passes what was
#     outstanding at the timeout (tfcc's `after_timeout = "reno"`).
# Per tick, not per ACK: `increase_num_` set on a tick holds for every ACK until the next one
# (at 20 Mb/s about 2.4 ACKs per ms), where tfcc recomputes k with each ACK's cwnd; a slot
# boundary and a timeout are noticed up to one tick late. `tick` is a parameter to check that.
# The first slot starts on the tick after the SYN's ACK (the first srtt_), one RTT before
# tfcc's, whose controller sees each ACK before the sender samples its RTT.
#
# `mode=reno` runs `Agent/TCP/Reno` -> `Agent/TCPSink` in PTCP's place with no controller (the
# thesis' "Reno" curve, tfcc's `flows.0.protocol="tcp-reno"`); only the series is printed.
#
# The Reno flows: `Agent/TCP/Reno` -> `Agent/TCPSink`, window_ `reno_window` (10000 = uncapped;
# E3's "capped at ~4 Mb/s" reading is tfcc's `max_window = 15`). `groups` lists them as
# COUNT:LO:HI[:even|random] groups, tfcc's flow indices 1.. in order, started as tfcc's
# `start = [LO, HI]` spreads them (flow j of n at LO + (HI - LO) j / (n - 1) s, to the
# nanosecond; one flow in the middle) or, with `random`, at tfcc's own draw for the seed and
# flow index (`start = { random = [LO, HI] }`, tfcc_rng.tcl, `flow/I/start`). PTCP starts at
# 0 s. `seed` also seeds ns-2's default RNG, which nothing here draws from: with even starts
# every seed gives the same run, in ns-2 as in tfcc.
#
# Output on stdout, one line each: `x T ACKED CWND K S A_BPS TIMEOUTS` every `dt` (payload
# bytes the PTCP flow got cumulatively acknowledged in (T - dt, T], its cwnd_, the k the last
# ACKs met (`k_series`, see the controller), s,
# the oracle's A in bit/s on the wire, nrexmit_ so far); `e START END TPUT_BPS` per evaluation
# slot and `c START END S TARGET_BPS TPUT_BPS REGIME` per control slot (with `trace_slots=1`
# also `t ...`, the inputs of Eq. 2-4 per control slot, see trace_slot); at the end one JSON
# line (PTCP: timeouts, packets sent and retransmitted, mean k over the congestion-avoidance
# ACKs outside recoveries, each ACK with the k set on the tick before it;
# Reno: payload bytes delivered; bottleneck arrivals and drops).
# Usage: ns ptcp.tcl key=value ... (keys below)

array set P {
    groups       10:0:1
    reno_window  10000
    mode         ptcp
    bw           20e6
    e            32
    s_init       16
    s_min        2
    kmin         1
    seed         1
    duration     60
    tick         0.001
    oracle_tick  0.005
    oracle_window 0.04
    dt           0.1
    trace_slots  0
    k_series     ack
}
source [file join [file dirname [info script]] kv_args.tcl]
kv_args ptcp.tcl $argv
if {[lsearch -exact {ack tick} $P(k_series)] < 0} {
    puts stderr "ptcp.tcl: k_series must be ack or tick, got '$P(k_series)'"
    exit 2
}
if {[lsearch -exact {ptcp reno} $P(mode)] < 0} {
    puts stderr "ptcp.tcl: mode must be ptcp or reno, got '$P(mode)'"
    exit 2
}
set groups {}
foreach g [split $P(groups) ,] {
    lassign [split $g :] n lo hi how
    if {$how eq ""} { set how even }
    if {![string is integer -strict $n] || $n < 0 || ![string is double -strict $lo] ||
        ![string is double -strict $hi] || $hi < $lo || [lsearch -exact {even random} $how] < 0} {
        puts stderr "ptcp.tcl: bad group '$g' (COUNT:LO:HI\[:even|random\])"
        exit 2
    }
    lappend groups [list $n $lo $hi $how]
}

set ns [new Simulator]
$defaultRNG seed $P(seed)
source [file join [file dirname [info script]] tfcc_rng.tcl]
Agent/TCP set packetSize_ 1000
Agent/TCP set window_ 10000

set RATE 100e6
set WIRE 1040
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 100Mb 5ms DropTail
$ns queue-limit $r1 $r2 100
$ns queue-limit $r2 $r1 100
set bneck [$ns link $r1 $r2]
set fmon [$ns makeflowmon Fid]
$ns attach-fmon $bneck $fmon

proc endpoint_pair {fid agent sink window} {
    global ns r1 r2
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 1Gb 2.5ms DropTail
    $ns duplex-link $r2 $d 1Gb 2.5ms DropTail
    foreach {a b} [list $s $r1 $r1 $s $r2 $d $d $r2] { $ns queue-limit $a $b 10000 }
    set tcp [new $agent]
    $tcp set fid_ $fid
    $tcp set window_ $window
    set snk [new $sink]
    $ns attach-agent $s $tcp
    $ns attach-agent $d $snk
    $ns connect $tcp $snk
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    return [list $tcp $snk $ftp]
}

if {$P(mode) eq "ptcp"} {
    lassign [endpoint_pair 0 Agent/TCP/Sack1 Agent/TCPSink/Sack1 10000] ptcp psink pftp
    $ptcp set windowOption_ 1
} else {
    lassign [endpoint_pair 0 Agent/TCP/Reno Agent/TCPSink 10000] ptcp psink pftp
}
$ns at 0.0 "$pftp start"
set renos {}
set idx 1
foreach g $groups {
    lassign $g n lo hi how
    for {set j 0} {$j < $n} {incr j} {
        lassign [endpoint_pair $idx Agent/TCP/Reno Agent/TCPSink $P(reno_window)] tcp snk ftp
        set lo_ns [expr {wide(round($lo * 1e9))}]
        set hi_ns [expr {wide(round($hi * 1e9))}]
        if {$how eq "random"} {
            set start_ns [tfcc_start_ns $P(seed) flow/$idx/start $lo_ns $hi_ns]
        } elseif {$n <= 1} {
            set start_ns [expr {$lo_ns + ($hi_ns - $lo_ns) / 2}]
        } else {
            set start_ns [expr {$lo_ns + ($hi_ns - $lo_ns) * $j / ($n - 1)}]
        }
        set start [expr {$start_ns / 1e9}]
        $ns at $start "$ftp start"
        lappend renos $snk
        incr idx
    }
}

# ---- the oracle (tfcc sim.rs on_oracle) ----
set CAP_PKTS [expr {$RATE / ($WIRE * 8.0)}]
set A_pkts 0.0
set have_A 0
set ohist {}
proc own_arrivals {} {
    global fmon
    set f [[$fmon classifier] lookup auto 0 0 0]
    if {$f eq ""} { return 0 }
    return [$f set barrivals_]
}
proc oracle {} {
    global ns fmon P ohist A_pkts have_A RATE WIRE
    set now [$ns now]
    lappend ohist [list $now [$fmon set barrivals_] [own_arrivals]]
    while {[llength $ohist] > 2 && [lindex $ohist 1 0] + $P(oracle_window) <= $now + 1e-12} {
        set ohist [lrange $ohist 1 end]
    }
    lassign [lindex $ohist 0] t0 tot0 own0
    lassign [lindex $ohist end] t1 tot1 own1
    if {$t1 > $t0} {
        set cross [expr {max(0, ($tot1 - $tot0) - ($own1 - $own0)) * 8.0 / ($t1 - $t0)}]
        # Clamped at 0 as tfcc's PathOracle::set does (an available bandwidth is not
        # negative; the cross traffic offers more than the link while a queue builds).
        set A_pkts [expr {max(0.0, ($RATE - $cross) / ($WIRE * 8.0))}]
        set have_A 1
    }
    if {$now + $P(oracle_tick) <= $P(duration)} {
        $ns at [expr {$now + $P(oracle_tick)}] oracle
    }
}
if {$P(mode) eq "ptcp"} { $ns at $P(oracle_tick) oracle }

# ---- the controller (001 Sec. 2.1-2.2.3; module documentation of tfcc's ptcp.rs) ----
set BW [expr {$P(bw) / 8000.0}]   ;# payload packets per second
array set C [list started 0 s $P(s_init) last_srtt 0 cum 0 maxseq -1 dup 0 rexmit 0 \
    recover -1 frecover -1 rxp 0 k 1.0 ksum 0.0 kn 0 sent 0 acked 0 eval_acked 0 \
    nack 0 kbw 0.0 kmax 0.0 tk_sum 0.0 tk_n 0 kset 1.0 krec 0]
proc srtt_now {} {
    global ptcp
    return [expr {[$ptcp set srtt_] * [$ptcp set tcpTick_] / 8.0}]
}
proc start_eval {now srtt} {
    global C P BW
    set C(eval_start) $now
    set C(eval_len) [expr {$srtt * $P(e)}]
    set C(eval_acked) 0
    set C(g) $BW
    set C(missed_in_eval) 0
    set C(grow_ok) 1
}
proc start_ctrl {now srtt} {
    global C
    set C(ctrl_start) $now
    set C(srtt_i) $srtt
    set left [expr {$C(eval_start) + $C(eval_len) - $now}]
    set full [expr {$srtt * $C(s)}]
    set C(ctrl_len) [expr {min($full, max(0.0, $left))}]
    set C(s_i) $C(s)
    # Eq. 2 plans a control slot its evaluation slot cuts short over its cut length,
    # ctrl_len / srtt_i rounds (tfcc's `s_plan`); a whole slot over s.
    set C(s_plan) [expr {$C(ctrl_len) < $full && $srtt > 0 ? $C(ctrl_len) / $srtt : $C(s)}]
    set C(sent) 0
    set C(acked) 0
    set C(regime) [expr {($C(missed_in_eval) || $C(prev_missed)) ? 4 : 3}]
}
proc roll {now srtt cwnd} {
    global C P BW
    set eval_over [expr {$now >= $C(eval_start) + $C(eval_len)}]
    set ctrl_over [expr {$now >= $C(ctrl_start) + $C(ctrl_len)}]
    if {!$ctrl_over && !$eval_over} { return }
    set el [expr {$now - $C(ctrl_start)}]
    set tput [expr {$el > 0 ? $C(acked) / $el : 0.0}]
    set met [expr {$tput >= $C(g)}]
    set C(prev_missed) [expr {!$met}]
    set C(tput_prev) $tput
    puts [format "c %.6f %.6f %d %.1f %.1f eq%d" $C(ctrl_start) $now $C(s_i) \
        [expr {$C(g) * 8000}] [expr {$tput * 8000}] $C(regime)]
    if {$P(trace_slots)} { trace_slot $now $cwnd $tput }
    if {!$met} {
        set C(missed_in_eval) 1
        if {$C(regime) == 4 && $C(s) > $P(s_min)} { set C(s) [expr {max($C(s) / 2, $P(s_min))}] }
    }
    if {!($met && $C(regime) == 3)} { set C(grow_ok) 0 }
    if {$eval_over} {
        set span [expr {$now - $C(eval_start)}]
        set et [expr {$span > 0 ? $C(eval_acked) / $span : 0.0}]
        puts [format "e %.6f %.6f %.1f" $C(eval_start) $now [expr {$et * 8000}]]
        if {$P(trace_slots)} {
            puts [format "u %.6f %d %d %.3f %.3f %d" $now $C(s) $C(grow_ok) $cwnd \
                [expr {$BW * $srtt}] $C(missed_in_eval)]
        }
        if {$C(grow_ok) && $cwnd >= $BW * $srtt && $C(s) < $P(e)} {
            set C(s) [expr {min($C(s) * 2, $P(e))}]
        }
        start_eval $now $srtt
    } else {
        set C(g) [expr {$BW + ($C(g) - $tput)}]
    }
    start_ctrl $now $srtt
}
# `trace_slots=1`: one line per control slot end, `t END START SRTT_I S S_PLAN G_PPS SENT ACKED
# TPUT_PPS REGIME A_PPS K_BW K_MAX K MEAN_K CA_ACKS CWND` (the inputs of Eq. 2-4 as they stood at
# the slot's end: a_j sent and acknowledged in the slot, A in packets per second, the last
# k_bw, k_max and k computed, MEAN_K the mean k over the slot's congestion-avoidance ACKs
# outside recoveries, each ACK weighted as one, CA_ACKS their number; `nackpack_` counts them),
# and one per evaluation slot end, `u END S GROW_OK CWND BW_SRTT MISSED` (the s-doubling test's
# inputs: every control slot met under Eq. 3, cwnd against bw·srtt, any control slot missed).
proc trace_slot {now cwnd tput} {
    global C A_pkts
    set mk [expr {$C(tk_n) > 0 ? $C(tk_sum) / $C(tk_n) : -1}]
    puts [format "t %.6f %.6f %.6f %d %.4f %.2f %d %d %.2f %d %.2f %.4g %.4g %.4g %.4g %d %.3f" \
        $now $C(ctrl_start) $C(srtt_i) $C(s_i) $C(s_plan) $C(g) $C(sent) $C(acked) $tput \
        $C(regime) $A_pkts $C(kbw) $C(kmax) $C(k) $mk $C(tk_n) $cwnd]
    set C(tk_sum) 0.0
    set C(tk_n) 0
}
proc eq2 {now cwnd} {
    global C
    set s $C(s_plan)
    set n [expr {floor(($now - $C(ctrl_start)) / $C(srtt_i))}]
    set rounds [expr {$s - $n - 2}]
    set m [expr {max($rounds, 1.0)}]
    set need [expr {$C(g) * $C(srtt_i) * $s - $C(sent)}]
    if {$rounds < 1 && $need > 0} { return Inf }
    return [expr {2.0 * ($need - $m * $cwnd) / ($m * ($m + 1.0))}]
}
proc eq34 {cwnd} {
    global C A_pkts have_A CAP_PKTS P
    if {!$have_A} { return $P(kmin) }
    set rate $A_pkts
    if {$C(regime) == 4 && [info exists C(tput_prev)]} {
        set rate [expr {min($A_pkts + ($C(g) - $C(tput_prev)), max($CAP_PKTS, $A_pkts))}]
    }
    return [expr {$rate * $C(srtt_i) - $cwnd}]
}
proc control {} {
    global ns ptcp C P
    set now [$ns now]
    set ack [$ptcp set ack_]
    set maxseq [$ptcp set maxseq_]
    set dup [$ptcp set dupacks_]
    set rexmit [$ptcp set nrexmit_]
    set cwnd [$ptcp set cwnd_]
    set nack [$ptcp set nackpack_]
    set nacks [expr {$nack - $C(nack)}]
    set C(nack) $nack
    set acked [expr {max(0, $ack + 1 - $C(cum))}]
    set arrived [expr {$acked > 0 || $dup != $C(dup)}]
    set C(cum) [expr {max($C(cum), $ack + 1)}]
    set C(dup) $dup
    set newsent [expr {max(0, $maxseq - $C(maxseq))}]
    set C(maxseq) [expr {max($C(maxseq), $maxseq)}]
    if {$rexmit > $C(rexmit)} {
        set C(rexmit) $rexmit
        set C(recover) [expr {$maxseq + 1}]
    }
    # A retransmission without a timeout starts a SACK recovery, which lasts until the
    # cumulative ACK covers what was sent before it (Sack1's recover_, not bound to Tcl); the
    # k of its ticks is not recorded, as tfcc computes none (ns-2 does not open the window then).
    set rxp [$ptcp set nrexmitpack_]
    if {$rxp > $C(rxp) && $C(cum) >= $C(frecover)} {
        set C(frecover) [expr {$maxseq + 1}]
    }
    set C(rxp) $rxp
    set srtt [srtt_now]
    if {$srtt > 0} { set C(last_srtt) $srtt }
    if {$arrived && $C(last_srtt) > 0} {
        if {!$C(started)} {
            set C(started) 1
            set C(prev_missed) 0
            start_eval $now $C(last_srtt)
            start_ctrl $now $C(last_srtt)
        } else {
            roll $now $C(last_srtt) $cwnd
        }
        incr C(acked) $acked
        incr C(eval_acked) $acked
    }
    incr C(sent) $newsent
    # Eq. 1's k for the ACKs until the next tick (congestion avoidance only; ns-2 ignores
    # increase_num_ in slow start and does not open the window in a SACK recovery).
    # C(k) is the last k applied (tfcc's `ptcp_k`): it keeps its value through slow start and
    # recoveries, and is 1 while a timeout's losses are repaired. With `k_series=ack` it is the
    # k the ACKs since the last tick met (the increase_num_ set there, when that was Eq. 1's
    # k), as tfcc's is the k of its last congestion-avoidance ACK; `k_series=tick` (the record
    # before 2026-11-27) takes every tick's k, also on ticks no ACK meets.
    if {$C(krec) && $nacks > 0} {
        set C(ksum) [expr {$C(ksum) + $C(kset) * $nacks}]
        incr C(kn) $nacks
        set C(tk_sum) [expr {$C(tk_sum) + $C(kset) * $nacks}]
        incr C(tk_n) $nacks
        if {$P(k_series) eq "ack"} { set C(k) $C(kset) }
    }
    set k 1.0
    set krec 0
    if {$C(started) && $C(cum) < $C(recover)} {
        if {$acked > 0} { set C(k) 1.0 }
    } elseif {$C(started) && $cwnd >= [$ptcp set ssthresh_]} {
        # Computed in a recovery too, so that the first ACKs after it get a k for the window
        # they meet (tfcc computes k on that first ACK); recorded only outside recoveries.
        set kbw [eq2 $now $cwnd]
        set kmax [eq34 $cwnd]
        set k [expr {min($kbw, $kmax)}]
        if {$P(kmin)} { set k [expr {max($k, 1.0)}] }
        if {$C(cum) >= $C(frecover)} {
            if {$P(k_series) eq "tick"} { set C(k) $k }
            set C(kbw) $kbw
            set C(kmax) $kmax
            set krec 1
        }
    }
    $ptcp set increase_num_ $k
    set C(kset) $k
    set C(krec) $krec
    if {!$P(kmin) && $cwnd < 2} { $ptcp set cwnd_ 2 }
    if {$now + $P(tick) <= $P(duration)} { $ns at [expr {$now + $P(tick)}] control }
}
if {$P(mode) eq "ptcp"} { $ns at $P(tick) control }

# ---- the series and the report ----
set last_cum 0
proc sample {} {
    global ns ptcp C P last_cum A_pkts have_A WIRE
    set now [$ns now]
    set cum [expr {[$ptcp set ack_] + 1}]
    set a [expr {$have_A ? $A_pkts * $WIRE * 8 : -1}]
    puts [format "x %.3f %d %.3f %.4g %d %.6g %d" $now [expr {($cum - $last_cum) * 1000}] \
        [$ptcp set cwnd_] $C(k) $C(s) $a [$ptcp set nrexmit_]]
    set last_cum $cum
    if {$now + $P(dt) <= $P(duration) + 1e-9} { $ns at [expr {$now + $P(dt)}] sample }
}
$ns at $P(dt) sample
proc finish {} {
    global ptcp renos fmon C P
    set reno 0
    foreach snk $renos { set reno [expr {$reno + [$snk set bytes_] / 1040.0 * 1000}] }
    set kmean [expr {$C(kn) > 0 ? $C(ksum) / $C(kn) : "null"}]
    set f [[$fmon classifier] lookup auto 0 0 0]
    set own_drops [expr {$f eq "" ? 0 : [$f set pdrops_]}]
    puts [format {{"mode": "%s", "ptcp": {"timeouts": %d, "packets_sent": %d, "retransmitted": %d, "acked_payload_bytes": %d, "mean_k_ca_acks": %s, "bottleneck_drops": %d}, "reno_payload_bytes": %.0f, "reno_flows": %d, "bottleneck": {"arrivals_pkts": %d, "drops_pkts": %d}}} \
        $P(mode) [$ptcp set nrexmit_] [$ptcp set ndatapack_] [$ptcp set nrexmitpack_] \
        [expr {([$ptcp set ack_] + 1) * 1000}] $kmean $own_drops $reno [llength $renos] \
        [$fmon set parrivals_] [$fmon set pdrops_]]
    exit 0
}
$ns at [expr {$P(duration) + 1e-6}] finish
$ns run
