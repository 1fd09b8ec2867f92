# Thesis 003's M2 plain gateway (Sec. 4.5.3, Fig. 4.11's "non-MSF-RS") in stock ns-2.35's own web
# cache: Http/Client nodes behind one Http/Cache at the user-side gateway, a 2 Mb/s access link
# to the ISP router, and Http/Server nodes behind it, every message carried by ns-2's TcpApp over
# Agent/TCP/FullTcp/Sack connections set up by the Http classes' own `connect` (one per (client,
# cache) and one per (cache, server), as Sec. 4.5.1's HTTP/Cache set-up has them). No MSF-RS:
# the cache forwards every request on arrival and relays each response once it holds all of it.
#
# The load is tfcc's for the claim m2-latency-reduction (scenarios/003-msfrs-m1.toml with the
# claim's `set` lines): 3 classes x 4 clients, each client 8 closed-loop request threads that
# think an exponential 1 s after each response, a server drawn uniformly from 12, a lognormal
# response size (M = 9.357, S = 1.318, bytes rounded); 400 s, the transactions arriving at the
# cache in [0, 200 s) averaged. The draws are tfcc's own for the seed (tfcc_rng.tcl): thread k of
# client c uses the stream "web/client<c>/<k>" in tfcc's order (first think, then per request:
# server, two uniforms of the Box-Muller normal, the next think), and the servers' one-way
# delays come from "web/topology" (servers 0-5 uniform in 5-25 ms, 6-11 in 50-150 ms). So both
# simulators see the same requests, sizes and think times; only the network and TCP differ.
#
# "Cache function disabled": every request names a page no one asked for before
# (`<server>:<n>`, n the request's serial number), so the cache's `exist-page` never finds it
# (no cache hit) and its `pending_` never holds it (no merging of requests for a pending page):
# every request takes `cache-miss` -> `send-request` to its server, and `get-response-GET`
# answers exactly the one client that asked. The cache's own procs are not changed. The servers'
# page generator is a Tcl object that returns the request's drawn size: stock PagePool/Math
# would not do, because its `gen-pageid` always returns 0 (one page per server, "Single page")
# and Http/Server draws a page's size once, at `gen-page`, and keeps it until `modify-page`
# (after the page's `age`), so every response of a server would repeat one size and every
# concurrent request to a server would be for one pending page (`mode` below says more).
#
# TCP: Agent/TCP/FullTcp/Sack (Http's TRANSPORT_), segsize_ 1000 (1040 B on the wire), window_
# 200 on the agents that send responses (Http's `connect` sets window_ 100 on the connecting,
# request-sending side), ns-2.1b9's minrto_ 1, precisionReduce_ false, rtxcur_init_ 6, maxrto_
# 100000 (the scenarios' tcp_defaults), windowInit_ 2. Left at FullTcp's own defaults unless
# set: Nagle (`nodelay_ false`: a partial segment waits while data is unacknowledged) and the
# delayed ACK of a partial segment (`segsperack_ 1`: every full segment is ACKed at once, a
# short one after up to `interval_` 0.1 s).
#
# Links (tfcc's access-gateway topology): client - gateway 10 Mb/s, 2 ms, DropTail 50; gateway -
# ISP 2 Mb/s, 10 ms, DropTail 38 both ways (tfcc's limit counts as ns-2's queue-limit); ISP -
# server 10 Mb/s, the drawn delay, DropTail 50.
#
# Latency of a transaction, as tfcc times it: from the request's arrival at the cache to the
# response's arrival at the client (tfcc's thread issues a request at the gateway, leaving the
# client link's 2 ms out; here the client sends it at that instant and it reaches the cache
# 2 ms and a few microseconds later). Also printed: from the client's send (`client_latency`)
# and the part up to the whole response at the cache (`at_cache`).
#
# Output: one JSON line (`trace=1` first prints one line per transaction: `tx n class client
# thread server bytes t_send t_cache t_resp_at_cache t_done`).
# Usage: ns msfrs_plain.tcl key=value ... (keys below)

array set P {
    seed         1
    duration     400
    window_end   200
    classes      3
    clients      4
    threads      8
    think        1.0
    servers      12
    mu           9.357
    sigma        1.318
    access_rate  2e6
    access_delay 0.010
    access_limit 38
    client_rate  10e6
    client_delay 0.002
    server_rate  10e6
    window       200
    segsize      1000
    nodelay      0
    delack       0.1
    tcp          FullTcp/Sack
    trace        0
}
source [file join [file dirname [info script]] kv_args.tcl]
kv_args msfrs_plain.tcl $argv
foreach k {seed duration window_end classes clients threads servers access_limit window segsize} {
    if {![string is integer -strict $P($k)] || $P($k) < 1} {
        puts stderr "msfrs_plain.tcl: $k must be a positive integer, got '$P($k)'"
        exit 2
    }
}
if {$P(tcp) ni {FullTcp FullTcp/Sack FullTcp/Newreno FullTcp/Tahoe}} {
    puts stderr "msfrs_plain.tcl: tcp must be one of FullTcp FullTcp/Sack FullTcp/Newreno FullTcp/Tahoe"
    exit 2
}

