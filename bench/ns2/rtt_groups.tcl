# Two groups of bulk TCP flows with different round-trip times through one DropTail
# bottleneck, in stock ns-2.35: thesis 000's testbed set-up (Sec. 5.2, Fig. 5.10), as
# scenarios/000-testbed.toml builds it in tfcc's simulator, with ns-2's own agents.
#
# Why it exists: on that set-up tfcc gives the 32 ms group about the 120 ms group's throughput
# (claim 521a-10m-inverse-rtt-rtt32, docs/reproductions/ttfwc.md), not the 120/32 the thesis
# reads from Fig. 5.11, because the short-RTT flows lose a much larger share of their packets.
# This script asks whether ns-2 does the same on the same network. Since 2026-11-26 (cubicns2)
# it also runs ns-2's `Agent/TCP/Linux` with the 2.6-era kernel's own congestion modules, to
# set tfcc's CUBIC (`tcp-cubic`) beside a CUBIC that is not tfcc's (issue 6).
#
# Network (as 000-testbed.toml): senders A and C on 1 Gb/s links to router L (link delay
# `delay_a` and `delay_c` seconds each way), a `rate` b/s, 0.1 ms bottleneck L -> R with a
# DropTail queue of `limit` packets in both directions, receivers B and D on 1 Gb/s, 0.1 ms
# links behind R; every other queue 10000 packets. `n` flows A -> B and `n_c` flows C -> D
# (-1: `n`; 0 leaves C out, e.g. for one flow alone), `packet_size`-byte segments (1460, 40
# bytes of headers on the wire, 50 with the Linux agent's timestamps), ns-2's per-packet
# ACKs, window_ large, each started at a uniform time in [0, 1) s (group C's `start_c` s later).
#
# The TCP of each group (`cc` for both, `cc_a` / `cc_c` for one group; `-` = `cc`):
#   sack  Agent/TCP/Sack1 -> Agent/TCPSink/Sack1 (ns-2's own SACK TCP, the default);
#   cubic, reno, ...  Agent/TCP/Linux with `select_ca NAME` (ns-2.35's Linux modules: `cubic`
#         is the kernel's tcp_cubic.c with beta 819/1024, fast_convergence and tcp_friendliness
#         on, no HyStart; `reno` is tcp_reno's AIMD) -> Agent/TCPSink/Sack1, timestamps on both
#         sides (`timestamps_`, `ts_echo_rfc1323_`), as ns-2's Linux TCP documentation sets it;
#         `linux_ts=0` turns them off. ns-2 adds `ts_option_size_` (10 bytes) to every segment
#         with timestamps: 1510 bytes on the wire instead of 1500, which alone decides the
#         120 + 16 ms groups' outcome (docs/reproductions/log/ttfwc.md, "CUBIC in stock ns-2.35").
#
#   ns rtt_groups.tcl seed=1 delay_c=0.0158                 # SACK, 120 ms against 32 ms
#   ns rtt_groups.tcl cc=cubic seed=1 delay_c=0.0078        # Linux CUBIC, 120 + 16 ms
#   ns rtt_groups.tcl cc=cubic n_c=0 delay_a=0.0198 cwnd_every=0.01 duration=60   # one flow
#
# Output, one JSON line: per flow (A's first) the goodput in Mb/s over [from, duration], the
# share of its data packets that were retransmissions (`nrexmitpack_ / ndatapack_`) and its
# timeouts (`nrexmit_`), both over the whole run, the same two over [from, duration]
# (`window_rexmit_share`, `window_timeouts`), the share of its packets that arrived at the
# bottleneck queue and were dropped there over [from, duration] (`window_drop_share`, a flow
# monitor keyed by fid_) and its agent; with `cwnd_every` > 0 also
# `cwnd`, rows [t, cwnd of flow 0, flow 1, ...] sampled every `cwnd_every` seconds from 0 (the
# sender's `cwnd_` in segments; the Linux agent's integer `snd_cwnd`).

array set P {seed 1 n 3 n_c -1 delay_a 0.0598 delay_c 0.0598 limit 50 rate 10e6 duration 200
    from 20 cc sack cc_a - cc_c - cwnd_every 0 start_c 0 linux_ts 1
    packet_size 1460}
source [file join [file dirname [info script]] kv_args.tcl]
kv_args rtt_groups.tcl $argv
if {$P(n_c) < 0} { set P(n_c) $P(n) }
foreach g {a c} {
    if {$P(cc_$g) eq "-"} { set P(cc_$g) $P(cc) }
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

# Per-flow arrivals and drops at the bottleneck queue L -> R (a flow monitor keyed by fid_).
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $node(l) $node(r)] $fmon
proc flow_counts {i} {
    global fmon
    set f [[$fmon classifier] lookup auto 0 0 $i]
    if {$f eq "" || $f eq "-1"} { return {0 0} }
    return [list [$f set parrivals_] [$f set pdrops_]]
}

