# The key=value command line of the bench/ns2 scripts (e24_bursty.tcl, e2_artloss.tcl,
# onoff_cbr.tcl): each argument sets one entry of the caller's global array P, which holds every
# known key with its default beforehand. An argument without "=", or with a key P does not know,
# ends the run with one line on stderr and exit status 2, before anything is built.
proc kv_args {script argv} {
    global P
    foreach arg $argv {
        set eq [string first = $arg]
        if {$eq < 1} {
            puts stderr "$script: argument '$arg' is not key=value"
            exit 2
        }
        set key [string range $arg 0 [expr {$eq - 1}]]
        if {![info exists P($key)]} {
            puts stderr "$script: unknown key '$key' (known keys: [lsort [array names P]])"
            exit 2
        }
        set P($key) [string range $arg [expr {$eq + 1}] end]
    }
}