set ns [new Simulator]
source [file join [file dirname [info script]] tfcc_rng.tcl]

# ns-2.1b9's Agent/TCP defaults where ns-2.35's differ (003 Sec. 5; tcp_defaults = "ns-2.1b9"),
# the maximum window (Sec. 4.5.1) and the segment size.
Agent/TCP set minrto_ 1
Agent/TCP set precisionReduce_ false
Agent/TCP set rtxcur_init_ 6.0
Agent/TCP set maxrto_ 100000
Agent/TCP set window_ $P(window)
Agent/TCP/FullTcp set segsize_ $P(segsize)
Agent/TCP/FullTcp set nodelay_ [expr {$P(nodelay) ? "true" : "false"}]
Agent/TCP/FullTcp set interval_ $P(delack)
Http set TRANSPORT_ $P(tcp)

# A tfcc stream held in a global variable `name`.
proc stream {var name} {
    global P $var
    set $var [tfcc_stream $P(seed) [fnv1a $name]]
}
proc uniform_u64 {var lo hi} {
    upvar 1 $var s
    return [expr {$lo + (([tfcc_next_u64 s] * ($hi - $lo + 1)) >> 64)}]
}

# Topology.
set gw [$ns node]
set isp [$ns node]
$ns duplex-link $gw $isp $P(access_rate) $P(access_delay) DropTail
$ns queue-limit $gw $isp $P(access_limit)
$ns queue-limit $isp $gw $P(access_limit)
set qdown [new QueueMonitor]
[$ns link $isp $gw] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] \
    [new SnoopQueue/Drop] $qdown
set qup [new QueueMonitor]
[$ns link $gw $isp] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] \
    [new SnoopQueue/Drop] $qup

stream topo web/topology
set server_delays {}
for {set s 0} {$s < $P(servers)} {incr s} {
    if {$s >= $P(servers) / 2} { set lo 50000000; set hi 150000000 } else { set lo 5000000; set hi 25000000 }
    set d [expr {[uniform_u64 topo $lo $hi] / 1e9}]
    lappend server_delays $d
    set sn($s) [$ns node]
    $ns duplex-link $isp $sn($s) $P(server_rate) $d DropTail
    $ns queue-limit $isp $sn($s) 50
    $ns queue-limit $sn($s) $isp 50
}
set nclients [expr {$P(classes) * $P(clients)}]
for {set c 0} {$c < $nclients} {incr c} {
    set cn($c) [$ns node]
    $ns duplex-link $cn($c) $gw $P(client_rate) $P(client_delay) DropTail
    $ns queue-limit $cn($c) $gw 50
    $ns queue-limit $gw $cn($c) 50
}

# The servers' page generator: the size tfcc drew for the request, one page per request.
Class TfccPages
TfccPages instproc gen-init-modtime {id} { return 0 }
TfccPages instproc gen-page {id modtime} {
    global size_ P
    # age: no page is modified during the run.
    return [list size $size_($id) age [expr {10.0 * $P(duration)}] modtime $modtime]
}
set pages [new TfccPages]

set cache [new Http/Cache $ns $gw]
for {set s 0} {$s < $P(servers)} {incr s} {
    set srv($s) [new Http/Server $ns $sn($s)]
    $srv($s) set-page-generator $pages
    $cache connect $srv($s)
}
# Log each request's arrival at the cache and the instant the cache holds its whole response.
$cache proc get-request {cl type pageid args} {
    global t_cache_ ns
    set t_cache_([lindex [split $pageid :] end]) [$ns now]
    eval $self next $cl $type $pageid $args
}
$cache proc get-response-GET {server pageid args} {
    global t_atcache_ ns
    set t_atcache_([lindex [split $pageid :] end]) [$ns now]
    eval $self next $server $pageid $args
}

set nreq 0
set ndone 0
set results {}
for {set c 0} {$c < $nclients} {incr c} {
    set cl($c) [new Http/Client $ns $cn($c)]
    $cl($c) connect $cache
    set class_of($c) [expr {$c / $P(clients)}]
    # A completed response: the thread thinks, then issues its next request.
    $cl($c) proc get-response-GET {server pageid args} {
        global ns thread_of_ t_send_ t_cache_ t_atcache_ results ndone P req_info_
        eval $self next $server $pageid $args
        set n [lindex [split $pageid :] end]
        set now [$ns now]
        lassign $req_info_($n) c k s bytes cls
        lappend results [list $n $cls $c $k $s $bytes $t_send_($n) $t_cache_($n) $t_atcache_($n) $now]
        incr ndone
        think $c $k $now
    }
    for {set k 0} {$k < $P(threads)} {incr k} {
        stream rng_${c}_$k web/client$c/$k
        set first [tfcc_exponential rng_${c}_$k $P(think)]
        $ns at $first "issue $c $k"
    }
}

