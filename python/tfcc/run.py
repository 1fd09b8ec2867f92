"""``tfcc run``: a scenario file to the output contract of DESIGN.md ("Outputs").

The simulator (``tfcc._core.run_scenario``) returns the summary and columnar time series; this
adds the scenario-level metrics defined in :mod:`tfcc.metrics` and writes everything with
:func:`tfcc.output.write_run`, which builds the directory beside ``out`` and renames it into
place at the end, so a failed run leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tfcc import _core, metrics
from tfcc.output import check_writable, write_run

Progress = Callable[[float, float], object]


def scenario_metrics(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """Scenario-level metrics for ``summary["metrics"]``; ``None`` where one does not apply
    (θ needs TCP and another protocol in the same run)."""
    out: dict[str, float | None] = {}
    for name, fn in (("fairness_theta", metrics.fairness_theta), ("jain_index", metrics.jain)):
        try:
            out[name] = fn(summary)
        except metrics.MetricError:
            out[name] = None
    return out


def run(
    scenario: Path,
    out: Path,
    *,
    seed: int | None = None,
    overrides: Sequence[str] = (),
    plots: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Check the scenario and the output directory, run, and write ``out``; returns the
    summary. Raises :class:`tfcc.ScenarioError` or :class:`tfcc.output.OutputError` before
    anything runs when the file or the directory is unusable."""
    _core.check_scenario(str(scenario), list(overrides))
    check_writable(out)
    result = _core.run_scenario(str(scenario), list(overrides), seed, progress)
    summary = result["summary"]
    summary["metrics"] = {**summary.get("metrics", {}), **scenario_metrics(summary)}
    write_run(out, summary, result["flow_series"], result["link_series"], plots=plots)
    return summary
