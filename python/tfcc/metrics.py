"""Scenario-level metrics over a run's ``summary.json`` (DESIGN.md, "Evaluation and reproduction").

Each metric is defined once, here, with the thesis' formula in its doc comment, and is looked up
by name from reproduction claim files (``scenarios/reproduce/*.toml``). A metric takes the summary
dict and keyword arguments from the claim and returns a float; a metric that cannot be computed
(no matching flow, no loss) raises :class:`MetricError` with the reason.
"""

from __future__ import annotations

import bisect
import math
import os
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

import tfcc
from tfcc import _core

Summary = Mapping[str, Any]


class MetricError(ValueError):
    """A metric cannot be computed on this run; the message says why."""


class RunResult(Mapping[str, Any]):
    """One run as metrics see it: the summary (this object reads as the ``summary.json`` dict)
    plus the recorded time series, for metrics over time (CoV at a timescale, convergence,
    responsiveness) that the summary cannot answer, and a video run's frame records.

    ``flow_series`` and ``link_series`` are columns (name → list), one row per flow (link) per
    sampling interval, the same columns as ``timeseries.parquet`` and ``queues.parquet``.
    A row's ``t`` is the end of its interval ``(t - dt, t]`` and is the double nearest its
    nanosecond count (``tfcc_core::time::nanos_to_secs_f64``: 0.3, 500.0), so a sample on a
    window bound compares equal to the bound and each metric's bound rule (``t0 < t <= t1``
    and the like, in its doc comment) decides alone which side it falls on.

    ``frame_series`` holds the columns of ``frames.parquet`` (one row per video flow per frame
    slot, docs/scenarios.md), empty for a run without a video source; ``ptcp_slots`` the columns
    of ``ptcp_slots.parquet`` (one row per PTCP flow per evaluation or control slot), empty for
    a run without a PTCP flow.
    """

    def __init__(
        self,
        summary: Mapping[str, Any],
        flow_series: Mapping[str, Sequence[Any]] | None = None,
        link_series: Mapping[str, Sequence[Any]] | None = None,
        frame_series: Mapping[str, Sequence[Any]] | None = None,
        ptcp_slots: Mapping[str, Sequence[Any]] | None = None,
    ) -> None:
        self.summary = summary
        self.flow_series = flow_series or {}
        self.link_series = link_series or {}
        self.frame_series = frame_series or {}
        self.ptcp_slots = ptcp_slots or {}

    def frame_rows(self, flow: int) -> list[dict[str, Any]]:
        """One video flow's frame slots (rows of ``frames.parquet``) in slot order;
        :class:`MetricError` if the run recorded none for it."""
        fs = self.frame_series
        if "flow" not in fs:
            raise MetricError("the run recorded no frames (no flow has a video source)")
        names = list(fs)
        rows = [
            dict(zip(names, vals, strict=True))
            for vals in zip(*(fs[n] for n in names), strict=True)
            if vals[names.index("flow")] == flow
        ]
        if not rows:
            raise MetricError(f"flow {flow} has no video source")
        return rows

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


def ptcp_slot_rows(s: Summary, flow: Mapping[str, Any], kind: str = "eval") -> list[dict[str, Any]]:
    """One PTCP flow's slots of ``kind`` (``eval`` or ``ctrl``), rows of ``ptcp_slots.parquet``
    in the order they ended. A summary written before the slots moved out of it (its ``ptcp``
    entry holds ``eval_slots``) is read as such a run's outputs were: its ``eval_slots`` as
    rows. :class:`MetricError` if the flow is not a PTCP flow or the run's slots are missing."""
    p = flow.get("ptcp")
    if not p:
        raise MetricError(f"flow {flow.get('id')} is not a PTCP flow")
    if f"{kind}_slots" in p:  # a summary.json from before ptcp_slots.parquet
        cuts = [e.get("cuts", [0, 0]) for e in p[f"{kind}_slots"]]
        return [
            {**e, "fast_retransmits": c[0], "timeouts": c[1]}
            for e, c in zip(p[f"{kind}_slots"], cuts, strict=True)
        ]
    cols = s.ptcp_slots if isinstance(s, RunResult) else {}
    if "flow" not in cols:
        raise MetricError("the run's PTCP slots (ptcp_slots.parquet) are missing")
    names = list(cols)
    fid, k = names.index("flow"), names.index("kind")
    return [
        dict(zip(names, vals, strict=True))
        for vals in zip(*(cols[n] for n in names), strict=True)
        if vals[fid] == flow.get("id") and vals[k] == kind
    ]


def _is_reverse(f: Mapping) -> bool:
    return str(f.get("direction", "forward")) == "reverse"


def _flows(s: Summary, flow: int | None = None, protocol: str | None = None) -> list[Mapping]:
    """The flows a metric is over: the one with id ``flow``, or else the forward flows (of one
    protocol, or all). Reverse-direction flows (``direction = "reverse"``, 002 Secs. 4.2 and
    4.4's reverse-path TCP) only perturb the others' ACK path and are left out unless picked
    by id."""
    every = list(s.get("flows", []))
    if flow is not None:
        picked = [f for f in every if f.get("id") == flow]
        if not picked:
            raise MetricError(f"no flow with id {flow} (the run has {len(every)})")
        return picked
    flows = [f for f in every if not _is_reverse(f)]
    if protocol is not None:
        # "tcp" names every TCP variant ("tcp-sack", "tcp-reno"), but "tfrc" must not pick up
        # "tfrcp" (003's runs hold both): the exact name, or the name followed by "-".
        picked = [
            f
            for f in flows
            if str(f.get("protocol", "")) == protocol
            or str(f.get("protocol", "")).startswith(protocol + "-")
        ]
        if not picked:
            raise MetricError(f"no flow of protocol {protocol!r}")
        return picked
    if not flows:
        raise MetricError("the run has no flows")
    return flows


def throughput_bps(
    s: Summary, flow: int | None = None, protocol: str | None = None, label: str | None = None
) -> float:
    """Mean goodput per flow in bit/s over the measurement window (of one flow, of the flows of
    one protocol, or of all; ``label`` keeps those of one scenario label, e.g. 001 E6's five
    short-lived connections of Sender 1 among the background web users)."""
    fl = _flows(s, flow, protocol)
    if label is not None:
        fl = [f for f in fl if f.get("label") == label]
        if not fl:
            raise MetricError(f"no flow labelled {label!r}")
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
    with (002 Sec. 4.2, Eq. 4.2; 0.5 is a fair share between equal numbers of flows). Computed from
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
    theta = _core.fairness_theta(t, o)
    if theta is None:
        raise MetricError("θ is undefined when nothing was delivered")
    return theta


def utilization(s: Summary, link: str = "bottleneck") -> float:
    """Bits carried by the link in the measurement window over its capacity."""
    for entry in s.get("links", []):
        if entry.get("name") == link:
            return float(entry["utilization"])
    raise MetricError(f"no link named {link!r}")


def _model_rtt(s: Summary, rtt_of: str | None) -> float | None:
    """The mean of the ``rtt_of`` flows' mean RTTs (None when ``rtt_of`` is None)."""
    if rtt_of is None:
        return None
    rtts = [f.get("mean_rtt_s") for f in _flows(s, protocol=rtt_of)]
    if any(not r or r <= 0 for r in rtts):
        raise MetricError(f"a {rtt_of!r} flow has no RTT to lend the model")
    return sum(rtts) / len(rtts)


def tcp_model_ratio(
    s: Summary,
    flow: int | None = None,
    protocol: str | None = None,
    packet_size: float = 1000,
    b: float = 1.0,
    rtt_of: str | None = None,
) -> float:
    """Measured goodput over the Padhye prediction (004 Eq. 2.7, RFC 5348 form, t_RTO = 4R) at
    the flow's own measured loss event rate; 1 means the flow follows the model. Averaged over
    the matching flows.

    ``b`` is Eq. 2.7's packets acknowledged per ACK: 1 (RFC 5348, ns-2's TCP, which ACKs every
    segment) unless the TCP delays its ACKs (2: one ACK per two segments, 004 Sec. 2.2.2, where
    ``c`` of Eq. 2.6 depends on delayed ACKs). ``rtt_of`` names the protocol whose flows' mean
    RTT goes into the equation instead of each flow's own; None (the default) uses the flow's
    own. A TCP's own RTT is its SRTT, which is only the path's RTT when its clock is fine: the
    BSD TCP of 004's Dummynet hosts counts RTTs in 500 ms ticks, so on a shared bottleneck the
    TFRC flows' RTT (exact timestamps, 004 Eq. 3.1) is the better estimate of the path's."""
    shared = _model_rtt(s, rtt_of)
    ratios = []
    for f in _flows(s, flow, protocol):
        p = f.get("loss_event_rate")
        rtt = shared if shared is not None else f.get("mean_rtt_s")
        if not p or not rtt or p <= 0 or rtt <= 0:
            raise MetricError(f"flow {f.get('id')} has no loss event rate or RTT to model")
        model = tfcc.padhye_rate(packet_size, rtt, p, b=b) * 8
        ratios.append(float(f["throughput_bps"]) / model)
    return sum(ratios) / len(ratios)


