"""``tfcc reproduce NAME``: run one thesis' experiments and check each claim.

A reproduction is a claim file ``scenarios/reproduce/NAME.toml``. Each ``[[claims]]`` entry cites
the thesis and section, names a scenario (relative to the claim file) with ``set`` overrides, the
seeds to average over, a metric from :mod:`tfcc.metrics` with its arguments, and the target with
its tolerance as the thesis (or the spec's reading of it) states them::

    [[claims]]
    id = "e1b-tcp-1pct"
    thesis = "004"
    section = "Sec. 4.3.2 (E1b)"
    claim = "TCP gets roughly 90 KByte/s at 1 % random drop (1.5 Mb/s, 100 ms)"
    scenario = "../e1b-lossy-link.toml"
    set = ["topology.bottleneck.loss.p=0.01"]
    seeds = [1, 2, 3]
    metric = "throughput_kbyte_s"
    args = { protocol = "tcp" }
    target = 90.0
    tolerance = { rel = 0.3 }
    quick = true                  # part of --quick

A claim passes when the seed-averaged metric is within the tolerance of the target (``rel`` is
relative to the target, ``abs`` absolute; ``min``/``max`` give one-sided bounds instead of a
target). The command prints one row per claim and exits 1 if any claim fails.

A claim that compares two runs ("TTFWC(0.9) uses as much idle bandwidth as TCP", "TFWC refills
the pipe faster than TFRC") names a ``baseline``: further overrides applied after ``set`` for a
second run of the same seed, and optionally ``baseline_args`` replacing ``args`` there. The
measured value is then, per seed, the metric of the claim's run over the metric of the baseline
run, averaged over the seeds (``baseline = []`` divides by ``baseline_args`` on the same run)::

    baseline = ["flows.0.protocol=tcp-sack", "flows.0.params={}"]
    metric = "idle_bandwidth_use"
    target = 1.0                  # a ratio
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tfcc.metrics import METRICS, MetricError, RunResult

#: Where claim files live: ``scenarios/reproduce`` in a source checkout.
CLAIMS_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "reproduce"

Runner = Callable[[Path, list[str], int], Mapping[str, Any]]


class ClaimFileError(ValueError):
    """A claim file is missing or malformed; the message names the file and the key."""


@dataclass
class Claim:
    id: str
    thesis: str
    section: str
    claim: str
    scenario: Path
    metric: str
    target: float | None = None
    rel: float | None = None
    abs: float | None = None
    min: float | None = None
    max: float | None = None
    set: list[str] = field(default_factory=list)
    seeds: list[int] = field(default_factory=lambda: [1])
    args: dict[str, Any] = field(default_factory=dict)
    quick: bool = False
    note: str = ""
    baseline: list[str] | None = None
    baseline_args: dict[str, Any] | None = None

    def bounds(self) -> tuple[float, float]:
        """The accepted interval ``[lo, hi]``."""
        lo, hi = float("-inf"), float("inf")
        if self.target is not None:
            tol = (self.abs or 0.0) + (self.rel or 0.0) * abs(self.target)
            lo, hi = self.target - tol, self.target + tol
        if self.min is not None:
            lo = max(lo, self.min)
        if self.max is not None:
            hi = min(hi, self.max)
        return lo, hi

    def describe_target(self) -> str:
        if self.target is not None:
            tol = []
            if self.rel:
                tol.append(f"±{self.rel * 100:g} %")
            if self.abs:
                tol.append(f"±{self.abs:g}")
            return f"{self.target:g} {' '.join(tol)}".strip()
        lo, hi = self.bounds()
        if hi == float("inf"):
            return f"≥ {lo:g}"
        if lo == float("-inf"):
            return f"≤ {hi:g}"
        return f"[{lo:g}, {hi:g}]"


@dataclass
class Outcome:
    claim: Claim
    measured: float | None
    per_seed: list[float]
    passed: bool
    error: str = ""


def available() -> list[str]:
    return sorted(p.stem for p in CLAIMS_DIR.glob("*.toml"))


def load(name_or_path: str) -> tuple[str, list[Claim]]:
    """Read a claim file by reproduction name or path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = CLAIMS_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        names = ", ".join(available()) or "none"
        raise ClaimFileError(f"{path}: no such reproduction (available: {names})")
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ClaimFileError(f"{path}: invalid TOML: {e}") from None
    claims = []
    for i, c in enumerate(doc.get("claims", [])):
        where = f"{path}: claims[{i}]"
        c = dict(c)
        tol = c.pop("tolerance", {})
        if not isinstance(tol, dict) or set(tol) - {"rel", "abs"}:
            raise ClaimFileError(f"{where}.tolerance: expected {{ rel = ... }} or {{ abs = ... }}")
        c.update(tol)
        missing = {"id", "thesis", "section", "claim", "scenario", "metric"} - set(c)
        if missing:
            raise ClaimFileError(f"{where}: missing {', '.join(sorted(missing))}")
        if c["metric"] not in METRICS:
            raise ClaimFileError(
                f"{where}.metric: unknown metric {c['metric']!r} (known: {', '.join(METRICS)})"
            )
        c["scenario"] = (path.parent / c["scenario"]).resolve()
        try:
            claim = Claim(**c)
        except TypeError as e:
            raise ClaimFileError(f"{where}: {e}") from None
        if claim.target is None and claim.min is None and claim.max is None:
            raise ClaimFileError(f"{where}: needs a target, or min/max bounds")
        claims.append(claim)
    if not claims:
        raise ClaimFileError(f"{path}: no [[claims]]")
    return str(doc.get("title", path.stem)), claims


