# tfcc's per-flow random draws, in Tcl, for the ns-2 scripts that must start their flows at the
# very instants tfcc's runs draw (e24_bursty.tcl, onoff_cbr.tcl): `tfcc_start_ns seed name lo hi`
# is tfcc's `uniform_u64(lo, hi)` nanoseconds on the stream `name` (e.g. "flow/0/start") of the
# run's `seed`, as crates/tfcc-sim/src/rng.rs derives it: the stream seeded through FNV-1a of the
# name and SplitMix64, then one step of a 128-bit PCG (MCG) with the XSL-RR output. ns-2's own
# RNG would not do: a stream seeded with n, or derived from a default stream seeded with n, gives
# draws linear in n modulo 1. `source` this file from a script in the same directory.
set M64 0xFFFFFFFFFFFFFFFF
proc splitmix64 {x} {
    global M64
    set x [expr {($x + 0x9E3779B97F4A7C15) & $M64}]
    set x [expr {(($x ^ ($x >> 30)) * 0xBF58476D1CE4E5B9) & $M64}]
    set x [expr {(($x ^ ($x >> 27)) * 0x94D049BB133111EB) & $M64}]
    return [expr {$x ^ ($x >> 31)}]
}
proc fnv1a {name} {
    global M64
    set h 0xCBF29CE484222325
    foreach c [split $name ""] {
        scan $c %c b
        set h [expr {(($h ^ $b) * 0x100000001B3) & $M64}]
    }
    return $h
}
proc tfcc_start_ns {seed name lo hi} {
    global M64
    set a [splitmix64 [expr {$seed ^ [splitmix64 [fnv1a $name]]}]]
    set b [splitmix64 [expr {$a ^ 0xD1B54A32D192ED03}]]
    set m128 [expr {(1 << 128) - 1}]
    set state [expr {($a | ($b << 64)) | 1}]
    set state [expr {($state * 0x2360ED051FC65DA44385DF649FCCF645) & $m128}]
    set rot [expr {$state >> 122}]
    set x [expr {(($state >> 64) ^ $state) & $M64}]
    set x [expr {(($x >> $rot) | ($x << (64 - $rot))) & $M64}]
    return [expr {$lo + (($x * ($hi - $lo + 1)) >> 64)}]
}
