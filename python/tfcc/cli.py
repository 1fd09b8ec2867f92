"""The ``tfcc`` command line.

Thin by design: each command parses its flags, calls into the library, and prints. Bad input gets
one precise message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from tfcc import __version__
from tfcc.entry import interrupt_status, interrupt_word

#: The base of the usage errors: click's, or the copy of click that typer carries since 0.2x.
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _Commands(TyperGroup):
    """The command group, with typer's usage errors as one line like the commands' own."""

    def invoke(self, ctx: Any) -> Any:
        # An unknown command, an unknown option, a value out of range or a missing argument:
        # typer drew the usage line, a hint and the message in a three-line box (five lines for
        # "tfcc demo --rtt-ms -5"). Caught here, below typer's handler, whose rich formatting
        # would be imported only to draw the box.
        try:
            return super().invoke(ctx)
        except _ClickException as e:
            raise _one_line(e) from None

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        # the group's own options ("tfcc --bogus"); `tfcc` alone still shows the help
        try:
            return super().make_context(*args, **kwargs)
        except _ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":
                raise
            raise _one_line(e) from None


def _one_line(e: Any) -> typer.Exit:
    """A usage error on one line of stderr, naming the --help to read; its exit code (2)."""
    sub = getattr(e, "ctx", None)
    hint = f" (see {sub.command_path} --help)" if sub is not None else ""
    typer.echo(f"error: {e.format_message()}{hint}", err=True)
    return typer.Exit(e.exit_code)


app = typer.Typer(
    name="tfcc",
    cls=_Commands,
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
        int,
        typer.Option(
            "--packet-size",
            "-s",
            min=1,
            max=65535,
            help="Packet size s in bytes (at most 65535, IP's largest datagram, as a "
            "scenario's packet_size on the wire).",
        ),
    ] = 1000,
    rtt_ms: Annotated[
        float, typer.Option("--rtt-ms", min=0.001, help="Round-trip time R in milliseconds.")
    ] = 100.0,
) -> None:
    """Print the TCP throughput-equation table and a worked loss-history example."""
    import math

    from tfcc.demo import run_demo

    # The range check lets inf through; the table would be NaN and 0.0 throughout.
    if not math.isfinite(rtt_ms):
        raise _fail(f"--rtt-ms {rtt_ms}: must be a finite number of milliseconds")

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
    """Run a scenario in the simulator (`tfcc run --help` for the flags).

    Writes summary.json, timeseries.parquet, queues.parquet and PNG plots into OUT.

    With video, PTCP or a \\[trace]: frames.parquet, ptcp_slots.parquet, trace.parquet."""
    # The console script (tfcc.entry) sends `tfcc run` to the native command before this app
    # is imported; this entry keeps the command listed here and serves `python -m tfcc.cli`.
    from tfcc.entry import run as native_run

    raise typer.Exit(native_run(list(ctx.args), allow_exec=False))


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def send(ctx: typer.Context) -> None:
    """Send one flow over UDP to a `tfcc recv` (`tfcc send --help` for the flags)."""
    # As `run`: the console script hands `send` to Rust before this app is imported; listed here
    # so `tfcc --help` shows it, and served here for `python -m tfcc.cli`.
    from tfcc.entry import net

    raise typer.Exit(net("send", list(ctx.args)))


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def recv(ctx: typer.Context) -> None:
    """Receive one flow from a `tfcc send` (`tfcc recv --help` for the flags)."""
    from tfcc.entry import net

    raise typer.Exit(net("recv", list(ctx.args)))


@app.command()
def check(
    scenario: ScenarioArg,
    set_: SetOpt = None,
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="sim, or testbed: what `tfcc run --backend testbed` would refuse (no root "
            "needed; nothing is set up).",
        ),
    ] = "sim",
) -> None:
    """Check a scenario file without running it."""
    from tfcc import ScenarioError, check_scenario

    if backend not in ("sim", "testbed"):
        raise _fail(f"--backend {backend}: unknown backend (use sim or testbed)")
    if _is_claim_file(scenario):
        # A claim file given where a scenario goes was refused as "title: unknown field":
        # check it as `tfcc reproduce FILE --check` does.
        if set_:
            raise _fail(f"--set: {scenario} is a claim file; its claims carry their own sets")
        _check_claim_file(str(scenario), backend=backend)
        return
    try:
        info = check_scenario(scenario, set_ or [], backend=backend)
    except ScenarioError as e:
        raise _fail(str(e)) from None
    for note in info["notes"]:
        typer.echo(f"note: {note}", err=True)
    groups = ", ".join(f"{n} × {label}" for label, n in info["groups"])
    ok = "ok on the testbed" if backend == "testbed" else "ok"
    line = (
        f"{scenario}: {ok}: {info['scenario']}, {info['duration_s']:g} s, "
        f"{_count(info['flows'], 'flow')} ({groups}), {_count(info['links'], 'link')} "
        f"({info['reported_links']} in the outputs), "
        f"{_count(info['events'], 'event')}"
    )
    trace = info.get("trace")
    if trace is not None:
        line += (
            f"; [trace]: {', '.join(trace['links'])} "
            f"from {trace['from_s']:g} s to {trace['until_s']:g} s"
        )
        if trace.get("pcap"):
            line += ", with pcap files"
    sweep_table = _sweep_table(scenario)
    if sweep_table is not None:
        # the [sweep] table is `tfcc sweep`'s, but a typo in it (or a bad grid value) should
        # not wait for the sweep: check it and every case as the sweep does before it runs
        from tfcc import sweep as sw

        try:
            # the table as `tfcc sweep FILE` reads it: a --set here is for the single run
            spec = sw.load(scenario)
        except (sw.SweepError, ScenarioError) as e:
            raise _fail(str(e)) from None
        n = len(spec.points())
        line += f"; [sweep]: {_count(n, 'point')} ({_count(len(spec.seeds), 'seed')})"
    typer.echo(line)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _is_claim_file(path: Path) -> bool:
    """Whether ``path`` reads as a claim file (``[[claims]]`` tables, no ``[topology]``)."""
    from tfcc import _core

    try:
        doc = _core.parse_toml(Path(path).read_text(encoding="utf-8").removeprefix("\ufeff"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False  # the scenario check says what is wrong with it
    return "claims" in doc and "topology" not in doc


def _check_claim_file(name: str, quick: bool = False, backend: str = "sim") -> None:
    """``tfcc reproduce NAME --check``: the claim file and every distinct run its claims and
    figures would make, checked without running; one line either way. With ``--backend
    testbed`` the claims are those the testbed would run (``testbed = true``), checked by the
    testbed's own check, so a marked claim it refuses is named without root or real time."""
    from tfcc import reproduce as rep

    try:
        _, claims, figures = rep.load_all(name)
    except rep.ClaimFileError as e:
        raise _fail(str(e)) from None
    chosen = [c for c in claims if c.quick] if quick else claims
    if backend == "testbed":
        chosen = [c for c in chosen if c.testbed]
        if not chosen:
            raise _fail(f"{name}: no claim is marked testbed = true")
    try:
        n = rep.check_runs(chosen, figures, backend)
    except rep.ClaimFileError as e:
        raise _fail(f"{name}: {e}") from None
    where = " on the testbed" if backend == "testbed" else ""
    typer.echo(
        f"{name}: ok{where}: {_count(len(chosen), 'claim')}, {_count(len(figures), 'figure')}, "
        f"{_count(n, 'distinct run')} checked"
    )


