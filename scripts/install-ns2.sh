#!/usr/bin/env bash
# Installs ns-2.35 (Debian package `ns2`), the reference simulator that tfcc's simulator and TFRC
# are cross-checked against (issues 4 and 5). Idempotent: when `ns` already runs, it exits at once
# without touching apt. Quiet unless something fails. Needs root (or passwordless sudo) and apt.
set -euo pipefail

log() { printf 'install-ns2: %s\n' "$*" >&2; }

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

if ns_works; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "ns-2 is not installed and apt-get is unavailable on this machine."
    log "Install ns-2.35 by hand (Debian/Ubuntu package 'ns2') and put 'ns' on PATH."
    exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        log "installing the Debian package 'ns2' needs root (or passwordless sudo)."
        log "Run: sudo apt-get install -y ns2"
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
apt_log=$(mktemp)
trap 'rm -f "$apt_log"' EXIT
# `install` first, since the package lists are often fresh enough; update only if that fails.
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends ns2 >"$apt_log" 2>&1; then
    if ! { "${SUDO[@]}" apt-get update -q >"$apt_log" 2>&1 &&
        "${SUDO[@]}" apt-get install -y -q --no-install-recommends ns2 >"$apt_log" 2>&1; }; then
        log "apt-get could not install ns2; last lines of its output:"
        tail -n 20 "$apt_log" >&2
        exit 1
    fi
fi

if ! ns_works; then
    log "package ns2 installed but 'ns' does not run; check 'command -v ns'."
    exit 1
fi
