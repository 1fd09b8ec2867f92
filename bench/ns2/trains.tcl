# Per-flow trains at a DropTail bottleneck (docs/reproductions/log/ptcp.md, "The inline estimator
# against Reno, traced"): flow 0 and N more `Agent/TCP/Reno` -> `Agent/TCPSink` flows (1000 B
# segments, window 10000, an ACK per segment) over the imtcp harness' dumbbell: 100 Mb/s, 5 ms
# DropTail bottleneck of 100 packets, every flow on its own 1 Gb/s access links (DropTail 10000).
# Flow 0 starts at 0 s, the others spread evenly over [0, 0.1] s (the harness'
# `start = ["0s", "0.1s"]`). Access delays: `spread=0` gives every flow 2.5 ms (001 Sec. 3.1,
# equal RTTs); `spread=S` draws each flow's uniformly from 2.5 ± S ms (ns-2's RNG, `seed`; not
# tfcc's draws). The bottleneck's queue is traced from `from` to `to` seconds into `out` (ns-2's
# queue trace: `+` enqueue, `-` dequeue, `d` drop, `r` receive; the flow id is column 8).
# `overhead=X` sets every agent's `overhead_` (a random 0-X s delay before each send, ns-2's
# remedy for phase effects; 0 by default).
# Usage: ns trains.tcl n=10 spread=0 out=FILE [overhead=0] [from=8] [to=9] [seed=7]

array set P {n 10 spread 0 overhead 0 out trains.tr from 8 to 9 seed 7}
foreach kv $argv {
    set i [string first = $kv]
    set P([string range $kv 0 [expr {$i - 1}]]) [string range $kv [expr {$i + 1}] end]
}
set ns [new Simulator]
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 100Mb 5ms DropTail
$ns queue-limit $r1 $r2 100
$ns queue-limit $r2 $r1 100
set rng [new RNG]
$rng seed $P(seed)
for {set i 0} {$i <= $P(n)} {incr i} {
    set d 2.5
    if {$P(spread) > 0} { set d [expr {2.5 + $P(spread) * (2.0 * [$rng uniform 0 1] - 1.0)}] }
    set s($i) [$ns node]
    set k($i) [$ns node]
    $ns duplex-link $s($i) $r1 1Gb ${d}ms DropTail
    $ns duplex-link $r2 $k($i) 1Gb ${d}ms DropTail
    foreach {a b} [list $s($i) $r1 $r1 $s($i) $r2 $k($i) $k($i) $r2] { $ns queue-limit $a $b 10000 }
    set tcp($i) [new Agent/TCP/Reno]
    $tcp($i) set packetSize_ 1000
    $tcp($i) set window_ 10000
    $tcp($i) set fid_ $i
    $tcp($i) set overhead_ $P(overhead)
    set snk($i) [new Agent/TCPSink]
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $k($i) $snk($i)
    $ns connect $tcp($i) $snk($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    set st 0.0
    if {$i > 0 && $P(n) > 1} { set st [expr {0.1 * ($i - 1) / ($P(n) - 1.0)}] }
    if {$i > 0 && $P(n) == 1} { set st 0.05 }
    $ns at $st "$ftp($i) start"
}
set f [open $P(out) w]
$ns at $P(from) "$ns trace-queue $r1 $r2 $f"
$ns at $P(to) "flush $f; exit 0"
$ns run