def _sweep_table(scenario: Path) -> object | None:
    """The file's ``[sweep]`` table, or None (also for a file the scenario check accepted
    but this parser does not read: the sweep reports that itself)."""
    from tfcc import _core

    try:
        doc = _core.parse_toml(scenario.read_text(encoding="utf-8").removeprefix("\ufeff"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return doc.get("sweep")


def show_quick_pairs(console: Any, pairs: list[Any]) -> None:
    """Print the loss of precision of ``--quick`` (:func:`tfcc.reproduce.quick_pairs`) so that
    it reads at 80 columns: a heading, one borderless table row per stand-in (its id, its full
    claim's, ``z``, the stated spread and the verdict, the columns that carry numbers never
    wrapped) and each row's note, if any, below the table under the stand-in's id, indented."""
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    bound = pairs[0].bound
    console.print(
        f"loss of precision of --quick (within: |z| ≤ {bound:g} against the full claim)",
        highlight=False,
    )
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    table.add_column("stand-in", overflow="fold")
    table.add_column("full claim", overflow="fold")
    table.add_column("z", justify="right", no_wrap=True)
    table.add_column("spread", justify="right", no_wrap=True)
    table.add_column("result", no_wrap=True)
    verdict = {True: "[green]within[/]", False: "[red]QUICK DESIGN FAILS[/]", None: "untested"}
    for p in pairs:
        z = "—" if p.z is None else f"{p.z:+.2f}"
        table.add_row(p.quick, p.full, z, f"{p.spread:.3g}×", verdict[p.ok])
    console.print(table, highlight=False)
    for p in pairs:
        if p.note:
            console.print(Padding(Text(f"{p.quick}: {p.note}"), (0, 0, 0, 4)))


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
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="sim, or testbed: the claims marked `testbed = true` on real namespaces (root; "
            "real time, runs side by side; with --quick each claim's first seed only).",
        ),
    ] = "sim",
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Check the claim file and every run it would make (each scenario with its "
            "set, as tfcc check does) without running anything; with --backend testbed, the "
            "claims marked testbed = true, by what the testbed refuses (no root needed).",
        ),
    ] = False,
    update_doc: Annotated[
        Path | None,
        typer.Option(
            "--update-doc",
            help="Replace the lines between <!-- results:begin --> and <!-- results:end --> "
            "in this page (e.g. docs/reproductions/tfrc.md) with this run's table and a line "
            "naming the run (date, commit, --quick or full, wall time); refused before any "
            "run when the page lacks the markers or holds them more than once.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            help="With --backend testbed: how many testbed runs at a time (default 20). Each "
            "is real time; the run's line gives the relay's lateness and the load, and names "
            "runs that were late.",
            show_default=False,
        ),
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(
            "--seeds",
            help="Measure every claim at these seeds instead of its own, for this run only "
            "(how robust the verdicts are): a range A-B, a list A,B,C or a count N for 1 to N, "
            "as tfcc sweep --seeds. Figures keep their seed. Simulator only; not with "
            "--update-doc (pages show the claim files' seeds).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a thesis' experiments and check each claim against its target and tolerance.

    The runs go through the sweep machinery: in parallel on all cores, resumable with --runs."""
    import tempfile
    import time
    from pathlib import Path

    from rich.console import Console
    from rich.table import Table

    from tfcc import reproduce as rep
    from tfcc import sweep as sw

    started, t0 = rep.utc_now(), time.monotonic()
    console = Console()
    try:
        _, claims, figures = rep.load_all(name)
    except rep.ClaimFileError as e:
        raise _fail(str(e)) from None
    seed_list: list[int] | None = None
    if seeds is not None:
        try:
            # a count N is the seeds 1 to N: the claim files' seeds all count up from 1
            seed_list = sw.seeds_option(seeds, first=1)
        except sw.SweepError as e:
            raise _fail(str(e)) from None
        if update_doc is not None:
            raise _fail(f"--seeds with --update-doc: {rep.SEEDS_NOT_A_PAGE}")
        if backend == "testbed":
            raise _fail(
                "--seeds with --backend testbed: the testbed runs each seed in real time; run "
                "it at the claim files' seeds (--seeds is for the simulator)"
            )
        claims = rep.with_seeds(claims, seed_list)
    if backend not in ("sim", "testbed"):
        raise _fail(f"--backend {backend}: unknown backend (use sim or testbed)")
    if jobs is not None and backend != "testbed":
        raise _fail("--jobs is for --backend testbed (the simulator's runs use every core already)")
    if jobs is not None and jobs < 1:
        raise _fail(f"--jobs {jobs}: at least 1 testbed run at a time")
    if check:
        _check_claim_file(name, quick, backend)
        return
    if out is not None and (why := rep.check_out(Path(out))) is not None:
        # before the runs, not after minutes of them
        raise _fail(why)
    if update_doc is not None and (why := rep.check_page(update_doc)) is not None:
        raise _fail(why)
    if quick:
        claims = [c for c in claims if c.quick]
    runner = rep.default_runner
    tmp = None
    chosen: list[rep.Claim] | None = None
    if backend == "testbed":
        from tfcc import testbed as tb

        claims = [c for c in claims if c.testbed]
        if quick:
            for c in claims:
                c.seeds = c.seeds[:1]
        chosen = claims
        if not claims:
            raise _fail(f"{name}: no claim is marked testbed = true")
        workers = tb.DEFAULT_JOBS if jobs is None else jobs
        console.print(
            f"testbed: {len(claims)} claims, runs in real time, {workers} at a time at most"
        )
        try:
            runner = tb.prerun_claims(
                claims,
                workers=workers,
                on_done=lambda d, n: console.print(f"  testbed runs {d}/{n}", style="dim"),
            )
            console.print(f"testbed: {runner.timing.describe()}", highlight=False)
        except KeyboardInterrupt:
            sys.stderr.write(
                f"{interrupt_word()}: the testbed runs were stopped and their namespaces removed\n"
            )
            raise typer.Exit(interrupt_status()) from None
    elif not serial:
        if runs is None:
            tmp = tempfile.TemporaryDirectory(prefix="tfcc-reproduce.")
            runs = Path(tmp.name)
        bar = _SweepProgress(enabled=True)
        try:
            runner = sw.prerun_claims(claims, runs, on_start=bar.start, progress=bar)
        except sw.SweepError as e:
            raise _fail(str(e)) from None
        except KeyboardInterrupt:
            # typer would exit without a word
            bar.close()
            if tmp is not None:
                tmp.cleanup()
                hint = "; with --runs DIR the finished runs are kept and reused"
            else:
                hint = f"; the finished runs are kept in {runs}: the same command reuses them"
            typer.echo(f"{interrupt_word()}{hint}", err=True)
            raise typer.Exit(interrupt_status()) from None
        finally:
            bar.close()

    def verdict(o: rep.Outcome) -> str:
        word = "[green]pass[/]" if o.passed else "[red]FAIL[/]"
        return f"{word} {rep.UNSETTLED}" if o.settled() is False else word

    def show(o: rep.Outcome) -> None:
        measured = "—" if o.measured is None else f"{o.measured:.4g}"
        ci = "" if o.ci95() is None else f" (95 % CI {rep.describe_ci(o)})"
        console.print(
            f"{verdict(o)}  {o.claim.id}: measured {measured}{ci}, "
            f"wanted {o.claim.describe_target()}"
        )
        if o.error:
            console.print(f"      {o.error}", markup=False, highlight=False)

    if chosen is None and seed_list is not None:
        chosen = claims  # rep.run would read the claim files' seeds again
    try:
        title, outcomes = rep.run(name, quick=quick, on_outcome=show, runner=runner, chosen=chosen)
    finally:
        if tmp is not None:
            tmp.cleanup()
    table = Table(title=title)
    # folded, never cut: at 80 columns (a pipe, a file) rich cut the claim ids, the names the
    # pages and --update-doc go by, to "e12-tfrc-halves-on…"
    for col in ("claim", "source", "target", "measured", "95 % CI", "result"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        table.add_row(
            o.claim.id,
            f"{o.claim.thesis} {o.claim.section}",
            o.claim.describe_target(),
            "—" if o.measured is None else f"{o.measured:.4g}",
            rep.describe_ci(o),
            verdict(o),
        )
    console.print(table)
    console.print(rep.describe_verdicts(outcomes), highlight=False)
    # a full run holds the quick stand-ins beside their full claims: the stated precision's test
    pairs = rep.quick_pairs(outcomes)
    if pairs:
        show_quick_pairs(console, pairs)
    info = rep.RunInfo(
        name=name,
        quick=quick,
        started=started,
        commit=rep.run_commit(backend),
        wall_s=time.monotonic() - t0,
        backend=backend,
        seeds=seed_list,
    )
    if isinstance(runner, sw.ClaimRuns):
        info.runs_total, info.runs_reused = runner.total, runner.reused
        info.runs_wall_s = runner.runs_wall_s
    timing = getattr(runner, "timing", None)  # tfcc.testbed.ClaimRuns's
    if timing is not None:
        from dataclasses import asdict

        info.testbed_timing = asdict(timing)
    if out is not None:
        rep.write_results(Path(out), title, outcomes, figures, info=info)
    if update_doc is not None:
        try:
            rep.update_page(update_doc, rep.results_block(info, outcomes))
        except (rep.PageError, OSError) as e:
            raise _fail(str(e)) from None
        console.print(f"{update_doc}: results table replaced ({info.describe()})")
        for why in rep.status_mismatches(update_doc.read_text(encoding="utf-8"), outcomes):
            console.print(f"[yellow]check the page's Status lines[/]: {why}")
    failed = sum(not o.passed for o in outcomes)
    if failed:
        console.print(f"{failed} of {len(outcomes)} claims failed")
    designs = [p.quick for p in pairs if p.ok is False]
    if designs:
        console.print(
            f"the quick design fails (outside its stated precision) for {', '.join(designs)}"
        )
    if failed or designs:
        raise typer.Exit(1)


@app.command()
def compare(
    scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override KEY=VALUE (repeatable).")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Replace the scenario's seed.")] = None,
) -> None:
    """Run a scenario on the simulator and on the testbed (root): one table of both.

    One row per flow and metric, the simulator's value beside the testbed's."""
    from rich.table import Table

    from tfcc import testbed as tb
    from tfcc.console import table_console
    from tfcc.sweep import MAX_SEED, seed_range_error

    # Checked here, before anything runs: the testbed run's own `tfcc run --seed` check
    # answered only after the namespaces were set up, in the words of a subprocess.
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise _fail(f"--seed: {seed_range_error(seed)}")
    overrides = list(set_ or [])
    try:
        # The testbed first: what it cannot emulate (a `[trace]`, a stall, RED, ...) is refused
        # before it sets anything up, so the error comes at once instead of after a simulation
        # whose table would never be printed. Both read the scenario the same way.
        bed = tb.run(scenario, overrides, seed, backend="testbed")
        sim = tb.run(scenario, overrides, seed, backend="sim")
    except tb.TestbedError as e:
        raise _fail(str(e)) from None
    except KeyboardInterrupt:
        sys.stderr.write(
            f"{interrupt_word()}: the runs were stopped and the testbed's namespaces removed\n"
        )
        raise typer.Exit(interrupt_status()) from None
    table = Table(title=f"{scenario.name}: simulator against testbed")
    for col in ("flow", "metric", "sim", "testbed"):
        table.add_column(col)

    def fmt(v: float | None) -> str:
        return "—" if v is None else f"{v:.4g}"

    for flow, metric, a, b in tb.compare_rows(sim, bed):
        table.add_row(flow, metric, fmt(a), fmt(b))
    table_console().print(table)


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
            self.bar = None


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
            "replaces the axes of the file's \\[sweep.grid]).",
            show_default=False,
        ),
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(
            "--seeds",
            help="Seeds per point: N (counting up from the scenario's), a range A-B or a list "
            "A,B,C.",
            show_default=False,
        ),
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
    """Run SCENARIO over a parameter grid and seeds, in parallel; resumable.

    After a crash or Ctrl-C, the same command again runs only the missing points.

    Results: DIR/runs/<id>/ and the store in DIR/store/."""
    from tfcc import ScenarioError
    from tfcc import sweep as sw

    try:
        seed_spec = None if seeds is None else sw.parse_seeds(seeds)
        spec = sw.load(scenario, grid or [], seed_spec, set_ or [])
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
        except ValueError as e:  # dask's parse of the address ("missing port number ...")
            raise _fail(
                f"--scheduler {scheduler}: not a scheduler address such as tcp://host:8786 ({e})"
            ) from None
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
    except KeyboardInterrupt:
        # typer would turn this into a silent exit; say what was kept and how to go on
        bar.close()
        typer.echo(
            f"{interrupt_word()}: the finished runs are stored in {out}; "
            "run the same command again to run the rest",
            err=True,
        )
        raise typer.Exit(interrupt_status()) from None
    finally:
        bar.close()
        if backend is not None:
            backend.close()
    for pid, err in outcome.errors[:10]:
        typer.echo(f"failed {pid}: {err}", err=True)
    typer.echo(
        f"{_count(outcome.total, 'point')} ({_count(len(spec.seeds), 'seed')}): "
        f"{outcome.ran} ran, {outcome.failed} failed, "
        f"{outcome.skipped} {'was' if outcome.skipped == 1 else 'were'} done before; "
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
            help="SQL over the views runs, flows, links, timeseries and ptcp_slots.",
            show_default=False,
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
    if not sql.strip():
        raise _fail('SQL: empty query (e.g. "SELECT * FROM runs")')
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
        from rich.table import Table

        from tfcc.console import table_console

        table = Table()
        for c in df.columns:
            table.add_column(c, overflow="fold")
        for row in df.iter_rows():
            table.add_row(
                *("" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v) for v in row)
            )
        table_console().print(table)


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
    """Write a self-contained HTML report of a sweep (default DIR/report.html).

    Tables, heat maps, 95 % confidence intervals over seeds, time series of chosen runs."""
    from tfcc import report as rep
    from tfcc import store

    try:
        path = rep.write(directory, out, metrics=metric or None, runs=run_ids or None)
    except (store.StoreError, rep.ReportError) as e:
        raise _fail(str(e)) from None
    typer.echo(f"report: {path}")


@app.command("video-quality")
def video_quality(
    run_dir: Annotated[
        Path, typer.Argument(help="A run's output directory (tfcc run --out).", show_default=False)
    ],
    reference: Annotated[
        Path | None,
        typer.Option(
            "--reference",
            "-r",
            help="The reference clip, raw YUV 4:2:0 (default: a synthetic CIF clip from "
            "ffmpeg's lavfi --synthetic source, made once into the cache).",
            show_default=False,
        ),
    ] = None,
    synthetic: Annotated[
        str,
        typer.Option(
            "--synthetic", help="The lavfi source of the default clip (300 frames, 30 fps)."
        ),
    ] = "testsrc2",
    size: Annotated[str, typer.Option("--size", help="The clip's WIDTHxHEIGHT.")] = "352x288",
    flow: Annotated[
        int | None, typer.Option("--flow", help="One video flow (default: every one).")
    ] = None,
    freezes: Annotated[
        bool,
        typer.Option(
            "--freezes/--rendered-only",
            help="Score every frame slot, a skipped or lost frame as the frozen picture on "
            "screen; or only the frames the receiver rendered (002 Sec. 6.3's reading).",
        ),
    ] = False,
    q_uncoupled: Annotated[
        int,
        typer.Option("--q-uncoupled", min=1, max=31, help="The q of a source without adapt."),
    ] = 10,
    playout_delay: Annotated[
        float | None,
        typer.Option(
            "--playout-delay",
            help="Play-out deadline in seconds after a frame comes due: a frame whole later "
            "is not rendered (default: none, a frame counts however late, as 002 scores Vic).",
            show_default=False,
        ),
    ] = None,
    csv: Annotated[
        Path | None,
        typer.Option("--csv", help="Write the per-frame PSNR and MOS to this CSV file."),
    ] = None,
    json_: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print JSON (an infinite PSNR, a picture identical to its reference, is null).",
        ),
    ] = False,
) -> None:
    """PSNR (002 Eqs. 6.1-6.2) and MOS (Table 6.3) of a run's video flows (needs ffmpeg).

    From the run's frames.parquet and the reference clip coded with H.261 at each q.

    The coded clip is cached in $TFCC_CACHE/video, else ~/.cache/tfcc/video (first use: 25 s).
    """

    import math

    from tfcc import video_quality as vq

    try:
        width, height = (int(x) for x in size.lower().split("x"))
    except ValueError:
        raise _fail(f"--size: WIDTHxHEIGHT, e.g. 352x288, got {size!r}") from None
    if (width, height) not in vq.H261_SIZES:
        # Checked before a clip of that size is made and ffmpeg's encoder refuses it.
        raise _fail(f"--size: H.261 codes 352x288 (CIF) and 176x144 (QCIF) only, got {size}")
    if playout_delay is not None and not (math.isfinite(playout_delay) and playout_delay > 0):
        raise _fail(f"--playout-delay: a positive number of seconds, got {playout_delay}")
    if csv is not None and (csv.is_dir() or not csv.parent.is_dir()):
        raise _fail(f"--csv: {csv}: not a file in an existing directory")
    try:
        vq.check_run_dir(run_dir)
        if reference is None:
            reference = vq.cache_dir() / f"{synthetic}-{width}x{height}-300.yuv"
            if not reference.exists():
                vq.synthetic_clip(reference, synthetic, size=(width, height))
        elif not reference.exists():
            raise _fail(f"--reference: {reference}: no such file")
        elif not reference.is_file():
            raise _fail(f"--reference: {reference}: not a file")
        clip = vq.code_clip(reference, width, height)
        skipped = {} if flow is not None else vq.unfollowed_flows(run_dir)
        result = vq.run_quality(
            run_dir,
            clip,
            flow=flow,
            freezes=freezes,
            q_uncoupled=q_uncoupled,
            playout_s=playout_delay,
        )
        if csv is not None:
            import polars as pl

            rows = [{"flow": f.flow, **fr} for f in result for fr in f.frames]
            # Beside the file and renamed into place: an interrupted write leaves no half file.
            part = csv.with_name(f".{csv.name}.{os.getpid()}")
            try:
                pl.DataFrame(rows).write_csv(part)
                part.replace(csv)
            finally:
                part.unlink(missing_ok=True)
    except (vq.VideoQualityError, ValueError, OSError) as e:
        raise _fail(str(e)) from None
    except KeyboardInterrupt:
        # typer would exit without a word; the clip and the cache are written whole or not.
        typer.echo(
            f"{interrupt_word()}: no output written (the cache keeps whole files only)", err=True
        )
        raise typer.Exit(interrupt_status()) from None
    for fl, proto in skipped.items():
        typer.echo(
            f"note: flow {fl} ({proto}) left out: frames.parquet does not match its packets "
            f"to frames (only {', '.join(vq.FOLLOWED_PROTOCOLS)} senders')",
            err=True,
        )
    if json_:
        sys.stdout.write(vq.to_json(result) + "\n")
        return
    from rich.table import Table

    from tfcc.console import table_console

    deadline = "" if playout_delay is None else f", play-out deadline {1000 * playout_delay:g} ms"
    table = Table(title=f"{run_dir} on {reference.name} ({result[0].mode} frames{deadline})")
    cols = ["flow", "mean PSNR dB", "MOS 5", "4", "3", "2", "1", "rendered fps"]
    for c in [*cols, "delay p50 ms", "p95 ms", "Mb/s"]:
        table.add_column(c, justify="right")

    def ms(x: float | None) -> str:
        return "-" if x is None else f"{1000 * x:.0f}"

    for f in result:
        table.add_row(
            str(f.flow),
            f"{f.mean_psnr_db:.2f}",
            *(f"{100 * f.mos[m]:.1f} %" for m in (5, 4, 3, 2, 1)),
            f"{f.rendered_fps:.1f}",
            ms(f.frame_delay_s(0.5)),
            ms(f.frame_delay_s(0.95)),
            f"{f.throughput_bps / 1e6:.3f}",
        )
    table_console(min_width=110).print(table)


@app.command("ns2-trace")
def ns2_trace(
    run_dir: Annotated[
        Path,
        typer.Argument(
            help="A run's output directory (tfcc run --out) with a trace.parquet "
            "(a scenario with a \\[trace] table).",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The trace file to write (default RUN_DIR/out.tr; - for stdout, to pipe into "
            "awk). Written beside its name and renamed into place.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Write the run's packet trace as ns-2's trace-all / trace-queue file (out.tr).

    Per event: ev time from-node to-node type size flags fid src.port dst.port seq uid.

    ns-2 and tfcc both print, for TCP's first full segment over tests/test_ns2trace.py's link:

    r 0.069576 0 1 tcp 1040 ------- 0 2.0 3.0 1 5

    Nodes as the ns-2 script of the same network numbers them (dumbbell: routers 0, 1; hosts 2+2i).

    fid: the flow id; tcp, ack, cbr, tcpFriend, tcpFriendCtl as in ns-2; uid: from the event order.

    The rules, and what differs from ns-2: docs/scenarios.md, \\[trace].
    """
    from tfcc.ns2trace import Ns2TraceError, write_ns2_trace

    try:
        stats = write_ns2_trace(run_dir, out)
    except Ns2TraceError as e:
        raise _fail(str(e)) from None
    except BrokenPipeError:
        # `| head`: the reader has what it wanted; Python would complain again at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    except KeyboardInterrupt:
        typer.echo(f"{interrupt_word()}: no trace written", err=True)
        raise typer.Exit(interrupt_status()) from None
    if out is None or str(out) != "-":
        target = out if out is not None else run_dir / "out.tr"
        typer.echo(
            f"{target}: {stats.rows} events of {stats.packets} packets ({stats.seconds:.1f} s)",
            err=True,
        )


def main() -> None:
    """Console entry point (see :mod:`tfcc.entry`)."""
    from tfcc.entry import main as entry_main

    entry_main()


if __name__ == "__main__":
    main()
