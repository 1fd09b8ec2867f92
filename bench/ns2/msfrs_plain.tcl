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
# cache in [window_start, window_end) = [0, 200 s) averaged (`threads=4 duration=1000
# window_start=50 window_end=900` is 003-msfrs-backlogged.toml's load). The draws are tfcc's own for the seed (tfcc_rng.tcl): thread k of
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
# concurrent request to a server would be for one pending page. `pad=1` rounds each response up
# to whole segments, as tfcc's web model offers it (a diagnostic: ns-2's byte stream packs the
# next response into a partial last segment).
#
# `mode=stock` is ns-2's own request model instead (a reading of Sec. 4.5.1, no claim's load):
# each client starts one Http/Client session per server, each asking for its next page an
# exponential `interval` (5 s) after the last (`send-request` drops a request for a page still
# pending: `dropped_at_client`), and PagePool/Math serves one lognormal page per server, whose
# size changes only when the server modifies it after `page_age` s (0: never in the run). The
# cache stores no page (each response is entered as `noc`, non-cacheable), so there is no hit;
# `merge=1` keeps its miss-path merging (one transfer answers every client waiting for the
# page), `merge=0` forwards every request and answers the oldest requester with each response
# (the cache-server connection is one FIFO stream). ns-2's RNG is seeded from tfcc's stream
# "ns2/msfrs_plain" of the seed.
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
    window_start 0
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
    mode         tfcc
    merge        0
    interval     5.0
    page_age     0
    tcp_defaults ns-2.1b9
    pad          0
}
source [file join [file dirname [info script]] kv_args.tcl]
kv_args msfrs_plain.tcl $argv
foreach k {seed duration window_end classes clients threads servers access_limit window segsize} {
    if {![string is integer -strict $P($k)] || $P($k) < 1} {
        puts stderr "msfrs_plain.tcl: $k must be a positive integer, got '$P($k)'"
        exit 2
    }
}
if {![string is double -strict $P(window_start)] || $P(window_start) < 0 ||
    $P(window_start) >= $P(window_end) || $P(window_end) > $P(duration)} {
    puts stderr "msfrs_plain.tcl: need 0 <= window_start < window_end <= duration"
    exit 2
}
if {$P(tcp_defaults) ni {ns-2.1b9 ns-2.35}} {
    puts stderr "msfrs_plain.tcl: tcp_defaults must be ns-2.1b9 or ns-2.35"
    exit 2
}
if {$P(mode) ni {tfcc stock}} {
    puts stderr "msfrs_plain.tcl: mode must be tfcc or stock"
    exit 2
}
if {$P(mode) eq "tfcc" && $P(merge)} {
    puts stderr "msfrs_plain.tcl: mode=tfcc asks for a new page per request, nothing to merge"
    exit 2
}
if {$P(tcp) ni {FullTcp FullTcp/Sack FullTcp/Newreno FullTcp/Tahoe}} {
    puts stderr "msfrs_plain.tcl: tcp must be one of FullTcp FullTcp/Sack FullTcp/Newreno FullTcp/Tahoe"
    exit 2
}

set ns [new Simulator]
source [file join [file dirname [info script]] tfcc_rng.tcl]

# ns-2.1b9's Agent/TCP defaults where ns-2.35's differ (003 Sec. 5; tcp_defaults = "ns-2.1b9"),
# the maximum window (Sec. 4.5.1) and the segment size.
if {$P(tcp_defaults) eq "ns-2.1b9"} {
    Agent/TCP set minrto_ 1
    Agent/TCP set precisionReduce_ false
    Agent/TCP set rtxcur_init_ 6.0
    Agent/TCP set maxrto_ 100000
}
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

