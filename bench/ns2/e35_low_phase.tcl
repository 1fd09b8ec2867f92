# E3.5's 1 Mb/s phase (thesis 003 Sec. 3.5.3; scenarios/003-e35-onoff.toml, 150-450 s) in stock
# ns-2.35, to see how a simulator whose times are doubles shares the full DropTail queue's drops
# between the test flow and the deterministic CBR: one ns-2 `Agent/TFRC` -> `Agent/TFRCSink`
# (1000 B on the wire, headersize_ 0, as the claims' `params = { preset = "ns2", header_size =
# 0 }`) from 0 s, a 10 Mb/s and a 5 Mb/s CBR of 1000-byte packets (`random_ 0`) on a 16 Mb/s,
# 30 ms DropTail bottleneck of queue-limit 192 both ways, every host on its own 100 Mb/s, 1 ms
# access links (limit 10000). The 10 Mb/s CBR starts at `cbr_start` seconds (tfcc's
# `--set flows.1.start=...`); the 5 Mb/s one at 0 and, as the whole run ends at 450 s, never
# goes off. Measured with a Fid flow monitor on the bottleneck r1 -> r2 between 150 and 450 s.
# Prints one line: per flow (1 TFRC, 2 the 10 Mb/s CBR, 3 the 5 Mb/s) its throughput (1000 B
# per departure) and drops. Findings in docs/reproductions/log/warc.md ("E3.5's untraced
# differences, traced").
# Usage: ns e35_low_phase.tcl [cbr_start=SECONDS]

array set P {
    cbr_start 0
}
source [file join [file dirname [info script]] kv_args.tcl]
kv_args e35_low_phase.tcl $argv
if {![string is double -strict $P(cbr_start)] || $P(cbr_start) < 0 || $P(cbr_start) >= 150} {
    puts stderr "e35_low_phase.tcl: cbr_start must be a number of seconds in \[0, 150)"
    exit 2
}

set ns [new Simulator]
Agent/TFRC set packetSize_ 1000
Agent/TFRC set headersize_ 0

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 16Mb 30ms DropTail
$ns queue-limit $r1 $r2 192
$ns queue-limit $r2 $r1 192

# A sender and a receiver of these classes, on access links of their own, flow id `fid`.
source [file join [file dirname [info script]] access_pair.tcl]
proc pair {snd_class rcv_class fid} {
    set snd [new $snd_class]
    set rcv [new $rcv_class]
    access_pair $snd $rcv 100Mb 1ms 10000 $fid
    return [list $snd $rcv]
}

set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r1 $r2] $fmon

lassign [pair Agent/TFRC Agent/TFRCSink 1] test sink
$ns at 0 "$test start"
foreach {fid rate start} [list 2 10e6 $P(cbr_start) 3 5e6 0] {
    lassign [pair Agent/UDP Agent/LossMonitor $fid] udp lm
    set cbr($fid) [new Application/Traffic/CBR]
    $cbr($fid) set packetSize_ 1000
    $cbr($fid) set rate_ $rate
    $cbr($fid) set random_ 0
    $cbr($fid) attach-agent $udp
    $ns at $start "$cbr($fid) start"
}

# Departures and drops of flow `fid` at the bottleneck; zeros before its first packet.
proc fcount {fid} {
    global fmon
    foreach f [$fmon flows] {
        if {[$f set flowid_] == $fid} {
            return [list [$f set pdepartures_] [$f set pdrops_]]
        }
    }
    return {0 0}
}

proc snap {t} {
    global S
    foreach fid {1 2 3} { set S($t,$fid) [fcount $fid] }
}
$ns at 150 "snap 150"

proc report {} {
    global S P
    snap 450
    set o "cbr_start $P(cbr_start)"
    foreach fid {1 2 3} {
        set dep [expr {[lindex $S(450,$fid) 0] - [lindex $S(150,$fid) 0]}]
        set drop [expr {[lindex $S(450,$fid) 1] - [lindex $S(150,$fid) 1]}]
        append o " | flow $fid [format %.3f [expr {$dep * 8000.0 / 300 / 1e6}]] Mb/s, $drop drops"
    }
    puts $o
    exit 0
}
$ns at 450 "report"
$ns run
