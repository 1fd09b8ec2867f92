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
