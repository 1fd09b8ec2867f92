"""``tfcc run`` from Python: a scenario file to the output contract of DESIGN.md ("Outputs").

The work is Rust's (``tfcc._core.run_to_dir``, the same code as the ``tfcc run`` command):
the scenario and the output directory are checked before anything runs, the results are
written beside ``out`` and renamed into place at the end, so a failed run leaves nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcc import _core
from tfcc.fonts import font_path

if TYPE_CHECKING:
    from tfcc.metrics import RunResult

Progress = Callable[[float, float], object]

#: The output directory cannot be used or written; the message names it and says why.
OutputError = _core.OutputError


def run(
    scenario: Path,
    out: Path,
    *,
    seed: int | None = None,
    overrides: Sequence[str] = (),
    plots: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run ``scenario`` and write ``out``; returns the summary. Raises
    :class:`tfcc.ScenarioError` or :class:`OutputError` before anything runs when the file or
    the directory is unusable. ``overrides`` is a list of ``KEY=VALUE`` strings, as ``--set``
    takes."""
    if isinstance(overrides, str):  # list("duration=5s") would be one override per letter
        raise TypeError(
            f'overrides: a list of KEY=VALUE strings, e.g. ["duration=5s"], not one string '
            f"(write [{overrides!r}])"
        )
    return _core.run_to_dir(
        str(scenario),
        Path(out),
        list(overrides),
        seed,
        plots,
        progress,
        font_path() if plots else None,
    )


def write_run(
    out: Path,
    summary: Mapping[str, Any],
    flow_series: Mapping[str, Sequence[Any]],
    link_series: Mapping[str, Sequence[Any]],
    *,
    plots: bool = True,
    frame_series: Mapping[str, Sequence[Any]] | None = None,
    trace: Mapping[str, Sequence[Any]] | None = None,
    ptcp_slots: Mapping[str, Sequence[Any]] | None = None,
    pcaps: Mapping[str, bytes] | None = None,
) -> None:
    """Write outputs for a run simulated elsewhere (``run_scenario``'s summary and series,
    its ``frame_series`` when the run has a video flow, its ``ptcp_slots`` when it has a PTCP
    flow, its packet ``trace`` when the scenario has a ``[trace]`` and its ``pcaps`` when that
    asks for them) into ``out``, exactly as
    ``tfcc run`` does; :class:`OutputError` if it cannot (also for a summary with PTCP flows
    and no ``ptcp_slots``, or the reverse)."""
    _core.write_run(
        Path(out),
        json.dumps(summary),
        dict(flow_series),
        dict(link_series),
        plots,
        font_path() if plots else None,
        None if frame_series is None else dict(frame_series),
        dict(trace) if trace is not None else None,
        None if ptcp_slots is None else dict(ptcp_slots),
        None if pcaps is None else dict(pcaps),
    )


def read_run_result(run_dir: Path | str) -> RunResult:
    """A finished run's outputs in ``run_dir`` as a :class:`tfcc.metrics.RunResult`: its summary
    and time series, and its ``frames.parquet`` and ``ptcp_slots.parquet`` where it wrote them
    (a video flow, on either backend; a PTCP flow), so that every metric reads a testbed run as
    it reads a simulator run. The one reader behind a sweep's points and the testbed's runs
    (``tfcc compare``, ``tfcc reproduce --backend testbed``)."""
    import pyarrow.parquet as pq

    from tfcc.metrics import RunResult

    run_dir = Path(run_dir)

    def table(name: str) -> dict[str, list[Any]] | None:
        path = run_dir / name
        return pq.read_table(path).to_pydict() if path.exists() else None

    return RunResult(
        json.loads((run_dir / "summary.json").read_text()),
        pq.read_table(run_dir / "timeseries.parquet").to_pydict(),
        pq.read_table(run_dir / "queues.parquet").to_pydict(),
        table("frames.parquet"),
        table("ptcp_slots.parquet"),
    )


def read_summary(run_dir: Path | str, error: type[Exception]) -> dict[str, Any]:
    """A run's ``summary.json`` as a dict, or ``error`` with one message naming the file (a run
    killed mid-write, a hand edit, another tool's file): the commands that read a run's outputs
    (``tfcc video-quality``, ``tfcc ns2-trace``, ``tfcc report``) say so in one line, not with
    the JSON parser's traceback."""
    path = Path(run_dir) / "summary.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise error(f"{path}: cannot read it ({e})") from None
    if not isinstance(doc, dict):
        raise error(f"{path}: not a run summary (expected a JSON object)")
    return doc
