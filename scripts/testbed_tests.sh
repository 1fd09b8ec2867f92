#!/usr/bin/env bash
# The root-only testbed tests of `make test` (crates/tfcc-run/tests/testbed_backend.rs and
# crates/tfcc-net/tests/testbed.rs), in the background from right after the install: they run
# in real time and take little CPU (their relay and sessions under SCHED_FIFO), so they
# overlap lint and the Rust test build instead of lengthening the end of the run (see the
# Makefile's comment above `test`).
#
#   testbed_tests.sh start DIR CARGO-TEST...   build the two test binaries with CARGO-TEST (the
#                                             Makefile's cargo test command), then run them one
#                                             after the other in the background, into DIR/log
#                                             and then DIR/rc
#   testbed_tests.sh wait DIR                  wait for them; their output (the first time it is
#                                             asked for) and their exit status
#
# The binaries run directly, not through `cargo test`: cargo keeps the build directory locked
# while its tests run, which would hold up the builds beside them.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
start)
    dir=${2:?usage: testbed_tests.sh start DIR CARGO-TEST...}
    shift 2
    [[ $# -gt 0 ]] || { echo "usage: testbed_tests.sh start DIR CARGO-TEST..." >&2; exit 2; }
    mkdir -p "$dir"
    rm -f "$dir"/log "$dir"/rc "$dir"/pid "$dir"/shown "$dir"/bins
    echo "$* --test testbed_backend --test testbed (in the background from here)"
    # One line per test binary: its executable, the directory cargo would run it in (its
    # package's), and its source file.
    if ! "$@" --test testbed_backend --test testbed --no-run --message-format=json-render-diagnostics \
        | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["profile"]["test"] and m.get("executable"):
        t = m["target"]
        print(m["executable"], os.path.dirname(m["manifest_path"]), t["src_path"], sep="\t")
' >"$dir/bins"; then
        echo "testbed_tests.sh: building the testbed tests failed (cargo's output above)" >&2
        exit 1
    fi
    [[ $(wc -l <"$dir/bins") == 2 ]] || { echo "testbed_tests.sh: expected 2 test binaries, cargo built:" >&2; cat "$dir/bins" >&2; exit 1; }
    (
        rc=0
        while IFS=$'\t' read -r exe pkg src; do
            echo "     Running ${src#"$pkg"/} ($exe)"
            (cd "$pkg" && env -u TFCC_SKIP_TESTBED "$exe") || rc=1
        done <"$dir/bins"
        echo "$rc" >"$dir/rc"
    ) </dev/null >"$dir/log" 2>&1 &
    echo $! >"$dir/pid"
    ;;
wait)
    dir=${2:?usage: testbed_tests.sh wait DIR}
    pid=$(cat "$dir/pid" 2>/dev/null || true)
    until [[ -f "$dir/rc" ]]; do
        if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then
            [[ -f "$dir/rc" ]] && break
            echo "testbed_tests.sh: the testbed tests ended without an exit status (see $dir/log)" >&2
            exit 1
        fi
        sleep 0.5
    done
    rc=$(cat "$dir/rc")
    if [[ ! -f "$dir/shown" ]]; then
        echo "--- the testbed tests, run in the background (exit $rc):"
        cat "$dir/log"
        touch "$dir/shown"
    fi
    [[ $rc == 0 ]] || echo "error: the testbed tests failed (their output above, after '--- the testbed tests')" >&2
    exit "$rc"
    ;;
*)
    echo "usage: testbed_tests.sh start DIR CARGO-TEST... | testbed_tests.sh wait DIR" >&2
    exit 2
    ;;
esac