def default_runner(scenario: Path, overrides: list[str], seed: int) -> Mapping[str, Any]:
    """One simulator run as a :class:`~tfcc.metrics.RunResult` (summary and time series)."""
    from tfcc import _core

    r = _core.run_scenario(str(scenario), overrides, seed, None)
    return RunResult(r["summary"], r["flow_series"], r["link_series"])


def evaluate(claim: Claim, runner: Runner = default_runner) -> Outcome:
    values = []
    try:
        for seed in claim.seeds:
            summary = runner(claim.scenario, list(claim.set), seed)
            value = METRICS[claim.metric](summary, **claim.args)
            if claim.baseline is not None:
                # An empty baseline compares two metrics of the same run: no second run.
                base = (
                    runner(claim.scenario, [*claim.set, *claim.baseline], seed)
                    if claim.baseline
                    else summary
                )
                args = claim.args if claim.baseline_args is None else claim.baseline_args
                denom = METRICS[claim.metric](base, **args)
                if denom == 0:
                    raise MetricError(f"the baseline run's {claim.metric} is 0 (seed {seed})")
                value /= denom
            values.append(value)
    except (MetricError, ValueError, TypeError) as e:
        return Outcome(claim, None, values, False, str(e))
    measured = sum(values) / len(values)
    lo, hi = claim.bounds()
    return Outcome(claim, measured, values, lo <= measured <= hi)


def run(
    name: str,
    quick: bool = False,
    runner: Runner = default_runner,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> tuple[str, list[Outcome]]:
    title, claims = load(name)
    if quick:
        claims = [c for c in claims if c.quick]
    outcomes = []
    for c in claims:
        o = evaluate(c, runner)
        outcomes.append(o)
        if on_outcome:
            on_outcome(o)
    return title, outcomes


def to_json(outcomes: list[Outcome]) -> str:
    rows = []
    for o in outcomes:
        d = asdict(o.claim)
        d["scenario"] = str(o.claim.scenario)
        rows.append(
            {
                "claim": d,
                "measured": o.measured,
                "per_seed": o.per_seed,
                "passed": o.passed,
                "error": o.error,
            }
        )
    return json.dumps(rows, indent=2) + "\n"


def to_markdown(title: str, outcomes: list[Outcome]) -> str:
    """The table committed under ``docs/reproductions/``: every claim with its measured value."""
    lines = [
        f"# {title}",
        "",
        "| claim | source | statement | target | measured | per seed | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        measured = "—" if o.measured is None else f"{o.measured:.4g}"
        seeds = ", ".join(f"{v:.4g}" for v in o.per_seed)
        result = "pass" if o.passed else f"**FAIL** {o.error}".strip()
        c = o.claim
        lines.append(
            f"| {c.id} | {c.thesis} {c.section} | {c.claim} | {c.describe_target()} "
            f"| {measured} | {seeds} | {result} |"
        )
    return "\n".join(lines) + "\n"


def write_results(out: Path, title: str, outcomes: list[Outcome]) -> None:
    """Write ``results.json`` and ``results.md`` into ``out`` all at once: a temporary directory
    beside it is renamed into place, so an interrupted run leaves no half-written results."""
    import shutil
    import tempfile

    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "results.json").write_text(to_json(outcomes))
        (tmp / "results.md").write_text(to_markdown(title, outcomes))
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
