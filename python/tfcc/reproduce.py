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
    after = "80s"                 # optional: draw only from this time on

The drawing is the Rust renderer (``tfcc._core.plot_panels``, as for ``tfcc run``), so no
matplotlib is imported.

Loss of precision of ``--quick``
--------------------------------

Where the thesis' runs are too long for ``--quick``, a claim file holds a *quick stand-in*: a
claim marked ``quick = true`` that names the full claim it stands for, run shorter or with fewer
seeds::

    [[claims]]
    id = "e32-warc-cv0.5-quick"
    stands_for = "e32-warc-cv0.5"   # the full claim: same metric, args, target and tolerance
    set = [..., "duration=600s", "measure_from=100s"]
    seeds = [1]
    quick = true

The key is explicit (every stand-in's id is its full claim's id with ``-quick`` appended, and the
tests hold the files to that, but the key is what the code reads). The loader refuses a stand-in
whose full claim is missing, is itself a stand-in, or differs in anything but the measurement
window (``duration``/``measure_from`` overrides) and the seeds: metric, ``args``, target,
tolerance, bounds, scenario, the other overrides, ``variants`` and ``versus`` must be equal.

When one run holds both claims (the full set), :func:`quick_pairs` measures the quick value
``Q`` against the full claim's mean ``F`` with this model, fixed before any value was seen:

- a per-seed value is a time average over the run's measurement window ``W`` (from
  ``measure_from``, or the metric's ``after`` argument, to ``duration``; the scenario's values
  unless the claim's ``set`` overrides them) of a stationary process with a correlation time
  short against ``W``: its variance is ``c / |W|``;
- runs of different seeds are independent; two runs of the same seed (same scenario and other
  overrides) follow the same sample path over their common time (the simulator is
  deterministic and causal: a run's first ``t`` seconds do not depend on its end), so
  ``Cov = c·|A ∩ B| / (|A|·|B|)`` for windows ``A`` and ``B``;
- ``c = s² · |W_full|``, with ``s`` the sample standard deviation (n − 1) of the full claim's
  ``n`` per-seed values.

So one quick seed over ``W_q`` has standard deviation ``s · √(|W_full| / |W_q|)``, a mean of ``m``
quick seeds that divided by ``√m``, and ``z = (Q − F) / sd(Q − F)`` with
``Var(Q − F) = Var(Q) + Var(F) − 2 Cov(Q, F)`` (the covariance from the seeds both claims run).
The *stated loss of precision* of a stand-in is ``sd(Q) / sd(F) = √(n·|W_full| / (m·|W_q|))``,
known from the claim file alone (:func:`precision_factor`); the *test* is ``|z| ≤`` the bound
(:data:`QUICK_Z_BOUND`, 3). Outside it the quick *design* fails: the stand-in does not measure
what its full claim measures within the stated precision (a start-up transient the shorter run
keeps, say); that says nothing about the thesis' claim, which the full claim checks. With ``s``
from ``n`` seeds, ``z`` is close to Student's t with ``n − 1`` degrees of freedom, so a sound
design still exceeds 3 with probability ≈ 9.5 % (3 seeds) or ≈ 4 % (5 seeds). A full claim
of one seed, or whose seeds all measure the same value, has no seed-to-seed spread: its pair
reports the difference and no ``z`` (untested). A stand-in that is literally one of its full
claim's runs (same window, a subset of the seeds) must measure exactly those runs' values
(checked); with one quick seed its ``|z|`` cannot exceed ``√(n − 1)``, so there the test only
shows how typical that seed is among the full claim's.

Do the seeds settle the verdict?
--------------------------------

A claim's ``measured`` is the mean of its per-seed values (:func:`evaluate`): each the metric on
one seed's runs, averaged over the variants, and for a ``versus`` claim that seed's *ratio* (the
ratio is taken per seed, then averaged: the mean of per-seed ratios, not a ratio of means). The
seeds' runs are independent, so every claim with ``n ≥ 2`` per-seed values has a 95 %
confidence interval of exactly that mean, Student's t with ``n − 1`` degrees of freedom
(:meth:`Outcome.ci95`, :func:`tfcc.confidence.mean_ci`); a trace claim's seeds pick its
synthetic traces and count the same way. A claim of one seed has none (no spread to estimate),
nor has one whose metric failed (no value). Seeds that all measure the same value give an
interval of width 0: the seed does not change what the claim measures.

The verdict is *settled by the seeds* (:meth:`Outcome.settled`) when the interval lies on the
verdict's side of the target's bounds: inside the accepted interval for a pass, wholly outside
it for a failure. A pass whose interval leaves the band, or a failure whose interval reaches it
(touching a bound counts), is not: more seeds could turn it. The marking reports and changes
nothing: targets, tolerances, seeds and the pass rule stay as the claim file says. With three
seeds ``t(0.975, 2) = 4.30`` makes the interval wide, and the t interval assumes per-seed
values roughly normal, which three seeds cannot check: "settled" is a statement about the seeds
run, not a proof.

How robust is a verdict? ``--seeds``
-----------------------------------

``tfcc reproduce NAME --seeds SPEC`` replaces every claim's seed list with ``SPEC`` for that run
(:func:`with_seeds`; SPEC as ``tfcc sweep --seeds`` reads it, :func:`tfcc.sweep.parse_seeds`:
``1-10``, ``1,2,7``, or a count ``N`` for the seeds 1 to N, the claim files' seeds all counting
from 1). A ``versus`` claim's two configurations and a stand-in and its full claim all take the
same list, so per-seed ratios still pair runs of one seed. A figure keeps its ``seed``: it
draws one run, as the thesis' figure does, and says nothing about a verdict. The run records
the list (``run.json``'s ``seeds``, each claim's ``seeds`` in ``results.json``, the run line of
``results.md``). Such a run measures how robust a verdict is, at more seeds than the claim file
spends; the verdicts of record stay those at the claim files' seeds, so ``--update-doc``
refuses it and the counts table (:func:`counts_table`) will not take it, and
:func:`seeds_table` sets it beside a run at the claim files' seeds.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tfcc import _core
from tfcc.confidence import mean_ci
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
    #: A quick stand-in: the id of the full claim it stands for (module doc, "Loss of
    #: precision of ``--quick``").
    stands_for: str | None = None

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
    after: str | None = None

    def smooth_s(self) -> float:
        """The smoothing window in seconds (0 for none), from ``"500ms"``/``"2s"``."""
        return _figure_seconds("smooth", self.smooth)

    def after_s(self) -> float:
        """The time from which the figure draws (0 for the whole run)."""
        return _figure_seconds("after", self.after)


def _figure_seconds(key: str, text: str | None) -> float:
    """A figure's duration key in seconds (0 when absent), from ``"500ms"``/``"2s"``."""
    if not text:
        return 0.0
    text = text.strip()
    for unit, scale in (("ms", 1e-3), ("s", 1.0)):
        if text.endswith(unit):
            try:
                value = float(text[: -len(unit)])
            except ValueError:
                break
            if value >= 0:
                return value * scale
    raise ValueError(f'{key} must be a duration like "1s" or "500ms", got {text!r}')


@dataclass
class Outcome:
    claim: Claim
    measured: float | None
    per_seed: list[float]
    passed: bool
    error: str = ""

    def ci95(self) -> tuple[float, float] | None:
        """The 95 % confidence interval of ``measured``, the mean of the per-seed values
        (module doc, "Do the seeds settle the verdict?"), or None: one seed, no value, or
        per-seed values that are not all there or not finite (a metric that failed part-way
        leaves fewer values than seeds, and their mean is not ``measured``)."""
        values = self.per_seed
        if (
            self.measured is None
            or len(values) < 2
            or len(values) != len(self.claim.seeds)
            or not all(math.isfinite(v) for v in values)
        ):
            return None
        _, half = mean_ci(values)
        # centred on ``measured`` itself, the value the verdict was drawn from
        return self.measured - half, self.measured + half

    def settled(self) -> bool | None:
        """Whether the seeds settle the verdict: a pass whose interval lies within the target's
        bounds, a failure whose interval lies wholly outside them; None without an interval."""
        ci = self.ci95()
        if ci is None:
            return None
        lo, hi = self.claim.bounds()
        if self.passed:
            return lo <= ci[0] and ci[1] <= hi
        return ci[1] < lo or ci[0] > hi


#: The words beside a verdict the seeds do not settle (tables, console, pages).
UNSETTLED = "(seeds do not settle)"


def settle_counts(outcomes: list[Outcome]) -> tuple[int, int, int]:
    """(settled, not settled, without an interval) over ``outcomes``."""
    states = [o.settled() for o in outcomes]
    return states.count(True), states.count(False), states.count(None)


def with_seeds(claims: list[Claim], seeds: list[int]) -> list[Claim]:
    """Copies of ``claims`` measuring ``seeds`` instead of their own (module doc, "How robust
    is a verdict?"); the claims themselves are left as the claim file holds them."""
    from dataclasses import replace

    return [replace(c, seeds=list(seeds)) for c in claims]


def describe_verdicts(outcomes: list[Outcome]) -> str:
    """The run's summary: ``65 of 82 claims pass; verdicts settled by their seeds: 40, not
    settled: 20, no interval (one seed or no value): 22``."""
    passed = sum(o.passed for o in outcomes)
    settled, unsettled, none = settle_counts(outcomes)
    return (
        f"{passed} of {len(outcomes)} claims pass; verdicts settled by their seeds: {settled}, "
        f"not settled: {unsettled}, no interval (one seed or no value): {none}"
    )


def available() -> list[str]:
    return sorted(p.stem for p in CLAIMS_DIR.glob("*.toml"))


def load(name_or_path: str) -> tuple[str, list[Claim]]:
    """Read a claim file by reproduction name or path."""
    title, claims, _ = load_all(name_or_path)
    return title, claims


def _figures(path: Path, doc: Mapping[str, Any]) -> list[Figure]:
    figures = []
    entries = doc.get("figures", [])
    if not isinstance(entries, list) or not all(isinstance(f, dict) for f in entries):
        raise ClaimFileError(f"{path}: figures: expected [[figures]] tables")
    for i, f in enumerate(entries):
        where = f"{path}: figures[{i}]"
        f = dict(f)
        missing = {"id", "title", "scenario"} - set(f)
        if missing:
            raise ClaimFileError(f"{where}: missing {', '.join(sorted(missing))}")
        _check_kinds(where, f, _FIGURE_KINDS)
        if "seed" in f:
            _seed_list(f"{where}.seed", [f["seed"]])
        if f.get("flows") is not None and not (
            isinstance(f["flows"], list)
            and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in f["flows"])
        ):
            raise ClaimFileError(f"{where}.flows: expected a list of flow numbers")
        f["scenario"] = (path.parent / f["scenario"]).resolve()
        try:
            fig = Figure(**f)
            fig.smooth_s()
            fig.after_s()
        except (TypeError, ValueError) as e:
            raise ClaimFileError(f"{where}: {e}") from None
        unknown = [p for p in fig.plot if p not in PANELS]
        if unknown or not fig.plot:
            raise ClaimFileError(
                f"{where}.plot: unknown panel {unknown} (known: {', '.join(PANELS)})"
            )
        figures.append(fig)
    return figures


