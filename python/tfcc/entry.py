"""The ``tfcc`` console script.

``tfcc run`` goes straight to the native command (``tfcc._core.cli_run``, Rust: flags, the
simulation, summary.json, Parquet, plots, the printed table) without importing the Python CLI
stack: issue 4 times ``tfcc run`` against ns-2 with start-up included, and typer, rich and
pyarrow together take longer to import than a 100 s dumbbell takes to simulate. Every other
command goes through the typer app in :mod:`tfcc.cli`.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Console entry point: usage errors exit with 2, Ctrl-C with 130, never a traceback."""
    argv = sys.argv[1:]
    try:
        if argv[:1] == ["run"]:
            sys.exit(run(argv[1:]))
        if argv[:1] in (["send"], ["recv"]):
            sys.exit(net(argv[0], argv[1:]))
        from tfcc.cli import app

        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)


def run(argv: list[str]) -> int:
    """``tfcc run ARGV``; returns the exit code."""
    from tfcc import _core
    from tfcc.plots import font_path

    return _core.cli_run(argv, font_path())


def net(command: str, argv: list[str]) -> int:
    """``tfcc send|recv ARGV`` (the UDP transport, Rust); returns the exit code."""
    import signal

    from tfcc import _core

    # The command blocks in Rust with the GIL released: let Ctrl-C end the process directly.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return _core.cli_net(command, argv)


if __name__ == "__main__":
    main()
