#!/usr/bin/env bash
# Installs ffmpeg (Debian package `ffmpeg`): the H.261 encoder and decoder (`-c:v h261`, Vic's
# codec, 002 Sec. 6.1.4) and the lavfi test sources that `tfcc video-quality` uses to make and
# code its CIF reference clip (issue 6, R7-R9). Idempotent and quiet unless something fails
# (scripts/apt.sh).
set -euo pipefail
TOOL=install-ffmpeg
source "$(dirname "$0")/apt.sh"

ffmpeg_works() {
    command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1 || return 1
    # Captured first: `grep -q` closing the pipe early fails the pipeline under pipefail.
    local enc dec
    enc=$(ffmpeg -hide_banner -encoders 2>/dev/null) || return 1
    dec=$(ffmpeg -hide_banner -decoders 2>/dev/null) || return 1
    grep -q ' h261 ' <<<"$enc" && grep -q ' h261 ' <<<"$dec"
}

apt_ensure ffmpeg_works "ffmpeg with H.261 ('ffmpeg -encoders')" ffmpeg
