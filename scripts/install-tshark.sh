#!/usr/bin/env bash
# Installs tshark (Debian package `tshark`), Wireshark's command-line reader, for the tests that
# open the simulator's and the testbed's pcap files with tfcc's Lua dissector
# (tests/test_pcap.py, crates/tfcc-run/tests/testbed_backend.rs, tools/wireshark/tfcc.lua). Debconf is answered first so the install never stops to ask
# whether non-root users may capture (wireshark-common/install-setuid: no; reading files needs
# no capture rights). Idempotent and quiet unless something fails (scripts/apt.sh).
set -euo pipefail
TOOL=install-tshark
source "$(dirname "$0")/apt.sh"

tshark_works() {
    command -v tshark >/dev/null 2>&1 || return 1
    # Lua is what the dissector needs; a tshark built without it would only fail in the test.
    local v
    v=$(tshark -v 2>/dev/null) || return 1
    grep -qi 'lua' <<<"$v"
}

if ! tshark_works && command -v debconf-set-selections >/dev/null 2>&1; then
    sel='wireshark-common wireshark-common/install-setuid boolean false'
    if [[ $(id -u) -eq 0 ]]; then
        debconf-set-selections <<<"$sel"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n debconf-set-selections <<<"$sel"
    fi
fi

apt_ensure tshark_works "tshark with Lua ('tshark -v')" tshark
