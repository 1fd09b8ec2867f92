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


def _window_flows(s: Summary, flow: int | None, protocol: str | None) -> list[int]:
    return [int(f["id"]) for f in _flows(s, flow, protocol)]


def binned_throughput(
    t: Sequence[float], v: Sequence[float], start: float, timescale: float
) -> list[float]:
    """Mean throughput over consecutive bins of ``timescale`` seconds, from the samples whose
    interval ``(t - dt, t]`` lies after ``start``; a trailing partial bin is left out. The
    sampling interval ``dt`` is the spacing of ``t``; ``timescale`` must be a whole multiple of
    it (within 1 %), so that each bin averages the same number of samples."""
    if len(t) < 2:
        raise MetricError("a time series needs at least two samples")
    dt = t[1] - t[0]
    k = round(timescale / dt)
    if dt <= 0 or k < 1 or abs(k * dt - timescale) > 0.01 * timescale:
        raise MetricError(f"timescale {timescale} s is not a multiple of the {dt:g} s samples")
    window = [x for ti, x in zip(t, v, strict=True) if ti - dt >= start - 1e-9]
    return [sum(window[i : i + k]) / k for i in range(0, len(window) - k + 1, k)]


def cov_at(
    s: Summary, timescale: float = 0.5, flow: int | None = None, protocol: str | None = None
) -> float:
    """Coefficient of variation of a flow's throughput at a timescale Δ, 002 Eq. 4.4:
    ``CoV(Δ) = sqrt((1/k) Σ_i (T_i − T̄)²) / T̄`` with ``T_i`` the mean throughput in the i-th
    interval of Δ seconds of the measurement window (002 uses Δ = 0.5 s, "a plausible codec
    adaptation timescale"; 000 Sec. 5.1.3 is read at 0.5 s and 1 s). The bins are built from the
    recorded time series (:func:`binned_throughput`). Per-flow CoVs are averaged over the
    matching flows, 002's "mean CoV". Needs a :class:`RunResult`."""
    if not isinstance(s, RunResult):
        raise MetricError("cov_at needs the run's time series (a RunResult)")
    start = float(s.summary.get("measure_from_s", 0.0))
    covs = []
    for fid in _window_flows(s, flow, protocol):
        t, v = s.flow_column(fid, "throughput_bps")
        bins = binned_throughput(t, v, start, timescale)
        if len(bins) < 2:
            raise MetricError(f"flow {fid}: fewer than two {timescale} s bins in the window")
        mean = sum(bins) / len(bins)
        if mean <= 0:
            raise MetricError(f"flow {fid} delivered nothing in the window")
        covs.append(math.sqrt(sum((b - mean) ** 2 for b in bins) / len(bins)) / mean)
    return sum(covs) / len(covs)


def stall_fraction(
    s: Summary, timescale: float = 1.0, flow: int | None = None, protocol: str | None = None
) -> float:
    """Share of the measurement window's ``timescale`` bins in which a flow delivered nothing,
    averaged over the matching flows: how often a flow stalls, as window-only TFWC does in
    timeouts at windows of 1-2 packets (002 Sec. 3.2.6, Fig. 3.5). Needs a :class:`RunResult`."""
    if not isinstance(s, RunResult):
        raise MetricError("stall_fraction needs the run's time series (a RunResult)")
    start = float(s.summary.get("measure_from_s", 0.0))
    shares = []
    for fid in _window_flows(s, flow, protocol):
        t, v = s.flow_column(fid, "throughput_bps")
        bins = binned_throughput(t, v, start, timescale)
        if not bins:
            raise MetricError(f"flow {fid}: no {timescale} s bin in the window")
        shares.append(sum(1 for b in bins if b <= 0) / len(bins))
    return sum(shares) / len(shares)