proc think {c k now} {
    global ns P
    upvar #0 rng_${c}_$k r
    set t [expr {$now + [tfcc_exponential r $P(think)]}]
    $ns at $t "issue $c $k"
}

# Thread k of client c sends its next request now (tfcc's draws in tfcc's order).
proc issue {c k} {
    global ns P nreq srv cache cl size_ t_send_ req_info_ class_of
    upvar #0 rng_${c}_$k r
    set s [uniform_u64 r 0 [expr {$P(servers) - 1}]]
    set u1 [expr {1.0 - [tfcc_uniform r]}]
    set u2 [tfcc_uniform r]
    set z [expr {sqrt(-2.0 * log($u1)) * cos(2.0 * 3.141592653589793 * $u2)}]
    set bytes [expr {max(1, round(exp($P(mu) + $P(sigma) * $z)))}]
    set now [$ns now]
    if {$now >= $P(duration)} { return }
    set n [incr nreq]
    set size_($n) $bytes
    set t_send_($n) $now
    set req_info_($n) [list $c $k $s $bytes $class_of($c)]
    $cl($c) send-request $cache GET $srv($s):$n
}

proc finish {} {
    global ns P qdown qup results nreq ndone server_delays
    set w $P(window_end)
    set sum 0.0; set csum 0.0; set asum 0.0; set cnt 0; set bytes 0
    foreach cls {0 1 2} { set csum_($cls) 0.0; set ccnt_($cls) 0 }
    set lat {}
    foreach r $results {
        lassign $r n cls c k s b ts tc ta td
        if {$P(trace)} { puts "tx $n $cls $c $k $s $b $ts $tc $ta $td" }
        if {$tc < $w} {
            set l [expr {$td - $tc}]
            set sum [expr {$sum + $l}]
            set csum [expr {$csum + $td - $ts}]
            set asum [expr {$asum + $ta - $tc}]
            incr cnt
            incr bytes $b
            lappend lat $l
            if {[info exists csum_($cls)]} {
                set csum_($cls) [expr {$csum_($cls) + $l}]
                incr ccnt_($cls)
            }
        }
    }
    # Transactions that arrived in the window but did not complete.
    global t_cache_
    set open 0
    foreach n [array names t_cache_] {
        if {$t_cache_($n) < $w} { incr open }
    }
    set open [expr {$open - $cnt}]
    set mean [expr {$cnt ? $sum / $cnt : 0}]
    set lat [lsort -real $lat]
    set med [expr {$cnt ? [lindex $lat [expr {$cnt / 2}]] : 0}]
    set per_class {}
    foreach cls {0 1 2} {
        lappend per_class [expr {$ccnt_($cls) ? $csum_($cls) / $ccnt_($cls) : 0}]
    }
    set d $P(duration)
    set util [expr {8.0 * [$qdown set bdepartures_] / ($P(access_rate) * $d)}]
    puts [format {{"tool": "ns-2", "scenario": "msfrs_plain", "seed": %d, "duration": %s, "window_end": %s, "tcp": "%s", "nodelay": %d, "delack": %s, "requests": %d, "completed": %d, "transactions": %d, "unfinished_in_window": %d, "mean_latency_s": %.6f, "median_latency_s": %.6f, "mean_client_latency_s": %.6f, "mean_at_cache_s": %.6f, "class_latency_s": [%s], "mean_bytes": %.1f, "access_down_utilization": %.6f, "access_down_drops": %d, "access_down_departures": %d, "access_up_drops": %d, "window_utilization": %.6f, "server_delays_s": [%s]}} \
        $P(seed) $d $w $P(tcp) $P(nodelay) $P(delack) $nreq $ndone $cnt $open $mean $med \
        [expr {$cnt ? $csum / $cnt : 0}] [expr {$cnt ? $asum / $cnt : 0}] \
        [join [lmap x $per_class {format %.6f $x}] ", "] [expr {$cnt ? double($bytes) / $cnt : 0}] \
        $util [$qdown set pdrops_] [$qdown set pdepartures_] [$qup set pdrops_] \
        [expr {8.0 * $::win_bytes / ($P(access_rate) * $w)}] \
        [join [lmap x $server_delays {format %.9f $x}] ", "]]
    exit 0
}
set win_bytes 0
$ns at $P(window_end) {set win_bytes [$qdown set bdepartures_]}
$ns at $P(duration) finish
$ns run
