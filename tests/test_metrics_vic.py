"""``frame_rate``: the frames per second a video source grabbed in the measurement window (002
Sec. 6.2.1's effective frame rate under Vic's send-buffer coupling)."""

from __future__ import annotations

import pytest

from tfcc import metrics
from tfcc.metrics import MetricError


def _summary() -> dict:
    def video(grabbed: int) -> dict:
        return {"fps": 30.0, "frames_due": 1500, "frames_grabbed": grabbed, "mean_q": 10.0}

    return {
        "sim_seconds": 60.0,
        "measure_from_s": 10.0,
        "flows": [
            {"id": 0, "protocol": "tfwc", "video": video(1000)},
            {"id": 1, "protocol": "tfwc", "video": video(1500)},
            {"id": 2, "protocol": "tcp-sack"},
        ],
    }


def test_frame_rate_is_frames_grabbed_over_the_window() -> None:
    s = _summary()
    assert metrics.frame_rate(s, flow=0) == pytest.approx(20.0)
    assert metrics.frame_rate(s, flow=1) == pytest.approx(30.0)
    # Over the flows with a video source; the bulk TCP flow has none.
    assert metrics.frame_rate(s) == pytest.approx(25.0)
    assert metrics.frame_rate(s, protocol="tfwc") == pytest.approx(25.0)
    assert metrics.METRICS["frame_rate"] is metrics.frame_rate


def test_frame_rate_needs_a_video_source_and_a_window() -> None:
    s = _summary()
    with pytest.raises(MetricError):
        metrics.frame_rate(s, protocol="tcp")
    with pytest.raises(MetricError):
        metrics.frame_rate({**s, "measure_from_s": 60.0})


def _frames_run() -> metrics.RunResult:
    """Flow 0: four slots in the window (t > 10 s), the buffer empty at three, one suspended;
    flow 1: two slots, never empty. A slot before the window is left out."""
    rows = [
        # flow, t, grabbed, packets, sbuf_bytes
        (0, 9.9, 1, 50, 90_000),
        (0, 10.1, 1, 2, 0),
        (0, 10.2, 1, 3, 0),
        (0, 10.3, 0, 0, 40_000),
        (0, 10.4, 1, 4, 0),
        (1, 10.1, 1, 7, 1000),
        (1, 10.2, 1, 9, 2000),
    ]
    names = ["flow", "t", "grabbed", "packets", "sbuf_bytes"]
    frames = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    return metrics.RunResult(_summary(), frame_series=frames)


def test_send_buffer_empty_share_counts_the_slots_in_the_window() -> None:
    r = _frames_run()
    assert metrics.send_buffer_empty_share(r, flow=0) == pytest.approx(0.75)
    assert metrics.send_buffer_empty_share(r, flow=1) == pytest.approx(0.0)
    # Averaged over the video flows (the TCP flow has none).
    assert metrics.send_buffer_empty_share(r) == pytest.approx(0.375)
    assert metrics.METRICS["send_buffer_empty_share"] is metrics.send_buffer_empty_share


def test_packets_per_frame_is_over_the_grabbed_frames_in_the_window() -> None:
    r = _frames_run()
    assert metrics.packets_per_frame(r, flow=0) == pytest.approx(3.0)
    assert metrics.packets_per_frame(r) == pytest.approx((3.0 + 8.0) / 2)
    assert metrics.METRICS["packets_per_frame"] is metrics.packets_per_frame


def test_frame_metrics_need_frame_records_and_a_reported_buffer() -> None:
    with pytest.raises(MetricError):
        metrics.send_buffer_empty_share(_summary())  # a summary alone has no frames
    with pytest.raises(MetricError):
        metrics.packets_per_frame(metrics.RunResult(_summary()))
    r = _frames_run()
    r.frame_series["sbuf_bytes"][1] = None  # a sender that does not report its buffer
    with pytest.raises(MetricError):
        metrics.send_buffer_empty_share(r, flow=0)