#: What each key of a claim or figure holds, as the file writes it (before ``scenario`` becomes a
#: path): a claim file is user input, and a value of the wrong kind was a Python traceback
#: deep in the run (``id = [1]``, ``min = ["x"]``, ``scenario = true``, ``seeds = []``) instead
#: of one message naming the key.
_TEXT, _NUMBER, _TEXTS, _TABLE, _FLAG = (
    "a string",
    "a number",
    "a list of strings",
    "a table",
    "true or false",
)
_CLAIM_KINDS: dict[str, str] = {
    **dict.fromkeys(
        ("id", "thesis", "section", "claim", "metric", "note", "stands_for", "scenario"), _TEXT
    ),
    **dict.fromkeys(("target", "rel", "abs", "min", "max"), _NUMBER),
    "set": _TEXTS,
    "args": _TABLE,
    **dict.fromkeys(("quick", "testbed"), _FLAG),
}
_FIGURE_KINDS: dict[str, str] = {
    **dict.fromkeys(("id", "title", "scenario", "smooth", "after"), _TEXT),
    "set": _TEXTS,
    "plot": _TEXTS,
}


def _is(kind: str, v: Any) -> bool:
    if kind == _TEXT:
        return isinstance(v, str)
    if kind == _NUMBER:
        return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    if kind == _TEXTS:
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if kind == _TABLE:
        return isinstance(v, dict)
    return isinstance(v, bool)


def _check_kinds(where: str, entry: Mapping[str, Any], kinds: Mapping[str, str]) -> None:
    """One message for the first key whose value is not of its kind (unknown keys are left to
    the dataclass, which names them)."""
    for key, kind in kinds.items():
        if key in entry and not _is(kind, entry[key]):
            raise ClaimFileError(f"{where}.{key}: expected {kind}, got {entry[key]!r}")


def _seed_list(where: str, v: Any) -> None:
    from tfcc.sweep import MAX_SEED, seed_range_error

    if not isinstance(v, list) or not v:
        raise ClaimFileError(f"{where}: expected a non-empty list of seeds, got {v!r}")
    for s in v:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= MAX_SEED:
            raise ClaimFileError(f"{where}: {seed_range_error(repr(s))}")


