"""Metrics added by cover3 (2026-11-26): 003 App. 1's largest normalised CV, 003 Fig. 4.11's
queueing-time order, 001 Figs. 16/18's slot ratios, and the analysis results of 003 Secs. 3.4
and 4.4.1 computed by the Rust models."""

from __future__ import annotations

import math

import pytest

from tfcc import _core, metrics
from tfcc.metrics import MetricError


def _cov_summary() -> dict:
    def flow(i: int, proto: str, cov: float) -> dict:
        return {"id": i, "protocol": proto, "cov": cov}

    return {
        "flows": [
            flow(0, "tcp-sack", 0.5),
            flow(1, "tcp-sack", 0.5),
            flow(2, "gaimd", 0.2),
            flow(3, "tear", 0.4),
            flow(4, "tfrcp", 1.1),
        ]
    }


def test_max_normalized_cov_is_the_largest_listed_scheme() -> None:
    s = _cov_summary()
    assert metrics.max_normalized_cov(s, ["gaimd", "tear"]) == pytest.approx(0.8)
    assert metrics.max_normalized_cov(s, ["gaimd"]) == pytest.approx(0.4)
    assert metrics.max_normalized_cov(s, ["gaimd", "tfrcp"]) == pytest.approx(2.2)
    with pytest.raises(MetricError):
        metrics.max_normalized_cov(s, [])


def _slot(start: float, mbps: float) -> dict:
    return {"start_s": start, "end_s": start + 1, "throughput_bps": mbps * 1e6}


def _ptcp_summary() -> metrics.RunResult:
    slots = [_slot(0, 40), _slot(1, 21), _slot(2, 19), _slot(3, 20), _slot(4, 10)]
    cols = {k: [e[k] for e in slots] for k in slots[0]}
    cols.update(flow=[0] * len(slots), kind=["eval"] * len(slots))
    flows = [{"id": 0, "protocol": "ptcp", "ptcp": {"bw_bps": 20e6}}]
    return metrics.RunResult({"flows": flows}, ptcp_slots=cols)


def test_ptcp_slot_ratio_stats_and_window() -> None:
    s = _ptcp_summary()
    assert metrics.ptcp_slot_ratio(s, "max") == pytest.approx(2.0)
    # From the third slot (skip 2): 19, 20, 10 Mb/s.
    assert metrics.ptcp_slot_ratio(s, "max", skip=2) == pytest.approx(1.0)
    assert metrics.ptcp_slot_ratio(s, "min", skip=2) == pytest.approx(0.5)
    assert metrics.ptcp_slot_ratio(s, "mean", skip=2) == pytest.approx(49 / 60)
    # Slots starting in [1, 4): 21, 19, 20 → two of three reach bw.
    assert metrics.ptcp_slot_ratio(s, "pct", t0=1, t1=4) == pytest.approx(200 / 3)
    with pytest.raises(MetricError):
        metrics.ptcp_slot_ratio(s, "pct", t0=9)
    with pytest.raises(MetricError):
        metrics.ptcp_slot_ratio(s, "median")


def test_web_queueing_ratio() -> None:
    s = {
        "web": {
            "classes": [
                {"class": 0, "mean_queued_s": 1.0},
                {"class": 1, "mean_queued_s": 4.0},
                {"class": 2, "mean_queued_s": None},
            ]
        }
    }
    assert metrics.web_queueing_ratio(s, 0, 1) == pytest.approx(0.25)
    with pytest.raises(MetricError):
        metrics.web_queueing_ratio(s, 0, 2)


def test_msfrs_analysis_fig_4_5() -> None:
    # m = 2W+: two rounds of W+ responses, T_a 1.5·W+L/C against 2·W+L/C.
    for w in (1, 3, 10):
        assert metrics.msfrs_analysis(
            None, seed=1, quantity="ratio", m=2 * w, w_plus=w
        ) == pytest.approx(0.75)
    # A batch no larger than W+ goes out at once: the same T_a as an ordinary gateway.
    assert metrics.msfrs_analysis(None, seed=1, quantity="ratio", m=5, w_plus=10) == 1.0
    assert metrics.msfrs_analysis(None, seed=1, quantity="max_ratio", w_plus=8, m_max=40) == 1.0


def test_warc_model_normalized_cv_and_crossover() -> None:
    tcp = _core.warc_linear_increase_cv(1.0)
    assert tcp == pytest.approx(math.sqrt(8 / 108))
    v = metrics.warc_model(None, seed=1, quantity="normalized_cv", w=20.0, s=160.0)
    assert v == pytest.approx(_core.warc_cv(20.0, 160.0) / tcp)
    # The crossing with GAIMD(α) is where WARC's normalised CV̄[w] equals α.
    w = metrics.warc_model(None, seed=1, quantity="gaimd_crossover_w", s=160.0, alpha=0.2)
    assert _core.warc_cv(w, 160.0) / tcp == pytest.approx(0.2, rel=1e-6)
    # CV̄[w] rises with W (a larger window is less averaged by s rounds), so a longer
    # average crosses later.
    w2 = metrics.warc_model(None, seed=1, quantity="gaimd_crossover_w", s=320.0, alpha=0.2)
    assert w2 > w


def test_warc_model_aggressiveness_ratio_against_closed_forms() -> None:
    # GAIMD(+0.2/RTT) from 20 to 40 packets: 100 RTTs; IIAD(+1/w): (4 − 1)·400/2 = 600 RTTs.
    mine = _core.warc_aggressiveness_rtts(2.0, 20.0, 160.0)
    g = metrics.warc_model(None, seed=1, quantity="aggressiveness_ratio", m=2.0, other="gaimd")
    assert g == pytest.approx(mine / 100.0)
    i = metrics.warc_model(
        None, seed=1, quantity="aggressiveness_ratio", m=2.0, other="iiad", alpha=1.0
    )
    assert i == pytest.approx(mine / 600.0)
    with pytest.raises(MetricError):
        metrics.warc_model(None, seed=1, quantity="aggressiveness_ratio", other="simd")


def test_warc_model_hr_separation_is_the_regime_boundary() -> None:
    b = 3.0 * metrics.warc_model(None, seed=1, quantity="hr_separation", w=20.0, k=3.0, n=12)
    assert _core.warc_responsiveness_losses(b * 1.001, 20.0, 160.0, 3.0, 12) == 12.0
    assert _core.warc_responsiveness_losses(b * 0.999, 20.0, 160.0, 3.0, 12) > 12.0


def test_warc_model_responsiveness_is_eq_3_9() -> None:
    # RTE regime: 3sm/(2W) + 4/3 (m = 2, W = 20, s = 160: 25.33); HR regime: N.
    v = metrics.warc_model(None, seed=1, quantity="responsiveness_losses", m=2.0, w=20.0)
    assert v == pytest.approx(3 * 160 * 2 / 40 + 4 / 3)
    assert metrics.warc_model(None, seed=1, quantity="responsiveness_losses", m=8.0) == 12.0