def _mean_of(s: Summary, key: str, flow: int | None, protocol: str | None, missing: str) -> float:
    """The mean of the per-flow summary value ``key`` over the matching flows; ``missing`` is the
    error when a flow has none (absent or NaN)."""
    vals = [f.get(key) for f in _flows(s, flow, protocol)]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in vals):
        raise MetricError(missing)
    return sum(vals) / len(vals)


def loss_event_rate(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Mean loss event rate p of the matching flows."""
    return _mean_of(s, "loss_event_rate", flow, protocol, "a flow reports no loss event rate")


def throughput_ratio(s: Summary, protocol: str, other: str) -> float:
    """Mean per-flow goodput of the ``protocol`` flows over that of the ``other`` flows (004 Sec.
    4.8.2 compares protocols this way: "average TCP throughput [...] is 70 % of TFRC's")."""
    mine = [float(f["throughput_bps"]) for f in _flows(s, protocol=protocol)]
    theirs = [float(f["throughput_bps"]) for f in _flows(s, protocol=other)]
    denom = sum(theirs) / len(theirs)
    if denom <= 0:
        raise MetricError(f"the {other!r} flows delivered nothing in the window")
    return (sum(mine) / len(mine)) / denom


def flow_throughput_ratio(s: Summary, flows: Sequence[int], others: Sequence[int]) -> float:
    """Mean per-flow goodput of the flows with ids ``flows`` over that of the flows with ids
    ``others``: two groups of one protocol told apart by their path, as 000 Sec. 5.2.1 compares
    the three flows of sender C (varied RTT) with the three of sender A (120 ms), whose
    throughput the thesis finds "inversely proportional to RTT"."""
    if not flows or not others:
        raise MetricError("both flow groups must name at least one flow")

    def mean(ids: Sequence[int]) -> float:
        return sum(float(_flows(s, flow=int(i))[0]["throughput_bps"]) for i in ids) / len(ids)

    theirs = mean(others)
    if theirs <= 0:
        raise MetricError(f"flows {list(others)} delivered nothing")
    return mean(flows) / theirs


def send_rate_ratio(s: Summary, protocol: str, other: str) -> float:
    """Mean per-flow *sending* rate of the ``protocol`` flows over that of the ``other`` flows:
    data packets sent in the measurement window (retransmissions included, packets dropped on
    the way still counted), per flow. 004 Sec. 4.8.2 reads E11 this way: "figure 4.24 shows the
    sending rate of the flows (without packet drops), not the throughput", and TFRC "only
    achieves about a third of TCP sending rate". Packets, not bytes, are compared, so the flows
    must send packets of one size (004 Sec. 4.2: TFRC's packets match TCP's segments)."""

    def mean_sent(proto: str) -> float:
        sent = [float(f.get("packets_sent") or 0) for f in _flows(s, protocol=proto)]
        return sum(sent) / len(sent)

    denom = mean_sent(other)
    if denom <= 0:
        raise MetricError(f"the {other!r} flows report no packets sent in the window")
    return mean_sent(protocol) / denom


def cov(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Coefficient of variation of a flow's throughput, population standard deviation over mean
    of its per-interval samples in the measurement window (the summary's ``cov``, at the
    recorder's sampling interval, 100 ms by default): 004 Sec. 4.1's measure of how smooth a
    rate is. Averaged over the matching flows."""
    return _mean_of(s, "cov", flow, protocol, "a flow has no throughput samples in the window")


def max_min(s: Summary, protocol: str | None = None) -> float:
    """Max-min intra-protocol fairness (004 Eq. 4.7): ``min_f B_f / max_f B_f`` over the flows of
    one protocol (or all), in [0, 1]; 0 means at least one flow got nothing, 1 an equal split."""
    b = [float(f["throughput_bps"]) for f in _flows(s, protocol=protocol)]
    if max(b) <= 0:
        raise MetricError("max-min fairness needs at least one flow that delivered data")
    return min(b) / max(b)


def model_ratio(
    s: Summary,
    flow: int | None = None,
    protocol: str | None = None,
    packet_size: float = 1460,
    b: float = 1.0,
    rtt_of: str | None = None,
    per_run: bool = False,
) -> float:
    """004 Sec. 4.11 (E14, Figs. 4.27-4.28): average throughput against the model surface, Eq.
    2.7 (PFTK, ``t_RTO = 4·t_RTT``), as ``B / f(t_RTT, l, s)``. 1 is on the surface; the thesis
    finds TFRC "slightly below" it. ``b``, ``rtt_of`` and the default (each flow at its own
    average RTT and loss event rate, the ratios averaged over the matching flows) are
    :func:`tcp_model_ratio`'s, with the thesis' 1460-byte packets as the default size.

    ``per_run``: one point per run, as the thesis plots them ("Measurement points represent the
    average conditions of one test run"): the matching flows' mean throughput (``B_P``, Eq. 4.4)
    over the model at their mean RTT (or the ``rtt_of`` flows' mean RTT) and their mean loss
    event rate."""
    if not per_run:
        return tcp_model_ratio(s, flow, protocol, packet_size, b, rtt_of)
    fl = _flows(s, flow, protocol)
    shared = _model_rtt(s, rtt_of)
    ps = [f.get("loss_event_rate") for f in fl]
    rtts = [shared] if shared is not None else [f.get("mean_rtt_s") for f in fl]
    if any(not v or v <= 0 for v in [*ps, *rtts]):
        raise MetricError("a flow has no loss event rate or RTT to model")
    p = sum(ps) / len(ps)
    rtt = sum(rtts) / len(rtts)
    model = tfcc.padhye_rate(packet_size, rtt, p, b=b) * 8
    return sum(float(f["throughput_bps"]) for f in fl) / len(fl) / model


def _geometric(rng: random.Random, p: float) -> int:
    """Packets up to and including the next loss when each is lost with probability ``p``."""
    u = rng.random()
    return max(1, math.ceil(math.log1p(-u) / math.log1p(-p))) if p < 1 else 1


def _history(n: int, discounting: str, weights: str | list[float]) -> tfcc.LossHistory:
    w = [1.0] * n if weights == "equal" else "rfc5348" if weights == "decreasing" else weights
    return tfcc.LossHistory(n, discounting=discounting, weights=w)


def loss_response_s(
    run: None,
    *,
    seed: int,
    discounting: str = "remodel",
    p_from: float = 0.1,
    p_to: float = 0.001,
    n: int = 8,
    rtt: float = 0.05,
    packet_size: float = 1460,
    runs: int = 20,
    cap_s: float = 600.0,
    weights: str | list[float] = "decreasing",
) -> float:
    """Responsiveness of the loss estimate to a step in the loss rate (004 Sec. 4.8.1, E8, Fig.
    4.19; Eq. 4.12): ``R = min{Δt ≥ 0 : 0.9·l ≤ l_est(t′+Δt) ≤ 1.1·l}``, the time after the step
    from ``p_from`` to ``p_to`` until the estimate is first within ±10 % of the new rate, in
    seconds, averaged over ``runs`` runs (``cap_s`` if never).

    As in the thesis the RTT is fixed (50 ms) and losses are independent of the sending rate:
    each packet is lost with probability ``p`` (Poisson loss events) and every loss is an event.
    The sender follows the estimate, sending at Eq. 2.7's rate for it, and the estimate is read
    once per RTT (a report per RTT); so time runs slowly where the rate is low, the second cause
    of slowness the thesis names. The history starts filled at ``p_from`` (4·n events).
    ``discounting`` is the deweighting variant: "off", "duplication", "proportional"
    (``d_lim`` = 0.2) or "remodel" (004 Sec. 3.7); ``weights`` the interval weights, "decreasing"
    (Fig. 4.19's) or "equal" (the "constant weight distribution" of Sec. 4.8.1's last remark)."""
    rng = random.Random(seed)
    total = 0.0
    for _ in range(runs):
        h = _history(n, discounting, weights)
        for _ in range(4 * n):
            h.packets(_geometric(rng, p_from) - 1)
            h.loss_event()
        t, gap = 0.0, _geometric(rng, p_to)
        while t < cap_s:
            p = h.p
            if p is not None and 0.9 * p_to <= p <= 1.1 * p_to:
                break
            x = tfcc.padhye_rate(packet_size, rtt, p) / packet_size  # packets/s
            k = max(1, round(x * rtt))
            if gap <= k:
                h.packets(gap - 1)
                h.loss_event()
                t += gap / x
                gap = _geometric(rng, p_to)
            else:
                h.packets(k)
                gap -= k
                t += k / x
        total += min(t, cap_s)
    return total / runs


def _loss_trace(
    rng: random.Random,
    duration_s: float,
    pkt_rate: float,
    p_range: tuple[float, float],
    hold_s: float,
) -> tuple[int, list[int]]:
    """A synthetic loss trace: ``pkt_rate`` packets/s for ``duration_s``, each lost with a
    probability that is redrawn log-uniformly from ``p_range`` after exponentially distributed
    holding times of mean ``hold_s``. Returns the packet count and the lost packets' indices."""
    total = int(duration_s * pkt_rate)
    lo, hi = math.log(p_range[0]), math.log(p_range[1])
    losses: list[int] = []
    i = 0
    while i < total:
        p = math.exp(rng.uniform(lo, hi))
        end = min(total, i + max(1, int(rng.expovariate(1 / hold_s) * pkt_rate)))
        j = i + _geometric(rng, p) - 1
        while j < end:
            losses.append(j)
            j += _geometric(rng, p)
        i = end
    return total, losses


def loss_prediction_error(
    run: None,
    *,
    seed: int,
    n: int = 8,
    weights: str | list[float] = "decreasing",
    duration_s: float = 3600.0,
    pkt_rate: float = 50.0,
    p_range: tuple[float, float] = (0.0005, 0.06),
    hold_s: float = 20.0,
    horizon_s: float = 10.0,
) -> float:
    """Loss prediction error (004 Sec. 4.10, E13, Fig. 4.26): the mean absolute difference
    between the estimate ``l_est`` (ALI with history size ``n`` and the current-interval rule,
    weights "decreasing" as Table 3.1 generalised, or "equal") and the *future* loss rate, the
    fraction of packets lost in the next ``horizon_s`` (spec 004 Sec. 3.1 suggests 10 s, the
    thesis gives none), sampled once a second over a synthetic trace (:func:`_loss_trace`).

    The thesis used its Internet traces, which are not available; the trace model takes its
    numbers from the thesis: the loss range of Tables 4.1-4.6 (0.05 % to 6 %), about 50 packets
    of 1460 B a second (a flow's share in Table 4.1), and loss conditions that persist for
    about 20 s (the congestion episode of Sec. 4.7.2)."""
    rng = random.Random(seed)
    total, losses = _loss_trace(rng, duration_s, pkt_rate, tuple(p_range), hold_s)
    h = _history(n, "off", weights)
    horizon = int(horizon_s * pkt_rate)
    step = max(1, int(pkt_rate))
    err, count, fed, li = 0.0, 0, 0, 0
    for tick in range(step, total - horizon, step):
        while li < len(losses) and losses[li] < tick:
            h.packets(losses[li] - fed)
            h.loss_event()
            fed = losses[li] + 1
            li += 1
        h.packets(tick - fed)
        fed = tick
        est = h.p
        if est is None or h.loss_events < n + 1:
            continue
        future = bisect.bisect_left(losses, tick + horizon) - li
        err += abs(est - future / horizon)
        count += 1
    if count == 0:
        raise MetricError("the trace is too short to fill the loss history")
    return err / count


def loss_prediction_best_n(
    run: None, *, seed: int, sizes: Sequence[int] = (2, 4, 8, 16, 32, 64), **trace: Any
) -> float:
    """The history size with the smallest :func:`loss_prediction_error` on one trace (004 Sec.
    4.10: "8-16 loss intervals give the best prediction")."""
    errors = {n: loss_prediction_error(None, seed=seed, n=n, **trace) for n in sizes}
    return float(min(errors, key=errors.__getitem__))


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
    timeouts at windows of 1-2 packets (002 Sec. 3.3.2, Fig. 3.5). Needs a :class:`RunResult`."""
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


#: 004 Table 4.7: the δ1/δ2 grid of the variability study (seconds). Eq. 4.9 is for δ1 < δ2, so
#: the diagonal (where G is 0 by definition) is left out: 15 pairs.
VARIABILITY_GRID: tuple[tuple[float, float], ...] = tuple(
    (d1, d2)
    for i, d1 in enumerate((1.0, 2.0, 8.0, 32.0, 128.0, 512.0))
    for d2 in (2.0, 8.0, 32.0, 128.0, 512.0)[i:]
)


def variability_of(
    t: Sequence[float], v: Sequence[float], t0: float, t_end: float, d1: float, d2: float
) -> float:
    """004 Eq. 4.9-4.10, the average variability ``G_(δ1,δ2)`` of one flow over ``[t0, T]``:
    ``G(t) = |B_δ1(t) − B_δ2(t)| / B_δ2(t)`` at ``t = t0 + δ1·i``, averaged.

    ``B_δ(t)`` is the throughput over ``(t − δ, t]`` (Eq. 4.1-4.2). Readings, as the spec
    flags: where ``t − δ < t0``, Eq. 4.1 takes the packets since ``t0`` and Eq. 4.2 would still
    divide by ``δ``; that would read a flow as slower the younger the window, so the rate is
    taken over the interval that exists, ``(t0, t]`` (a δ longer than the measurement window
    then compares with the mean so far, which is how the thesis' 180 s runs can show δ2 = 128
    and 512 s). ``t0`` is the start of the measurement window, the same symbol as Eq. 4.10's,
    so no start-up data enters. Eq. 4.10 divides by ``T/δ1`` although it sums ``(T − t0)/δ1``
    terms; the mean over the terms is used (spec 004 §3.1). Samples where ``B_δ2(t)`` is 0 (the
    flow delivered nothing in that interval) are skipped: Eq. 4.9 is undefined there.

    ``t``/``v`` are a recorded series (a row's ``t`` ends its interval ``(t − dt, t]``,
    ``v`` in bit/s); δ1 and δ2 must be whole multiples of the sampling interval."""
    if len(t) < 2:
        raise MetricError("a time series needs at least two samples")
    if not 0 < d1 < d2:
        raise MetricError(f"variability needs 0 < δ1 < δ2, got {d1:g} and {d2:g}")
    dt = t[1] - t[0]
    k1, k2 = round(d1 / dt), round(d2 / dt)
    for d, k in ((d1, k1), (d2, k2)):
        if dt <= 0 or k < 1 or abs(k * dt - d) > 0.01 * d:
            raise MetricError(f"timescale {d:g} s is not a multiple of the {dt:g} s samples")
    window = [x for ti, x in zip(t, v, strict=True) if ti - dt >= t0 - 1e-9 and ti <= t_end + 1e-9]
    # cum[j]: bits delivered in the window's first j samples (each sample covers dt seconds).
    cum = [0.0]
    for x in window:
        cum.append(cum[-1] + (0.0 if math.isnan(x) else x) * dt)
    gs = []
    for j in range(k1, len(window) + 1, k1):
        b1 = (cum[j] - cum[j - k1]) / (k1 * dt)
        lo = max(0, j - k2)
        b2 = (cum[j] - cum[lo]) / ((j - lo) * dt)
        if b2 > 0:
            g = abs(b1 - b2) / b2
            # Below 1e-9 the difference is the prefix sums' rounding, not the flow.
            gs.append(g if g > 1e-9 else 0.0)
    if not gs:
        raise MetricError(f"no {d1:g} s interval with traffic in the window")
    return sum(gs) / len(gs)


def _variability_series(
    s: Summary, what: str, flow: int | None = None, protocol: str | None = None
) -> tuple[list[tuple[list[float], list[float]]], float, float]:
    """The matching flows' throughput series and the window ``(t0, T)`` the variability metrics
    read, each flow's column fetched once (a run's series holds every flow's rows)."""
    if not isinstance(s, RunResult):
        raise MetricError(f"{what} needs the run's time series (a RunResult)")
    t0 = float(s.summary.get("measure_from_s", 0.0))
    t_end = float(s.summary.get("sim_seconds", math.inf))
    series = [s.flow_column(fid, "throughput_bps") for fid in _window_flows(s, flow, protocol)]
    return series, t0, t_end


def _mean_variability(
    series: list[tuple[list[float], list[float]]], t0: float, t_end: float, d1: float, d2: float
) -> float:
    gs = [variability_of(t, v, t0, t_end, d1, d2) for t, v in series]
    return sum(gs) / len(gs)


def variability(
    s: Summary, d1: float, d2: float, flow: int | None = None, protocol: str | None = None
) -> float:
    """004 Sec. 4.6.1: the average variability ``G_(δ1,δ2)`` (:func:`variability_of`) of each
    matching flow over the measurement window, averaged over the flows ("computed for each TFRC
    and TCP flow and the results were averaged over the number of flows"). Needs a
    :class:`RunResult`."""
    series, t0, t_end = _variability_series(s, "variability", flow, protocol)
    return _mean_variability(series, t0, t_end, d1, d2)


def variability_ratio(s: Summary, protocol: str, other: str) -> float:
    """004 Sec. 4.6.1, "For all the experiments and all the δ combinations, TFRC has a lower
    variability than TCP": the largest ratio ``G_protocol / G_other`` over the pairs of Table
    4.7 (:data:`VARIABILITY_GRID`) in one run, so a value ≤ 1 means the protocol varies less at
    every pair (``inf`` where only the protocol varies; a pair where neither varies, as at
    δ1 = 32 s and δ2 = 128 s in a window of 60 s, has no ratio and is left out). Each side
    is :func:`variability` (averaged over that protocol's flows). Pairs
    whose δ1 is longer than the measurement window have no term in Eq. 4.10 (``(T − t0)/δ1 <
    1``) and are left out: of 004's 120 s windows that leaves the 12 pairs with δ1 ≤ 32 s."""
    mine_s, t0, t_end = _variability_series(s, "variability_ratio", protocol=protocol)
    theirs_s, _, _ = _variability_series(s, "variability_ratio", protocol=other)
    worst = None
    for d1, d2 in VARIABILITY_GRID:
        if d1 > t_end - t0 + 1e-9:
            continue
        theirs = _mean_variability(theirs_s, t0, t_end, d1, d2)
        mine = _mean_variability(mine_s, t0, t_end, d1, d2)
        if theirs <= 0:
            if mine <= 0:
                continue  # neither varies at this pair (e.g. δ1 ≥ half the window): no ratio
            return math.inf  # the protocol varies where the other does not
        worst = max(worst or 0.0, mine / theirs)
    if worst is None:
        raise MetricError(f"neither {protocol} nor {other} varies at any pair the window holds")
    return worst


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
        if str(f.get("protocol", "")).startswith(cbr) and not _is_reverse(f)
    )
    idle = capacity_bps - x_cbr
    if idle <= 0:
        raise MetricError("the CBR flows left no idle bandwidth")
    return (utilization(s, link) * capacity_bps - x_cbr) / idle


