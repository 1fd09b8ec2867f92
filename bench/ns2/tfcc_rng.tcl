# tfcc's random streams, in Tcl, for the ns-2 scripts that must use the very draws tfcc's runs
# make: `tfcc_start_ns seed name lo hi` is tfcc's `uniform_u64(lo, hi)` nanoseconds on the stream
# `name` (e.g. "flow/0/start") of the run's `seed` (e24_bursty.tcl, onoff_cbr.tcl); `tfcc_loss_stream`
# and `tfcc_exponential` give the drop instants of the artificial `interval` loss model on a link
# (e2_artloss.tcl). The derivation is crates/tfcc-sim/src/rng.rs's: the stream seeded through
# FNV-1a of the name and SplitMix64, then steps of a 128-bit PCG (MCG) with the XSL-RR output;
# `uniform` takes the top 53 bits, `exponential` inverts (crates/tfcc-sim/src/rng.rs), and the
# per-link loss stream is keyed by the link's name and its number of loss changes
# (`Link::loss_rng`, crates/tfcc-sim/src/link.rs). ns-2's own RNG would not do: a stream seeded
# with n, or derived from a default stream seeded with n, gives draws linear in n modulo 1.
# A stream is a Tcl variable holding the 128-bit state; the procs take the variable's name.
# `source` this file from a script in the same directory.
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
# The initial state of stream `key` (a 64-bit integer) of run `seed` (`SimRng::stream`).
proc tfcc_stream {seed key} {
    set a [splitmix64 [expr {$seed ^ [splitmix64 $key]}]]
    set b [splitmix64 [expr {$a ^ 0xD1B54A32D192ED03}]]
    return [expr {($a | ($b << 64)) | 1}]
}
# One 64-bit output of the stream held in the caller's variable `var`, advancing it.
proc tfcc_next_u64 {var} {
    global M64
    upvar 1 $var state
    set state [expr {($state * 0x2360ED051FC65DA44385DF649FCCF645) & ((1 << 128) - 1)}]
    set rot [expr {$state >> 122}]
    set x [expr {(($state >> 64) ^ $state) & $M64}]
    return [expr {(($x >> $rot) | ($x << (64 - $rot))) & $M64}]
}
# Uniform in [0, 1) with 53 random bits (`SimRng::uniform`).
proc tfcc_uniform {var} {
    upvar 1 $var state
    return [expr {double([tfcc_next_u64 state] >> 11) / double(1 << 53)}]
}
# Exponential with mean `mean` (`SimRng::exponential`).
proc tfcc_exponential {var mean} {
    upvar 1 $var state
    return [expr {-$mean * log(1.0 - [tfcc_uniform state])}]
}
proc tfcc_start_ns {seed name lo hi} {
    set state [tfcc_stream $seed [fnv1a $name]]
    return [expr {$lo + (([tfcc_next_u64 state] * ($hi - $lo + 1)) >> 64)}]
}
# The stream of the loss model that link `link` installs at its `epoch`-th loss change, one
# process for the whole link (`LossScope::Aggregate`, the default).
proc tfcc_loss_stream {seed link epoch} {
    set key [splitmix64 [expr {[fnv1a loss/$link] ^ [splitmix64 $epoch]}]]
    return [tfcc_stream $seed $key]
}
