"""The ``tfcc`` command line.

Thin by design: each command parses its flags, calls into the library, and prints. Bad input gets
one precise message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

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


class _LazyProgress:
    """A progress bar that appears only once a run has taken more than ``after`` seconds, so
    short runs print nothing extra."""

    def __init__(self, enabled: bool, after: float = 2.0) -> None:
        self.enabled = enabled
        self.after = after
        self.started = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, now: float, end: float) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.started < self.after:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("run", total=end)
        self.bar.update(self.task, completed=now)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print_summary(summary: dict[str, Any], out: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    flows = summary["flows"]
    table = Table(
        title=f"{summary['scenario']}: {summary['sim_seconds']:g} s simulated "
        f"in {summary['wall_seconds']:.2f} s (window from {summary['measure_from_s']:g} s)"
    )
    grouped = len(flows) > 16
    table.add_column("flows" if grouped else "flow", justify="right")
    table.add_column("label")
    table.add_column("throughput Mb/s", justify="right")
    table.add_column("lost pkts", justify="right")
    table.add_column("loss ev. rate", justify="right")
    table.add_column("RTT ms", justify="right")

    def fmt(v: float | None, scale: float = 1.0, digits: int = 3) -> str:
        return "-" if v is None else f"{v * scale:.{digits}f}"

    if grouped:
        groups: dict[str, list[dict[str, Any]]] = {}
        for f in flows:
            groups.setdefault(f["label"], []).append(f)
        for label, fl in groups.items():
            n = len(fl)
            rtts = [f["mean_rtt_s"] for f in fl if f["mean_rtt_s"] is not None]
            table.add_row(
                str(n),
                f"{label} (mean)",
                fmt(sum(f["throughput_bps"] for f in fl) / n, 1e-6),
                str(sum(f["packets_lost"] for f in fl)),
                fmt(sum(f["loss_event_rate"] or 0.0 for f in fl) / n, 1.0, 4),
                fmt(sum(rtts) / len(rtts) if rtts else None, 1e3, 1),
            )
    else:
        for f in flows:
            table.add_row(
                str(f["id"]),
                f["label"],
                fmt(f["throughput_bps"], 1e-6),
                str(f["packets_lost"]),
                fmt(f["loss_event_rate"], 1.0, 4),
                fmt(f["mean_rtt_s"], 1e3, 1),
            )
    console.print(table)
    for link in summary["links"]:
        if link["name"].endswith("-rev"):
            continue
        console.print(
            f"link {link['name']}: utilisation {link['utilization']:.3f}, "
            f"drops {link['drops']}, mean queue {link['mean_queue_pkts']:.1f} pkts"
        )
    m = summary.get("metrics", {})
    parts = [f"{k} {v:.3f}" for k, v in m.items() if v is not None]
    if parts:
        console.print("metrics: " + ", ".join(parts))
    console.print(f"results in {out}")


@app.command()
def run(
    scenario: ScenarioArg,
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Output directory (replaced if it exists).", show_default=False
        ),
    ],
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Replace the scenario's seed.")
    ] = None,
    set_: SetOpt = None,
    backend: Annotated[
        str, typer.Option("--backend", help="Where to run: sim (the simulator) or testbed.")
    ] = "sim",
    no_plots: Annotated[bool, typer.Option("--no-plots", help="Skip the PNG plots.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")] = False,
) -> None:
    """Run a scenario in the simulator: summary.json, timeseries.parquet, queues.parquet and
    PNG plots in OUT."""
    from tfcc import ScenarioError
    from tfcc.output import OutputError
    from tfcc.run import run as run_to

    if backend != "sim":
        if backend == "testbed":
            raise _fail("--backend testbed: the testbed backend is not implemented yet; use sim")
        raise _fail(f"--backend {backend}: unknown backend (use sim or testbed)")
    progress = _LazyProgress(enabled=not quiet)
    try:
        summary = run_to(
            scenario,
            out,
            seed=seed,
            overrides=set_ or [],
            plots=not no_plots,
            progress=progress,
        )
    except (ScenarioError, OutputError) as e:
        raise _fail(str(e)) from None
    except OSError as e:
        raise _fail(f"{out}: cannot write the results ({e.strerror or e})") from None
    finally:
        progress.close()
    if not quiet:
        _print_summary(summary, out)


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
        typer.Option("--out", help="Also write results.json and results.md into this directory."),
    ] = None,
    runs: Annotated[
        Path | None,
        typer.Option(
            "--runs",
            help="Keep the simulator runs in this directory; running again reuses them and "
            "runs only what is missing (default: a temporary directory).",
            show_default=False,
        ),
    ] = None,
    serial: Annotated[
        bool,
        typer.Option("--serial", help="Run in this process, one run after another, no outputs."),
    ] = False,
) -> None:
    """Run a thesis' experiments and check each claim against its target and tolerance.

    The runs go through the sweep machinery: in parallel on all cores, resumable with --runs."""
    import tempfile
    from pathlib import Path

    from rich.console import Console
    from rich.table import Table

    from tfcc import reproduce as rep
    from tfcc import sweep as sw

    console = Console()
    try:
        _, claims = rep.load(name)
    except rep.ClaimFileError as e:
        raise _fail(str(e)) from None
    if quick:
        claims = [c for c in claims if c.quick]
    runner = rep.default_runner
    tmp = None
    if not serial:
        if runs is None:
            tmp = tempfile.TemporaryDirectory(prefix="tfcc-reproduce.")
            runs = Path(tmp.name)
        bar = _SweepProgress(enabled=True)
        try:
            runner = sw.prerun_claims(claims, runs, on_start=bar.start, progress=bar)
        except sw.SweepError as e:
            raise _fail(str(e)) from None
        finally:
            bar.close()

    def show(o: rep.Outcome) -> None:
        verdict = "[green]pass[/]" if o.passed else "[red]FAIL[/]"
        measured = "—" if o.measured is None else f"{o.measured:.4g}"
        console.print(
            f"{verdict}  {o.claim.id}: measured {measured}, wanted {o.claim.describe_target()}"
        )
        if o.error:
            console.print(f"      {o.error}", markup=False, highlight=False)

    try:
        title, outcomes = rep.run(name, quick=quick, on_outcome=show, runner=runner)
    finally:
        if tmp is not None:
            tmp.cleanup()
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
        rep.write_results(Path(out), title, outcomes)
    failed = sum(not o.passed for o in outcomes)
    if failed:
        console.print(f"{failed} of {len(outcomes)} claims failed")
        raise typer.Exit(1)


class _SweepProgress:
    """The sweep's rich progress bar on stderr: runs done of todo, failed, elapsed, time left."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None
        self.task: Any = None

    def start(self, todo: int, skipped: int) -> None:
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(stderr=True)
        if skipped:
            console.print(f"{skipped} points already in the output directory; {todo} to run")
        if not todo:
            return
        self.bar = Progress(
            TextColumn("sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("done, [red]{task.fields[failed]}[/] failed"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
        )
        self.bar.start()
        self.task = self.bar.add_task("sweep", total=todo, failed=0)

    def __call__(self, done: int, failed: int, todo: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=done, failed=failed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@app.command()
def sweep(
    scenario: ScenarioArg,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Sweep directory: created, or resumed when it holds this sweep already.",
            show_default=False,
        ),
    ],
    grid: Annotated[
        list[str] | None,
        typer.Option(
            "--grid",
            "-g",
            help="An axis: KEY=V1,V2,... or NAME:KEY1+KEY2=V1,V2,... (repeatable; adds to or "
            "replaces the axes of the file's [sweep.grid]).",
            show_default=False,
        ),
    ] = None,
    seeds: Annotated[
        int | None,
        typer.Option("--seeds", min=1, help="Seeds per point, counting up from the scenario's."),
    ] = None,
    set_: SetOpt = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Run on a local Dask cluster of N workers."),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Run on the Dask scheduler at ADDRESS (tcp://host:8786)."),
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Run points that failed before again.")
    ] = False,
    no_plots: Annotated[
        bool, typer.Option("--no-plots", help="Skip each run's PNG plots.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run SCENARIO over a parameter grid and seeds, in parallel; resumable (run the same
    command again after a crash). Results: DIR/runs/<id>/, the store in DIR/store/."""
    from tfcc import ScenarioError
    from tfcc import sweep as sw

    try:
        spec = sw.load(scenario, grid or [], seeds, set_ or [])
    except (sw.SweepError, ScenarioError) as e:
        raise _fail(str(e)) from None
    if scheduler is not None and workers is not None:
        raise _fail("--workers and --scheduler: choose one (a remote cluster has its own workers)")
    backend = None
    if scheduler is not None or workers is not None:
        try:
            backend = sw.DaskBackend(address=scheduler, workers=workers)
        except (OSError, TimeoutError) as e:
            raise _fail(f"--scheduler {scheduler}: cannot connect ({e})") from None
    bar = _SweepProgress(enabled=not quiet)
    try:
        outcome = sw.run(
            spec,
            out,
            backend=backend,
            plots=not no_plots,
            retry_failed=retry_failed,
            on_start=bar.start,
            progress=bar,
        )
    except sw.SweepError as e:
        raise _fail(str(e)) from None
    finally:
        bar.close()
        if backend is not None:
            backend.close()
    for pid, err in outcome.errors[:10]:
        typer.echo(f"failed {pid}: {err}", err=True)
    typer.echo(
        f"{outcome.total} points ({len(spec.seeds)} seeds): {outcome.ran} ran, "
        f"{outcome.failed} failed, {outcome.skipped} were done before; "
        f"{outcome.wall_seconds:.1f} s. Results in {out}"
    )
    if outcome.failed:
        raise typer.Exit(1)


@app.command()
def query(
    directory: Annotated[Path, typer.Argument(help="A sweep directory.", show_default=False)],
    sql: Annotated[
        str,
        typer.Argument(
            help="SQL over the views runs, flows, links and timeseries.", show_default=False
        ),
    ],
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON (a list of rows).")] = False,
) -> None:
    """Answer SQL over a sweep's results store and print a table (or CSV, or JSON)."""
    import json

    import duckdb

    from tfcc import store

    if csv and json_:
        raise _fail("--csv and --json: choose one")
    try:
        df = store.query(directory, sql)
    except store.StoreError as e:
        raise _fail(str(e)) from None
    except duckdb.Error as e:
        raise _fail(f"SQL: {str(e).splitlines()[0]}") from None
    if csv:
        sys.stdout.write(df.write_csv())
    elif json_:
        sys.stdout.write(json.dumps(df.to_dicts(), default=str) + "\n")
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table()
        for c in df.columns:
            table.add_column(c, overflow="fold")
        for row in df.iter_rows():
            table.add_row(
                *("" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v) for v in row)
            )
        Console().print(table)


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(help="A sweep directory.", show_default=False)],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="The HTML file (default DIR/report.html).", show_default=False
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", "-m", help="Metric column(s) to map (default: every metric)."),
    ] = None,
    run_ids: Annotated[
        list[str] | None,
        typer.Option("--run", help="Run id(s) whose time series to show (default: a few)."),
    ] = None,
) -> None:
    """Write a self-contained HTML report of a sweep: tables, heat maps, lines with 95 %
    confidence intervals over seeds, time series of chosen runs."""
    from tfcc import report as rep
    from tfcc import store

    try:
        path = rep.write(directory, out, metrics=metric or None, runs=run_ids or None)
    except (store.StoreError, rep.ReportError) as e:
        raise _fail(str(e)) from None
    typer.echo(f"report: {path}")


def main() -> None:
    """Console entry point: usage errors exit with 2 (click's convention), never a traceback."""
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
