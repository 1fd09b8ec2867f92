"""The ``tfcc`` command line.

Thin by design: each command parses its flags, calls into the library, and prints. Bad input gets
one precise message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
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


def _fail(message: str) -> typer.Exit:
    """One line on stderr and exit code 2: the convention for bad input."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


ScenarioArg = Annotated[
    Path, typer.Argument(help="Scenario file (TOML, see docs/scenarios.md).", show_default=False)
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Override a key before validation: KEY.PATH=VALUE (repeatable), "
        "e.g. topology.bottleneck.rate=10Mbps or flows.0.count=4.",
        show_default=False,
    ),
]


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def run(ctx: typer.Context) -> None:
    """Run a scenario in the simulator: summary.json, timeseries.parquet, queues.parquet and
    PNG plots in OUT (`tfcc run --help` for the flags)."""
    # The console script (tfcc.entry) sends `tfcc run` to the native command before this app
    # is imported; this entry keeps the command listed here and serves `python -m tfcc.cli`.
    from tfcc.entry import run as native_run

    raise typer.Exit(native_run(list(ctx.args), allow_exec=False))


@app.command()
def check(scenario: ScenarioArg, set_: SetOpt = None) -> None:
    """Check a scenario file without running it."""
    from tfcc import ScenarioError, check_scenario

    try:
        info = check_scenario(str(scenario), set_ or [])
    except ScenarioError as e:
        raise _fail(str(e)) from None
    groups = ", ".join(f"{n} × {label}" for label, n in info["groups"])
    typer.echo(
        f"{scenario}: ok: {info['scenario']}, {info['duration_s']:g} s, "
        f"{info['flows']} flows ({groups}), {info['links']} links, {info['events']} events"
    )


@app.command()
def reproduce(
    name: Annotated[str, typer.Argument(help="Reproduction name (e.g. tfrc) or claim-file path.")],
    quick: Annotated[
        bool, typer.Option("--quick", help="Only the claims marked quick (a few minutes).")
    ] = False,
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            help="Also write results.json, results.md and the figures (figures/ID.png) here.",
        ),
    ] = None,
) -> None:
    """Run a thesis' experiments and check each claim against its target and tolerance."""
    from pathlib import Path

    from rich.console import Console
    from rich.table import Table

    from tfcc import reproduce as rep

    console = Console()
    try:
        _, _, figures = rep.load_all(name)
    except rep.ClaimFileError as e:
        raise _fail(str(e)) from None

    def show(o: rep.Outcome) -> None:
        verdict = "[green]pass[/]" if o.passed else "[red]FAIL[/]"
        measured = "—" if o.measured is None else f"{o.measured:.4g}"
        console.print(
            f"{verdict}  {o.claim.id}: measured {measured}, wanted {o.claim.describe_target()}"
        )
        if o.error:
            console.print(f"      {o.error}", markup=False, highlight=False)

    title, outcomes = rep.run(name, quick=quick, on_outcome=show)
    table = Table(title=title)
    for col in ("claim", "source", "target", "measured", "result"):
        table.add_column(col)
    for o in outcomes:
        table.add_row(
            o.claim.id,
            f"{o.claim.thesis} {o.claim.section}",
            o.claim.describe_target(),
            "—" if o.measured is None else f"{o.measured:.4g}",
            "[green]pass[/]" if o.passed else "[red]FAIL[/]",
        )
    console.print(table)
    if out is not None:
        rep.write_results(Path(out), title, outcomes, figures)
    failed = sum(not o.passed for o in outcomes)
    if failed:
        console.print(f"{failed} of {len(outcomes)} claims failed")
        raise typer.Exit(1)


def main() -> None:
    """Console entry point (see :mod:`tfcc.entry`)."""
    from tfcc.entry import main as entry_main

    entry_main()


if __name__ == "__main__":
    main()
