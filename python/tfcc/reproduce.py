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

Three optional keys widen what one claim measures:

- ``variants = [[...], [...]]``: further ``set`` lists, each applied on top of ``set``; the value
  is averaged over every variant and seed (a thesis figure that aggregates over flow mixes, e.g.
  004 Fig. 4.9 over the six TCP/TFRC mixes).
- ``versus = { set = [...], args = {...} }``: the claim measures the *ratio* of its metric to the
  same metric with these overrides and arguments (run with the same variants and seeds), for
  claims that one configuration beats another ("TFRC's max-min fairness is above TCP's",
  "remodelling responds faster than duplication", "TTFWC(0.9) uses as much idle bandwidth as
  TCP"). Without ``set`` it compares two metrics of the same run, which is not run twice
  (``versus = { args = { protocol = "tcp" } }``: TFWC's CoV over TCP's in one run).
- no ``scenario``: a trace claim. The metric then runs no simulation: it is called with ``None``
  for the run, ``seed=`` and its ``args`` (004's estimator studies on synthetic loss traces,
  E8 and E13, are of this kind).

A claim file may also hold ``[[figures]]``, drawn when ``--out DIR`` is given, each into
``DIR/figures/ID.png`` beside the table (the figure of the thesis a reproduction corresponds
to)::

    [[figures]]
    id = "e10-setup4"
    title = "004 Fig. 4.23: one TCP, TFRC joining at 80 s, a second TCP at 160 s"
    scenario = "../004-e10-join-leave.toml"
    set = []                      # overrides, as in a claim
    seed = 1
    plot = ["throughput"]         # one panel each: throughput, rate, cwnd, p, rtt, k, s,
                                  # available, oracle
    flows = [0, 1, 2]             # optional: only these flow ids
    smooth = "1s"                 # optional: average the samples over this window

The drawing is the Rust renderer (``tfcc._core.plot_panels``, as for ``tfcc run``), so no
matplotlib is imported.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tfcc.metrics import METRICS, MetricError, RunResult

#: Where claim files live: ``scenarios/reproduce`` in a source checkout.
CLAIMS_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "reproduce"

Runner = Callable[[Path, list[str], int], Mapping[str, Any]]

#: Figure panels: name → (time-series column, axis label, scale from the column's unit).
PANELS: dict[str, tuple[str, str, float]] = {
    "throughput": ("throughput_bps", "throughput (KByte/s)", 1 / 8000),
    "rate": ("rate_bps", "allowed rate (KByte/s)", 1 / 8000),
    "cwnd": ("cwnd", "cwnd (packets)", 1.0),
    "p": ("p", "loss event rate", 1.0),
    "rtt": ("rtt_s", "RTT (s)", 1.0),
    "k": ("ptcp_k", "PTCP k (packets per RTT)", 1.0),
    "s": ("ptcp_s", "PTCP control slot s (RTTs)", 1.0),
    "available": ("ptcp_a_bps", "A used (Mb/s)", 1e-6),
    "oracle": ("ptcp_oracle_a_bps", "oracle A (Mb/s)", 1e-6),
}


class ClaimFileError(ValueError):
    """A claim file is missing or malformed; the message names the file and the key."""


@dataclass
class Claim:
    id: str
    thesis: str
    section: str
    claim: str
    scenario: Path | None
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
    variants: list[list[str]] = field(default_factory=lambda: [[]])
    versus: dict[str, Any] | None = None
    #: Also run by ``tfcc reproduce --backend testbed`` (the experiment fits the namespaces
    #: testbed: a dumbbell with TFRC and TCP flows, DropTail in packets).
    testbed: bool = False

    def runs(self) -> list[tuple[list[str], int]]:
        """Every run the claim measures, as (overrides, seed): its ``set`` with each variant,
        and each again under a ``versus`` set, for each seed (what :func:`evaluate` asks its
        runner for, so that a backend can run them all first)."""
        vset = list((self.versus or {}).get("set", []))
        extras = [list(v) for v in self.variants]
        if vset:
            extras += [[*v, *vset] for v in self.variants]
        return [([*self.set, *extra], seed) for seed in self.seeds for extra in extras]

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
class Figure:
    """One ``[[figures]]`` entry: a run drawn as panels of per-flow time series."""

    id: str
    title: str
    scenario: Path
    set: list[str] = field(default_factory=list)
    seed: int = 1
    plot: list[str] = field(default_factory=lambda: ["throughput"])
    flows: list[int] | None = None
    smooth: str | None = None

    def smooth_s(self) -> float:
        """The smoothing window in seconds (0 for none), from ``"500ms"``/``"2s"``."""
        if not self.smooth:
            return 0.0
        text = self.smooth.strip()
        for unit, scale in (("ms", 1e-3), ("s", 1.0)):
            if text.endswith(unit):
                try:
                    value = float(text[: -len(unit)])
                except ValueError:
                    break
                if value >= 0:
                    return value * scale
        raise ValueError(f'smooth must be a duration like "1s" or "500ms", got {text!r}')


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
    title, claims, _ = load_all(name_or_path)
    return title, claims


def _figures(path: Path, doc: Mapping[str, Any]) -> list[Figure]:
    figures = []
    for i, f in enumerate(doc.get("figures", [])):
        where = f"{path}: figures[{i}]"
        f = dict(f)
        missing = {"id", "title", "scenario"} - set(f)
        if missing:
            raise ClaimFileError(f"{where}: missing {', '.join(sorted(missing))}")
        f["scenario"] = (path.parent / f["scenario"]).resolve()
        try:
            fig = Figure(**f)
            fig.smooth_s()
        except (TypeError, ValueError) as e:
            raise ClaimFileError(f"{where}: {e}") from None
        unknown = [p for p in fig.plot if p not in PANELS]
        if unknown or not fig.plot:
            raise ClaimFileError(
                f"{where}.plot: unknown panel {unknown} (known: {', '.join(PANELS)})"
            )
        figures.append(fig)
    return figures


def load_all(name_or_path: str) -> tuple[str, list[Claim], list[Figure]]:
    """Read a claim file's title, claims and figures."""
    path = Path(name_or_path)
    if not path.suffix:
        path = CLAIMS_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        names = ", ".join(available()) or "none"
        # the name as typed: the claim directory it was looked up in means nothing to a user
        shown = name_or_path if path.parent == CLAIMS_DIR else path
        raise ClaimFileError(f"{shown}: no such reproduction (available: {names})")
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
        missing = {"id", "thesis", "section", "claim", "metric"} - set(c)
        if missing:
            raise ClaimFileError(f"{where}: missing {', '.join(sorted(missing))}")
        if c["metric"] not in METRICS:
            raise ClaimFileError(
                f"{where}.metric: unknown metric {c['metric']!r} (known: {', '.join(METRICS)})"
            )
        versus = c.get("versus")
        if versus is not None and (not isinstance(versus, dict) or set(versus) - {"set", "args"}):
            raise ClaimFileError(f"{where}.versus: expected {{ set = [...], args = {{...}} }}")
        if "scenario" in c:
            c["scenario"] = (path.parent / c["scenario"]).resolve()
        else:
            c["scenario"] = None
        try:
            claim = Claim(**c)
        except TypeError as e:
            raise ClaimFileError(f"{where}: {e}") from None
        if claim.target is None and claim.min is None and claim.max is None:
            raise ClaimFileError(f"{where}: needs a target, or min/max bounds")
        claims.append(claim)
    if not claims:
        raise ClaimFileError(f"{path}: no [[claims]]")
    return str(doc.get("title", path.stem)), claims, _figures(path, doc)


def default_runner(scenario: Path, overrides: list[str], seed: int) -> Mapping[str, Any]:
    """One simulator run as a :class:`~tfcc.metrics.RunResult` (summary and time series)."""
    from tfcc import _core

    r = _core.run_scenario(str(scenario), overrides, seed, None)
    return RunResult(r["summary"], r["flow_series"], r["link_series"])


def _measure(
    claim: Claim,
    runner: Runner,
    seed: int,
    extra: list[str],
    args: Mapping[str, Any],
    runs: dict[tuple[int, tuple[str, ...]], Mapping[str, Any]],
) -> float:
    """The metric on one run; ``runs`` keeps the runs of this claim so that a ``versus`` that
    changes only the metric's arguments (``versus = { args = ... }``) reuses the run."""
    metric = METRICS[claim.metric]
    if claim.scenario is None:
        return metric(None, seed=seed, **args)
    overrides = (*claim.set, *extra)
    key = (seed, overrides)
    if key not in runs:
        runs[key] = runner(claim.scenario, list(overrides), seed)
    return metric(runs[key], **args)


def evaluate(claim: Claim, runner: Runner = default_runner) -> Outcome:
    """The claim's metric averaged over its variants and seeds (per seed: averaged over the
    variants); with ``versus``, the ratio of that to the same average under ``versus``."""
    values = []
    try:
        for seed in claim.seeds:
            runs: dict[tuple[int, tuple[str, ...]], Mapping[str, Any]] = {}
            mine = [_measure(claim, runner, seed, v, claim.args, runs) for v in claim.variants]
            value = sum(mine) / len(mine)
            if claim.versus is not None:
                vset = list(claim.versus.get("set", []))
                vargs = {**claim.args, **claim.versus.get("args", {})}
                theirs = [
                    _measure(claim, runner, seed, [*v, *vset], vargs, runs) for v in claim.variants
                ]
                denom = sum(theirs) / len(theirs)
                if denom == 0:
                    raise MetricError("the versus configuration measured 0; no ratio")
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
    chosen: list[Claim] | None = None,
) -> tuple[str, list[Outcome]]:
    """Checks the claims of reproduction ``name`` (the quick ones with ``quick``), or the
    ``chosen`` claims instead (already selected and adjusted by the caller, e.g. the testbed's
    first-seed-only claims)."""
    title, claims = load(name)
    if chosen is not None:
        claims = chosen
    elif quick:
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
        d["scenario"] = None if o.claim.scenario is None else str(o.claim.scenario)
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