def idle_bandwidth_use(
    s: Summary, capacity_bps: float, link: str = "bottleneck", cbr: str = "cbr"
) -> float:
    """Share of the idle bandwidth the responsive flows used, 000 Sec. 5.1.1 after Bansal et
    al. (SIGCOMM 2001): the bandwidth the CBR source leaves, ``C − X_cbr``, against what the
    link carried for the other flows, ``U·C − X_cbr``, so
    ``use = (U·C − X_cbr) / (C − X_cbr)`` over the measurement window (1 = every idle bit was
    used). ``U`` is the link's utilisation (bits on the wire, headers included), ``X_cbr`` the
    summed goodput of the flows whose protocol starts with ``cbr`` (a raw CBR packet is all
    payload, so its goodput is its wire rate)."""
    x_cbr = sum(
        float(f["throughput_bps"])
        for f in s.get("flows", [])
        if str(f.get("protocol", "")).startswith(cbr)
    )
    idle = capacity_bps - x_cbr
    if idle <= 0:
        raise MetricError("the CBR flows left no idle bandwidth")
    return (utilization(s, link) * capacity_bps - x_cbr) / idle


def refill_time(s: Summary, capacity_bps: float, level: float = 0.9, cbr: str = "cbr") -> float:
    """Seconds the responsive flows take to refill the pipe after a CBR source stops, 002
    Sec. 4.5 (Fig. 4.9, after Bansal et al.): for each flow whose protocol starts with ``cbr``
    and which stops sending inside the measurement window, the time from the end of its last
    non-empty sample interval ``t_off`` to the end of the first interval ``t ≥ t_off`` in which
    the other flows' summed goodput reaches ``level · capacity_bps``; averaged over those CBR
    flows. :class:`MetricError` when no CBR stops in the window or the pipe never refills.
    Needs a :class:`RunResult`."""
    if not isinstance(s, RunResult):
        raise MetricError("refill_time needs the run's time series (a RunResult)")
    start = float(s.summary.get("measure_from_s", 0.0))
    flows = list(s.get("flows", []))
    cbrs = [int(f["id"]) for f in flows if str(f.get("protocol", "")).startswith(cbr)]
    others = [int(f["id"]) for f in flows if int(f["id"]) not in cbrs]
    if not others:
        raise MetricError("no responsive flow beside the CBR sources")
    total: dict[float, float] = {}
    for fid in others:
        for ti, v in zip(*s.flow_column(fid, "throughput_bps"), strict=True):
            total[ti] = total.get(ti, 0.0) + (0.0 if math.isnan(v) else v)
    times = sorted(total)
    waits = []
    for fid in cbrs:
        t, v = s.flow_column(fid, "throughput_bps")
        busy = [ti for ti, x in zip(t, v, strict=True) if x > 0]
        if not busy or busy[-1] <= start or busy[-1] >= t[-1]:
            continue
        t_off = busy[-1]
        hit = next((ti for ti in times if ti > t_off and total[ti] >= level * capacity_bps), None)
        if hit is None:
            raise MetricError(f"the pipe was not refilled after CBR flow {fid} stopped")
        waits.append(hit - t_off)
    if not waits:
        raise MetricError("no CBR source stops inside the measurement window")
    return sum(waits) / len(waits)


def timeouts(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Mean number of retransmission-timer expiries per matching flow over the run (the
    summary's ``timeouts``): the timeouts whose back-off stalls window-only TFWC at windows of
    1-2 packets (002 Sec. 3.2.6)."""
    vals = [f.get("timeouts") for f in _flows(s, flow, protocol)]
    if any(v is None for v in vals):
        raise MetricError("a flow reports no timeout count")
    return sum(float(v) for v in vals) / len(vals)


def link_loss_rate(s: Summary, link: str = "bottleneck") -> float:
    """Packets dropped at a link over packets that arrived at it in the measurement window
    (000 Fig. 5.4's "packet loss rate")."""
    for entry in s.get("links", []):
        if entry.get("name") == link:
            arrivals = float(entry.get("arrivals") or 0)
            if arrivals <= 0:
                raise MetricError(f"no packet arrived at {link!r}")
            return float(entry["drops"]) / arrivals
    raise MetricError(f"no link named {link!r}")


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
    "cov_at": cov_at,
    "stall_fraction": stall_fraction,
    "idle_bandwidth_use": idle_bandwidth_use,
    "refill_time": refill_time,
    "timeouts": timeouts,
    "link_loss_rate": link_loss_rate,
}
