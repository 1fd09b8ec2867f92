#!/usr/bin/env bash
# Installs what the benchmark measures peak memory with (issue 4): GNU time
# (Debian package time), whose children start small (see tfcc.ns2.peak_rss_prefix).
# Idempotent: when it is there, it exits at once without touching apt. Quiet
# unless something fails. Without root nothing is installed and the benchmark falls back to
# ru_maxrss (and says so).
set -euo pipefail

log() { printf 'install-gnu-time: %s\n' "$*" >&2; }

tools_work() {
    [[ -x /usr/bin/time ]]
}

if tools_work || [[ $(id -u) -ne 0 ]]; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "GNU time is missing and apt-get is unavailable; install it by hand."
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_log=$(mktemp)
trap 'rm -f "$apt_log"' EXIT
if ! apt-get install -y -q --no-install-recommends time >"$apt_log" 2>&1; then
    if ! { apt-get update -q >"$apt_log" 2>&1 &&
        apt-get install -y -q --no-install-recommends time >"$apt_log" 2>&1; }; then
        log "apt-get could not install time; last lines of its output:"
        tail -n 20 "$apt_log" >&2
        exit 1
    fi
fi

if ! tools_work; then
    log "time installed but /usr/bin/time is missing."
    exit 1
fi