Agent/TCP set packetSize_ $P(packet_size)
Agent/TCP set window_ 100000
set flows {}
set agents {}
for {set i 0} {$i < $P(n) + $P(n_c)} {incr i} {
    set g [expr {$i < $P(n) ? "a" : "c"}]
    set from $g
    set to [expr {$g eq "a" ? "b" : "d"}]
    set cc $P(cc_$g)
    if {$cc eq "sack"} {
        set tcp [new Agent/TCP/Sack1]
        set sink [new Agent/TCPSink/Sack1]
        lappend agents "Agent/TCP/Sack1"
    } else {
        set tcp [new Agent/TCP/Linux]
        set sink [new Agent/TCPSink/Sack1]
        if {$P(linux_ts)} {
            $tcp set timestamps_ true
            $sink set ts_echo_rfc1323_ true
        }
        $ns at 0 "$tcp select_ca $cc"
        lappend agents "Agent/TCP/Linux $cc"
    }
    $tcp set fid_ $i
    $ns attach-agent $node($from) $tcp
    $ns attach-agent $node($to) $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    set at [$starts uniform 0 1]
    if {$g eq "c"} { set at [expr {$at + $P(start_c)}] }
    $ns at $at "$ftp start"
    lappend flows [list $tcp $sink]
}

set cwnd_rows {}
proc sample_cwnd {} {
    global ns flows cwnd_rows P
    set row [list [format %.6g [$ns now]]]
    foreach f $flows { lappend row [format %.6g [[lindex $f 0] set cwnd_]] }
    lappend cwnd_rows "\[[join $row ", "]\]"
    $ns at [expr {[$ns now] + $P(cwnd_every)}] sample_cwnd
}
if {$P(cwnd_every) > 0} { $ns at 0 sample_cwnd }

# TCPSink's bytes_ is a C int that wraps (at 250 Mb/s after about 70 s; bench/ns2/README.md,
# quirk 5): each sink's count is read every second and accumulated modulo 2^32 in Tcl.
set last_bytes {}
set acc_bytes {}
foreach f $flows { lappend last_bytes 0; lappend acc_bytes 0 }
proc accumulate {} {
    global flows last_bytes acc_bytes
    set nl {}
    set na {}
    foreach f $flows l $last_bytes a $acc_bytes {
        set cur [[lindex $f 1] set bytes_]
        lappend na [expr {$a + (($cur - $l) & 0xFFFFFFFF)}]
        lappend nl $cur
    }
    set last_bytes $nl
    set acc_bytes $na
}
proc tick {} {
    global ns
    accumulate
    $ns at [expr {[$ns now] + 1.0}] tick
}
$ns at 1.0 tick
proc mark {} {
    global flows base acc_bytes
    accumulate
    set base {}
    foreach f $flows a $acc_bytes {
        set tcp [lindex $f 0]
        lappend base [list $a [$tcp set ndatapack_] [$tcp set nrexmitpack_] [$tcp set nrexmit_] \
            {*}[flow_counts [$tcp set fid_]]]
    }
}
proc report {} {
    global flows base P agents cwnd_rows acc_bytes
    accumulate
    set span [expr {$P(duration) - $P(from)}]
    set rates {}
    set rexmit {}
    set timeouts {}
    set w_rexmit {}
    set w_timeouts {}
    set w_drop {}
    foreach f $flows b $base a $acc_bytes {
        lassign $f tcp sink
        lassign $b bytes0 sent0 rexmit0 to0 arr0 drop0
        lassign [flow_counts [$tcp set fid_]] arr drop
        lappend w_drop [expr {double($drop - $drop0) / max(1, $arr - $arr0)}]
        lappend rates [expr {($a - $bytes0) * 8.0 / $span / 1e6}]
        lappend rexmit [expr {double([$tcp set nrexmitpack_]) / max(1, [$tcp set ndatapack_])}]
        lappend timeouts [$tcp set nrexmit_]
        lappend w_rexmit [expr {double([$tcp set nrexmitpack_] - $rexmit0) \
            / max(1, [$tcp set ndatapack_] - $sent0)}]
        lappend w_timeouts [expr {[$tcp set nrexmit_] - $to0}]
    }
    set quoted {}
    foreach a $agents { lappend quoted "\"$a\"" }
    set out "{\"goodput_mbps\": \[[join $rates ", "]\], \"rexmit_share\": \[[join $rexmit ", "]\],\
 \"timeouts\": \[[join $timeouts ", "]\],\
 \"window_rexmit_share\": \[[join $w_rexmit ", "]\], \"window_timeouts\": \[[join $w_timeouts ", "]\],\
 \"window_drop_share\": \[[join $w_drop ", "]\],\
 \"agents\": \[[join $quoted ", "]\]"
    if {$P(cwnd_every) > 0} { append out ", \"cwnd\": \[[join $cwnd_rows ", "]\]" }
    puts "$out}"
    exit 0
}
$ns at $P(from) mark
$ns at $P(duration) report
$ns run
