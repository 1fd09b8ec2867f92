#!/usr/bin/env bash
# The Debian packages `make test` needs (testbed tools, ns-2, Chromium, ffmpeg, tshark),
# installed in the background from the start of the run, while the Rust builds keep the cores
# busy: apt mostly waits on the network and the disk, and the installs one after the other
# had added their whole time to a test run close to its 15-minute budget.
#
#   debs.sh start DIR        start the installers, one after another, in the background;
#                            each writes DIR/NAME.log and then DIR/NAME.rc
#   debs.sh wait DIR NAME    wait for NAME's installer; its output, and its exit status
#
# The installers are scripts/install-NAME.sh, unchanged: each returns at once when its tool
# already works. `make ns2` (and the others) outside `make test` still runs its installer
# directly.
set -euo pipefail
cd "$(dirname "$0")/.."
NAMES=(testbed-tools ns2 chromium ffmpeg tshark)

case "${1:-}" in
start)
    dir=${2:?usage: debs.sh start DIR}
    mkdir -p "$dir"
    rm -f "$dir"/*.log "$dir"/*.rc "$dir"/pid
    (
        for n in "${NAMES[@]}"; do
            rc=0
            bash "scripts/install-$n.sh" >"$dir/$n.log" 2>&1 || rc=$?
            echo "$rc" >"$dir/$n.rc"
        done
    ) </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/pid"
    ;;
wait)
    dir=${2:?usage: debs.sh wait DIR NAME}
    name=${3:?usage: debs.sh wait DIR NAME}
    [[ " ${NAMES[*]} " == *" $name "* ]] || { echo "debs.sh: no installer named $name" >&2; exit 2; }
    pid=$(cat "$dir/pid" 2>/dev/null || true)
    # 30 minutes at most; sooner if the background job is gone without a word about NAME.
    for _ in $(seq 1 3600); do
        [[ -f "$dir/$name.rc" ]] && break
        if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then
            [[ -f "$dir/$name.rc" ]] && break
            echo "debs.sh: the background installers ended before $name's (see $dir)" >&2
            exit 1
        fi
        sleep 0.5
    done
    [[ -f "$dir/$name.rc" ]] || { echo "debs.sh: $name's installer did not finish in 30 minutes" >&2; exit 1; }
    cat "$dir/$name.log" >&2
    exit "$(cat "$dir/$name.rc")"
    ;;
*)
    echo "usage: debs.sh start DIR | debs.sh wait DIR NAME" >&2
    exit 2
    ;;
esac
