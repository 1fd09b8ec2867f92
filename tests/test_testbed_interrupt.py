"""Ctrl-C and SIGTERM on the testbed (issue 11: nothing is left behind after any run): the run
stops within a second, exits with 128 + the signal (130 Ctrl-C, 143 SIGTERM), writes nothing,
and its namespaces are gone. Needs root and the native ``tfcc-run`` (``make install``); skipped
otherwise."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfcc.entry import NATIVE

SCENARIO = """
name = "tfrc-vs-linux"
duration = "30s"
measure_from = "10s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "18ms", queue = "droptail", limit = 100 }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "tfrc"
[[flows]]
protocol = "tcp-reno"
"""

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not os.access(NATIVE, os.X_OK),
    reason="the testbed needs root and the native tfcc-run (make install)",
)


def namespaces(prefix: str) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(prefix)]


def wait_for(cond: object, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def _default_sigint() -> None:
    # A child of a non-interactive shell may inherit SIGINT ignored; a user's terminal does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_testbed_run_removes_its_namespaces(tmp_path: Path, sig: int) -> None:
    scen = tmp_path / "tb.toml"
    scen.write_text(SCENARIO)
    out = tmp_path / "out"
    p = subprocess.Popen(
        [NATIVE, str(scen), "--backend", "testbed", "--out", str(out), "-q"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    prefix = f"tfcc-{p.pid}-"
    try:
        assert wait_for(lambda: len(namespaces(prefix)) == 3, 10.0), "namespaces never built"
        time.sleep(0.5)  # into the run
        p.send_signal(sig)
        _, err = p.communicate(timeout=5)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + sig, err
    assert ("terminated" if sig == signal.SIGTERM else "interrupted") in err
    assert namespaces(prefix) == []
    assert not out.exists()


def _child_namespaces(pid: int) -> list[str]:
    """The namespaces of the testbed runs started by process ``pid`` (other testbed runs may
    share the machine). Its children are listed per thread: `reproduce` starts its runs from
    worker threads."""
    pids = []
    for f in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            pids += f.read_text().split()
        except OSError:  # the thread ended meanwhile
            pass
    return [n for child in pids for n in namespaces(f"tfcc-{child}-")]


def _sigterm_removes_the_children_namespaces(args: list[str], count: int) -> None:
    """Starts ``tfcc ARGS``, waits until its testbed children have built ``count`` namespaces,
    sends SIGTERM to the Python process alone (not its group, as a terminal's Ctrl-C would) and
    checks that it says so, exits 143 and leaves none of those namespaces behind."""
    p = subprocess.Popen(
        [sys.executable, "-m", "tfcc.entry", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        ready = wait_for(lambda: len(_child_namespaces(p.pid)) == count, 30.0)
        assert ready, "no testbed run started"
        names = _child_namespaces(p.pid)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=5)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 143, err
    assert "terminated" in err
    left = set(namespaces("tfcc-")) & set(names)
    assert not left, left


def test_compare_stops_its_testbed_child_on_sigterm(tmp_path: Path) -> None:
    scen = tmp_path / "tb.toml"
    scen.write_text(SCENARIO)
    # The simulator's run comes first; then the testbed child builds its three namespaces.
    _sigterm_removes_the_children_namespaces(["compare", str(scen)], 3)


CLAIMS = """
title = "interrupt test"

[[claims]]
id = "tfrc-vs-reno"
thesis = "004"
section = "none"
claim = "a testbed run to interrupt"
scenario = "tb.toml"
seeds = [1, 2]
metric = "throughput_ratio"
args = { protocol = "tfrc", other = "tcp" }
target = 1.0
tolerance = { rel = 0.5 }
testbed = true
"""


def test_a_testbed_reproduction_stops_its_runs_on_sigterm(tmp_path: Path) -> None:
    (tmp_path / "tb.toml").write_text(SCENARIO)
    claims = tmp_path / "claims.toml"
    claims.write_text(CLAIMS)
    # Two seeds, two runs side by side: six namespaces; the runs its worker threads wait for
    # must be stopped by the signalled Python process.
    args = ["reproduce", str(claims), "--backend", "testbed"]
    _sigterm_removes_the_children_namespaces(args, 6)
