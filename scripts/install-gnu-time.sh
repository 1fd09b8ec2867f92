#!/usr/bin/env bash
# Installs what the benchmark measures peak memory with (issue 4): GNU time (Debian package
# time), whose children start small (see tfcc.ns2.peak_rss_prefix). Idempotent and quiet unless
# something fails (scripts/apt.sh). Without root nothing is installed and the benchmark falls back
# to ru_maxrss (and says so).
set -euo pipefail
TOOL=install-gnu-time
source "$(dirname "$0")/apt.sh"

time_works() { [[ -x /usr/bin/time ]]; }

if [[ $(id -u) -ne 0 ]] && ! time_works; then
    exit 0
fi
apt_ensure time_works "GNU time (/usr/bin/time)" time
