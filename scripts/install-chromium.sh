#!/usr/bin/env bash
# Installs Chromium (Debian package `chromium`), the headless browser the report test renders
# `tfcc report` output in (issue 8). Idempotent and quiet unless something fails (scripts/apt.sh).
set -euo pipefail
TOOL=install-chromium
source "$(dirname "$0")/apt.sh"

chromium_works() {
    local bin
    bin=$(command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null) || return 1
    "$bin" --version >/dev/null 2>&1
}

apt_ensure chromium_works "Chromium ('chromium --version')" chromium