# The servers' page generator. mode=tfcc: the size tfcc drew for the request, one page per
# request. mode=stock: PagePool/Math, whose `gen-pageid` is always 0 (one page per server) and
# whose `gen-page` draws a lognormal size (RandomVariable/LogNormal: exp of a normal of mean avg_
# and deviation std_); a server keeps a page's size until it modifies the page after its `age`
# (a constant `page_age`, by default longer than the run: one size per server).
if {$P(mode) eq "tfcc"} {
    Class TfccPages
    TfccPages instproc gen-init-modtime {id} { return 0 }
    TfccPages instproc gen-page {id modtime} {
        global size_ P
        # age: no page is modified during the run.
        set size $size_($id)
        if {$P(pad)} {
            # tfcc's web model offers a response as whole segments (ceil(L/1000) of them).
            set size [expr {(($size + $P(segsize) - 1) / $P(segsize)) * $P(segsize)}]
        }
        return [list size $size age [expr {10.0 * $P(duration)}] modtime $modtime]
    }
    set pages [new TfccPages]
} else {
    # ns-2's own RNG, seeded from tfcc's stream "ns2/msfrs_plain" of the seed (a stream seeded
    # with n itself gives draws close to linear in n).
    stream nsseed ns2/msfrs_plain
    $defaultRNG seed [expr {[tfcc_next_u64 nsseed] % 2147483646 + 1}]
    set pages [new PagePool/Math]
    set rsize [new RandomVariable/LogNormal]
    $rsize set avg_ $P(mu)
    $rsize set std_ $P(sigma)
    $pages ranvar-size $rsize
    set rage [new RandomVariable/Constant]
    $rage set val_ [expr {$P(page_age) > 0 ? $P(page_age) : 10.0 * $P(duration)}]
    $pages ranvar-age $rage
}

set cache [new Http/Cache $ns $gw]
for {set s 0} {$s < $P(servers)} {incr s} {
    set srv($s) [new Http/Server $ns $sn($s)]
    set srv_index($srv($s)) $s
    $srv($s) set-page-generator $pages
    $cache connect $srv($s)
}
# Log each request's arrival at the cache and the instant the cache holds a page's whole
# response. The cache never stores a page (`noc`, as for a non-cacheable page), so
# `exist-page` never finds one: no cache hit. Its miss path is ns-2's own unless merge=0.
set arrived_in_window 0
$cache proc get-request {cl type pageid args} {
    global t_cache_ ns P arrived_in_window
    set t_cache_($cl,$pageid) [$ns now]
    if {[$ns now] >= $P(window_start) && [$ns now] < $P(window_end)} { incr arrived_in_window }
    eval $self next $cl $type $pageid $args
}
$cache proc get-response-GET {server pageid args} {
    global t_atcache_ ns
    set t_atcache_($pageid) [$ns now]
    eval $self next $server $pageid $args noc 1
}
if {!$P(merge)} {
    # Every request is forwarded, each response answers the oldest requester of its page (the
    # cache-server connection is one FIFO byte stream and the server answers in order).
    $cache proc cache-miss {cl type pageid} {
        $self instvar creq_
        lappend creq_($pageid) $cl/$type
        set server [lindex [split $pageid :] 0]
        $self send-request $server $type $pageid [$self get-reqsize]
    }
    $cache proc answer-pending-requests {pageid args} {
        $self instvar creq_ pending_
        lassign [split [lindex $creq_($pageid) 0] /] cl type
        set creq_($pageid) [lrange $creq_($pageid) 1 end]
        if {[llength $creq_($pageid)] == 0} {
            unset creq_($pageid)
            unset pending_($pageid)
        }
        eval $self answer-request-$type $cl $pageid $args
    }
}

