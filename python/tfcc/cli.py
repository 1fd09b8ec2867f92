"""The ``tfcc`` command line.

Thin by design: each command parses its flags, calls into the library, and prints. Bad input gets
one precise message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from tfcc import __version__

app = typer.Typer(
    name="tfcc",
    help="TCP-friendly congestion control for real-time media: protocols, simulator, testbed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tfcc {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """TCP-friendly congestion control for real-time media."""


@app.command()
def demo(
    packet_size: Annotated[
        int, typer.Option("--packet-size", "-s", min=1, help="Packet size s in bytes.")
    ] = 1000,
    rtt_ms: Annotated[
        float, typer.Option("--rtt-ms", min=0.001, help="Round-trip time R in milliseconds.")
    ] = 100.0,
) -> None:
    """Print the TCP throughput-equation table and a worked loss-history example."""
    from tfcc.demo import run_demo

    run_demo(packet_size=packet_size, rtt_s=rtt_ms / 1000.0)


def main() -> None:
    """Console entry point: usage errors exit with 2 (click's convention), never a traceback."""
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
