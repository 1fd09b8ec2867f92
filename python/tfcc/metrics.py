"""Scenario-level metrics over a run's ``summary.json`` (DESIGN.md, "Evaluation and reproduction").

Each metric is defined once, here, with the thesis' formula in its doc comment, and is looked up
by name from reproduction claim files (``scenarios/reproduce/*.toml``). A metric takes the summary
dict and keyword arguments from the claim and returns a float; a metric that cannot be computed
(no matching flow, no loss) raises :class:`MetricError` with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import tfcc

Summary = Mapping[str, Any]


class MetricError(ValueError):
    """A metric cannot be computed on this run; the message says why."""


class RunResult(Mapping[str, Any]):
    """One run as metrics see it: the summary (this object reads as the ``summary.json`` dict)
    plus the recorded time series, for metrics over time (CoV at a timescale, convergence,
    responsiveness) that the summary cannot answer.

    ``flow_series`` and ``link_series`` are columns (name → list), one row per flow (link) per
    sampling interval, the same columns as ``timeseries.parquet`` and ``queues.parquet``.
    """

    def __init__(
        self,
        summary: Mapping[str, Any],
        flow_series: Mapping[str, Sequence[Any]] | None = None,
        link_series: Mapping[str, Sequence[Any]] | None = None,
    ) -> None:
        self.summary = summary
        self.flow_series = flow_series or {}
        self.link_series = link_series or {}

    def __getitem__(self, key: str) -> Any:
        return self.summary[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.summary)

    def __len__(self) -> int:
        return len(self.summary)

    def flow_column(self, flow: int, column: str) -> tuple[list[float], list[float]]:
        """``(t, values)`` of one flow's column, in time order; :class:`MetricError` if the run
        recorded no such column or flow."""
        fs = self.flow_series
        if column not in fs or "t" not in fs:
            raise MetricError(f"the run recorded no {column!r} time series")
        t, v = [], []
        for ti, fi, vi in zip(fs["t"], fs["flow"], fs[column], strict=True):
            if fi == flow:
                t.append(float(ti))
                v.append(float("nan") if vi is None else float(vi))
        if not t:
            raise MetricError(f"no time series for flow {flow}")
        return t, v


def _flows(s: Summary, flow: int | None = None, protocol: str | None = None) -> list[Mapping]:
    flows = list(s.get("flows", []))
    if flow is not None:
        picked = [f for f in flows if f.get("id") == flow]
        if not picked:
            raise MetricError(f"no flow with id {flow} (the run has {len(flows)})")
        return picked
    if protocol is not None:
        picked = [f for f in flows if str(f.get("protocol", "")).startswith(protocol)]
        if not picked:
            raise MetricError(f"no flow of protocol {protocol!r}")
        return picked
    if not flows:
        raise MetricError("the run has no flows")
    return flows


def throughput_bps(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Mean goodput per flow in bit/s over the measurement window (of one flow, of the flows of
    one protocol, or of all)."""
    fl = _flows(s, flow, protocol)
    return sum(float(f["throughput_bps"]) for f in fl) / len(fl)


