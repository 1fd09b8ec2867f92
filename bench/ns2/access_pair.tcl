# One sender/receiver pair of the bench/ns2 dumbbells (e24_bursty.tcl, e35_low_phase.tcl,
# onoff_cbr.tcl), as tfcc's dumbbell builds a flow: a new access node behind the left router r1
# for the sender and one behind the right router r2 for the receiver, each on a duplex DropTail
# link of `rate` and `delay` with queue limit `limit` both ways; the agents get flow id `fid`
# (what the bottleneck's Fid flow monitor reports them by) and are connected.
proc access_pair {snd rcv rate delay limit fid} {
    global ns r1 r2
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 $rate $delay DropTail
    $ns duplex-link $r2 $d $rate $delay DropTail
    foreach {a b} [list $s $r1 $r1 $s $r2 $d $d $r2] { $ns queue-limit $a $b $limit }
    $snd set fid_ $fid
    $ns attach-agent $s $snd
    $ns attach-agent $d $rcv
    $ns connect $snd $rcv
}
