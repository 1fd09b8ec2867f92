"""Interrupting a CLI command as a user does: start it, wait until it has done something, send
the signal, collect what it said. Shared by the Ctrl-C tests of ``sweep`` and ``reproduce``."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence


def interrupt_when(
    args: Sequence[object],
    ready: Callable[[], bool],
    sig: int = signal.SIGINT,
    timeout: float = 60.0,
) -> tuple[int, str]:
    """Runs ``python -m tfcc.cli ARGS``, sends ``sig`` once ``ready()`` holds (the command must
    still be running then) and returns its exit code and standard error."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfcc.cli", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: SIGINT not ignored, whatever this test runner inherited
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not ready():
            assert proc.poll() is None, "the command ended before it could be interrupted"
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err
