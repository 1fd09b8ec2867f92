"""The ``tfcc`` console script.

``tfcc run`` is native code (Rust, crate ``tfcc-run``: flags, the simulation, summary.json,
Parquet, plots, the printed table): issue 4 times ``tfcc run`` against ns-2 with start-up and
memory included, and typer, rich and pyarrow together take longer to import than a 100 s
dumbbell takes to simulate. Where the ``tfcc-run`` executable was installed beside this package
(``make install`` puts it in ``tfcc/_bin``), this process replaces itself with it, so the run
carries none of the interpreter's memory; otherwise the same command runs in-process through
``tfcc._core.cli_run``. Every other command goes through the typer app in :mod:`tfcc.cli`.
"""

from __future__ import annotations

import os
import sys

# os.path rather than pathlib on this path: pathlib's imports (re, fnmatch, enum) cost more than
# the native run of a small scenario.
#: Where ``make install`` puts the native ``tfcc run``.
NATIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "tfcc-run")


#: The signal that stopped the command (SIGTERM), or None: Ctrl-C's KeyboardInterrupt.
_stopped_by: int | None = None
#: Whether the command has said it was interrupted (`interrupt_word` was asked).
_said: bool = False


def stop_on_sigterm() -> None:
    """Makes SIGTERM stop a command as Ctrl-C does, by raising KeyboardInterrupt where the
    command is, so the same clean-up runs (a sweep's workers, a testbed's namespaces, the
    temporary run directories); `interrupt_status` then gives 143 instead of 130."""
    import signal

    def on_term(signum: int, frame: object) -> None:
        global _stopped_by
        _stopped_by = signum
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)


def interrupt_status() -> int:
    """The exit status of an interrupted command: the shell's 128 + signal (130 for Ctrl-C,
    143 for SIGTERM), so a supervisor can tell a user's Ctrl-C from its own stop."""
    import signal

    return 128 + (_stopped_by or signal.SIGINT)


def interrupt_word() -> str:
    """What an interrupted command says on stderr: "terminated" for SIGTERM, else
    "interrupted"."""
    global _said
    _said = True
    return "terminated" if _stopped_by is not None else "interrupted"


def main() -> None:
    """Console entry point: usage errors exit with 2, Ctrl-C with 130, SIGTERM with 143, never
    a traceback."""
    argv = sys.argv[1:]
    try:
        if argv[:1] == ["run"]:
            sys.exit(run(argv[1:]))
        if argv[:1] in (["send"], ["recv"]):
            sys.exit(net(argv[0], argv[1:]))
        stop_on_sigterm()
        from tfcc.cli import app

        try:
            app()
        except SystemExit as e:
            # typer turns a KeyboardInterrupt it catches (in a command with no handler of its
            # own, or before the command starts) into a silent exit 130, even for SIGTERM.
            if e.code == 130 and not _said:
                raise KeyboardInterrupt from None
            raise
    except KeyboardInterrupt:
        sys.stderr.write(f"{interrupt_word()}\n")
        sys.exit(interrupt_status())


def run(argv: list[str], *, allow_exec: bool = True) -> int:
    """``tfcc run ARGV``; returns the exit code (if it does not replace the process)."""
    from tfcc.fonts import font_path

    font = font_path()
    if allow_exec and os.access(NATIVE, os.X_OK):
        env = dict(os.environ)
        if font is not None:
            env["TFCC_FONT"] = font
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(NATIVE, [str(NATIVE), *argv], env)
    from tfcc import _core

    return _core.cli_run(argv, font)


def net(command: str, argv: list[str]) -> int:
    """``tfcc send|recv ARGV`` (the UDP transport, Rust); returns the exit code."""
    import signal

    from tfcc import _core

    # The command blocks in Rust with the GIL released. While the flow runs it handles Ctrl-C
    # itself (stops, prints the summary, exits 130); before and after, the default action ends
    # the process directly.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return _core.cli_net(command, argv)


if __name__ == "__main__":
    # `python -m tfcc.entry` runs this file as `__main__`, a second copy beside the `tfcc.entry`
    # that the CLI imports: run the imported one's `main`, so the SIGTERM handler and
    # `interrupt_status` share one `_stopped_by`.
    from tfcc.entry import main as entry_main

    entry_main()