def _smooth(t: list[float], v: list[float], window: float) -> tuple[list[float], list[float]]:
    """Means of the samples in consecutive windows of ``window`` seconds (NaNs skipped), placed
    at each window's end: the thesis plots throughput at a coarser δ than the recorder's."""
    if window <= 0:
        return t, v
    bins: dict[int, list[float]] = {}
    for ti, vi in zip(t, v, strict=True):
        if not math.isnan(vi):
            bins.setdefault(math.ceil(ti / window - 1e-9), []).append(vi)
    keys = sorted(bins)
    return [k * window for k in keys], [sum(bins[k]) / len(bins[k]) for k in keys]


def figure_panels(fig: Figure, run: RunResult) -> list[dict[str, Any]]:
    """The panels of one figure (the ``plot_panels`` format): one line per selected flow."""
    labels = {f["id"]: f.get("label") or f["protocol"] for f in run.summary.get("flows", [])}
    ids = fig.flows if fig.flows is not None else sorted(labels)
    panels = []
    for name in fig.plot:
        column, ylabel, scale = PANELS[name]
        lines = []
        for fid in ids:
            try:
                t, v = run.flow_column(fid, column)
            except MetricError:
                continue
            t, v = _smooth(t, v, fig.smooth_s())
            pts = [(x, y * scale) for x, y in zip(t, v, strict=True) if not math.isnan(y)]
            if pts:
                lines.append(
                    (f"{fid} {labels.get(fid, '')}", [x for x, _ in pts], [y for _, y in pts])
                )
        if not lines:
            raise MetricError(f"figure {fig.id}: no {column!r} series for flows {ids}")
        panels.append({"ylabel": ylabel, "lines": lines})
    return panels


