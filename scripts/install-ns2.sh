#!/usr/bin/env bash
# Installs ns-2.35 (Debian package `ns2`), the reference simulator that tfcc's simulator and TFRC
# are cross-checked against (issues 4 and 5). Idempotent: when `ns` already runs, it exits at once
# without touching apt; quiet unless something fails (scripts/apt.sh). Needs root (or passwordless
# sudo) and apt.
set -euo pipefail
TOOL=install-ns2
source "$(dirname "$0")/apt.sh"

# ns-2 has no --version flag; a one-line script that prints its version proves the binary runs.
ns_works() {
    local ns_bin
    ns_bin=$(command -v ns 2>/dev/null) || return 1
    printf 'puts [Simulator version]\nexit 0\n' >"${TMPDIR:-/tmp}/tfcc-ns2-probe.$$.tcl"
    local out
    out=$("$ns_bin" "${TMPDIR:-/tmp}/tfcc-ns2-probe.$$.tcl" 2>/dev/null) || {
        rm -f "${TMPDIR:-/tmp}/tfcc-ns2-probe.$$.tcl"
        return 1
    }
    rm -f "${TMPDIR:-/tmp}/tfcc-ns2-probe.$$.tcl"
    [[ -n "$out" ]]
}

apt_ensure ns_works "ns-2.35 ('ns')" ns2