def _cbr_and_responsive_total(
    s: RunResult, cbr: str
) -> tuple[list[int], list[float], dict[float, float]]:
    """The forward CBR flows' ids (protocol starting with ``cbr``) and the other forward flows'
    summed goodput per sample time: the pipe is the bottleneck's forward direction, which
    reverse flows' data does not cross."""
    flows = [f for f in s.get("flows", []) if not _is_reverse(f)]
    cbrs = [int(f["id"]) for f in flows if str(f.get("protocol", "")).startswith(cbr)]
    others = [int(f["id"]) for f in flows if int(f["id"]) not in cbrs]
    if not others:
        raise MetricError("no responsive flow beside the CBR sources")
    total: dict[float, float] = {}
    for fid in others:
        for ti, v in zip(*s.flow_column(fid, "throughput_bps"), strict=True):
            total[ti] = total.get(ti, 0.0) + (0.0 if math.isnan(v) else v)
    return cbrs, sorted(total), total


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
    cbrs, times, total = _cbr_and_responsive_total(s, cbr)
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


def backoff_time(
    s: Summary,
    capacity_bps: float,
    cbr_bps: float,
    level: float = 1.1,
    cbr: str = "cbr",
    index: int | None = None,
) -> float:
    """Seconds the responsive flows take to cut their rate when a CBR source starts, the other
    half of 002's impulse response (Sec. 4.5, Fig. 4.9: "TFWC's responsiveness is similar to
    TFRC"; Sec. 6.5.2, Figs. 6.13-6.14: "they cut the rate in a second manner"): for each flow
    whose protocol starts with ``cbr`` and whose first non-empty sample interval ``(t − dt, t]``
    lies inside the measurement window, the time from that interval's start ``t − dt`` to the end
    of the first interval in which the other flows' summed goodput is at most
    ``level · (capacity_bps − cbr_bps)``, the share the CBR leaves (``level`` 1.1: within 10 %
    of it). ``cbr_bps`` is the CBR's configured rate. Averaged over those CBR flows, or of the
    ``index``-th of them in order of start (0 the first; 002 Sec. 6.5.2 compares the first
    impulse with the second). :class:`MetricError` when no CBR starts in the window or the
    rate is never cut. Needs a :class:`RunResult`."""
    if not isinstance(s, RunResult):
        raise MetricError("backoff_time needs the run's time series (a RunResult)")
    share = capacity_bps - cbr_bps
    if share <= 0:
        raise MetricError("the CBR leaves no share of the capacity")
    start = float(s.summary.get("measure_from_s", 0.0))
    cbrs, times, total = _cbr_and_responsive_total(s, cbr)
    onsets = []
    for fid in cbrs:
        t, v = s.flow_column(fid, "throughput_bps")
        busy = [ti for ti, x in zip(t, v, strict=True) if x > 0]
        if not busy or len(t) < 2:
            continue
        dt = t[1] - t[0]
        if busy[0] - dt < start - 1e-9:
            continue
        onsets.append((busy[0] - dt, busy[0], fid))
    onsets.sort()
    if not onsets:
        raise MetricError("no CBR source starts inside the measurement window")
    if index is not None:
        if not 0 <= index < len(onsets):
            raise MetricError(f"no CBR start number {index} (the window holds {len(onsets)})")
        onsets = [onsets[index]]
    waits = []
    for t_on, first, fid in onsets:
        hit = next((ti for ti in times if ti >= first and total[ti] <= level * share), None)
        if hit is None:
            raise MetricError(f"the rate was not cut after CBR flow {fid} started")
        waits.append(hit - t_on)
    return sum(waits) / len(waits)


