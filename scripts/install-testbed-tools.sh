#!/usr/bin/env bash
# Installs what the emulated testbed drives (issue 11): `ip` and `tc` (Debian package iproute2)
# for namespaces, veth pairs and the tbf bottleneck, and `ethtool` to switch segmentation
# offloads off. Idempotent: when all three run, it exits at once without touching apt. Quiet
# unless something fails. Without root nothing is installed: the testbed tests skip themselves
# when not root, so there is nothing to install them for.
set -euo pipefail

log() { printf 'install-testbed-tools: %s\n' "$*" >&2; }

tools_work() {
    command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 &&
        command -v ethtool >/dev/null 2>&1
}

if tools_work || [[ $(id -u) -ne 0 ]]; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "iproute2/ethtool are missing and apt-get is unavailable; install them by hand."
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_log=$(mktemp)
trap 'rm -f "$apt_log"' EXIT
if ! apt-get install -y -q --no-install-recommends iproute2 ethtool >"$apt_log" 2>&1; then
    if ! { apt-get update -q >"$apt_log" 2>&1 &&
        apt-get install -y -q --no-install-recommends iproute2 ethtool >"$apt_log" 2>&1; }; then
        log "apt-get could not install iproute2 and ethtool; last lines of its output:"
        tail -n 20 "$apt_log" >&2
        exit 1
    fi
fi

if ! tools_work; then
    log "iproute2 and ethtool installed but ip, tc or ethtool does not run."
    exit 1
fi
