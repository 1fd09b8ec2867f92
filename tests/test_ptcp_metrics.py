"""001's slot metric and the PTCP series statistics on hand-made runs."""

from __future__ import annotations

import pytest

from tfcc.metrics import (
    MetricError,
    RunResult,
    ptcp_series_stat,
    slot_success_pct,
    throughput_bps,
)


def _slot(start: float, end: float, mbps: float) -> dict:
    return {"start_s": start, "end_s": end, "throughput_bps": mbps * 1e6, "met": mbps >= 20}


EVAL = [_slot(0, 1, 5), _slot(1, 2, 25), _slot(2, 3, 19.9), _slot(3, 4, 20)]


def slot_columns(rows: list[dict]) -> dict[str, list]:
    """``ptcp_slots.parquet``'s columns from rows with ``flow``, ``kind`` and a slot's fields."""
    names = ["flow", "kind", "start_s", "end_s", "throughput_bps", "met"]
    return {n: [r.get(n) for r in rows] for n in names}


def _run() -> RunResult:
    ptcp = {"bw_bps": 20e6, "slots": 3, "slots_met": 2}
    # A control slot of flow 0 and another flow's evaluation slot, which the metric must not
    # count among flow 0's evaluation slots.
    rows = [{"flow": 0, "kind": "eval", **e} for e in EVAL]
    rows.insert(2, {"flow": 0, "kind": "ctrl", "start_s": 1.0, "end_s": 1.5, "throughput_bps": 0.0})
    rows.append({"flow": 9, "kind": "eval", **_slot(3, 4, 0)})
    summary = {
        "measure_from_s": 1.0,
        "flows": [
            {"id": 0, "protocol": "ptcp", "ptcp": ptcp},
            {"id": 1, "protocol": "tcp-reno"},
            {"id": 2, "protocol": "tcp-reno"},
        ],
    }
    t = [0.5 * (i + 1) for i in range(8)]
    series = {
        "t": t * 3,
        "flow": [0] * 8 + [1] * 8 + [2] * 8,
        "throughput_bps": [0.0] * 8 + [15e6] * 8 + [4e6, 4e6, 6e6, 6e6, 5e6, 5e6, 0.0, 0.0],
        "ptcp_k": [1.0, 1.0, 1.0, 3.0, 5.0, 1.0, 1.0, 1.0] + [None] * 16,
        "ptcp_s": [16.0, 16.0, 32.0, 32.0, 8.0, 4.0, 2.0, 2.0] + [None] * 16,
    }
    return RunResult(summary, series, ptcp_slots=slot_columns(rows))


def test_a_ptcp_flow_is_judged_on_its_own_slots_in_the_window() -> None:
    r = _run()
    # Slots from 1 s on: 25, 19.9, 20 Mb/s against 20: two of three.
    assert slot_success_pct(r, flow=0) == pytest.approx(200 / 3)
    assert slot_success_pct(r, flow=0, skip=1) == pytest.approx(50.0)
    assert slot_success_pct(r, flow=0, bw_bps=19e6) == pytest.approx(100.0)


def test_a_summary_from_before_ptcp_slots_parquet_is_read_from_its_own_slots() -> None:
    r = _run()
    old = dict(r.summary)
    old["flows"] = [{**r.summary["flows"][0], "ptcp": {"bw_bps": 20e6, "eval_slots": EVAL}}]
    assert slot_success_pct(RunResult(old), flow=0) == pytest.approx(200 / 3)


def test_a_ptcp_flow_without_its_slots_is_an_error_not_zero_slots() -> None:
    r = _run()
    with pytest.raises(MetricError, match="ptcp_slots.parquet"):
        slot_success_pct(RunResult(r.summary, r.flow_series), flow=0)


def test_other_flows_and_aggregates_use_fixed_slots_of_goodput() -> None:
    r = _run()
    # Flow 1: 15 Mb/s throughout; flows 1+2 summed: 21, 20, 15 Mb/s in the 1 s slots from 1 s.
    assert slot_success_pct(r, flow=1, bw_bps=20e6) == 0.0
    assert slot_success_pct(r, protocol="tcp-reno", bw_bps=20e6) == pytest.approx(200 / 3)
    with pytest.raises(MetricError):
        slot_success_pct(r, flow=1)


def test_series_statistics_over_a_time_range() -> None:
    r = _run()
    assert ptcp_series_stat(r, "ptcp_k", "mean", 0.0, 2.0) == pytest.approx(1.5)
    assert ptcp_series_stat(r, "ptcp_s", "min", 0.0, 2.0) == 16.0
    assert ptcp_series_stat(r, "ptcp_s", "min", 2.0, 4.0) == 2.0
    with pytest.raises(MetricError):
        ptcp_series_stat(r, "ptcp_s", "median")


def test_goodput_of_one_label_among_flows_of_one_protocol() -> None:
    # 001 E6: the aggregate's short-lived SURGE users (label "sender1") among background users.
    summary = {
        "flows": [
            {"id": 0, "protocol": "ptcp", "label": "sender1", "throughput_bps": 6e6},
            {"id": 1, "protocol": "web", "label": "sender1", "throughput_bps": 100e3},
            {"id": 2, "protocol": "web", "label": "sender1", "throughput_bps": 50e3},
            {"id": 3, "protocol": "web", "label": "surge", "throughput_bps": 110e3},
        ]
    }
    assert throughput_bps(summary, protocol="web", label="sender1") == pytest.approx(75e3)
    assert throughput_bps(summary, protocol="web") == pytest.approx(260e3 / 3)
    with pytest.raises(MetricError):
        throughput_bps(summary, protocol="web", label="nobody")
