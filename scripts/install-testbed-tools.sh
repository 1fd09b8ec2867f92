#!/usr/bin/env bash
# Installs what the emulated testbed drives (issue 11): `ip` and `tc` (Debian package iproute2)
# for namespaces, veth pairs and the tbf bottleneck, `ethtool` to switch segmentation offloads
# off, and `sysctl` (procps) to turn on forwarding in the router's namespace. Idempotent and quiet unless something fails (scripts/apt.sh). Without root
# nothing is installed: the testbed tests skip themselves when not root, so there is nothing to
# install them for.
set -euo pipefail
TOOL=install-testbed-tools
source "$(dirname "$0")/apt.sh"

tools_work() {
    command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 &&
        command -v ethtool >/dev/null 2>&1 && command -v sysctl >/dev/null 2>&1
}

if [[ $(id -u) -ne 0 ]] && ! tools_work; then
    exit 0
fi
apt_ensure tools_work "ip, tc, ethtool and sysctl" iproute2 ethtool procps