def _check_claim(where: str, c: Mapping[str, Any]) -> None:
    _check_kinds(where, c, _CLAIM_KINDS)
    if "seeds" in c:
        _seed_list(f"{where}.seeds", c["seeds"])
    for key in ("rel", "abs"):
        if c.get(key) is not None and c[key] < 0:
            raise ClaimFileError(f"{where}.tolerance.{key}: must not be negative, got {c[key]!r}")
    variants = c.get("variants")
    if variants is not None and (
        not isinstance(variants, list)
        or not variants
        or not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in variants)
    ):
        raise ClaimFileError(f"{where}.variants: expected a non-empty list of lists of strings")
    versus = c.get("versus")
    if versus is not None and (
        not isinstance(versus, dict)
        or set(versus) - {"set", "args"}
        or not _is(_TEXTS, versus.get("set", []))
        or not _is(_TABLE, versus.get("args", {}))
    ):
        raise ClaimFileError(f"{where}.versus: expected {{ set = [...], args = {{...}} }}")


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
        doc = _core.parse_toml(path.read_text())
    except ValueError as e:
        raise ClaimFileError(f"{path}: {e}") from None
    claims = []
    seen: dict[str, int] = {}
    entries = doc.get("claims", [])
    if not isinstance(entries, list) or not all(isinstance(c, dict) for c in entries):
        raise ClaimFileError(f"{path}: claims: expected [[claims]] tables")
    for i, c in enumerate(entries):
        where = f"{path}: claims[{i}]"
        c = dict(c)
        tol = c.pop("tolerance", {})
        if not isinstance(tol, dict) or set(tol) - {"rel", "abs"}:
            raise ClaimFileError(f"{where}.tolerance: expected {{ rel = ... }} or {{ abs = ... }}")
        c.update(tol)
        missing = {"id", "thesis", "section", "claim", "metric"} - set(c)
        if missing:
            raise ClaimFileError(f"{where}: missing {', '.join(sorted(missing))}")
        _check_claim(where, c)
        if c["metric"] not in METRICS:
            raise ClaimFileError(
                f"{where}.metric: unknown metric {c['metric']!r} (known: {', '.join(METRICS)})"
            )
        if c["id"] in seen:
            raise ClaimFileError(f"{where}.id: {c['id']!r} is also claims[{seen[c['id']]}]'s")
        seen[c["id"]] = i
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
    _check_stand_ins(path, claims)
    return str(doc.get("title", path.stem)), claims, _figures(path, doc)


#: The overrides a quick stand-in may change against its full claim: the measurement window.
WINDOW_KEYS = ("duration", "measure_from")


def _other_overrides(claim: Claim) -> list[str]:
    return [o for o in claim.set if o.split("=", 1)[0].strip() not in WINDOW_KEYS]


def _check_stand_ins(path: Path, claims: list[Claim]) -> None:
    """Every ``stands_for`` names a full claim of the file that the stand-in repeats in
    everything but its window and seeds (module doc)."""
    by_id = {c.id: c for c in claims}
    same = ("metric", "args", "target", "rel", "abs", "min", "max", "scenario")
    same += ("variants", "versus")
    for c in claims:
        if c.stands_for is None:
            continue
        where = f"{path}: claim {c.id}: stands_for = {c.stands_for!r}"
        full = by_id.get(c.stands_for)
        if full is None or full is c:
            raise ClaimFileError(f"{where}: no other claim of this file has that id")
        if full.stands_for is not None:
            raise ClaimFileError(f"{where}: that claim is itself a stand-in")
        if not c.quick:
            raise ClaimFileError(f"{where}: a stand-in is for --quick, it needs quick = true")
        differ = [k for k in same if getattr(c, k) != getattr(full, k)]
        if _other_overrides(c) != _other_overrides(full):
            differ.append(f"set (other than {'/'.join(WINDOW_KEYS)})")
        if differ:
            raise ClaimFileError(
                f"{where}: differs from it in {', '.join(differ)} (a stand-in may change "
                "only the measurement window and the seeds)"
            )


def default_runner(scenario: Path, overrides: list[str], seed: int) -> Mapping[str, Any]:
    """One simulator run as a :class:`~tfcc.metrics.RunResult` (summary, time series and, for a
    video run, the frame records, for a PTCP run its slots)."""
    from tfcc import _core

    r = _core.run_scenario(str(scenario), overrides, seed, None)
    return RunResult(
        r["summary"],
        r["flow_series"],
        r["link_series"],
        r.get("frame_series"),
        r.get("ptcp_slots"),
    )


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


#: The stated precision of a quick stand-in, fixed before any pair was measured: its value lies
#: within this many standard deviations of ``Q − F`` of its full claim's mean (module doc).
QUICK_Z_BOUND = 3.0

_DUR_UNITS = (
    ("ns", 1e-9),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ms", 1e-3),
    ("min", 60.0),
    ("h", 3600.0),
    ("s", 1.0),
)