set nreq 0
set ndone 0
set dropped_at_client 0
set results {}
for {set c 0} {$c < $nclients} {incr c} {
    set cl($c) [new Http/Client $ns $cn($c)]
    set cl_index($cl($c)) $c
    $cl($c) connect $cache
    set class_of($c) [expr {$c / $P(clients)}]
    # A completed response: log it; mode=tfcc, the thread thinks, then issues its next request.
    $cl($c) proc get-response-GET {server pageid args} {
        global ns t_cache_ t_atcache_ results ndone P req_info_ cl_index class_of srv_index
        $self instvar pending_
        set t_send [lindex $pending_($pageid) 0]
        eval $self next $server $pageid $args
        set now [$ns now]
        set c $cl_index($self)
        array set data $args
        if {$P(mode) eq "tfcc"} {
            set n [lindex [split $pageid :] end]
            lassign $req_info_($n) c k s bytes cls
        } else {
            lassign [list $pageid -1 $srv_index([lindex [split $pageid :] 0]) $data(size) \
                $class_of($c)] n k s bytes cls
        }
        lappend results [list $n $cls $c $k $s $bytes $t_send $t_cache_($self,$pageid) \
            $t_atcache_($pageid) $now]
        incr ndone
        if {$P(mode) eq "tfcc"} { think $c $k $now }
    }
    if {$P(mode) eq "tfcc"} {
        for {set k 0} {$k < $P(threads)} {incr k} {
            stream rng_${c}_$k web/client$c/$k
            set first [tfcc_exponential rng_${c}_$k $P(think)]
            $ns at $first "issue $c $k"
        }
    } else {
        # ns-2's own request streams: one session per server, the next request an exponential
        # `interval` after the last whatever happened to it; Http/Client's `send-request` drops a
        # request for a page still pending (counted here).
        $cl($c) proc send-request {server type pageid args} {
            global dropped_at_client nreq
            $self instvar pending_
            incr nreq
            if {[info exists pending_($pageid)]} { incr dropped_at_client }
            eval $self next $server $type $pageid $args
        }
        set iv [new RandomVariable/Exponential]
        $iv set avg_ $P(interval)
        $cl($c) set-page-generator $pages
        $cl($c) set-interval-generator $iv
        for {set s 0} {$s < $P(servers)} {incr s} {
            $ns at 0.0 "$cl($c) start-session $cache $srv($s)"
        }
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
    global ns P nreq srv cache cl size_ req_info_ class_of
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
    set req_info_($n) [list $c $k $s $bytes $class_of($c)]
    $cl($c) send-request $cache GET $srv($s):$n
}

proc finish {} {
    global ns P qdown qup results nreq ndone server_delays dropped_at_client
    set w $P(window_end)
    set sum 0.0; set csum 0.0; set asum 0.0; set cnt 0; set bytes 0
    foreach cls {0 1 2} { set csum_($cls) 0.0; set ccnt_($cls) 0 }
    set lat {}
    foreach r $results {
        lassign $r n cls c k s b ts tc ta td
        if {$P(trace)} { puts "tx $n $cls $c $k $s $b $ts $tc $ta $td" }
        if {$tc >= $P(window_start) && $tc < $w} {
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
    global arrived_in_window dropped_at_client
    set open [expr {$arrived_in_window - $cnt}]
    set mean [expr {$cnt ? $sum / $cnt : 0}]
    set lat [lsort -real $lat]
    set med [expr {$cnt ? [lindex $lat [expr {$cnt / 2}]] : 0}]
    set per_class {}
    foreach cls {0 1 2} {
        lappend per_class [expr {$ccnt_($cls) ? $csum_($cls) / $ccnt_($cls) : 0}]
    }
    set d $P(duration)
    set util [expr {8.0 * [$qdown set bdepartures_] / ($P(access_rate) * $d)}]
    puts [format {{"tool": "ns-2", "scenario": "msfrs_plain", "mode": "%s", "merge": %d, "seed": %d, "duration": %s, "window_start": %s, "window_end": %s, "tcp": "%s", "nodelay": %d, "delack": %s, "requests": %d, "dropped_at_client": %d, "completed": %d, "transactions": %d, "unfinished_in_window": %d, "mean_latency_s": %.6f, "median_latency_s": %.6f, "mean_client_latency_s": %.6f, "mean_at_cache_s": %.6f, "class_latency_s": [%s], "mean_bytes": %.1f, "access_down_utilization": %.6f, "access_down_drops": %d, "access_down_departures": %d, "access_up_drops": %d, "window_utilization": %.6f, "server_delays_s": [%s]}} \
        $P(mode) $P(merge) $P(seed) $d $P(window_start) $w $P(tcp) $P(nodelay) $P(delack) $nreq $dropped_at_client \
        $ndone $cnt $open $mean $med \
        [expr {$cnt ? $csum / $cnt : 0}] [expr {$cnt ? $asum / $cnt : 0}] \
        [join [lmap x $per_class {format %.6f $x}] ", "] [expr {$cnt ? double($bytes) / $cnt : 0}] \
        $util [$qdown set pdrops_] [$qdown set pdepartures_] [$qup set pdrops_] \
        [expr {8.0 * ($::win_bytes - $::win_start_bytes) / ($P(access_rate) * ($w - $P(window_start)))}] \
        [join [lmap x $server_delays {format %.9f $x}] ", "]]
    exit 0
}
set win_bytes 0
set win_start_bytes 0
$ns at $P(window_start) {set win_start_bytes [$qdown set bdepartures_]}
$ns at $P(window_end) {set win_bytes [$qdown set bdepartures_]}
$ns at $P(duration) finish
$ns run