def mean_cwnd(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Time-averaged congestion window in packets over the measurement window (the mean of the
    ``cwnd`` samples whose interval ends after ``measure_from``), averaged over the matching
    flows: 002 Sec. 6.2's check that TFWC's cwnd is about 10 with 1-2 % loss (1/√0.01 = 10),
    and Eq. 4.5's estimate of the average window. Needs a :class:`RunResult`."""
    if not isinstance(s, RunResult):
        raise MetricError("mean_cwnd needs the run's time series (a RunResult)")
    start = float(s.summary.get("measure_from_s", 0.0))
    means = []
    for fid in _window_flows(s, flow, protocol):
        t, v = s.flow_column(fid, "cwnd")
        window = [x for ti, x in zip(t, v, strict=True) if ti > start and not math.isnan(x)]
        if not window:
            raise MetricError(f"flow {fid}: no cwnd sample in the window")
        means.append(sum(window) / len(window))
    return sum(means) / len(means)


def timeouts(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Mean number of retransmission-timer expiries per matching flow over the run (the
    summary's ``timeouts``): the timeouts whose back-off stalls window-only TFWC at windows of
    1-2 packets (002 Sec. 3.3.2)."""
    vals = [f.get("timeouts") for f in _flows(s, flow, protocol)]
    if any(v is None for v in vals):
        raise MetricError("a flow reports no timeout count")
    return sum(float(v) for v in vals) / len(vals)


def frame_rate(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Frames per second a video source grabbed (and offered to its sender) over the
    measurement window, averaged over the matching flows that have a video source (the
    summary's ``video.frames_grabbed`` over the window's length): 002 Sec. 6.2.1's effective
    frame rate when Vic's send-buffer coupling (``source.adapt``) skips frames, "resulting in
    the frame rate of 20 fps" with Fig. 6.7's TFWC. An uncoupled source grabs every frame due,
    its nominal ``fps`` outside pauses."""
    window = float(s.get("sim_seconds", 0.0)) - float(s.get("measure_from_s", 0.0))
    if window <= 0:
        raise MetricError("the measurement window is empty")
    rates = [
        float(f["video"]["frames_grabbed"]) / window
        for f in _flows(s, flow, protocol)
        if f.get("video") is not None
    ]
    if not rates:
        raise MetricError("no matching flow has a video source")
    return sum(rates) / len(rates)


def _window_frames(s: Summary, flow: int | None, protocol: str | None) -> list[list[dict]]:
    """Per matching flow with a video source, its frame slots due in the measurement window
    (``t > measure_from``)."""
    if not isinstance(s, RunResult):
        raise MetricError("frame metrics need the run's frame records (a RunResult)")
    start = float(s.summary.get("measure_from_s", 0.0))
    out = []
    for f in _flows(s, flow, protocol):
        if f.get("video") is None:
            continue
        rows = [r for r in s.frame_rows(int(f["id"])) if float(r["t"]) > start]
        if not rows:
            raise MetricError(f"flow {f['id']}: no frame slot in the window")
        out.append(rows)
    if not out:
        raise MetricError("no matching flow has a video source")
    return out


def send_buffer_empty_share(
    s: Summary, flow: int | None = None, protocol: str | None = None
) -> float:
    """The share of frame slots in the measurement window at which the sender's send buffer
    was empty when the frame came due (``frames.parquet``'s ``sbuf_bytes`` = 0), averaged over
    the matching video flows. The buffer only grows when a frame is offered, so a share of 1
    means it never held more than the frame being sent: 002 Sec. 6.2.1's "keeping the send
    buffer length between 0 and the number of packets for that frame" without congestion
    control (Fig. 6.6), and Sec. 6.2.2's "the send buffer is always empty" on a LAN (Fig. 6.9).
    ``sbuf_bytes`` is also what Algorithms 4 and 5 read. Needs a :class:`RunResult`."""
    shares = []
    for rows in _window_frames(s, flow, protocol):
        if any(r.get("sbuf_bytes") is None for r in rows):
            raise MetricError("the sender does not report its send buffer")
        shares.append(sum(1 for r in rows if int(r["sbuf_bytes"]) == 0) / len(rows))
    return sum(shares) / len(shares)


def packets_per_frame(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Mean number of data packets that carried a grabbed frame's bytes (``frames.parquet``'s
    ``packets``), over the frames grabbed in the measurement window, averaged over the
    matching video flows: 002 Sec. 6.2.2's "generating more packets per frame" when Algorithm
    5 lowers q (Fig. 6.9). A packet that carries the tail of one frame and the head of the next
    counts for both (only when the buffer held both). Needs a :class:`RunResult`."""
    means = []
    for rows in _window_frames(s, flow, protocol):
        grabbed = [int(r["packets"]) for r in rows if int(r["grabbed"])]
        if not grabbed:
            raise MetricError("no frame grabbed in the window")
        means.append(sum(grabbed) / len(grabbed))
    return sum(means) / len(means)


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


def mean_queue_pkts(s: Summary, link: str = "bottleneck") -> float:
    """Time-averaged queue length of a link in packets over the measurement window (the link
    summary's ``mean_queue_pkts``): 003 Fig. 4.14's "number of packets queued in ISP-side
    router" is this at the access gateway's downlink, ``access-down``."""
    for entry in s.get("links", []):
        if entry.get("name") == link:
            if entry.get("mean_queue_pkts") is None:
                raise MetricError(f"link {link!r} reports no mean queue length")
            return float(entry["mean_queue_pkts"])
    raise MetricError(f"no link named {link!r}")


# ---- 003 Sec. 2.4: the taxonomy's and WARC's metrics -------------------------------------------


def normalized_throughput(s: Summary, protocol: str, tcp: str = "tcp") -> float:
    """003 Sec. 2.4: a scheme's throughput over TCP's under the same (or competing) conditions,
    ``T̄_scheme / T̄_TCP`` with per-flow means, so unequal flow counts compare per flow."""
    return throughput_ratio(s, protocol, tcp)


def _loss_ratio(flows: list[Mapping]) -> float:
    sent = sum(float(f.get("packets_sent") or 0) for f in flows)
    if sent <= 0:
        raise MetricError(f"flow {flows[0].get('id')} sent nothing in the window")
    # A testbed summary has no count where a kernel TCP flow's share of its queue's drops is
    # unknown (no eBPF counter of its marked packets, or its queue not emptied before the
    # receivers stopped, while it shares that queue): reading it as 0 would give a loss rate
    # of 0, not an unknown one.
    lost = [f.get("packets_lost") for f in flows]
    if any(v is None for v in lost):
        unknown = next(f.get("id") for f, v in zip(flows, lost, strict=True) if v is None)
        raise MetricError(f"flow {unknown} reports no lost-packet count")
    return sum(float(v) for v in lost) / sent


#: Propagation RTTs closer than this are one RTT (the simulator's delays are whole ns; a
#: spread set-up's closest pair differs by microseconds).
_RTT_TIE_S = 1e-9


def _shortest_rtt(flows: list[Mapping]) -> list[Mapping]:
    """The group's shortest-RTT flows: those with the least propagation RTT (``base_rtt_s``,
    the RTT the set-up gives a flow), all of them when several tie, as at 003 E2.2's CV[RTT] =
    0, where every flow is "the shortest-RTT flow" and picking one by its measured RTT would
    pick by queueing noise. Summaries without ``base_rtt_s`` (older runs', and the testbed's
    before 2026-11-28) fall back to the least measured mean RTT, one flow."""
    if flows and all(f.get("base_rtt_s") is not None for f in flows):
        least = min(float(f["base_rtt_s"]) for f in flows)
        return [f for f in flows if float(f["base_rtt_s"]) - least <= _RTT_TIE_S]
    with_rtt = [f for f in flows if f.get("mean_rtt_s")]
    if not with_rtt:
        raise MetricError("no flow reports an RTT")
    return [min(with_rtt, key=lambda f: float(f["mean_rtt_s"]))]


def normalized_loss_rate(s: Summary, protocol: str, tcp: str = "tcp") -> float:
    """003 Fig. 2.2(c): the loss rate (packets lost / packets sent) of the scheme's
    shortest-RTT flow over that of TCP's shortest-RTT flow. Where several flows of a group
    share the shortest propagation RTT (CV[RTT] = 0) their losses and packets are pooled: the
    loss rate of "the shortest-RTT flow" is then the group's (see ``_shortest_rtt``)."""
    mine = _loss_ratio(_shortest_rtt(_flows(s, protocol=protocol)))
    theirs = _loss_ratio(_shortest_rtt(_flows(s, protocol=tcp)))
    if theirs <= 0:
        raise MetricError("the TCP flow lost nothing in the window")
    return mine / theirs


def packets_lost(s: Summary, flow: int | None = None, protocol: str | None = None) -> float:
    """Mean number of data packets lost per matching flow in the measurement window (the
    summary's ``packets_lost``: dropped anywhere on the forward route, queues and artificial
    loss alike). 003 counts losses this way over a convergence: Fig. 2.4(c) ("the fixed-history
    schemes [...] encounter fewer losses during convergence") and Fig. 3.18 ("the number of
    losses encountered [...] between the 600th ~ 620th second"); a claim sets the window with
    ``duration``/``measure_from`` and compares schemes with ``versus``."""
    vals = [f.get("packets_lost") for f in _flows(s, flow, protocol)]
    if any(v is None for v in vals):
        raise MetricError("a flow reports no lost-packet count")
    return sum(float(v) for v in vals) / len(vals)


def normalized_cov(s: Summary, protocol: str, tcp: str = "tcp") -> float:
    """003 App. 1 (Fig. A1): the scheme's throughput CV (the summary's ``cov``, 0.1 s samples)
    over TCP's in the same run."""
    theirs = cov(s, protocol=tcp)
    if theirs <= 0:
        raise MetricError("TCP's throughput CV is zero")
    return cov(s, protocol=protocol) / theirs


def max_normalized_cov(s: Summary, protocols: Sequence[str], tcp: str = "tcp") -> float:
    """003 App. 1 (Fig. A1.1): the largest :func:`normalized_cov` over ``protocols`` in one run
    ("Except TFRCP, other schemes do have smoother throughput than TCP (<60% of CV of TCP
    throughput)": the statement holds for every listed scheme when this is below 0.6)."""
    if not protocols:
        raise MetricError("no protocol listed")
    return max(normalized_cov(s, p, tcp) for p in protocols)


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


def warc_analysis(
    run: None,
    *,
    seed: int,
    quantity: str,
    scheme: str = "warc",
    m: float = 4.0,
    cv: float = 0.04,
    w: float = 20.0,
    k: float = 3.0,
    n: int = 12,
) -> float:
    """003 Sec. 3.4 and App. 2, computed by ``tfcc_core::warc::analysis`` (a trace claim: no
    run). ``quantity`` is ``"aggressiveness"`` (Fig. 3.5(b): RTTs for ``scheme`` (warc, gaimd,
    iiad) to raise its window by ``m`` from a mean ``w`` at equal ``CV̄[w] = cv``),
    ``"hr_false_positive"`` (Eqs. 3.10–3.11: ``F_Gamma(N,1)(N/K)``) or ``"span_1000_losses"``
    (Sec. 3.4.4: ``1000·E[W]/1.5·E[RTT]`` s for W in [6, 30], RTT in [0.05, 0.3] s)."""
    del run, seed  # deterministic: nothing is simulated
    from tfcc import _core

    if quantity == "aggressiveness":
        rtts = _core.warc_equal_smoothness_aggressiveness(m, cv, w)
        got = dict(zip(("warc", "gaimd", "iiad"), rtts, strict=True))
        if scheme not in got:
            raise MetricError(f"scheme must be warc, gaimd or iiad, got {scheme!r}")
        return got[scheme]
    if quantity == "hr_false_positive":
        return _core.warc_hr_false_positive(k, n)
    if quantity == "span_1000_losses":
        return _core.warc_span_of_1000_losses(6.0, 30.0, 0.05, 0.3)
    raise MetricError(f"unknown quantity {quantity!r}")


def _bisect(f: Callable[[float], bool], lo: float, hi: float, steps: int = 80) -> float:
    """The boundary in ``[lo, hi]`` between ``f`` false (below) and true (above); ``f(lo)`` must
    be false and ``f(hi)`` true."""
    if f(lo) or not f(hi):
        raise MetricError(f"no boundary in [{lo}, {hi}]")
    for _ in range(steps):
        mid = (lo + hi) / 2
        if f(mid):
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def warc_model(
    run: None,
    *,
    seed: int,
    quantity: str,
    w: float = 20.0,
    s: float = 160.0,
    m: float = 2.0,
    k: float = 3.0,
    n: int = 12,
    other: str = "gaimd",
    alpha: float = 0.2,
) -> float:
    """003 Sec. 3.4's analytic results that :func:`warc_analysis` does not cover, computed from
    ``tfcc_core::warc::analysis`` (a trace claim: no run).

    - ``"normalized_cv"`` (Fig. 3.4): WARC(``s``)'s ``CV̄[w]`` at mean window ``w`` (Eqs.
      A2.4–A2.8) over TCP's under the same loss model (packets between losses i.i.d.
      exponential of mean ``2W²/3``; TCP's window grows by 1 per RTT, so its ``CV̄[w]`` is
      ``linear_increase_cv(1)``, the reading ``a35b-*`` already use).
    - ``"gaimd_crossover_w"`` (Fig. 3.4): the mean window at which WARC(``s``)'s normalised
      ``CV̄[w]`` reaches GAIMD's. GAIMD(``alpha``, β) grows linearly at ``alpha`` per RTT, so its
      normalised ``CV̄[w]`` is ``alpha`` under this model (and ``alpha`` too under Jin et al.'s
      periodic form, ``β/(√3(2−β))`` over TCP's ``1/(3√3)``, for the TCP-friendly pair
      ``alpha = 3β/(2−β)``). WARC's grows with ``w``; bisection over ``w`` in [0.5, 10⁴].
    - ``"aggressiveness_ratio"`` (Fig. 3.5(a)): RTTs for WARC(``s``) to raise its rate ``m``-fold
      from ``w`` (Eq. 3.8) over the RTTs of ``other``: ``"gaimd"`` (``+alpha`` per RTT:
      ``(m − 1)·w/alpha``) or ``"iiad"`` (``+alpha/w`` per RTT: ``(m² − 1)·w²/(2·alpha)``).
    - ``"responsiveness_losses"`` (Eq. 3.9, Fig. 3.6): ``1/Resp(m)``, the loss events before
      WARC(``s``, ``k``, ``n``) cuts its rate to ``1/m`` from mean window ``w``.
    - ``"hr_separation"`` (Eq. 3.9): ``b(K)/K``, where ``b(K)`` is the smallest ``m`` at which
      History-Reset decides the responsiveness (Eq. 3.9's second branch, ``N`` losses; Eqs.
      A2.10 and A2.12 as ``responsiveness_losses`` evaluates them), by bisection over ``m`` in
      [1.01, 50] at ``w``, ``s``, ``k``, ``n``. The RTE branch must need more than ``N`` losses
      at the bracket's low end (``3s·1.01/(2W) + 4/3 > N``, e.g. ``W < 22.5`` for ``s = 160``,
      ``N = 12``); otherwise :class:`MetricError` (no boundary)."""
    del run, seed  # deterministic: nothing is simulated
    from tfcc import _core

    if quantity == "normalized_cv":
        return _core.warc_cv(w, s) / _core.warc_linear_increase_cv(1.0)
    if quantity == "gaimd_crossover_w":
        tcp = _core.warc_linear_increase_cv(1.0)
        return _bisect(lambda x: _core.warc_cv(x, s) / tcp >= alpha, 0.5, 1.0e4)
    if quantity == "aggressiveness_ratio":
        mine = _core.warc_aggressiveness_rtts(m, w, s)
        if other == "gaimd":
            theirs = (m - 1.0) * w / alpha
        elif other == "iiad":
            theirs = (m * m - 1.0) * w * w / (2.0 * alpha)
        else:
            raise MetricError(f"other must be gaimd or iiad, got {other!r}")
        return mine / theirs
    if quantity == "responsiveness_losses":
        return _core.warc_responsiveness_losses(m, w, s, k, n)
    if quantity == "hr_separation":

        def by_hr(x: float) -> bool:
            return _core.warc_responsiveness_losses(x, w, s, k, n) <= n + 1e-9

        return _bisect(by_hr, 1.01, 50.0) / k
    raise MetricError(f"unknown quantity {quantity!r}")


def convergence_time_of(
    t: Sequence[float], v: Sequence[float], at: float, target: float, band: float = 0.1
) -> float:
    """003 Figs. 2.3 and 3.17: seconds from the change at ``at`` until the rate first comes
    within ``band`` (relative) of the new steady value ``target``. ``v`` should be smoothed
    already; :class:`MetricError` if it never does.

    Both bounds are inclusive: a sample at exactly ``at`` counts (a rate already within the band
    when the change comes has converged in 0 s), and a rate exactly ``band·|target|`` away is
    within the band."""
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
    steady_from: str | None = None,
) -> float:
    """Convergence after a step change at ``at`` (003 Figs. 2.3, 3.17): the new steady value is
    the flow's mean throughput over the last quarter of ``[at, until]``; the series is the
    throughput smoothed over ``smooth`` samples (2 s at 0.1 s). Averaged over matching flows.

    ``steady_from`` takes the steady value from another protocol's flows instead (their mean
    over the same tail), i.e. measures how long the flow takes to come near *that* level. 003's
    claims do not use it: Sec. 2.5.1 times a scheme "to increase their throughput to the new
    steady throughput", its own, and compares that time (not the level) with TCP's; a scheme
    whose own level differs from TCP's (ns-2.1b9's whole-segment decrease under periodic loss)
    never comes near TCP's, or passes through it on the way to its own.

    Window bounds: samples are stamped at the end of their interval (timeseries ``t``), so the
    last quarter ``[until − (until − at)/4, until]`` is the samples with ``t`` in
    ``(until − (until − at)/4, until]``: open at the left, since the sample stamped there
    measured the interval before it, closed at ``until``. The search runs over ``at <= t <=
    until`` and the band is inclusive (:func:`convergence_time_of`)."""
    if not isinstance(s, RunResult):
        raise MetricError("this metric needs the run's time series")

    def tail_mean(fid: int) -> float:
        t, v = s.flow_column(fid, "throughput_bps")
        start = until - (until - at) / 4
        tail = [x for ti, x in zip(t, v, strict=True) if start < ti <= until]
        if not tail:
            raise MetricError("no samples in the steady part")
        return sum(tail) / len(tail)

    reference = None
    if steady_from is not None:
        refs = [tail_mean(int(f["id"])) for f in _flows(s, protocol=steady_from)]
        reference = sum(refs) / len(refs)
    times = []
    for f in _flows(s, protocol=protocol):
        t, v = s.flow_column(int(f["id"]), "throughput_bps")
        sm = moving_average(v, smooth)
        target = reference if reference is not None else tail_mean(int(f["id"]))
        # Only [at, until]: after `until` the next change may carry the rate through the band
        # from the other side (a scheme still far above its level would "converge" on its way
        # down after the next change).
        inside = [(ti, x) for ti, x in zip(t, sm, strict=True) if ti <= until]
        times.append(
            convergence_time_of([ti for ti, _ in inside], [x for _, x in inside], at, target, band)
        )
    return sum(times) / len(times)


def _slot_means(t: Sequence[float], v: Sequence[float], start: float, slot: float) -> list[float]:
    """Mean of ``v`` over consecutive ``slot``-second bins from ``start`` (samples at the ends of
    their intervals); a trailing partial bin is left out."""
    return binned_throughput(t, v, start, slot)


def slot_success_pct(
    s: Summary,
    bw_bps: float | None = None,
    flow: int | None = None,
    protocol: str | None = None,
    slot: float = 1.0,
    skip: int = 0,
    own_slots: bool = True,
    label: str | None = None,
) -> float:
    """Percentage of evaluation slots whose average throughput reaches the required ``bw``,
    001 Sec. 3 (Figs. 7-11, 17): ``100 · #{slots with tput ≥ bw} / #slots``.

    A PTCP flow judges its own evaluation slots (``e`` sRTTs each, the ``eval`` rows of
    ``ptcp_slots.parquet``; ``bw`` defaults to the summary's ``ptcp.bw_bps``) when
    ``own_slots``; the first ``skip`` slots that start in the measurement window are left out
    (the thesis' "after the first few"). Any other flow, or several flows together (an
    aggregate: their goodputs are summed), is judged over fixed ``slot``-second bins of the
    recorded goodput, 1 s by default: 32 RTTs of the thesis' dumbbell (001 Sec. 3.1, "32 RTT is
    about 1 s"). Goodput is what reached the receiver (the PTCP slots count acknowledged
    segments, the same data one RTT later). ``label`` picks the flows of one scenario label
    (e.g. 001 E4's "Sender 1" connections, whatever their protocol)."""
    flows = _flows(s, flow, protocol)
    if label is not None:
        flows = [f for f in flows if f.get("label") == label]
        if not flows:
            raise MetricError(f"no flow labelled {label!r}")
    start = float(s.get("measure_from_s", 0.0))
    if own_slots and len(flows) == 1 and flows[0].get("ptcp"):
        p = flows[0]["ptcp"]
        bw = float(bw_bps if bw_bps is not None else p["bw_bps"])
        rows = ptcp_slot_rows(s, flows[0])
        slots = [e for e in rows if e["start_s"] >= start - 1e-9][skip:]
        if not slots:
            raise MetricError("no evaluation slot in the measurement window")
        return 100.0 * sum(1 for e in slots if e["throughput_bps"] >= bw) / len(slots)
    if bw_bps is None:
        raise MetricError("bw_bps is needed for flows that are not a single PTCP flow")
    if not isinstance(s, RunResult):
        raise MetricError("slot_success_pct needs the run's time series (a RunResult)")
    total: list[float] | None = None
    for f in flows:
        t, v = s.flow_column(int(f["id"]), "throughput_bps")
        bins = _slot_means(t, v, start, slot)
        total = bins if total is None else [a + b for a, b in zip(total, bins, strict=False)]
    bins = (total or [])[skip:]
    if not bins:
        raise MetricError(f"no {slot} s slot in the measurement window")
    return 100.0 * sum(1 for b in bins if b >= bw_bps) / len(bins)


def ptcp_slot_ratio(
    s: Summary,
    stat: str = "max",
    t0: float = 0.0,
    t1: float = float("inf"),
    skip: int = 0,
    flow: int | None = None,
    protocol: str = "ptcp",
) -> float:
    """A PTCP flow's evaluation-slot throughputs over its ``bw`` (001 Figs. 15(b), 16, 18):
    ``max``, ``min`` or ``mean`` of ``throughput/bw`` over its own evaluation slots that start
    in ``[t0, t1)``, after leaving out the first ``skip`` of them (start-up), or ``pct``, the
    percentage of those slots with ``throughput ≥ bw`` (:func:`slot_success_pct` in a window).
    Fig. 16's "does not obtain more than the required throughput in 0-20 seconds" is ``max``
    over 0-20 s."""
    f = _flows(s, flow, protocol)[0]
    p = f.get("ptcp")
    if not p:
        raise MetricError("the flow is not a PTCP flow")
    bw = float(p["bw_bps"])
    rows = ptcp_slot_rows(s, f)
    slots = [e for e in rows if t0 - 1e-9 <= float(e["start_s"]) < t1][skip:]
    if not slots:
        raise MetricError(f"no evaluation slot starts in [{t0}, {t1})")
    r = [float(e["throughput_bps"]) / bw for e in slots]
    if stat == "max":
        return max(r)
    if stat == "min":
        return min(r)
    if stat == "mean":
        return sum(r) / len(r)
    if stat == "pct":
        return 100.0 * sum(1 for x in r if x >= 1.0) / len(r)
    raise MetricError(f"unknown stat {stat!r} (max, min, mean, pct)")


def ptcp_series_stat(
    s: Summary,
    column: str = "ptcp_k",
    stat: str = "mean",
    t0: float = 0.0,
    t1: float = float("inf"),
    flow: int | None = None,
    protocol: str = "ptcp",
) -> float:
    """The mean, min or max of a PTCP time series (``ptcp_k``: the ``k`` of 001 Eq. 1;
    ``ptcp_s``: the control slot length in RTTs) over samples with ``t0 < t ≤ t1``: 001 Fig. 6's
    readings ("k = 1 while bandwidth is plentiful", "s falls in the heaviest phase")."""
    if not isinstance(s, RunResult):
        raise MetricError("ptcp_series_stat needs the run's time series (a RunResult)")
    fid = int(_flows(s, flow, protocol)[0]["id"])
    t, v = s.flow_column(fid, column)
    xs = [x for ti, x in zip(t, v, strict=True) if t0 < ti <= t1 and not math.isnan(x)]
    if not xs:
        raise MetricError(f"no {column} samples in ({t0}, {t1}]")
    if stat == "mean":
        return sum(xs) / len(xs)
    if stat == "min":
        return min(xs)
    if stat == "max":
        return max(xs)
    raise MetricError(f"unknown stat {stat!r} (mean, min, max)")


def estimator_error(
    s: Summary, flow: int | None = None, protocol: str = "ptcp", t0: float = 0.0
) -> float:
    """Mean absolute difference between the available bandwidth ``A`` a PTCP flow's controller
    used and the simulation oracle's, relative to the oracle's mean (0 when the oracle is the
    estimator): how far the inline (ImTCP-style) estimator is from the truth it stands in for."""
    if not isinstance(s, RunResult):
        raise MetricError("estimator_error needs the run's time series (a RunResult)")
    fid = int(_flows(s, flow, protocol)[0]["id"])
    t, a = s.flow_column(fid, "ptcp_a_bps")
    _, o = s.flow_column(fid, "ptcp_oracle_a_bps")
    pairs = [
        (x, y)
        for ti, x, y in zip(t, a, o, strict=True)
        if ti > t0 and not (math.isnan(x) or math.isnan(y))
    ]
    if not pairs:
        raise MetricError("no samples with both A and the oracle's A")
    mean_o = sum(y for _, y in pairs) / len(pairs)
    if mean_o <= 0:
        raise MetricError("the oracle's A is zero throughout")
    return sum(abs(x - y) for x, y in pairs) / len(pairs) / mean_o


#: Name → metric, as used by claim files.

# --- 003 Ch. 4, MSF-RS: the `web` section of an access-gateway run's summary ----------------
# Classes are numbered from 0 (the thesis' class 1 is class 0).


def _web(s: Summary) -> Mapping[str, Any]:
    web = s.get("web")
    if not web:
        raise MetricError("the run has no web section (not an access-gateway scenario)")
    return web


def _web_class(s: Summary, cls: int) -> Mapping[str, Any]:
    classes = list(_web(s).get("classes", []))
    if not 0 <= cls < len(classes):
        raise MetricError(f"no web class {cls} (the run has {len(classes)}, numbered from 0)")
    return classes[cls]


def web_class_rate_bps(
    s: Summary, cls: int, from_s: float | None = None, to_s: float | None = None
) -> float:
    """Response rate delivered to class ``cls``'s clients in bit/s. Over whole seconds
    ``[from_s, to_s)`` of the run, ``8·Σ bytes_per_second[from_s:to_s] / (to_s − from_s)`` (a
    phase of M1, 003 Sec. 4.5.2); without them, the measurement window's ``throughput_bps``."""
    c = _web_class(s, cls)
    if from_s is None and to_s is None:
        return float(c["throughput_bps"])
    per_s = list(c.get("bytes_per_second", []))
    a = int(from_s or 0)
    b = int(to_s) if to_s is not None else int(s.get("sim_seconds", len(per_s)))
    if b <= a:
        raise MetricError(f"empty interval [{a}, {b}) s")
    return 8.0 * sum(per_s[a:b]) / (b - a)


def web_share_ratio(
    s: Summary, cls: int, ref: int, from_s: float | None = None, to_s: float | None = None
) -> float:
    """Class ``cls``'s response rate over class ``ref``'s, ``r_cls / r_ref`` (003 Sec. 4.5.2:
    with weights 4 : 2 : 1 MSF-RS should give r_0/r_2 = 4 and r_1/r_2 = 2 while all three are
    backlogged; a gateway without differentiation about 1)."""
    den = web_class_rate_bps(s, ref, from_s, to_s)
    if den <= 0:
        raise MetricError(f"web class {ref} received nothing; no ratio")
    return web_class_rate_bps(s, cls, from_s, to_s) / den


def web_per_user_ratio(s: Summary, cls: int, ref: int) -> float:
    """Per-user rate of class ``cls`` over that of class ``ref``, ``(r_cls/n_cls)/(r_ref/n_ref)``
    with ``n`` the class' users (003 Sec. 4.5.4, Fig. 4.12: user-based fairness keeps 4 : 2 : 1
    per user however many users class 1 has)."""
    den = float(_web_class(s, ref)["per_user_bps"])
    if den <= 0:
        raise MetricError(f"web class {ref} received nothing; no ratio")
    return float(_web_class(s, cls)["per_user_bps"]) / den


def web_per_user_rate_bps(s: Summary, cls: int) -> float:
    """Response rate per user of class ``cls`` in bit/s over the measurement window, the class
    rate over its users (the summary's ``per_user_bps``; 003 Sec. 4.5.4: "When there are 4
    users in Class 1, each user in this class owns 270Kbps")."""
    v = _web_class(s, cls).get("per_user_bps")
    if v is None:
        raise MetricError(f"web class {cls} reports no per-user rate")
    return float(v)


def web_latency_s(s: Summary, cls: int | None = None) -> float:
    """Mean transaction latency ``T_a = T_q + T_s`` in seconds (003 Definition 4.2: gateway
    arrival to the response's last byte at the client) of one class or of all, over the
    transactions that arrived in the summary's latency window."""
    v = _web(s)["mean_latency_s"] if cls is None else _web_class(s, cls)["mean_latency_s"]
    if v is None:
        raise MetricError("no transaction finished in the latency window")
    return float(v)


def web_service_s(s: Summary) -> float:
    """Mean service time ``T_s`` in seconds (003 Definition 4.2: request released to the
    response's last byte at the client) over the transactions of every class that arrived in the
    latency window: the classes' means weighted by their transactions (003 Sec. 4.5.3: "the
    average service time in MSF-RS (1.44 secs) is far shorter than that in non-MSF-RS (8.83
    secs)")."""
    n = 0
    total = 0.0
    for c in _web(s).get("classes", []):
        k = int(c.get("transactions") or 0)
        if k and c.get("mean_service_s") is not None:
            n += k
            total += k * float(c["mean_service_s"])
    if n == 0:
        raise MetricError("no transaction finished in the latency window")
    return total / n


def web_queueing_ratio(s: Summary, cls: int, ref: int) -> float:
    """Mean queueing time ``T_q`` (003 Definition 4.2: gateway arrival to the request's release)
    of class ``cls`` over that of class ``ref``, over the transactions that arrived in the
    latency window (003 Sec. 4.5.3, Fig. 4.11: "the three classes in MSF-RS experience the
    different user-perceived latencies, mainly caused from different queuing time since they
    have different weights")."""
    mine = _web_class(s, cls).get("mean_queued_s")
    theirs = _web_class(s, ref).get("mean_queued_s")
    if mine is None or theirs is None:
        raise MetricError("no transaction finished in the latency window")
    if float(theirs) <= 0:
        raise MetricError(f"class {ref} never queued")
    return float(mine) / float(theirs)


def msfrs_analysis(
    run: None, *, seed: int, quantity: str, w_plus: int = 10, m: int = 20, m_max: int = 500
) -> float:
    """003 Sec. 4.4.1, Eqs. 4.4–4.6 (Fig. 4.5), from ``tfcc_core::msfrs::analysis`` (a trace
    claim: no run). ``"ratio"``: mean ``T_a`` under MSF-RS over that under an ordinary gateway
    for a batch of ``m`` equal responses at window ``w_plus``; ``"max_ratio"``: the largest such
    ratio over every ``m`` in ``1..=m_max`` and ``w_plus`` in ``1..=w_plus`` (Fig. 4.5: "the
    ratio is smaller than 1 always")."""
    del run, seed  # deterministic: nothing is simulated
    from tfcc import _core

    if quantity == "ratio":
        return _core.msfrs_active_time_ratio(m, w_plus)
    if quantity == "max_ratio":
        return max(
            _core.msfrs_active_time_ratio(mm, wp)
            for wp in range(1, w_plus + 1)
            for mm in range(1, m_max + 1)
        )
    raise MetricError(f"unknown quantity {quantity!r}")


def _windows(s: Summary, from_s: float, to_s: float) -> list[Mapping[str, Any]]:
    w = [x for x in _web(s).get("windows", []) if from_s < float(x["t"]) <= to_s]
    if not w:
        raise MetricError(f"no MSF-RS window update in ({from_s}, {to_s}] s (plain gateway?)")
    return w


def web_window_mean(s: Summary, from_s: float, to_s: float) -> float:
    """Mean W+ over the WRC updates in ``(from_s, to_s]`` (003 Eq. 4.3; Fig. 4.16 plots it)."""
    w = _windows(s, from_s, to_s)
    return sum(float(x["window_max"]) for x in w) / len(w)


def web_window_change(s: Summary, from_s: float, to_s: float) -> float:
    """Relative spread of W+ over the WRC updates in ``(from_s, to_s]``,
    ``(max W+ − min W+) / mean W+``: 0 when W+ is frozen (003 Sec. 4.5.5, Fig. 4.13: W+ is
    recomputed only when the window binds, so it stays put while classes are silent)."""
    w = [float(x["window_max"]) for x in _windows(s, from_s, to_s)]
    return (max(w) - min(w)) / (sum(w) / len(w))


def web_utilization(s: Summary, from_s: float, to_s: float) -> float:
    """Mean of WRC's measured utilisation ``U_k`` (003 Eq. 4.2: bytes received in the interval
    T over C·T) over the updates in ``(from_s, to_s]`` (Fig. 4.13: about U+ = 98 % while
    requests suffice)."""
    w = _windows(s, from_s, to_s)
    return sum(float(x["utilization"]) for x in w) / len(w)


# Video quality: PSNR and MOS (002 Sec. 6.3, Eqs. 6.1-6.2, Tables 6.2-6.3). These take frames,
# not a run's summary, and are not in METRICS: a run's frame records and a reference clip meet
# in ``tfcc.video_quality``.

#: CIF, the picture size of 002's foreman clip (Sec. 6.1: 352x288, 300 frames, 30 fps).
CIF = (352, 288)


def psnr(ref: np.ndarray, img: np.ndarray, peak: float = 255.0) -> float:
    """Peak signal-to-noise ratio of ``img`` against ``ref`` in dB (002 Eqs. 6.1-6.2):
    ``PSNR = 10·log10(m² / MSE)`` with ``MSE = (1/XY) Σ_x Σ_y (I(x,y) − Ĩ(x,y))²`` over the
    X×Y picture and ``m = peak``, 255 for 8-bit samples. The thesis does not name the plane;
    tfcc takes the luma (Y) plane (spec 002 Sec. 3.2, a reading), so ``ref`` and ``img`` are
    2-D arrays of the same shape. Identical planes have MSE 0 and give ``+inf`` (no noise);
    :func:`mos_from_psnr` maps that to 5. An MSE of 1 gives ``10·log10(255²)`` = 48.13 dB.
    """
    a = np.asarray(ref)
    b = np.asarray(img)
    if a.shape != b.shape:
        raise ValueError(f"PSNR of planes of different shapes {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError("PSNR of an empty plane")
    if not peak > 0:
        raise ValueError(f"peak must be positive, got {peak}")
    d = a.astype(np.float64) - b.astype(np.float64)
    mse = float(np.mean(d * d))
    if mse == 0.0:
        return math.inf
    return 10.0 * math.log10(peak * peak / mse)


#: Table 6.3's lower PSNR bounds, dB, of MOS 5, 4, 3 and 2 (below 20 dB: MOS 1).
MOS_BOUNDS_DB = (37.0, 31.0, 25.0, 20.0)


def mos_from_psnr(db: float) -> int:
    """The mean opinion score (ITU-T P.800's 1-5 scale, 002 Table 6.2) a frame of ``db`` dB
    PSNR maps to by 002 Table 6.3: > 37 → 5, 31-37 → 4, 25-31 → 3, 20-25 → 2, < 20 → 1.

    The table's two strict ends fix 37 dB (not "> 37": MOS 4) and 20 dB (not "< 20": MOS 2);
    it is silent on 31 and 25, which two rows each name. tfcc reads every inner row like its
    first one, as a half-open interval closed above: 37 → 4, 31 → 3, 25 → 2, 20 → 2
    (a reading; 5 for > 37, 4 for (31, 37], 3 for (25, 31], 2 for [20, 25], 1 below 20).
    ``+inf`` (identical frames) is 5; NaN raises ``ValueError``."""
    if math.isnan(db):
        raise ValueError("MOS of a NaN PSNR")
    if db > 37.0:
        return 5
    if db > 31.0:
        return 4
    if db > 25.0:
        return 3
    if db >= 20.0:
        return 2
    return 1


def mos_distribution(dbs: Sequence[float]) -> dict[int, float]:
    """The share of frames at each MOS 1-5 (002 Fig. 6.19: the distribution of Table 6.3's
    MOS over the frames of a run), as fractions summing to 1, every score present (0.0 where
    no frame has it); :class:`MetricError` for no frames."""
    if len(dbs) == 0:
        raise MetricError("MOS distribution of no frames")
    counts = dict.fromkeys(range(1, 6), 0)
    for db in dbs:
        counts[mos_from_psnr(float(db))] += 1
    return {m: c / len(dbs) for m, c in counts.items()}


def read_yuv420_luma(
    path: str | os.PathLike[str], width: int = CIF[0], height: int = CIF[1]
) -> np.ndarray:
    """The luma (Y) planes of a raw planar YUV 4:2:0 file (``yuv420p``: per frame ``W·H`` Y
    bytes, then ``W·H/4`` U and V bytes each, as 002's foreman.yuv and ffmpeg's ``-f rawvideo
    -pix_fmt yuv420p`` store it), as a read-only ``(frames, height, width)`` uint8 array mapped
    from the file. ``ValueError`` for odd sizes or a file that is not a whole number of
    frames."""
    if width <= 0 or height <= 0 or width % 2 or height % 2:
        raise ValueError(f"4:2:0 needs even positive width and height, got {width}x{height}")
    frame = width * height * 3 // 2
    size = os.path.getsize(path)
    if size == 0 or size % frame:
        raise ValueError(
            f"{path}: {size} bytes is not a whole number of {width}x{height} 4:2:0 frames "
            f"({frame} bytes each)"
        )
    raw = np.memmap(path, dtype=np.uint8, mode="r", shape=(size // frame, frame))
    return raw[:, : width * height].reshape(size // frame, height, width)


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
    "flow_throughput_ratio": flow_throughput_ratio,
    "send_rate_ratio": send_rate_ratio,
    "max_min": max_min,
    "model_ratio": model_ratio,
    "loss_response_s": loss_response_s,
    "loss_prediction_error": loss_prediction_error,
    "loss_prediction_best_n": loss_prediction_best_n,
    "cov_at": cov_at,
    "stall_fraction": stall_fraction,
    "variability": variability,
    "variability_ratio": variability_ratio,
    "idle_bandwidth_use": idle_bandwidth_use,
    "refill_time": refill_time,
    "backoff_time": backoff_time,
    "mean_cwnd": mean_cwnd,
    "frame_rate": frame_rate,
    "send_buffer_empty_share": send_buffer_empty_share,
    "packets_per_frame": packets_per_frame,
    "timeouts": timeouts,
    "web_class_rate_bps": web_class_rate_bps,
    "web_share_ratio": web_share_ratio,
    "web_per_user_ratio": web_per_user_ratio,
    "web_per_user_rate_bps": web_per_user_rate_bps,
    "web_latency_s": web_latency_s,
    "web_service_s": web_service_s,
    "web_window_mean": web_window_mean,
    "web_window_change": web_window_change,
    "web_utilization": web_utilization,
    "link_loss_rate": link_loss_rate,
    "mean_queue_pkts": mean_queue_pkts,
    "normalized_throughput": normalized_throughput,
    "normalized_loss_rate": normalized_loss_rate,
    "normalized_cov": normalized_cov,
    "packets_lost": packets_lost,
    "cv_k": cv_k,
    "normalized_cv_k": normalized_cv_k,
    "convergence_time": convergence_time,
    "slot_success_pct": slot_success_pct,
    "ptcp_series_stat": ptcp_series_stat,
    "estimator_error": estimator_error,
    "warc_analysis": warc_analysis,
    "warc_model": warc_model,
    "max_normalized_cov": max_normalized_cov,
    "ptcp_slot_ratio": ptcp_slot_ratio,
    "web_queueing_ratio": web_queueing_ratio,
    "msfrs_analysis": msfrs_analysis,
}