def _seconds(value: object, what: str) -> float:
    """A scenario duration (``"600s"``, ``"500ms"``, ``"2min"`` or a number of seconds)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        text = value.strip().strip('"')
        for unit, scale in _DUR_UNITS:
            if text.endswith(unit):
                try:
                    return float(text[: -len(unit)]) * scale
                except ValueError:
                    break
    raise ValueError(f"{what}: not a duration: {value!r}")


def measurement_window(claim: Claim) -> tuple[float, float]:
    """``(start, end)`` in seconds of the window a per-seed value of ``claim`` averages over:
    ``measure_from`` (or the metric's ``after`` argument, which the time-series metrics use
    instead) to ``duration``, from the claim's ``set`` or else its scenario file."""
    if claim.scenario is None:
        raise ValueError(f"{claim.id}: a trace claim runs nothing, so has no window")
    try:
        doc = _core.parse_toml(claim.scenario.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{claim.id}: cannot read {claim.scenario} ({e})") from None
    values: dict[str, object] = {k: doc.get(k) for k in WINDOW_KEYS}
    for o in claim.set:
        key, _, value = o.partition("=")
        if key.strip() in WINDOW_KEYS:
            values[key.strip()] = value
    if values["duration"] is None:
        raise ValueError(f"{claim.id}: no duration in {claim.scenario.name} or its set")
    end = _seconds(values["duration"], f"{claim.id}: duration")
    start = 0.0
    if values["measure_from"] is not None:
        start = _seconds(values["measure_from"], f"{claim.id}: measure_from")
    if "after" in claim.args:
        start = float(claim.args["after"])
    if not 0.0 <= start < end:
        raise ValueError(f"{claim.id}: empty measurement window [{start:g} s, {end:g} s]")
    return start, end


def precision_factor(quick: Claim, full: Claim) -> float:
    """The stated loss of precision of a stand-in: ``sd(Q) / sd(F)``, the quick value's
    standard deviation over that of the full claim's mean, ``√(n·|W_full| / (m·|W_q|))``."""
    qa, qb = measurement_window(quick)
    fa, fb = measurement_window(full)
    return math.sqrt(len(full.seeds) * (fb - fa) / (len(quick.seeds) * (qb - qa)))


@dataclass
class QuickPair:
    """A quick stand-in measured beside its full claim (module doc)."""

    quick: str
    full: str
    quick_value: float | None
    full_mean: float | None
    #: The full claim's per-seed sample standard deviation (None with one seed).
    full_sd: float | None
    quick_seeds: int
    full_seeds: int
    quick_window_s: float
    full_window_s: float
    #: Stated: ``sd(Q) / sd(F)``.
    spread: float
    #: ``sd(Q − F)`` under the model, in the metric's units.
    sd_diff: float | None
    z: float | None
    bound: float
    #: True within the bound, False outside it (the quick design fails), None if not tested.
    ok: bool | None
    note: str = ""


def quick_pair(quick: Outcome, full: Outcome, bound: float = QUICK_Z_BOUND) -> QuickPair:
    """``z`` of the stand-in ``quick`` against its full claim's outcome ``full``."""
    qc, fc = quick.claim, full.claim
    qa, qb = measurement_window(qc)
    fa, fb = measurement_window(fc)
    wq, wf = qb - qa, fb - fa
    m, n = len(qc.seeds), len(fc.seeds)
    pair = QuickPair(
        qc.id, fc.id, quick.measured, full.measured, None, m, n, wq, wf,
        math.sqrt(n * wf / (m * wq)), None, None, bound, None,
    )  # fmt: skip
    if quick.measured is None or full.measured is None:
        which = " and ".join(o.claim.id for o in (quick, full) if o.measured is None)
        pair.note = f"not tested: no value for {which}"
        return pair
    q, f = quick.measured, full.measured
    shared = [s for s in qc.seeds if s in fc.seeds]
    if (qa, qb) == (fa, fb) and len(shared) == m and len(full.per_seed) == n:
        # the quick runs are some of the full claim's runs: it must measure their values
        same = sum(full.per_seed[fc.seeds.index(s)] for s in shared) / m
        if abs(same - q) > 1e-9 * max(1.0, abs(q)):
            pair.ok = False
            pair.note = (
                f"the quick runs are the full claim's runs of seeds {shared}, which measured "
                f"{same:.6g}, but the quick claim measured {q:.6g}: the runs are not repeatable"
            )
            return pair
    if n < 2 or len(full.per_seed) < 2:
        pair.note = (
            f"not tested: the full claim has one seed, no seed-to-seed spread "
            f"(difference {q - f:+.4g})"
        )
        return pair
    mean = sum(full.per_seed) / len(full.per_seed)
    sd = math.sqrt(sum((x - mean) ** 2 for x in full.per_seed) / (len(full.per_seed) - 1))
    pair.full_sd = sd
    if sd == 0.0:
        pair.note = (
            f"not tested: the full claim's {n} seeds measured the same value (no spread; "
            f"difference {q - f:+.4g})"
        )
        return pair
    c = sd * sd * wf
    overlap = max(0.0, min(qb, fb) - max(qa, fa))
    var = c / (m * wq) + c / (n * wf) - 2 * len(shared) * c * overlap / (wq * wf * m * n)
    pair.sd_diff = math.sqrt(max(var, 0.0))
    if pair.sd_diff == 0.0:
        pair.note = "not tested: the model leaves the difference no spread"
        return pair
    pair.z = (q - f) / pair.sd_diff
    pair.ok = abs(pair.z) <= bound
    if not pair.ok:
        pair.note = (
            f"quick design fails: {qc.id} measured {q:.4g}, {abs(pair.z):.2f} sd from the "
            f"full claim's {f:.4g} (stated: z within ±{bound:g}); the shorter runs do not measure "
            f"what {fc.id} measures (not a verdict on the thesis' claim)"
        )
    return pair


def quick_pairs(outcomes: list[Outcome], bound: float = QUICK_Z_BOUND) -> list[QuickPair]:
    """Every stand-in of ``outcomes`` whose full claim is there too (a full run), in order."""
    by_id = {o.claim.id: o for o in outcomes}
    pairs = []
    for o in outcomes:
        full = by_id.get(o.claim.stands_for or "")
        if full is None:
            continue
        try:
            pairs.append(quick_pair(o, full, bound))
        except ValueError as e:
            pair = QuickPair(
                o.claim.id, full.claim.id, o.measured, full.measured, None,
                len(o.claim.seeds), len(full.claim.seeds), 0.0, 0.0, math.nan,
                None, None, bound, None, f"not tested: {e}",
            )  # fmt: skip
            pairs.append(pair)
    return pairs


def to_json(outcomes: list[Outcome]) -> str:
    pairs = {p.quick: p for p in quick_pairs(outcomes)}
    rows = []
    for o in outcomes:
        d = asdict(o.claim)
        d["scenario"] = None if o.claim.scenario is None else str(o.claim.scenario)
        row = {
            "claim": d,
            "measured": o.measured,
            "per_seed": o.per_seed,
            "passed": o.passed,
            "error": o.error,
            "ci95": None if (ci := o.ci95()) is None else list(ci),
            "settled": o.settled(),
        }
        if o.claim.id in pairs:
            p = asdict(pairs[o.claim.id])
            row["quick_precision"] = {k: (None if v != v else v) for k, v in p.items()}
        rows.append(row)
    return json.dumps(rows, indent=2) + "\n"


def precision_table(pairs: list[QuickPair]) -> str:
    """The "Loss of precision of --quick" table: each stand-in beside its full claim."""
    lines = [
        "| quick claim | stands for | quick | full mean | full sd per seed "
        "| seeds quick/full | window quick/full | stated spread | z | result |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def g(v: float | None) -> str:
        return "—" if v is None or v != v else f"{v:.4g}"

    for p in pairs:
        if p.ok is None:
            result = p.note
        elif p.ok:
            result = f"within (z in ±{p.bound:g})"
        else:
            result = f"**QUICK DESIGN FAILS** {p.note}"
        z = "—" if p.z is None else f"{p.z:+.2f}"
        lines.append(
            f"| {p.quick} | {p.full} | {g(p.quick_value)} | {g(p.full_mean)} | {g(p.full_sd)} "
            f"| {p.quick_seeds}/{p.full_seeds} | {p.quick_window_s:g} s/{p.full_window_s:g} s "
            f"| {g(p.spread)}× | {z} | {result} |"
        )
    return "\n".join(lines) + "\n"


def precision_section(pairs: list[QuickPair]) -> str:
    """``results.md``'s section on the stand-ins (empty without pairs)."""
    if not pairs:
        return ""
    tested = [p for p in pairs if p.ok is not None]
    failed = [p.quick for p in pairs if p.ok is False]
    verdict = f"{len(tested) - len(failed)} of {len(tested)} tested stand-ins within the bound"
    if failed:
        verdict += f"; the quick design fails for {', '.join(failed)}"
    return (
        "\n## Loss of precision of --quick\n\n"
        "Each quick stand-in against the full claim it stands for (model: `tfcc.reproduce`'s "
        "module doc): *stated spread* = sd(quick) / sd(full mean) = √(n·T_full / (m·T_quick)); "
        "z = (quick − full mean) / sd(quick − full mean), with the full claim's per-seed sd "
        f"scaled by the windows and seeds; stated precision: z within ±{QUICK_Z_BOUND:g}. "
        f"{verdict}.\n\n" + precision_table(pairs)
    )


def to_markdown(title: str, outcomes: list[Outcome], info: RunInfo | None = None) -> str:
    """``results.md``: the title, with ``info`` the line naming the run (its command, so a
    ``--seeds`` run says so), :func:`results_table` and, in a full run with quick stand-ins,
    :func:`precision_section`."""
    run = "" if info is None else f"`{info.command()}` ({info.describe()}).\n\n"
    return (
        f"# {title}\n\n{run}" + results_table(outcomes) + precision_section(quick_pairs(outcomes))
    )


def results_table(outcomes: list[Outcome]) -> str:
    """The table committed under ``docs/reproductions/``: every claim with its measured value
    (``results.md`` and the marked block of a page, :func:`update_page`, both use it)."""
    lines = [
        "| claim | source | statement | target | measured | per seed | 95 % CI | result |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        measured = show_measured(o)
        seeds = ", ".join(f"{v:.4g}" for v in o.per_seed)
        result = "pass" if o.passed else "**FAIL**"
        if o.settled() is False:
            result += f" {UNSETTLED}"
        result = f"{result} {o.error}".strip()
        c = o.claim
        lines.append(
            f"| {c.id} | {c.thesis} {c.section} | {c.claim} | {c.describe_target()} "
            f"| {measured} | {seeds} | {describe_ci(o)} | {result} |"
        )
    return "\n".join(lines) + "\n"


def show_measured(o: Outcome) -> str:
    """The measured value at 4 significant digits, or at as many more as it takes for the
    shown value to lie on the same side of the accepted band as the value: 1.000003 against
    "≤ 0.999" shows as 1.000003, not as a failing "1" that reads as if it were the bound's."""
    v = o.measured
    if v is None:
        return "—"
    lo, hi = o.claim.bounds()

    def side(x: float) -> int:
        return -1 if x < lo else 1 if x > hi else 0

    for digits in range(4, 16):
        shown = f"{v:.{digits}g}"
        if side(float(shown)) == side(v):
            return shown
    return repr(v)


def describe_ci(o: Outcome) -> str:
    """The interval as the tables show it, ``[0.6503, 2.234]``, or ``—`` without one."""
    ci = o.ci95()
    return "—" if ci is None else f"[{ci[0]:.4g}, {ci[1]:.4g}]"


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
            after = fig.after_s()
            pts = [
                (x, y * scale)
                for x, y in zip(t, v, strict=True)
                if not math.isnan(y) and x >= after - 1e-9
            ]
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


def check_runs(claims: list[Claim], figures: list[Figure], backend: str = "sim") -> int:
    """Check every run the claims and figures would make, without running it: each distinct
    (scenario, overrides) through the simulator's own scenario check (``tfcc check``), so a
    claim file's ``set`` that the scenario refuses is found before a run of hours. With
    ``backend="testbed"`` the claims' runs go through the testbed's check instead (what
    ``tfcc-run --backend testbed`` refuses, e.g. a video source on a TCP flow), so a claim
    marked ``testbed = true`` that the testbed cannot run is found without root and before
    minutes of real time; figures are drawn from simulator runs on either backend. Returns how
    many distinct runs were checked; raises :class:`ClaimFileError` naming the claim."""
    seen: set[tuple[Path, tuple[str, ...], str]] = set()
    entries: list[tuple[str, Path | None, list[list[str]], str]] = [
        (f"claim {c.id}", c.scenario, [o for o, _ in c.runs()], backend) for c in claims
    ]
    entries += [(f"figure {f.id}", f.scenario, [list(f.set)], "sim") for f in figures]
    for what, scenario, sets, on in entries:
        if scenario is None:
            continue
        for overrides in sets:
            key = (scenario, tuple(overrides), on)
            if key in seen:
                continue
            seen.add(key)
            try:
                _core.check_scenario(str(scenario), overrides, on)
            except _core.ScenarioError as e:
                raise ClaimFileError(f"{what}: {e}") from None
    return len(seen)


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
    info: RunInfo | None = None,
) -> None:
    """Write ``results.json``, ``results.md``, ``run.json`` (with ``info``: which run, for
    the pages' generated tables) and the figures (``figures/ID.png``) into ``out`` all at once:
    a temporary directory beside it is renamed into place, so an interrupted run leaves no
    half-written results."""
    import shutil
    import tempfile

    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "results.json").write_text(to_json(outcomes))
        (tmp / "results.md").write_text(to_markdown(title, outcomes, info))
        if info is not None:
            meta = {**asdict(info), "title": title}
            meta |= {"passed": sum(o.passed for o in outcomes), "claims": len(outcomes)}
            settled, unsettled, _ = settle_counts(outcomes)
            meta |= {"settled": settled, "unsettled": unsettled}
            (tmp / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
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


# --- Generated blocks of the reproduction pages (``tfcc reproduce NAME --update-doc PAGE``) ---

#: The lines around a page's generated results block: each alone on its line, once per page.
RESULTS_MARKERS = ("<!-- results:begin -->", "<!-- results:end -->")
#: The lines around the counts table of ``docs/reproductions/README.md``.
COUNTS_MARKERS = ("<!-- counts:begin -->", "<!-- counts:end -->")

#: The rows of ``docs/reproductions/README.md``'s counts table, in order: reproduction name and
#: the thesis (chapter) it covers.
README_ROWS: tuple[tuple[str, str], ...] = (
    ("tfrc", "004 TFRC (Widmer)"),
    ("tfwc", "002 TFWC (Choi)"),
    ("ttfwc", "000 TTFWC"),
    ("taxonomy", "003 Ch. 2, the eight-scheme taxonomy"),
    ("warc", "003 Ch. 3, WARC"),
    ("ptcp", "001 predictable-throughput TCP"),
    ("msfrs", "003 Ch. 4, MSF-RS"),
)


#: Why a ``--seeds`` run fills no page: a page's table is the verdicts of record.
SEEDS_NOT_A_PAGE = (
    "a --seeds run fills no page: a page shows the claim files' seeds, the verdicts of record "
    "(scripts/reproduction_counts.py --seeds reports a --seeds run beside them)"
)


class PageError(ValueError):
    """A page cannot take a generated block (markers missing, duplicated or out of order, or
    the page unreadable); the page is left as it was."""


@dataclass
class RunInfo:
    """What identifies one ``tfcc reproduce`` run: written as ``run.json`` beside
    ``results.json`` and as the line above a page's generated table.

    ``wall_s`` is this command's wall time, start to end. With ``--runs DIR`` a command reuses
    the runs an earlier one left there, and its wall time is then mostly reading them back: it
    says so with ``runs_reused`` (of ``runs_total``, the simulator runs the claims use) and
    gives ``runs_wall_s``, the wall time those runs took when they were made
    (:class:`tfcc.sweep.ClaimRuns`; ``None`` when unknown). Both are 0 / ``None`` where no runs
    directory is involved (``--serial``, the testbed) and in ``run.json`` files written before
    they existed."""

    name: str
    quick: bool
    started: str
    commit: str
    wall_s: float
    backend: str = "sim"
    runs_total: int = 0
    runs_reused: int = 0
    runs_wall_s: float | None = None
    #: ``--seeds``: the seeds every claim measured instead of its own (None: the claim files'
    #: seeds, as in every ``run.json`` written before the option).
    seeds: list[int] | None = None
    #: ``--backend testbed``: how closely the runs kept their delays
    #: (:class:`tfcc.testbed.Timing` as a dict; None on the simulator and in ``run.json``
    #: files written before it existed).
    testbed_timing: dict[str, Any] | None = None

    def command(self) -> str:
        from tfcc.sweep import format_seeds

        flags = " --quick" if self.quick else ""
        if self.backend != "sim":
            flags += f" --backend {self.backend}"
        if self.seeds is not None:
            flags += f" --seeds {format_seeds(self.seeds)}"
        return f"tfcc reproduce {self.name}{flags}"

    def describe(self) -> str:
        from tfcc.sweep import format_seeds

        kind = "`--quick` set" if self.quick else "full set"
        if self.seeds is not None:
            kind += f" at seeds {format_seeds(self.seeds)} for every claim (not the claim files')"
        text = f"run {self.started}, commit {self.commit}, {kind}, wall time {self.wall()}"
        if self.testbed_timing is not None:
            from tfcc.testbed import Timing

            text += f"; {Timing(**self.testbed_timing).describe()}"
        return text

    def wall(self) -> str:
        """The wall time as the pages show it, saying when runs were reused and how long they
        took when made: ``4 s (12 of 12 runs reused, made in 1 min 05 s)``."""
        text = _wall(self.wall_s)
        if self.runs_reused:
            made = "made in an unknown time"
            if self.runs_wall_s is not None:
                made = f"made in {_wall(self.runs_wall_s)}"
            text += f" ({self.runs_reused} of {self.runs_total} runs reused, {made})"
        return text


def _wall(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    return f"{s // 60} min {s % 60:02d} s"


def utc_now() -> str:
    """The start of a run as the pages show it: ``2026-11-26 14:50 UTC``."""
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def run_commit(backend: str = "sim", where: Path = CLAIMS_DIR) -> str:
    """What made a reproduction's runs, as run.json and results.md record it: the checkout's
    commit (:func:`git_commit`), and for a testbed run whose ``tfcc-run`` comes from ``$TFCC_RUN``
    (``tfcc.testbed.native``) that executable too, which the commit does not describe (a helper's
    testbed set once recorded the package's commit while its runs were another build's)."""
    commit = git_commit(where)
    override = os.environ.get("TFCC_RUN") if backend == "testbed" else None
    return f"{commit} (tfcc-run from TFCC_RUN={override})" if override else commit


def git_commit(where: Path = CLAIMS_DIR) -> str:
    """``git rev-parse --short HEAD`` of the checkout holding ``where`` (by default the claim
    files this package reads), with a note when its code or claims differ from that commit
    (uncommitted changes under ``crates/``, ``python/`` or ``scenarios/``, or ``Cargo.lock``);
    ``unknown`` outside a git checkout or without git."""
    import subprocess

    def git(*args: str) -> str | None:
        try:
            r = subprocess.run(
                ["git", *args], cwd=where, capture_output=True, text=True, timeout=20
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None

    if not where.is_dir() or not (commit := git("rev-parse", "--short", "HEAD")):
        return "unknown"
    paths = (":/crates", ":/python", ":/scenarios", ":/Cargo.lock")
    changed = git("status", "--porcelain", "--untracked-files=no", "--", *paths)
    if changed:
        return f"{commit} (with uncommitted changes to crates/, python/, scenarios/ or Cargo.lock)"
    return commit


def results_block(info: RunInfo, outcomes: list[Outcome]) -> str:
    """A page's generated block: the line naming the run, then :func:`results_table`."""
    return (
        f"Generated by `{info.command()} --update-doc` ({info.describe()}): "
        f"{describe_verdicts(outcomes)}.\n\n" + results_table(outcomes)
    )


def _marked_span(lines: list[str], markers: tuple[str, str], page: object) -> tuple[int, int]:
    """The line indexes of the begin and end markers, each required exactly once and in order
    (a marker counts only alone on its line: a page may name it in its prose)."""
    begin, end = markers
    at = {m: [i for i, line in enumerate(lines) if line.strip() == m] for m in markers}
    for m in markers:
        if len(at[m]) != 1:
            found = "missing" if not at[m] else f"found {len(at[m])} times"
            raise PageError(
                f"{page}: the line {m} is {found} (wanted once, alone on its line, with "
                f"{begin} before {end}); the page is left as it is"
            )
    if at[begin][0] > at[end][0]:
        raise PageError(f"{page}: {end} comes before {begin}; the page is left as it is")
    return at[begin][0], at[end][0]


def replace_marked(
    text: str, body: str, markers: tuple[str, str] = RESULTS_MARKERS, page: object = "page"
) -> str:
    """``text`` with the lines between the markers replaced by ``body``; every other byte of
    ``text``, the marker lines included, is kept as it was."""
    lines = text.splitlines(keepends=True)
    b, e = _marked_span(lines, markers, page)
    newline = "\r\n" if lines[b].endswith("\r\n") else "\n"
    new = [line + newline for line in body.strip("\n").split("\n")]
    return "".join([*lines[: b + 1], *new, *lines[e:]])


def check_page(page: Path, markers: tuple[str, str] = RESULTS_MARKERS) -> str | None:
    """Why ``page`` cannot take a generated block, or None (checked before any run starts)."""
    import os

    try:
        text = page.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return f"{page}: cannot read it ({getattr(e, 'strerror', None) or e})"
    try:
        _marked_span(text.splitlines(keepends=True), markers, page)
    except PageError as e:
        return str(e)
    if not os.access(page, os.W_OK) or not os.access(page.parent, os.W_OK):
        return f"{page}: cannot write it"
    return None


def update_page(page: Path, body: str, markers: tuple[str, str] = RESULTS_MARKERS) -> None:
    """Replace the marked block of ``page`` with ``body`` (written beside it and renamed into
    place); raises :class:`PageError`, leaving the page untouched, when the markers are not
    there exactly once each."""
    import os
    import tempfile

    if (why := check_page(page, markers)) is not None:
        raise PageError(why)
    with open(page, encoding="utf-8", newline="") as f:
        text = f.read()
    new = replace_marked(text, body, markers, page)
    fd, tmp = tempfile.mkstemp(prefix=f".{page.name}.", dir=page.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(new)
        os.chmod(tmp, page.stat().st_mode & 0o7777)
        os.replace(tmp, page)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def status_mismatches(text: str, outcomes: list[Outcome]) -> list[str]:
    """What a page's hand-written failing-claim lines say that the run does not: the claims
    that fail but are not named in bold (``**id**``) in its ``## Status`` list, and those
    named there that pass. The lines outside the generated block are written from a run's
    evidence; after a new run this says which to revisit. Empty without a Status section.

    The list is the section's bullets with their indented continuation lines (blank lines
    between them included): an unindented paragraph beside it that names claims now passing,
    or a quoted old bullet, does not say they fail (tfrc.md's "Passing since" paragraph drew
    two false warnings)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Status"), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = lines[start + 1 : end]
    begin, stop = RESULTS_MARKERS
    if begin in (x.strip() for x in section) and stop in (x.strip() for x in section):
        b = [x.strip() for x in section].index(begin)
        e = [x.strip() for x in section].index(stop)
        section = section[:b] + section[e + 1 :]
    import re

    listed = []
    in_item = False
    for line in section:
        if re.match(r"\s*[-*] ", line):
            in_item = True
        elif line.strip() and not line.startswith((" ", "\t")):
            in_item = False
        if in_item:
            listed.append(line)
    named = set(re.findall(r"\*\*([^*\s]+)\*\*", "\n".join(listed)))
    ids = {o.claim.id: o.passed for o in outcomes}
    out = [
        f"{i} fails but the Status section does not name it"
        for i, passed in ids.items()
        if not passed and i not in named
    ]
    out += [
        f"{i} passes but the Status section names it as failing"
        for i in sorted(named)
        if ids.get(i)
    ]
    return out


def read_run(out: Path) -> tuple[RunInfo, list[dict[str, Any]]]:
    """A results directory's ``run.json`` and ``results.json`` (as :func:`write_results` wrote
    them with a :class:`RunInfo`)."""
    try:
        meta = json.loads((out / "run.json").read_text())
        rows = json.loads((out / "results.json").read_text())
    except FileNotFoundError as e:
        raise PageError(
            f"{out}: no {Path(e.filename).name} (written by `tfcc reproduce NAME --out DIR`)"
        ) from None
    except (OSError, json.JSONDecodeError) as e:
        raise PageError(f"{out}: cannot read the results ({e})") from None
    fields = {k: meta[k] for k in RunInfo.__dataclass_fields__ if k in meta}
    try:
        return RunInfo(**fields), rows
    except TypeError as e:
        raise PageError(f"{out}/run.json: {e}") from None


def counts_row(
    out: Path,
) -> tuple[RunInfo, tuple[int, int], tuple[int, int], tuple[int, int]]:
    """(run, (quick passes, quick claims), (passes, claims), (verdicts the seeds settle,
    claims with an interval)) of one full run. The ``--quick`` counts are those of the claims
    the claim file marks ``quick = true``: ``--quick`` only selects claims, each runs as in the
    full set, so a full run holds both counts. The settled count is the full set's
    (:meth:`Outcome.settled`, from the per-seed values of ``results.json``)."""
    info, outcomes, claims = _full_run(out)
    if info.seeds is not None:
        raise PageError(
            f"{out}: a run at `{info.command()}`; the counts are those at the claim files' "
            "seeds (scripts/reproduction_counts.py --seeds sets it beside one)"
        )
    passed = {o.claim.id: o.passed for o in outcomes}
    quick = [c.id for c in claims if c.quick]
    settled, unsettled, _ = settle_counts(outcomes)
    return (
        info,
        (sum(passed[i] for i in quick), len(quick)),
        (sum(passed.values()), len(claims)),
        (settled, settled + unsettled),
    )


def counts_table(outs: list[Path], rows: tuple[tuple[str, str], ...] = README_ROWS) -> str:
    """The counts table of ``docs/reproductions/README.md`` from one full run of each
    reproduction of ``rows`` (their ``--out`` directories, in any order), with the run each
    row comes from. "settled by the seeds" counts the full set's verdicts whose 95 % interval
    lies on the verdict's side of the bounds, of the claims that have an interval (two seeds
    or more and a value; "— (no interval)" where none has, as in ptcp's one-seed claims)."""
    found: dict[str, tuple[RunInfo, tuple[int, int], tuple[int, int], tuple[int, int]]] = {}
    for out in outs:
        row = counts_row(out)
        if row[0].name in found:
            raise PageError(f"{out}: a second run of {row[0].name}")
        found[row[0].name] = row
    names = [n for n, _ in rows]
    if unknown := sorted(set(found) - set(names)):
        raise PageError(f"runs of {', '.join(unknown)}: not in the table ({', '.join(names)})")
    if missing := [n for n in names if n not in found]:
        raise PageError(f"no run of {', '.join(missing)}: the table needs one of each")
    lines = [
        "| thesis | command | `--quick` passes | full set passes | settled by the seeds "
        "| page | run |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, label in rows:
        info, (qp, qn), (fp, fn), (sp, sn) = found[name]
        page = f"{Path(name).stem}.md"
        settled = f"{sp} of {sn}" if sn else "— (no interval)"
        lines.append(
            f"| {label} | `tfcc reproduce {name}` | {qp} of {qn} | {fp} of {fn} | {settled} "
            f"| [{page}]({page}) | {info.started}, {info.commit}, {info.wall()} |"
        )
    return "\n".join(lines) + "\n"


#: The lines around ``docs/reproductions/README.md``'s table of verdicts at ``--seeds``.
SEEDS_MARKERS = ("<!-- seeds:begin -->", "<!-- seeds:end -->")


def _full_run(out: Path) -> tuple[RunInfo, list[Outcome], list[Claim]]:
    """A full run's info and outcomes, holding exactly the claims of its claim file, and
    those claims (for the counts table and the seeds table)."""
    info, rows = read_run(out)
    if info.quick:
        raise PageError(f"{out}: a --quick run; the tables need the full set of {info.name}")
    try:
        _, claims = load(info.name)
    except ClaimFileError as e:
        raise PageError(f"{out}: {e}") from None
    outcomes = outcomes_from_json(rows)
    if sorted(o.claim.id for o in outcomes) != sorted(c.id for c in claims):
        raise PageError(
            f"{out}: results of {len(outcomes)} claims, the claim file of {info.name} has "
            f"{len(claims)} (other claims: the run is older than the claim file); run it again"
        )
    return info, outcomes, claims


def _value(o: Outcome) -> str:
    """A measured value with its interval and seeds, as the seeds table's rows show it."""
    from tfcc.sweep import format_seeds

    if o.measured is None:
        return f"— ({o.error or 'no value'})"
    ci = "" if o.ci95() is None else f", 95 % CI {describe_ci(o)}"
    verdict = "pass" if o.passed else "FAIL"
    if o.settled() is False:
        verdict += " (not settled)"
    seeds = o.claim.seeds
    at = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {format_seeds(seeds)}"
    return f"{show_measured(o)}{ci}, {at}: {verdict}"


def seeds_table(outs: list[Path], rows: tuple[tuple[str, str], ...] = README_ROWS) -> str:
    """The table of ``docs/reproductions/README.md`` that sets every reproduction's verdicts at
    ``--seeds`` beside those at the claim files' seeds (module doc, "How robust is a
    verdict?"), from a full run of each reproduction of ``rows`` at its claim file's seeds and
    one at ``--seeds`` (their ``--out`` directories, in any order; all ``--seeds`` runs at the
    same seeds). One row per reproduction: passes at either, the verdicts the ``--seeds``
    run's intervals settle (of the claims with one), how many of its failures they settle
    (wholly outside the band: systematic at those seeds, not noise) and how many verdicts
    differ; then, per reproduction, the claims whose verdict differs, each with both values."""
    from tfcc.sweep import format_seeds

    found: dict[tuple[str, bool], tuple[RunInfo, list[Outcome]]] = {}
    for out in outs:
        info, outcomes, _ = _full_run(out)
        key = (info.name, info.seeds is not None)
        if key in found:
            kind = f"--seeds {format_seeds(info.seeds)}" if key[1] else "claim-file seeds"
            raise PageError(f"{out}: a second run of {info.name} at {kind}")
        found[key] = (info, outcomes)
    names = [n for n, _ in rows]
    if unknown := sorted({n for n, _ in found} - set(names)):
        raise PageError(f"runs of {', '.join(unknown)}: not in the table ({', '.join(names)})")
    for at_seeds, kind in ((False, "at its claim file's seeds"), (True, "at --seeds")):
        if missing := [n for n in names if (n, at_seeds) not in found]:
            raise PageError(f"no run of {', '.join(missing)} {kind}: the table needs one of each")
    spec = {tuple(found[n, True][0].seeds or []) for n in names}
    if len(spec) != 1:
        shown = ", ".join(sorted(format_seeds(s) for s in spec))
        raise PageError(f"the --seeds runs are at different seeds ({shown}); run all at one")
    at = format_seeds(found[names[0], True][0].seeds or [])
    lines = [
        f"| thesis | passes at the claim files' seeds | passes at seeds {at} "
        f"| settled at seeds {at} | of its failures, settled | verdicts that differ "
        f"| runs (claim seeds; seeds {at}) |",
        "|---|---|---|---|---|---|---|",
    ]
    details = []
    for name, label in rows:
        info0, base = found[name, False]
        info1, wide = found[name, True]
        by_id = {o.claim.id: o for o in wide}
        differ = [(o, by_id[o.claim.id]) for o in base if o.passed != by_id[o.claim.id].passed]
        settled, unsettled, _ = settle_counts(wide)
        # the question a failing claim's reader asks: systematic, or the seeds' noise?
        failed = [o.settled() for o in wide if not o.passed]
        runs = "; ".join(f"{i.started}, {i.commit}, {i.wall()}" for i in (info0, info1))
        lines.append(
            f"| {label} | {sum(o.passed for o in base)} of {len(base)} "
            f"| {sum(o.passed for o in wide)} of {len(wide)} "
            f"| {settled} of {settled + unsettled} | {failed.count(True)} of {len(failed)} "
            f"| {len(differ)} | {runs} |"
        )
        if differ:
            details += [
                "",
                f"{label} (`tfcc reproduce {name}`): "
                + ("1 verdict differs." if len(differ) == 1 else f"{len(differ)} verdicts differ."),
                "",
                f"| claim | target | at the claim file's seeds | at seeds {at} |",
                "|---|---|---|---|",
            ]
            details += [
                f"| {a.claim.id} | {a.claim.describe_target()} | {_value(a)} | {_value(b)} |"
                for a, b in differ
            ]
    return "\n".join([*lines, *details]) + "\n"


def outcomes_from_json(rows: list[dict[str, Any]]) -> list[Outcome]:
    """The outcomes of a ``results.json`` (:func:`to_json`'s rows), to render a page's table
    from a finished run without running it again."""
    outcomes = []
    for r in rows:
        c = dict(r["claim"])
        c["scenario"] = None if c.get("scenario") is None else Path(c["scenario"])
        claim = Claim(**{k: v for k, v in c.items() if k in Claim.__dataclass_fields__})
        outcomes.append(Outcome(claim, r["measured"], r["per_seed"], r["passed"], r["error"]))
    return outcomes


def update_page_from(out: Path, page: Path) -> RunInfo:
    """Replace the marked block of ``page`` with the table of the finished run in ``out`` (its
    ``run.json`` and ``results.json``), as ``--update-doc`` would have at the end of that run."""
    if (why := check_page(page)) is not None:
        raise PageError(why)
    info, rows = read_run(out)
    if info.seeds is not None:
        raise PageError(f"{out}: {SEEDS_NOT_A_PAGE}")
    update_page(page, results_block(info, outcomes_from_json(rows)))
    return info
