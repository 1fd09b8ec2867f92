#!/usr/bin/env bash
# Installs Chromium (Debian package `chromium`), the headless browser the report test renders
# `tfcc report` output in (issue 8). Idempotent: when `chromium --version` runs, it exits at once
# without touching apt. Quiet unless something fails. Needs root (or passwordless sudo) and apt.
set -euo pipefail

log() { printf 'install-chromium: %s\n' "$*" >&2; }

chromium_works() {
    local bin
    bin=$(command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null) || return 1
    "$bin" --version >/dev/null 2>&1
}

if chromium_works; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "Chromium is not installed and apt-get is unavailable on this machine."
    log "Install Chromium by hand and put 'chromium' on PATH."
    exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        log "installing the Debian package 'chromium' needs root (or passwordless sudo)."
        log "Run: sudo apt-get install -y chromium"
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
apt_log=$(mktemp)
trap 'rm -f "$apt_log"' EXIT
# `install` first, since the package lists are often fresh enough; update only if that fails.
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends chromium >"$apt_log" 2>&1; then
    if ! { "${SUDO[@]}" apt-get update -q >"$apt_log" 2>&1 &&
        "${SUDO[@]}" apt-get install -y -q --no-install-recommends chromium >"$apt_log" 2>&1; }; then
        log "apt-get could not install chromium; last lines of its output:"
        tail -n 20 "$apt_log" >&2
        exit 1
    fi
fi

if ! chromium_works; then
    log "package chromium installed but 'chromium --version' does not run."
    exit 1
fi
