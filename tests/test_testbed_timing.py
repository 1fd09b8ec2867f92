"""A testbed reproduction says how closely its runs kept their delays (tfcc.testbed.Timing):
each run's summary carries the relay's release lateness and the host's load, and the run's line
in ``run.json``, ``results.md`` and the console gives the worst of them and names late runs.
Before, a reproduction kept only the summaries and each run's lateness report went to a
discarded stderr, so a result made on an overloaded host looked like any other."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from tfcc import reproduce as rep
from tfcc import testbed as tb
from tfcc.cli import app
from tfcc.metrics import RunResult


def summary(p99: float | None, late_max: float = 2.0, load: tuple[float, float] | None = None):  # type: ignore[no-untyped-def]
    section: dict[str, Any] = {"tcp_spurious_rtos": []}
    if p99 is not None:
        section["relay"] = {
            "forwarded": 1000,
            "lateness_p50_ms": p99 / 4,
            "lateness_p99_ms": p99,
            "lateness_max_ms": late_max,
            "cpu_share": 0.05,
            "realtime": True,
        }
    if load is not None:
        section["load_average"] = list(load)
    return {"flows": [], "links": [], "testbed": section}


def test_the_worst_run_decides_and_late_runs_are_named() -> None:
    t = tb.Timing.of(
        {
            "a.toml seed 1": summary(0.05, 0.4, (1.5, 2.0)),
            "a.toml seed 2": summary(1.8, 24.1, (3.9, 4.25)),
            "b.toml seed 1": summary(0.15, 12.0),
        }
    )
    assert (t.runs, t.p99_ms, t.max_ms, t.load) == (3, 1.8, 24.1, 4.25)
    assert t.late == ["a.toml seed 2"]
    text = t.describe()
    assert text.startswith("relay lateness p99 ≤ 1.8 ms in 3 runs (max 24.1 ms)"), text
    assert "load average ≤ 4.25" in text and "p99 over 1 ms in a.toml seed 2" in text, text


def test_a_run_without_a_relay_or_load_is_not_counted_as_punctual() -> None:
    # One flow on a path without delay or loss runs no relay: no figure, not a 0.
    t = tb.Timing.of({"one.toml seed 1": summary(None)})
    assert (t.runs, t.p99_ms, t.max_ms, t.load, t.late) == (0, None, None, None, [])
    assert t.describe() == "no relay timing (no run reported one)"
    # summaries written before the section existed
    assert tb.Timing.of({"old": {"flows": []}}).runs == 0


def test_the_claim_runs_hand_out_runs_and_time_only_those_that_ran(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def fake(scenario: Path, overrides: list[str], seed: int | None) -> RunResult:
        if seed == 2:
            raise tb.TestbedError(f"{scenario.name} (testbed): refused")
        return RunResult(summary(0.1 * (seed or 0), 3.0))

    monkeypatch.setattr(tb, "run", fake)
    claims = [
        SimpleNamespace(scenario=Path("/x/s.toml"), runs=lambda: [([], 1), ([], 2), (["a=1"], 3)])
    ]
    runs = tb.prerun_claims(claims, workers=1)
    assert runs.timing.runs == 2 and runs.timing.p99_ms == pytest.approx(0.3)
    assert runs(Path("/x/s.toml"), [], 1).summary["testbed"]["relay"]["lateness_p99_ms"] == 0.1
    with pytest.raises(ValueError, match="seed 2: the testbed run failed: s.toml"):
        runs(Path("/x/s.toml"), [], 2)
    with pytest.raises(ValueError, match="seed 4: no testbed run"):
        runs(Path("/x/s.toml"), [], 4)
    late = tb.Timing.of({"s.toml --set a=1 seed 3": summary(1.5)})
    assert late.late == ["s.toml --set a=1 seed 3"]


def test_the_run_line_and_run_json_carry_the_timing(tmp_path: Path) -> None:
    timing = tb.Timing.of({"s.toml seed 1": summary(0.12, 8.0, (2.0, 2.5))})
    info = rep.RunInfo(
        name="tfwc",
        quick=True,
        started="2026-11-28 20:00 UTC",
        commit="abc1234",
        wall_s=65.0,
        backend="testbed",
        testbed_timing=asdict(timing),
    )
    line = info.describe()
    assert line.endswith("; relay lateness p99 ≤ 0.12 ms in 1 run (max 8 ms), load average ≤ 2.50")
    rep.write_results(tmp_path / "out", "t", [], info=info)
    back, _ = rep.read_run(tmp_path / "out")
    assert back.testbed_timing == info.testbed_timing and back.describe() == line
    # a simulator run's line is unchanged
    sim = rep.RunInfo(name="tfwc", quick=True, started="s", commit="c", wall_s=1.0)
    assert "lateness" not in sim.describe()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "2"], "--jobs is for --backend testbed"),
        (["--jobs", "0", "--backend", "testbed"], "--jobs 0: at least 1 testbed run at a time"),
    ],
)
def test_jobs_is_refused_where_it_means_nothing(args: list[str], message: str) -> None:
    res = CliRunner().invoke(app, ["reproduce", "tfwc", *args])
    assert res.exit_code != 0
    assert message in res.output, res.output
    assert "Traceback" not in res.output


def test_a_testbed_reproduction_records_its_timing_in_run_json(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The CLI's wiring: the testbed runs' timing reaches the console and run.json. The runs are
    # stand-ins (their summaries hold no flows, so every claim's metric fails: exit 1).
    monkeypatch.setattr(tb, "run", lambda scenario, overrides, seed: RunResult(summary(0.2, 5.0)))
    out = tmp_path / "out"
    res = CliRunner().invoke(
        app,
        ["reproduce", "tfwc", "--backend", "testbed", "--quick", "--jobs", "2", "--out", str(out)],
    )
    assert "2 at a time at most" in res.output, res.output
    assert "relay lateness p99 ≤ 0.2 ms" in res.output, res.output
    info, _ = rep.read_run(out)
    assert info.backend == "testbed" and info.testbed_timing is not None
    assert info.testbed_timing["p99_ms"] == 0.2 and info.testbed_timing["max_ms"] == 5.0