def throughput_kbyte_s(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Mean goodput per flow in KByte/s (1000 bytes), the unit of 004 Ch. 4."""
    return throughput_bps(s, flow, protocol) / 8000.0


def jain_index(x: Sequence[float]) -> float:
    """Jain's fairness index ``(Σx)² / (n·Σx²)`` (003 Sec. 3.5; 1 is perfectly fair)."""
    n = len(x)
    sq = sum(v * v for v in x)
    if n == 0 or sq == 0:
        raise MetricError("Jain's index needs at least one non-zero throughput")
    return sum(x) ** 2 / (n * sq)


def jain(s: Summary, protocol: str | None = None) -> float:
    """Jain's index over the per-flow goodputs (of one protocol, or of all flows)."""
    return jain_index([float(f["throughput_bps"]) for f in _flows(s, protocol=protocol)])


def fairness_theta(s: Summary, tcp: str = "tcp", other: str | None = None) -> float:
    """θ: TCP's share of the total throughput of TCP and the TCP-friendly flows it competes
    with (002 Sec. 5.2; 0.5 is a fair share between equal numbers of flows). Computed from
    per-flow means so that unequal flow counts compare per flow: ``θ = T̄_tcp/(T̄_tcp + T̄_x)``."""
    flows = _flows(s)
    t = [float(f["throughput_bps"]) for f in flows if str(f["protocol"]).startswith(tcp)]
    o = [
        float(f["throughput_bps"])
        for f in flows
        if not str(f["protocol"]).startswith(tcp)
        and (other is None or str(f["protocol"]).startswith(other))
    ]
    if not t or not o:
        raise MetricError("θ needs TCP flows and flows of another protocol")
    mt, mo = sum(t) / len(t), sum(o) / len(o)
    if mt + mo == 0:
        raise MetricError("θ is undefined when nothing was delivered")
    return mt / (mt + mo)


def utilization(s: Summary, link: str = "bottleneck") -> float:
    """Bits carried by the link in the measurement window over its capacity."""
    for entry in s.get("links", []):
        if entry.get("name") == link:
            return float(entry["utilization"])
    raise MetricError(f"no link named {link!r}")


def tcp_model_ratio(
    s: Summary, flow: int | None = None, protocol: str | None = None, packet_size: float = 1000
) -> float:
    """Measured goodput over the Padhye prediction (004 Eq. 2.7, RFC 5348 form, b = 1,
    t_RTO = 4R) at the flow's own measured loss event rate and mean RTT; 1 means TCP follows
    the model. Averaged over the matching flows."""
    ratios = []
    for f in _flows(s, flow, protocol):
        p, rtt = f.get("loss_event_rate"), f.get("mean_rtt_s")
        if not p or not rtt or p <= 0 or rtt <= 0:
            raise MetricError(f"flow {f.get('id')} has no loss event rate or RTT to model")
        model = tfcc.padhye_rate(packet_size, rtt, p) * 8
        ratios.append(float(f["throughput_bps"]) / model)
    return sum(ratios) / len(ratios)


def loss_event_rate(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Mean loss event rate p of the matching flows."""
    vals = [f.get("loss_event_rate") for f in _flows(s, flow, protocol)]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in vals):
        raise MetricError("a flow reports no loss event rate")
    return sum(vals) / len(vals)


def throughput_ratio(s: Summary, protocol: str, other: str) -> float:
    """Mean per-flow goodput of the ``protocol`` flows over that of the ``other`` flows (004 Sec.
    4.8.2 compares protocols this way: "average TCP throughput [...] is 70 % of TFRC's")."""
    mine = [float(f["throughput_bps"]) for f in _flows(s, protocol=protocol)]
    theirs = [float(f["throughput_bps"]) for f in _flows(s, protocol=other)]
    denom = sum(theirs) / len(theirs)
    if denom <= 0:
        raise MetricError(f"the {other!r} flows delivered nothing in the window")
    return (sum(mine) / len(mine)) / denom


def cov(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Coefficient of variation of a flow's throughput, population standard deviation over mean
    of its per-interval samples in the measurement window (the summary's ``cov``, at the
    recorder's sampling interval, 100 ms by default): 004 Sec. 4.1's measure of how smooth a
    rate is. Averaged over the matching flows."""
    vals = [f.get("cov") for f in _flows(s, flow, protocol)]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in vals):
        raise MetricError("a flow has no throughput samples in the window")
    return sum(vals) / len(vals)


# ---- 003 Sec. 2.4: the taxonomy's and WARC's metrics -------------------------------------------


def normalized_throughput(s: Summary, protocol: str, tcp: str = "tcp") -> float:
    """003 Sec. 2.4: a scheme's throughput over TCP's under the same (or competing) conditions,
    ``T̄_scheme / T̄_TCP`` with per-flow means, so unequal flow counts compare per flow."""
    return throughput_ratio(s, protocol, tcp)


def _loss_ratio(f: Mapping) -> float:
    sent = float(f.get("packets_sent") or 0)
    if sent <= 0:
        raise MetricError(f"flow {f.get('id')} sent nothing in the window")
    return float(f.get("packets_lost") or 0) / sent


def _shortest_rtt(flows: list[Mapping]) -> Mapping:
    with_rtt = [f for f in flows if f.get("mean_rtt_s")]
    if not with_rtt:
        raise MetricError("no flow reports an RTT")
    return min(with_rtt, key=lambda f: float(f["mean_rtt_s"]))


def normalized_loss_rate(s: Summary, protocol: str, tcp: str = "tcp") -> float:
    """003 Fig. 2.2(c): the loss rate (packets lost / packets sent) of the scheme's
    shortest-RTT flow over that of TCP's shortest-RTT flow."""
    mine = _loss_ratio(_shortest_rtt(_flows(s, protocol=protocol)))
    theirs = _loss_ratio(_shortest_rtt(_flows(s, protocol=tcp)))
    if theirs <= 0:
        raise MetricError("the TCP flow lost nothing in the window")
    return mine / theirs


def normalized_cov(s: Summary, protocol: str, tcp: str = "tcp") -> float:
    """003 App. 1 (Fig. A1): the scheme's throughput CV (the summary's ``cov``, 0.1 s samples)
    over TCP's in the same run."""
    theirs = cov(s, protocol=tcp)
    if theirs <= 0:
        raise MetricError("TCP's throughput CV is zero")
    return cov(s, protocol=protocol) / theirs


def cv_bar_w_of(epochs: Sequence[Sequence[float]]) -> float:
    """003 Eq. 3.7 (after Jin et al.): ``CV̄[w] = √(E[Var[w]]) / E[w]``, where ``w`` is the rate
    in packets per RTT, ``Var[w]`` its (population) variance between two consecutive losses,
    averaged over the inter-loss epochs, and ``E[w]`` the mean over all samples."""
    eps = [list(e) for e in epochs if len(e) > 0]
    if not eps:
        raise MetricError("CV̄[w] needs at least one epoch with samples")
    variances = []
    for e in eps:
        m = sum(e) / len(e)
        variances.append(sum((x - m) ** 2 for x in e) / len(e))
    allv = [x for e in eps for x in e]
    mean = sum(allv) / len(allv)
    if mean <= 0:
        raise MetricError("CV̄[w] is undefined for a zero mean rate")
    return math.sqrt(sum(variances) / len(variances)) / mean


def cv_k_of(values: Sequence[float], k: int) -> float:
    """003 Sec. 3.5.2: ``CV_k[R]``, the coefficient of variation of the rate at time scale
    ``k`` samples (k × 0.1 s). 003 leaves two readings (spec 003 §2.4 [AMBIGUITY]); this is
    reading (a): the population CV within each run of ``k`` consecutive samples
    (non-overlapping windows), averaged over the windows. Reading (a) is chosen because 003's
    remark that WARC is smoother "at time scale 16 ≈ the mean inter-loss time" describes
    variation *within* a window of that length. ``k = 1`` is 0 by definition."""
    if k < 1:
        raise MetricError("k must be at least 1")
    vals = [v for v in values if not math.isnan(v)]
    n = len(vals) // k
    if n == 0:
        raise MetricError(f"CV_{k} needs at least {k} samples, got {len(vals)}")
    cvs = []
    for i in range(n):
        w = vals[i * k : (i + 1) * k]
        m = sum(w) / k
        if m > 0:
            cvs.append(math.sqrt(sum((x - m) ** 2 for x in w) / k) / m)
    if not cvs:
        raise MetricError("every window has a zero mean rate")
    return sum(cvs) / len(cvs)


def _series(s: Summary, flow: int, after: float, column: str = "throughput_bps") -> list[float]:
    if not isinstance(s, RunResult):
        raise MetricError("this metric needs the run's time series")
    t, v = s.flow_column(flow, column)
    return [vi for ti, vi in zip(t, v, strict=True) if ti > after]


def cv_k(s: Summary, protocol: str, k: int = 16, after: float = 0.0) -> float:
    """:func:`cv_k_of` of each matching flow's throughput samples after ``after`` seconds,
    averaged over the flows."""
    flows = _flows(s, protocol=protocol)
    return sum(cv_k_of(_series(s, int(f["id"]), after), k) for f in flows) / len(flows)


def normalized_cv_k(
    s: Summary, protocol: str, tcp: str = "tcp", k: int = 16, after: float = 0.0
) -> float:
    """003 Fig. 3.15/3.16: the scheme's ``CV_k[R]`` over TCP's in the same run."""
    theirs = cv_k(s, tcp, k, after)
    if theirs <= 0:
        raise MetricError("TCP's CV is zero")
    return cv_k(s, protocol, k, after) / theirs


def convergence_time_of(
    t: Sequence[float], v: Sequence[float], at: float, target: float, band: float = 0.1
) -> float:
    """003 Figs. 2.3 and 3.17: seconds from the change at ``at`` until the rate first comes
    within ``band`` (relative) of the new steady value ``target``. ``v`` should be smoothed
    already; :class:`MetricError` if it never does."""
    for ti, vi in zip(t, v, strict=True):
        if ti >= at and abs(vi - target) <= band * abs(target):
            return ti - at
    raise MetricError(f"the rate never came within {band:.0%} of {target:.4g}")


def moving_average(v: Sequence[float], n: int) -> list[float]:
    """Trailing mean over ``n`` samples (fewer at the start)."""
    out, acc = [], 0.0
    for i, x in enumerate(v):
        acc += x
        if i >= n:
            acc -= v[i - n]
        out.append(acc / min(i + 1, n))
    return out


def convergence_time(
    s: Summary,
    protocol: str,
    at: float,
    until: float,
    band: float = 0.1,
    smooth: int = 20,
) -> float:
    """Convergence after a step change at ``at`` (003 Figs. 2.3, 3.17): the new steady value is
    the flow's mean throughput over the last quarter of ``[at, until]``; the series is the
    throughput smoothed over ``smooth`` samples (2 s at 0.1 s). Averaged over matching flows."""
    times = []
    for f in _flows(s, protocol=protocol):
        t, v = s.flow_column(int(f["id"]), "throughput_bps")  # type: ignore[attr-defined]
        sm = moving_average(v, smooth)
        tail = [x for ti, x in zip(t, v, strict=True) if until - (until - at) / 4 <= ti <= until]
        if not tail:
            raise MetricError("no samples in the steady part")
        target = sum(tail) / len(tail)
        times.append(convergence_time_of(t, sm, at, target, band))
    return sum(times) / len(times)


#: Name → metric, as used by claim files.
METRICS: dict[str, Callable[..., float]] = {
    "throughput_bps": throughput_bps,
    "throughput_kbyte_s": throughput_kbyte_s,
    "jain": jain,
    "fairness_theta": fairness_theta,
    "utilization": utilization,
    "tcp_model_ratio": tcp_model_ratio,
    "loss_event_rate": loss_event_rate,
    "cov": cov,
    "throughput_ratio": throughput_ratio,
    "normalized_throughput": normalized_throughput,
    "normalized_loss_rate": normalized_loss_rate,
    "normalized_cov": normalized_cov,
    "cv_k": cv_k,
    "normalized_cv_k": normalized_cv_k,
    "convergence_time": convergence_time,
}