def draw_figures(figures: list[Figure], dest: Path, runner: Runner = default_runner) -> list[Path]:
    """Run each figure's scenario and write ``dest/ID.png`` with the Rust renderer."""
    from tfcc import _core
    from tfcc.fonts import font_path

    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for fig in figures:
        run = runner(fig.scenario, list(fig.set), fig.seed)
        if not isinstance(run, RunResult):
            raise MetricError(f"figure {fig.id}: the runner returned no time series")
        panels = figure_panels(fig, run)
        out = dest / f"{fig.id}.png"
        _core.plot_panels(
            str(out),
            panels,
            title=fig.title,
            xlabel="time (s)",
            height=110 + 330 * len(panels),
            font=font_path(),
        )
        written.append(out)
    return written


def check_out(out: Path) -> str | None:
    """Why ``out`` cannot take a reproduction's results, or None; checked before any run starts.
    ``write_results`` replaces ``out`` as a whole, so an existing directory must be empty or an
    earlier reproduction's (it holds ``results.json``), never a directory of the user's files."""
    import tempfile

    out = out.resolve()
    if out.exists() and not out.is_dir():
        return f"--out {out}: exists and is not a directory"
    if out.is_dir() and not (out / "results.json").exists() and any(out.iterdir()):
        return (
            f"--out {out}: exists and holds files that are not a reproduction's results "
            "(no results.json); choose another --out (it is replaced as a whole)"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        Path(tempfile.mkdtemp(prefix=f".{out.name}.probe.", dir=out.parent)).rmdir()
    except OSError as e:
        return f"--out {out}: cannot write there ({e.strerror})"
    return None


def write_results(
    out: Path,
    title: str,
    outcomes: list[Outcome],
    figures: list[Figure] | None = None,
    runner: Runner = default_runner,
) -> None:
    """Write ``results.json``, ``results.md`` and the figures (``figures/ID.png``) into ``out``
    all at once: a temporary directory beside it is renamed into place, so an interrupted run
    leaves no half-written results."""
    import shutil
    import tempfile

    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "results.json").write_text(to_json(outcomes))
        (tmp / "results.md").write_text(to_markdown(title, outcomes))
        if figures:
            draw_figures(figures, tmp / "figures", runner)
        if out.exists():
            if (why := check_out(out)) is not None:
                raise OSError(why)
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
